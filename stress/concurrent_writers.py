"""Concurrent writers and readers on one store (issue 9).

    python stress/concurrent_writers.py --writers 4 --ops 2000 --readers 2 [--dir DIR] [--keep]

Each writer process makes mixed writes on its own notes (add, edit, add_tag, set_summary,
delete) and logs every acknowledged result, one JSON line per op, flushed before the next op.
Reader processes search, list and get notes until the writers are done, checking that every
note they see is whole: each note's body carries a payload between ``BEGIN`` and ``END <sha256>``
lines, the hash of the payload, and the header keeps the writer's tag.

At the end: every acknowledged note that was not deleted is present exactly once with its last
acknowledged text, no id is listed twice, deleted notes are gone, and the index matches the
folder (a whole-folder check finds nothing to repair; every note's current version token finds
it and only it; an earlier version's token finds nothing; a rebuild from the folder and journal
gives the same ids and authors). Any exception in a writer or reader is a failure.

Run as a script it prints its figures and exits non-zero on any failure; ``run()`` returns the
figures (the quick test in tests/stress/test_concurrent.py calls it).
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    # Run as a script, this file's folder comes first on sys.path, where this file would
    # shadow the standard library's ``concurrent`` package (which notewell imports).
    del sys.path[0]

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
TAG_POOL = ["alpha", "beta", "gamma", "delta", "kappa", "omega", "sigma", "theta"]
WORDS = (
    "cache stampede worker refill restart policy clause learning solver phase saving queue index "
    "journal revision header search token window merge segment vector shard replica commit"
).split()
# Operation weights for a writer (add also happens whenever it has no live note to touch).
WEIGHTS = {"add": 40, "edit": 25, "tag": 12, "summary": 13, "delete": 10}


# -- note texts ---------------------------------------------------------------


def version_token(writer: int, seq: int, version: int) -> str:
    """A word that only this version of this note contains (ends in digits: no stemming)."""
    return f"vt{writer}x{seq}x{version}"


def note_token(writer: int, seq: int) -> str:
    """A word every version of this note contains."""
    return f"nt{writer}x{seq}"


def make_text(writer: int, seq: int, version: int, rng: random.Random) -> str:
    """A note whose payload is followed by its own checksum, so a reader can tell it is whole."""
    words = rng.choices(WORDS, k=rng.randint(5, 60))
    lines = [
        f"writer {writer} note {seq} version {version} {note_token(writer, seq)} {version_token(writer, seq, version)}",
        " ".join(words),
    ]
    if rng.random() < 0.05:  # a few large notes widen the window a torn read would need
        lines.append(("stress padding " * 4000).strip())
    payload = "\n".join(lines) + "\n"
    check = hashlib.sha256(payload.encode()).hexdigest()
    return (
        f"---\ntitle: w{writer} note {seq}\nkind: stress\ntags: [w{writer}, stress]\n---\nBEGIN\n{payload}END {check}\n"
    )


def whole(text: str) -> str | None:
    """None when *text* is a whole note of this harness, else what is wrong with it."""
    if text.count("\nBEGIN\n") != 1 or not text.startswith("---\n"):
        return "no single BEGIN line after a header"
    payload = text.split("\nBEGIN\n", 1)[1]
    body, sep, tail = payload.rpartition("END ")
    if not sep:
        return "no END line"
    check = tail.strip()
    if tail != check + "\n" or hashlib.sha256(body.encode()).hexdigest() != check:
        return "payload does not match its checksum"
    return None


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


# -- the writer process ---------------------------------------------------------


def writer_main(store_dir: str, writer: int, ops: int, log_path: str, seed: int, watch: bool) -> None:
    import notewell

    rng = random.Random(seed)
    store = notewell.open(store_dir, watch=watch, embedder=None)
    live: dict[str, tuple[int, int]] = {}  # id -> (seq, version)
    seq = 0
    latencies: list[float] = []
    started = time.perf_counter()
    with open(log_path, "a", encoding="utf-8") as log:

        def record(entry: dict[str, Any]) -> None:
            log.write(json.dumps(entry) + "\n")
            log.flush()

        for i in range(ops):
            op = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
            if op != "add" and not live:
                op = "add"
            t0 = time.perf_counter()
            try:
                if op == "add":
                    seq += 1
                    text = make_text(writer, seq, 1, rng)
                    note = store.add_note(text, author=f"w{writer}")
                    if note.text != text:
                        record({"op": "error", "i": i, "error": f"add returned other text for {note.id}"})
                    live[note.id] = (seq, 1)
                    record({"op": "add", "i": i, "id": note.id, "seq": seq, "ver": 1, "sha": sha(note.text)})
                else:
                    nid = rng.choice(sorted(live))
                    s, v = live[nid]
                    if op == "edit":
                        text = make_text(writer, s, v + 1, rng)
                        note = store.edit_note(nid, text, author=f"w{writer}")
                        if note.text != text:
                            record({"op": "error", "i": i, "error": f"edit returned other text for {nid}"})
                        live[nid] = (s, v + 1)
                        record({"op": "edit", "i": i, "id": nid, "seq": s, "ver": v + 1, "sha": sha(note.text)})
                    elif op == "tag":
                        tag = rng.choice(TAG_POOL)
                        note = store.add_tag(nid, tag, author=f"w{writer}")
                        if tag not in note.tags or whole(note.text):
                            record({"op": "error", "i": i, "error": f"add_tag on {nid} returned {note.tags}"})
                        record({"op": "tag", "i": i, "id": nid, "seq": s, "ver": v, "sha": sha(note.text)})
                    elif op == "summary":
                        summary = f"summary {rng.randint(0, 10**6)} of w{writer} note {s}"
                        note = store.set_summary(nid, summary, author=f"w{writer}")
                        if note.summary != summary or whole(note.text):
                            record({"op": "error", "i": i, "error": f"set_summary on {nid} gave {note.summary!r}"})
                        record({"op": "summary", "i": i, "id": nid, "seq": s, "ver": v, "sha": sha(note.text)})
                    else:
                        store.delete_note(nid)
                        del live[nid]
                        record({"op": "delete", "i": i, "id": nid, "seq": s, "ver": v})
            except Exception as exc:  # any exception reaching the caller is a failure
                record({"op": "error", "i": i, "kind": op, "error": f"{type(exc).__name__}: {exc}"})
            latencies.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - started
        record(
            {
                "op": "done",
                "ops": ops,
                "seconds": elapsed,
                "p50_ms": percentile(latencies, 0.5) * 1000,
                "p95_ms": percentile(latencies, 0.95) * 1000,
            }
        )
    store.close()


# -- the reader process -----------------------------------------------------------


def reader_main(store_dir: str, reader: int, stop_file: str, out_path: str, seed: int, watch: bool) -> None:
    import notewell

    rng = random.Random(seed)
    store = notewell.open(store_dir, watch=watch, embedder=None)
    search_ms: list[float] = []
    get_ms: list[float] = []
    list_ms: list[float] = []
    errors: list[str] = []
    torn: list[str] = []
    vanished: list[str] = []  # found by a search, deleted before the get: fine if a writer deleted it
    seen: set[str] = set()

    def check(note: Any) -> None:
        problem = whole(note.text)
        writer_tag = note.title.split(" ", 1)[0] if note.title else "?"
        if problem is None and writer_tag not in note.tags:
            problem = f"tags {note.tags} lack {writer_tag}"
        if problem is None and note.text.split("\nBEGIN\n", 1)[1] not in note.body:
            problem = "body does not hold the payload"
        if problem:
            torn.append(f"{note.id}: {problem}")
        seen.add(note.id)

    while not os.path.exists(stop_file):
        kind = rng.random()
        try:
            t0 = time.perf_counter()
            if kind < 0.15:
                cards = store.list_notes(limit=rng.choice([5, 20, 50]))
                list_ms.append((time.perf_counter() - t0) * 1000)
            else:
                query = rng.choice(
                    [
                        "stress",
                        f"w{rng.randrange(8)}",
                        " ".join(rng.sample(WORDS, 2)),
                        rng.choice(WORDS),
                        f"nt{rng.randrange(8)}x{rng.randint(1, 400)}",
                    ]
                )
                cards = store.search_notes(query, limit=rng.choice([5, 10, 20]))
                search_ms.append((time.perf_counter() - t0) * 1000)
            ids = [c.id for c in cards]
            if len(ids) != len(set(ids)):
                errors.append(f"duplicate ids in one answer: {ids}")
            for card in cards[:3]:
                t0 = time.perf_counter()
                try:
                    note = store.get_note(card.id)
                except notewell.NotFoundError:
                    vanished.append(card.id)
                    continue
                finally:
                    get_ms.append((time.perf_counter() - t0) * 1000)
                check(note)
        except Exception as exc:  # any exception reaching the caller is a failure
            errors.append(f"{type(exc).__name__}: {exc}")
            if len(errors) <= 3:
                errors.append(traceback.format_exc(limit=4))
    store.close()
    Path(out_path).write_text(
        json.dumps(
            {
                "reader": reader,
                "search_ms": search_ms,
                "get_ms": get_ms,
                "list_ms": list_ms,
                "errors": errors,
                "torn": torn,
                "vanished": vanished,
                "seen": len(seen),
            }
        )
    )


# -- the run and the final check ------------------------------------------------------


def _env() -> dict[str, str]:
    import notewell

    env = dict(os.environ)
    src = str(Path(notewell.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    env["NOTEWELL_AUTOWATCH"] = "off"
    return env


def _spawn(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HERE), *args], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def verify(store_dir: Path, logs: dict[int, list[dict[str, Any]]]) -> dict[str, Any]:
    """Check the store against what the writers were told; returns counts and a list of mismatches."""
    import notewell

    mismatches: list[str] = []
    expected: dict[str, tuple[int, int, int, str]] = {}  # id -> (writer, seq, ver, sha)
    deleted: set[str] = set()
    acked = 0
    for writer, entries in logs.items():
        for e in entries:
            if e["op"] in ("add", "edit", "tag", "summary"):
                acked += 1
                if e["op"] == "add" and (e["id"] in expected or e["id"] in deleted):
                    mismatches.append(f"id {e['id']} handed out twice")
                expected[e["id"]] = (writer, e["seq"], e["ver"], e["sha"])
            elif e["op"] == "delete":
                acked += 1
                expected.pop(e["id"], None)
                deleted.add(e["id"])
    # inotify after the first whole-folder check, so the checks below do not rescan the folder each time
    store = notewell.open(store_dir, watch=True, embedder=None)
    try:
        report = store.refresh()  # a whole-folder check: the index should need nothing
        if report.total or report.problems:
            mismatches.append(f"the index did not match the folder: {report.to_dict()}")
        listed: list[str] = []
        offset = 0
        while True:
            page = store.list_notes(limit=100, offset=offset)
            listed += [c.id for c in page]
            offset += 100
            if len(page) < 100:
                break
        if len(listed) != len(set(listed)):
            mismatches.append(f"{len(listed) - len(set(listed))} duplicate ids listed")
        if set(listed) != set(expected):
            missing = sorted(set(expected) - set(listed))[:5]
            extra = sorted(set(listed) - set(expected))[:5]
            mismatches.append(f"listed != acknowledged: missing {missing}, extra {extra}")
        files = {
            p.relative_to(store_dir).as_posix()
            for p in store_dir.rglob("*.md")
            if not any(part.startswith(".") for part in p.relative_to(store_dir).parts)
        }
        if files != {f"{nid}.md" for nid in expected}:
            mismatches.append(f"folder has {len(files)} notes, expected {len(expected)}")
        for nid, (writer, seq, ver, digest) in sorted(expected.items()):
            try:
                note = store.get_note(nid)
            except notewell.NotFoundError:
                mismatches.append(f"{nid} acknowledged but not found")
                continue
            if sha(note.text) != digest:
                mismatches.append(f"{nid} is not its last acknowledged text")
            elif (store_dir / f"{nid}.md").read_bytes() != note.text.encode():
                mismatches.append(f"{nid}: file and get_note differ")
            if whole(note.text):
                mismatches.append(f"{nid} is not whole")
            found = [c.id for c in store.search_notes(version_token(writer, seq, ver), limit=5)]
            if found != [nid]:
                mismatches.append(f"{nid}: its version token finds {found}")
            if ver > 1:
                # Found through its older revision at most (search spans revisions), never as current.
                old = [
                    c.id
                    for c in store.search_notes(version_token(writer, seq, ver - 1), limit=5)
                    if c.matched_revision is None
                ]
                if old:
                    mismatches.append(f"{nid}: the token of its previous version still finds {old}")
        for nid in sorted(deleted):
            try:
                store.get_note(nid)
                mismatches.append(f"{nid} was deleted but is still served")
            except notewell.NotFoundError:
                pass
        authors = {nid: store.get_note(nid).author for nid in expected}
    finally:
        store.close()
    # The journal and the folder alone give the same notes (ids and authors).
    copy = Path(tempfile.mkdtemp(prefix="nw-rebuild-"))
    try:
        shutil.copytree(store_dir, copy / "s", ignore=shutil.ignore_patterns(".notewell"))
        rebuilt = notewell.open(copy / "s", watch=True, embedder=None)
        try:
            again: dict[str, str | None] = {}
            offset = 0
            while True:
                page = rebuilt.list_notes(limit=100, offset=offset)
                again.update((c.id, c.author) for c in page)
                offset += 100
                if len(page) < 100:
                    break
            if again != authors:
                mismatches.append("a rebuild from folder and journal gives other ids or authors")
        finally:
            rebuilt.close()
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    return {"acked": acked, "live": len(expected), "deleted": len(deleted), "mismatches": mismatches}


def run(
    store_dir: Path, *, writers: int = 4, ops: int = 2000, readers: int = 2, seed: int = 1, timeout: float = 1800
) -> dict[str, Any]:
    """Run the writers and readers on a new store in *store_dir*; returns the figures."""
    import notewell

    store_dir = Path(store_dir)
    notewell.open(store_dir, watch=False, embedder=None).close()
    work = Path(tempfile.mkdtemp(prefix="nw-concurrent-"))
    stop = work / "stop"
    try:
        reader_procs = [
            _spawn(
                [
                    "--role",
                    "reader",
                    "--store",
                    str(store_dir),
                    "--index",
                    str(k),
                    "--stop",
                    str(stop),
                    "--out",
                    str(work / f"reader{k}.json"),
                    "--seed",
                    str(seed * 100 + 50 + k),
                    "--watch",
                    "1" if k % 2 == 0 else "0",
                ]  # fmt: skip
            )
            for k in range(readers)
        ]
        started = time.perf_counter()
        writer_procs = [
            _spawn(
                [
                    "--role",
                    "writer",
                    "--store",
                    str(store_dir),
                    "--index",
                    str(k),
                    "--ops",
                    str(ops),
                    "--out",
                    str(work / f"writer{k}.jsonl"),
                    "--seed",
                    str(seed * 100 + k),
                    "--watch",
                    "1" if k % 2 else "0",
                ]  # fmt: skip
            )
            for k in range(writers)
        ]
        crashes: list[str] = []
        deadline = time.monotonic() + timeout
        for k, p in enumerate(writer_procs):
            try:
                _, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
                crashes.append(f"writer {k} timed out")
            if p.returncode:
                crashes.append(f"writer {k} exited {p.returncode}: {err[-2000:]}")
        wall = time.perf_counter() - started
        stop.touch()
        for k, p in enumerate(reader_procs):
            try:
                _, err = p.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
                crashes.append(f"reader {k} timed out")
            if p.returncode:
                crashes.append(f"reader {k} exited {p.returncode}: {err[-2000:]}")
        logs = {k: _read_log(work / f"writer{k}.jsonl") for k in range(writers)}
        reads = [
            json.loads((work / f"reader{k}.json").read_text())
            for k in range(readers)
            if (work / f"reader{k}.json").exists()
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    writer_errors = [f"writer {k}: {e['error']}" for k, log in logs.items() for e in log if e["op"] == "error"]
    done = {k: next((e for e in log if e["op"] == "done"), None) for k, log in logs.items()}
    deleted_by_writers = {e["id"] for log in logs.values() for e in log if e["op"] == "delete"}
    reader_errors = [e for r in reads for e in r["errors"]]
    torn = [t for r in reads for t in r["torn"]]
    odd_vanished = sorted({v for r in reads for v in r["vanished"]} - deleted_by_writers)
    checked = verify(store_dir, logs)
    search_ms = [x for r in reads for x in r["search_ms"]]
    get_ms = [x for r in reads for x in r["get_ms"]]
    list_ms = [x for r in reads for x in r["list_ms"]]
    locked = [e for e in writer_errors + reader_errors if "locked" in e.lower()]
    return {
        "writers": writers,
        "ops_per_writer": ops,
        "readers": readers,
        "wall_seconds": wall,
        "writer_ops_per_s": {k: (d["ops"] / d["seconds"] if d else 0.0) for k, d in done.items()},
        "writer_latency_ms": {k: (d["p50_ms"], d["p95_ms"]) if d else None for k, d in done.items()},
        "total_ops_per_s": writers * ops / wall if wall else 0.0,
        "acked": checked["acked"],
        "live_notes": checked["live"],
        "deleted_notes": checked["deleted"],
        "reader_searches": len(search_ms),
        "reader_gets": len(get_ms),
        "reader_lists": len(list_ms),
        "notes_seen_by_readers": sum(r["seen"] for r in reads),
        "search_p50_ms": percentile(search_ms, 0.5),
        "search_p95_ms": percentile(search_ms, 0.95),
        "get_p50_ms": percentile(get_ms, 0.5),
        "get_p95_ms": percentile(get_ms, 0.95),
        "list_p50_ms": percentile(list_ms, 0.5),
        "vanished_between_search_and_get": sum(len(r["vanished"]) for r in reads),
        "errors": crashes
        + writer_errors
        + reader_errors
        + [f"torn: {t}" for t in torn]
        + [f"not found but never deleted: {v}" for v in odd_vanished]
        + checked["mismatches"],
        "database_is_locked": len(locked),
        "torn_reads": len(torn),
        "mismatches": len(checked["mismatches"]),
    }


def print_figures(fig: dict[str, Any], out: Any = sys.stdout) -> None:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"concurrent writers: {fig['writers']} processes x {fig['ops_per_writer']} ops, {fig['readers']} readers")
    p(f"  wall time                    {fig['wall_seconds']:.1f} s")
    for k, rate in fig["writer_ops_per_s"].items():
        lat = fig["writer_latency_ms"][k]
        shown = f"p50 {lat[0]:.1f} ms, p95 {lat[1]:.1f} ms" if lat else "did not finish"
        p(f"  writer {k}                     {rate:.1f} ops/s ({shown})")
    p(f"  total                        {fig['total_ops_per_s']:.1f} ops/s")
    p(f"  acknowledged writes          {fig['acked']} ({fig['live_notes']} notes live, {fig['deleted_notes']} deleted)")
    p(
        f"  reader searches              {fig['reader_searches']}, p50 {fig['search_p50_ms']:.1f} ms,"
        f" p95 {fig['search_p95_ms']:.1f} ms"
    )
    p(
        f"  reader get_note              {fig['reader_gets']}, p50 {fig['get_p50_ms']:.1f} ms,"
        f" p95 {fig['get_p95_ms']:.1f} ms"
    )
    p(f"  reader list_notes            {fig['reader_lists']}, p50 {fig['list_p50_ms']:.1f} ms")
    p(f"  notes checked whole          {fig['notes_seen_by_readers']} distinct per reader, summed")
    p(f"  deleted between search/get   {fig['vanished_between_search_and_get']} (expected race, not an error)")
    p(f"  'database is locked'         {fig['database_is_locked']}")
    p(f"  torn reads                   {fig['torn_reads']}")
    p(f"  final mismatches             {fig['mismatches']}")
    p(f"  errors                       {len(fig['errors'])}")
    for e in fig["errors"][:20]:
        p(f"    {e}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--ops", type=int, default=2000)
    ap.add_argument("--readers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", help="store folder (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the store afterwards")
    # internal: the child processes
    ap.add_argument("--role", choices=("writer", "reader"), help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    ap.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--stop", help=argparse.SUPPRESS)
    ap.add_argument("--watch", default="0", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.role == "writer":
        writer_main(args.store, args.index, args.ops, args.out, args.seed, args.watch == "1")
        return 0
    if args.role == "reader":
        reader_main(args.store, args.index, args.stop, args.out, args.seed, args.watch == "1")
        return 0
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="nw-stress-")) / "notes"
    try:
        fig = run(base, writers=args.writers, ops=args.ops, readers=args.readers, seed=args.seed)
        print_figures(fig)
        if args.keep:
            print(f"  store kept at {base}")
    finally:
        if not args.keep:
            shutil.rmtree(base if args.dir else base.parent, ignore_errors=True)
    return 1 if fig["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
