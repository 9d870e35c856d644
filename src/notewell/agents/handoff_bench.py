"""Does the next agent find what the last one learned? A benchmark of a task handed over between sessions.

``make_handoff(dir, seed)`` writes, deterministically for a seed:

- ``workspace/``: an incident (a nightly export that fails), its runbook of remedies, a log, and
  tools that record every call in a hash-chained log (``tools/try.py`` tries a remedy,
  ``tools/probe.py`` costs cluster time, ``tools/check.py`` says whether the task is done);
- ``session1.md``: five prompts for the first agent: it tries remedies that fail (dead ends),
  probes for the bad record (work that costs), and is told decisions that exist only in the
  conversation; it stops before the fix;
- ``session2.md``: the prompt for a second agent, with none of the first's conversation, that must
  finish the task and write ``FIX.md``; both files open with the protocol and each arm's text;
- ``handoff.json`` (the seed and file hashes, never the key) and ``runs.json`` (the runner fills it).

``next_session(dir, arm)`` is run by the runner between the sessions: it puts the workspace back as
``make`` wrote it (keeping ``MEMORY.md`` in the memory-file arm) and marks the call log
(``calls.jsonl``, beside the workspace). ``handoff_grade.grade_handoff`` rebuilds the key from the seed and counts.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError
from ..model.numbers import whole_number
from .bench_manifest import read_manifest, write_workspace
from .handoff_history import (
    HISTORY_MAX,
    HISTORY_MIN,
    WIDTH,
    Entry,
    build_history,
    history_paths,
    memory_file,
    write_notes,
)
from .handoff_tools import SHARDS, append_entry, read_log, tool_files, world

__all__ = [
    "ARMS", "ARMS_HISTORY", "FORMAT", "Handoff", "build_handoff", "load_handoff", "make_handoff", "next_session",
    "start_session",
]  # fmt: skip

FORMAT = "notewell-handoff-bench/1"
_SERVICES = ["ledgerd", "tallyman", "courier", "ingestor", "vaultsync", "shardkeeper", "mailroom", "beacon"]
# Remedies the runbook lists that do not fix it, each with what trying it says.
_DEAD_ENDS = {
    "raise-timeout": "FAILED: timeout 30 s -> 120 s; the export still aborts with {code} after 41 s",
    "clear-cache": "FAILED: cache cleared; the export aborts with {code} at the same batch",
    "rebuild-index": "FAILED: index rebuilt (12 min); {code} again at the same batch",
    "bump-batch-size": "FAILED: batch size 2000 -> 4000; {code} again: one batch fails its checksum verification",
    "pin-codec-previous": "FAILED: with the previous codec the reader rejects newer records; reverted; {code}",
    "restart-workers": "FAILED: workers restarted; {code} on the next run, at the same batch",
}
_MODES = {
    "quarantine": "legal must keep every record, so the bad one is quarantined, never deleted",
    "delete": "the record is a duplicate of one exported the day before, so it is deleted, not quarantined",
}
_FORBIDDEN_WHY = "the auditors must see every record verified"

# What the runner pastes: at the top of session 1's first prompt, and of session 2's.
ARMS: dict[str, tuple[str, str]] = {
    "none": (
        "",
        "",
    ),
    "memory-file": (
        "Memory: you may keep a file, MEMORY.md, in this folder. It is the only thing of this conversation"
        " that the next agent on this task will get: it reads it before it starts.",
        "Memory: MEMORY.md in this folder is what the previous agent on this task left you. Read it first.",
    ),
    "notewell": (
        "Memory: this project keeps notes in notewell: its MCP tools (search_notes, get_note, add_note,"
        " edit_note), or the shell: `notewell --store ../notes search WORDS`, `notewell --store ../notes add"
        " --title TITLE --kind KIND --text TEXT`. The notes are the only thing of this conversation that the next"
        " agent on this task will get.",
        "Memory: this project keeps notes in notewell: its MCP tools (search_notes, get_note, add_note,"
        " edit_note), or the shell: `notewell --store ../notes search WORDS`, `notewell --store ../notes get ID`."
        " What the store holds now, as its session-start hook gives it:\n\n{briefing}\n\nSearch it before you"
        " start on something.",
    ),
}
_NOTES_TOOLS = (
    "Memory: this project keeps notes in notewell: its MCP tools (search_notes, get_note, add_note,"
    " edit_note), or the shell: `notewell --store ../notes search WORDS`, `notewell --store ../notes get ID`"
)
# With a past (make --history): each arm's memory already holds what earlier sessions kept.
ARMS_HISTORY: dict[str, tuple[str, str]] = {
    "none": ("", ""),
    "memory-file": (
        "Memory: MEMORY.md in this folder is this project's memory, kept by the agents before you. The runtime"
        " loaded its first {loaded} lines (of {total}) at the start of this session:\n\n{head}\n\nRead or search the"
        " rest of it before you start on something. You may add to it: it is the only thing of this conversation"
        " that the next agent on this task will get.",
        "Memory: MEMORY.md in this folder is this project's memory, kept by the agents before you (the previous"
        " agent on this task among them). The runtime loaded its first {loaded} lines (of {total}) at the start of"
        " this session:\n\n{head}\n\nRead or search the rest of it before you start on something.",
    ),
    "notewell": (
        _NOTES_TOOLS + ", `notewell --store ../notes add --title TITLE --kind KIND --text TEXT`. What the store"
        " holds now, as its session-start hook gives it:\n\n{briefing}\n\nSearch it before you start on something."
        " The notes are the only thing of this conversation that the next agent on this task will get.",
        _NOTES_TOOLS + ". What the store holds now, as its session-start hook gives it:\n\n{briefing}\n\nSearch it"
        " before you start on something.",
    ),
}
FIX_FORM = (
    "remedy: <the remedy, as you would pass it to tools/try.py: NAME [ARG]>\n"
    "cause: <what wrote the bad record: the build>\n"
    "ticket: <the change ticket>\n"
    "release: <the release the fix ships in>\n"
    "ruled_out: <the remedies that were tried and failed, comma-separated>\n"
)


@dataclass
class Handoff:
    """One benchmark: its files, prompts and the key (which is never written)."""

    seed: int
    files: dict[str, str] = field(default_factory=dict)  # workspace-relative path -> text
    session1: list[str] = field(default_factory=list)
    session2: list[str] = field(default_factory=list)
    key: dict[str, Any] = field(default_factory=dict)
    history: list[Entry] = field(default_factory=list)


def build_handoff(seed: int = 1, history: int = 0) -> Handoff:
    """The benchmark for *seed*, in memory (``make_handoff`` writes it); *history*: entries of the
    project's past memory (0: none, the benchmark as it was without them)."""
    whole_number("the seed", seed, 0, 2**32 - 1)
    whole_number("the history", history, 0, HISTORY_MAX)
    if 0 < history < HISTORY_MIN:
        raise InvalidArgumentError(
            f"a past is 0 or {HISTORY_MIN} to {HISTORY_MAX} entries (more than a runtime loads of a memory file),"
            f" got {history}"
        )
    rng = random.Random(f"handoff-{seed}")
    svc = rng.choice(_SERVICES)
    code = f"E-{rng.randrange(1000, 9999)}"
    day = f"2026-{rng.randint(1, 9):02d}-{rng.randint(10, 28):02d}"
    salt = f"{rng.getrandbits(64):016x}"
    bad_shard = rng.randrange(SHARDS)
    names = sorted(_DEAD_ENDS)
    rng.shuffle(names)
    tried, untried = names[:3], names[3:]
    mode = rng.choice(sorted(_MODES))
    ticket, dry_run = (f"OPS-{n}" for n in rng.sample(range(1000, 9999), 2))
    major, minor = rng.randint(3, 9), rng.randint(10, 40)
    patch = rng.randint(1, 8)
    release, frozen = f"{major}.{minor}.{patch + 1}", f"{major}.{minor}.{patch}"
    found = world(salt, bad_shard)
    dead_ends = {name: _DEAD_ENDS[name].format(code=code) for name in names}
    files = _workspace(rng, svc, code, day, names)
    files.update(tool_files(salt, bad_shard, dead_ends))
    key = {
        "service": svc, "code": code, "bad_shard": bad_shard, "record": found["record"], "writer": found["writer"],
        "tried": tried, "untried": untried, "mode": mode, "forbidden": "skip-checksums",
        "ticket": ticket, "dry_run": dry_run, "release": release, "frozen": frozen,
    }  # fmt: skip
    handoff = Handoff(seed, files, key=key)
    if history:
        # Its own generator, so that a seed without a history is what it always was.
        lo = min(max(0, bad_shard - random.Random(f"handoff-window-{seed}").randrange(WIDTH)), SHARDS - WIDTH)
        key.update(history=history, window=[lo, lo + WIDTH - 1])
        handoff.history = build_history(seed, history, key, _SERVICES, day)
    handoff.session1 = _session1_prompts(key, day)
    handoff.session2 = [
        f"You are on call for {svc}: its nightly export fails (README.md). Another agent worked on it"
        " yesterday; you have none of its conversation. Finish the task: find the fix, confirm it with"
        " `python tools/try.py`, write FIX.md in this folder in exactly this form, one line each (write"
        " `unknown` where you do not know; one value a line: a line naming two values counts as wrong):\n\n"
        f"```\n{FIX_FORM}```\n\nThen run `python tools/check.py` until it says PASS, and say when you are done."
    ]
    return handoff


