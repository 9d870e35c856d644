"""The handoff benchmark with a project's past: what earlier agents left, too much to load whole.

``make --history H`` gives the project H entries of memory from earlier sessions (other services,
other incidents, its own past), deterministic by seed and H. Three of them bear on today's task and
nothing in the workspace or the conversation says which:

- **rule**: the user's standing rule for a bad record of this service (quarantine or delete, and why);
  session 1 is no longer told it;
- **train**: the release this service's fixes ship in, written once and corrected later (the old
  value is a frozen release); session 1's user says only "the release that is open now";
- **window**: a past incident found that the bad records come from a backfill that writes only eight
  of the 64 shards (today's among them): a search there takes 3 range probes instead of 6.

Each arm gets the same entries in its own form: ``MEMORY.md`` in the workspace, appended oldest
first as a runtime's memory file grows (the runtime loads its first 200 lines, at most 25 KB), or one
note each in the notewell store (the correction with ``supersedes:``). The none arm gets nothing. The
four planted entries lie past the loaded lines and before the newest tenth (what the store's briefing
shows), so neither arm is handed one at the start.
``start_session`` writes them, before session 1.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

__all__ = ["HISTORY_MAX", "HISTORY_MIN", "Entry", "build_history", "loaded_head", "memory_file", "write_notes"]

HISTORY_MIN, HISTORY_MAX = 100, 1000
FIRST_PLANTED = 60  # past the ~50 entries (200 lines) a runtime loads of MEMORY.md
HEAD_LINES, HEAD_BYTES = 200, 25_000  # what Claude Code loads of MEMORY.md at a session's start
WIDTH = 8  # shards the backfill writes
_OTHER = {"quarantine": "delete", "delete": "quarantine"}
_WHY = {
    "quarantine": [
        "legal must keep every record",
        "the auditors must be able to replay it",
        "finance reconciles it monthly",
    ],
    "delete": [
        "it is always a duplicate of the day before",
        "the source re-sends it within the hour",
        "it holds no customer data",
    ],
}
_TOPICS = [
    (
        "finding",
        "p99 latency",
        "p99 went {a} ms -> {b} ms after the {v} deploy; traced to lock contention in the {c} cache",
    ),
    ("finding", "disk usage", "the {c} volume grows {a} GB a day; compaction runs only every {n} days"),
    (
        "dead_end",
        "connection pool",
        "raising pool_size {n} -> {m} did not help: p99 {b} ms -> {a} ms at best; reverted",
    ),
    ("decision", "on-call", "alerts of {c} go to #{c}-oncall; pages only for errors over {n} a minute (user)"),
    ("finding", "flaky test", "test_{c}_{w} fails one run in {n}: a clock race in the fixture, not the code"),
    ("action", "certificate", "the {c} TLS certificate expires {d}; renew it before then (ticket OPS-{t})"),
    ("dead_end", "retry budget", "raising the retry budget {n} -> {m} only moved the {c} timeouts {a} ms later"),
    ("decision", "schema change", "the {c} column {w}_id becomes a bigint in {v} (user); backfill in batches of {t}"),
    ("finding", "memory leak", "RSS of {c} grows {a} MB an hour; the {w} buffer is never freed on reconnect"),
    ("action", "dependency", "pagecache {v} has the hand-over fix; bump it in {c} when the freeze ends"),
]
_WORDS = ["ingest", "replay", "batch", "lease", "cursor", "shard", "ledger", "stream", "audit", "queue"]


@dataclass(frozen=True)
class Entry:
    """One thing an earlier session kept: its day, service, kind, title and text."""

    day: str
    service: str
    kind: str
    title: str
    text: str
    supersedes: int | None = None  # the index of the entry it corrects
    role: str = ""  # which planted item it is ("" for the rest)


def _days(rng: random.Random, count: int, last_day: str) -> list[str]:
    """*count* days in order, in the year before *last_day* (YYYY-MM-DD)."""
    first = date(int(last_day[:4]) - 1, 1, 1)
    return [(first + timedelta(days=d)).isoformat() for d in sorted(rng.randrange(0, 365) for _ in range(count))]


def _filler(rng: random.Random, svc: str) -> tuple[str, str, str]:
    kind, topic, text = rng.choice(_TOPICS)
    low, small = rng.randint(20, 400), rng.randint(4, 64)
    values = {
        "a": low, "b": low + rng.randint(30, 500), "n": small, "m": small * rng.choice([2, 4]),
        "c": svc, "w": rng.choice(_WORDS), "t": rng.randint(1000, 9999), "d": f"2027-{rng.randint(1, 12):02d}-01",
        "v": f"{rng.randint(3, 9)}.{rng.randint(10, 40)}.{rng.randint(1, 9)}",
    }  # fmt: skip
    return kind, f"{svc}: {topic}", text.format(**values)


def _planted(rng: random.Random, key: dict[str, Any], svc: str) -> dict[str, Entry]:
    mode, code = key["mode"], key["code"]
    lo, hi = key["window"]
    why = rng.choice(_WHY[mode])
    return {
        "rule": Entry("", svc, "decision", f"{svc}: a record that fails verification",
                      f"User's standing rule for {svc}: a record that fails verification is {mode}d, never"
                      f" {_OTHER[mode]}d: {why}.", role="rule"),
        "train_old": Entry("", svc, "decision", f"{svc}: release train",
                           f"{svc} fixes ship in release {key['frozen']} (user).", role="train_old"),
        "train_new": Entry("", svc, "decision", f"{svc}: release train (correction)",
                           f"{key['frozen']} is frozen now: {svc} fixes ship in release {key['release']} from today"
                           f" on (user). This replaces the earlier release-train entry.", role="train_new"),
        "window": Entry("", svc, "finding", f"{svc}: where bad records come from",
                        f"In the {code} incident of {{day}} the record that failed verification came from the"
                        f" reshard backfill, which writes only shards {lo}-{hi}; it has every time since.",
                        role="window"),
    }  # fmt: skip


def _decoys(rng: random.Random, services: list[str], key: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """The same kinds of entry for the other services: their rules, trains and windows."""
    out = []
    for other in services:
        mode = rng.choice(sorted(_OTHER))
        out.append(
            (
                "decision",
                other,
                f"{other}: a record that fails verification",
                f"User's standing rule for {other}: a record that fails verification is {mode}d, never"
                f" {_OTHER[mode]}d: {rng.choice(_WHY[mode])}.",
            )
        )
        version = f"{rng.randint(3, 9)}.{rng.randint(10, 40)}.{rng.randint(1, 9)}"
        out.append(("decision", other, f"{other}: release train", f"{other} fixes ship in release {version} (user)."))
        lo = rng.randrange(0, 64 - WIDTH + 1)
        out.append(
            (
                "finding",
                other,
                f"{other}: where bad records come from",
                f"In the E-{rng.randrange(1000, 9999)} incident the record that failed verification came from"
                f" the reshard backfill, which writes only shards {lo}-{lo + WIDTH - 1}.",
            )
        )
    return out  # fmt: skip


def build_history(seed: int, size: int, key: dict[str, Any], services: list[str], day: str) -> list[Entry]:
    """*size* entries (HISTORY_MIN to HISTORY_MAX), oldest first, the four planted ones among them
    (deterministic by seed and size)."""
    rng = random.Random(f"handoff-history-{seed}-{size}")
    svc = key["service"]
    days = _days(rng, size, day)
    planted = _planted(rng, key, svc)
    rows: list[tuple[str, str, str, str]] = list(_decoys(rng, [s for s in services if s != svc], key))
    while len(rows) < size - len(planted):
        target = svc if rng.random() < 0.3 else rng.choice(services)
        kind, title, text = _filler(rng, target)
        rows.append((kind, target, title, text))
    rng.shuffle(rows)
    # The planted entries go past what a runtime loads of the file and before the newest tenth (which
    # the store's briefing shows), so that neither arm is handed one: each must be looked for.
    places = sorted(rng.sample(range(FIRST_PLANTED, size * 9 // 10), len(planted)))
    trains = sorted(rng.sample(range(len(places)), 2))
    others = [i for i in range(len(places)) if i not in trains]
    rng.shuffle(others)
    at = {places[trains[0]]: "train_old", places[trains[1]]: "train_new"}
    at.update({places[others[0]]: "rule", places[others[1]]: "window"})
    entries: list[Entry] = []
    filler = iter(rows)
    for i in range(size):
        if i in at:
            e = planted[at[i]]
            old = places[trains[0]] if e.role == "train_new" else None
            entries.append(Entry(days[i], e.service, e.kind, e.title, e.text.replace("{day}", days[i]), old, e.role))
        else:
            kind, service, title, text = next(filler)
            entries.append(Entry(days[i], service, kind, title, text))
    return entries


def memory_file(entries: list[Entry]) -> str:
    """MEMORY.md as agents appending to it would have left it: oldest first, one section an entry."""
    parts = ["# MEMORY.md: what earlier sessions on this project learned (oldest first)\n"]
    parts += [f"## {e.day} · {e.title} ({e.kind})\n\n{e.text}\n" for e in entries]
    return "\n".join(parts)


def loaded_head(text: str) -> tuple[str, int, int]:
    """What a runtime loads of a memory file at start: its first 200 lines, at most 25 KB
    (whole lines); with the lines loaded and the lines in all."""
    lines = text.splitlines()
    kept: list[str] = []
    size = 0
    for line in lines[:HEAD_LINES]:
        size += len(line.encode("utf-8")) + 1
        if size > HEAD_BYTES:
            break
        kept.append(line)
    return "\n".join(kept), len(kept), len(lines)


def note_text(entry: Entry, supersedes: str | None) -> str:
    """The note an agent of the notewell arm would have written for *entry*."""
    header = [f"title: {entry.title}", f"kind: {entry.kind}", f"tags: [{entry.service}]"]
    if supersedes:
        header.append(f"supersedes: {supersedes}")
    return "---\n" + "\n".join(header) + f"\n---\n{entry.text} ({entry.day})\n"


def write_notes(store: Any, entries: list[Entry]) -> list[str]:
    """Add one note per entry to *store* (a NoteStore), oldest first; their ids."""
    ids: list[str] = []
    for entry in entries:
        prior = ids[entry.supersedes] if entry.supersedes is not None else None
        ids.append(store.add_note(note_text(entry, prior), author="earlier-agents").id)
    return ids


def history_paths(root: Path) -> dict[str, Path]:
    """Where each arm's memory lives in a benchmark folder."""
    return {"memory-file": root / "workspace" / "MEMORY.md", "notewell": root / "notes"}