def _session1_prompts(key: dict[str, Any], day: str) -> list[str]:
    a, b, c = key["tried"]
    svc, code = key["service"], key["code"]
    keep = "quarantine-record" if key["mode"] == "quarantine" else "delete-record"
    # With a past, the rule and the release train are the project's memory's, not the conversation's.
    fourth = (
        "Find what wrote it: `python tools/probe.py record ID`."
        if key.get("history")
        else "Find what wrote it: `python tools/probe.py record ID`. Decision: the fix is "
        f"`{keep} ID`: {_MODES[key['mode']]}."
    )
    ships = (
        f"ships in the release that is open for {svc} fixes now"
        if key.get("history")
        else f"ships in release {key['release']} (not {key['frozen']}: it is frozen)"
    )
    return [
        f"You are on call for {svc}: its nightly export has failed with {code} since {day}. This folder is the"
        " workspace: README.md says how the export runs, RUNBOOK.md lists the known remedies, the tools are in"
        f" tools/. Try `{a}` and `{b}` with `python tools/try.py NAME` and tell me what each said.",
        f"Try `{c}` as well. Decision (mine, final): we never use `skip-checksums` for this: {_FORBIDDEN_WHY}.",
        "So one record is bad. Find the shard that holds it: `python tools/probe.py shards A-B` says whether"
        " shards A to B hold a record that fails verification (2 minutes of cluster time a shard), and"
        f" `python tools/probe.py shard N` names it. The shards are 0-{SHARDS - 1}. Tell me the record's id.",
        fourth,
        f"Decision: the change goes in under ticket {key['ticket']} ({key['dry_run']} was the dry run) and"
        f" {ships}. Do not apply or write the fix now:"
        " approval comes tomorrow, and tomorrow another agent finishes this without our conversation. That is"
        " all for today.",
    ]


def _workspace(rng: random.Random, svc: str, code: str, day: str, dead_ends: list[str]) -> dict[str, str]:
    """README, RUNBOOK (the remedies, cheap ones first), the export's config and its log."""
    runbook = [
        f"# Runbook: {svc} export fails with {code}\n",
        f"{code} means a batch failed verification. Known remedies, cheapest first; try one with",
        "`python tools/try.py NAME` (3 minutes on a copy of last night's export):\n",
    ]
    runbook += [f"- `{name}`" for name in sorted(dead_ends)]
    runbook += [
        "- `skip-checksums`: export without verifying checksums",
        "- `quarantine-record ID`: move one record that fails verification aside, then export",
        "- `delete-record ID`: delete one record that fails verification, then export",
        "\nFinding a bad record: `python tools/probe.py shards A-B`, `shard N`, `record ID` (costs cluster time).",
    ]
    readme = (
        f"# {svc} nightly export\n\nEvery night {svc} exports its {SHARDS} shards (0-{SHARDS - 1}) to the warehouse;"
        f" every record's checksum is verified on the way. Since {day} the export aborts with {code}.\n\n"
        "Tools (run them from this folder; every call is logged):\n\n"
        "- `python tools/try.py NAME [ARG]`: try a remedy from RUNBOOK.md on a copy of last night's export\n"
        "- `python tools/probe.py shards A-B | shard N | record ID`: look into the shards (costs cluster time)\n"
        "- `python tools/check.py`: runs the export with the remedy FIX.md names; PASS when it is done\n"
    )
    config = (
        f"# {svc} export\nshards = {SHARDS}\nbatch_size = 2000\ntimeout_s = 30\nverify_checksums = true\n"
        f'codec = "{rng.choice(["wirecodec 1.4.3+b02", "wirecodec 1.4.2+b19"])}"\n'
    )
    lines, second = [], 3600
    for i in range(600):
        second += rng.choice([0, 1, 2])
        stamp = f"{day}T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"
        shard = rng.randrange(SHARDS)
        lines.append(f"{stamp} INFO {svc}-export batch {i} shard {shard} verified rows={rng.randint(900, 2000)}")
    lines.append(f"{stamp} ERROR {svc}-export batch 600 verification failed: {code}; export aborted")
    return {
        "README.md": readme,
        "RUNBOOK.md": "\n".join(runbook) + "\n",
        "config/export.toml": config,
        f"logs/export-{day}.log": "\n".join(lines) + "\n",
    }


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _header(session: int, count: int, history: int = 0) -> list[str]:
    arms = [
        f"# Session {session} of 2: {count} prompt{'s' if count > 1 else ''}, one per turn\n",
        "Protocol. The agent works in `workspace/` (its working folder) and may run anything there; it does not"
        " read the tools' source, the call log (`../calls.jsonl`) or anything outside `workspace/` but what its arm"
        " names. A fresh session for each, with the runtime's own memory outside the workspace off (auto memory, a"
        " user-level CLAUDE.md or AGENTS.md). Between the sessions the runner runs"
        " `notewell bench handoff next DIR --arm ARM`, which puts the workspace back as it was made (keeping"
        " MEMORY.md in the memory-file arm) and marks where session 2 begins. After each session"
        " the runner fills in runs.json (turns, tokens) and keeps the transcript. Grade with"
        " `notewell bench handoff grade DIR --transcript FILE...`.\n",
        "Arms: the text below goes, with a blank line, before the first prompt of this session.\n",
    ]
    if history:
        arms.insert(2, (
            f"The project has a past: {history} entries of memory that earlier sessions kept. Before session 1 the"
            " runner runs `notewell bench handoff start DIR --arm ARM`, which writes them into the arm's memory"
            " (MEMORY.md in the workspace, oldest first, or one note each in the notewell store ../notes; nothing"
            " for none) and prints the arm's text for session 1; `next` prints the text for session 2.\n"
        ))  # fmt: skip
    for name, texts in (ARMS_HISTORY if history else ARMS).items():
        text = texts[session - 1] or "(nothing: the prompts alone)"
        if history and name == "memory-file":
            text = (
                text.replace("{head}", "<the first lines of MEMORY.md, as the runtime loads them>")
                .replace("{loaded}", "<N>")
                .replace("{total}", "<the lines of MEMORY.md>")
            )
        if name == "notewell" and (session == 2 or history):
            text = text.replace(
                "{briefing}",
                "<the output of: notewell --store ../notes hook session-start </dev/null, run in workspace/>",
            )
        arms.append(f"- **{name}**: {text}\n")
    return arms


def make_handoff(directory: str | Path, *, seed: int = 1, history: int = 0) -> Handoff:
    """Write the benchmark for *seed* (with *history* entries of the project's past) into *directory*
    (new or empty)."""
    handoff = build_handoff(seed, history)
    root = Path(directory)
    write_workspace(root, handoff.files)
    for number, prompts in ((1, handoff.session1), (2, handoff.session2)):
        parts = _header(number, len(prompts), history) + [f"## Prompt {i}\n\n{p}\n" for i, p in enumerate(prompts, 1)]
        (root / f"session{number}.md").write_text("\n".join(parts), encoding="utf-8")
    manifest: dict[str, Any] = {"format": FORMAT, "seed": seed}
    if history:
        manifest["history"] = history
    manifest["files"] = {f"workspace/{rel}": _sha(text) for rel, text in handoff.files.items()}
    (root / "handoff.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    runs = {"arm": None, "sessions": [{"turns": None, "tokens": None}, {"turns": None, "tokens": None}]}
    (root / "runs.json").write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    return handoff


def load_handoff(directory: str | Path) -> tuple[Handoff, dict[str, Any]]:
    """The benchmark a folder holds, rebuilt from its seed, and its manifest."""
    manifest = read_manifest(Path(directory), "handoff.json", FORMAT, "notewell bench handoff make DIR")
    history = manifest.get("history", 0)
    return build_handoff(manifest.get("seed"), history), manifest  # type: ignore[arg-type]  # checked by build


def read_runs(root: Path) -> dict[str, Any]:
    """runs.json, or an empty record when it is missing or unreadable."""
    try:
        runs = json.loads((root / "runs.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return runs if isinstance(runs, dict) else {}


def start_session(directory: str | Path, arm: str, open_notes: Callable[[Path], Any] | None = None) -> dict[str, Any]:
    """Before session 1 of a benchmark with a past: write the past into the arm's memory (MEMORY.md in
    the workspace, or one note an entry into the notewell arm's store ``DIR/notes``, opened with
    *open_notes*, by default ``open_store``); the arm goes into runs.json. Runs once, in a folder
    whose session 1 has not begun."""
    if arm not in ARMS:
        raise InvalidArgumentError(f"the arm is one of {', '.join(ARMS)}, got {arm!r}")
    handoff, _ = load_handoff(directory)
    root = Path(directory)
    runs = read_runs(root)
    entries, _ = read_log(root)
    if runs.get("started") or entries:
        raise InvalidArgumentError("session 1 has begun already (start runs once, before it)")
    if not (root / "workspace").is_dir():
        raise InvalidArgumentError(f"{root / 'workspace'} is missing: make the benchmark again")
    paths = history_paths(root)
    written = 0
    if handoff.history and arm == "memory-file":
        paths["memory-file"].write_text(memory_file(handoff.history), encoding="utf-8")
        written = len(handoff.history)
    elif handoff.history and arm == "notewell":
        written = _write_past_notes(paths["notewell"], handoff.history, open_notes)
    runs.update({"arm": arm, "started": True})
    (root / "runs.json").write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    return {"arm": arm, "history": len(handoff.history), "written": written}


def _write_past_notes(path: Path, history: list[Entry], open_notes: Callable[[Path], Any] | None) -> int:
    if path.exists() and any(path.rglob("*.md")):
        raise InvalidArgumentError(f"{path} holds notes already: make the benchmark again in a new folder")
    if open_notes is None:
        from ..services.opening import open_store

        open_notes = open_store
    store = open_notes(path)
    try:
        return len(write_notes(store, history))
    finally:
        store.close()


def next_session(directory: str | Path, arm: str) -> dict[str, Any]:
    """Between the sessions: the workspace back as made (but MEMORY.md for memory-file),
    a session-2 mark in the log, session 1's last hash and the arm in runs.json."""
    if arm not in ARMS:
        raise InvalidArgumentError(f"the arm is one of {', '.join(ARMS)}, got {arm!r}")
    handoff, _ = load_handoff(directory)
    root = Path(directory)
    work = root / "workspace"
    entries, problems = read_log(root)
    if any(e.get("tool") == "session" for e in entries):
        raise InvalidArgumentError("session 2 has begun already (next runs once, between the sessions)")
    started = read_runs(root)
    if handoff.history and not started.get("started"):
        raise InvalidArgumentError("a benchmark with a past needs `bench handoff start DIR --arm ARM` before session 1")
    if started.get("started") and started.get("arm") != arm:
        raise InvalidArgumentError(f"this run started as arm {started.get('arm')}, not {arm}")
    keep: set[str] = {"MEMORY.md"} if arm == "memory-file" else set()
    removed = []
    for path in sorted(work.rglob("*"), reverse=True):
        rel = path.relative_to(work).as_posix()
        kept = rel in keep and path.is_file() and not path.is_symlink()  # a link or a FIFO is not a memory
        if kept or rel in handoff.files or "__pycache__" in rel:
            continue
        if path.is_dir() and not path.is_symlink():
            if not any(path.iterdir()) and not any(f.startswith(rel + "/") for f in handoff.files):
                path.rmdir()
            continue
        path.unlink()
        removed.append(rel)
    restored = []
    for rel, text in handoff.files.items():
        path = work / rel
        if path.is_symlink() or path.is_dir():
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        if not path.is_file() or path.read_text(encoding="utf-8", errors="replace") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            restored.append(rel)
    head = entries[-1].get("hash") if entries else None
    mark = append_entry(root, {"tool": "session", "args": ["2", arm], "result": "session 2 begins", "cost_min": 0})
    runs = read_runs(root)
    runs.update({"arm": arm, "session1_entries": len(entries), "session1_head": head})
    (root / "runs.json").write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    return {"arm": arm, "removed": sorted(removed), "restored": restored, "log_problems": problems,
            "session1_calls": len(entries), "mark": mark["n"]}  # fmt: skip
