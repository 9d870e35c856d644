#!/usr/bin/env python3
"""notewell beside raw SQLite FTS5 on the same notes, in one run, alternated round by round, as ratios.

The physical reference: what the same texts cost when written to files and one FTS5 table
(notewell's tokenizer, CJK segmented the way notewell segments it, `title` and `body` columns, one
transaction, the folder synced once), with nothing else: no journal, no history, no other index.

    python benchmarks/bench_vs_fts5.py --notes 10000 --rounds 2

Per round, for notewell and then raw FTS5, each in a fresh folder:
  1. bulk import            notewell add_notes(texts)        raw: files + one INSERT transaction (and
                            the table alone: parsing, segmenting, one INSERT transaction, no files)
  2. index on disk          .notewell/ (all of it)            raw: the database (checkpointed)
  3. rebuild                notewell reindex (index present)  raw: read the files, fill a new table
  4. single durable add     add_note x --adds, p50            raw: a file (fsync) + one INSERT committed
                            with synchronous=FULL
  5. keyword search         search_notes(q, limit=10) p50/p95 on a watched store; raw: MATCH ... ORDER
                            BY rank LIMIT 10; and agreement: the share of exact BM25's top 10 (raw
                            FTS5's) that notewell's top 10 holds, on the one- and two-word queries
Where basic-memory is installed (scripts/install-basic-memory, or $NOTEWELL_BENCH_BASIC_MEMORY), each round
then puts the first --bm-notes notes into notewell and into basic-memory, alternating which goes first:
indexing a folder of them (notewell: a rebuild; basic-memory: its indexing pass), a bulk import (notewell),
the index on disk, keyword search p50/p95 over the same queries and one cold search process each.
Prints every round's figures, then the medians and the ratios (notewell / raw, or raw / notewell for
rates; for basic-memory, how many times notewell is faster or smaller). Never asserts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from basic_memory_leg import BasicMemory, find_basic_memory, installed_version  # noqa: E402
from bench_store import Corpus, fts_expr, pct  # noqa: E402

import notewell  # noqa: E402
from notewell.model.cjk import segment  # noqa: E402
from notewell.model.note import title_and_body  # noqa: E402


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _title_body(text: str) -> tuple[str, str]:
    return title_and_body(text, "")  # as notewell's index keeps them


# notewell's own tokenizer (porter stemming over unicode61): the same words match on both sides,
# so agreement measures ranking, not tokenizing.
_TABLE = (
    "CREATE VIRTUAL TABLE fts USING fts5(nid UNINDEXED, title, body, tokenize = 'porter unicode61 remove_diacritics 2')"
)


class Raw:
    """The reference: files, and one FTS5 table over them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True)
        self.db = sqlite3.connect(root / "fts.db", isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(_TABLE)

    def add_many(self, ids: list[str], texts: list[str]) -> float:
        """Files and the table; returns the seconds the table alone took (parsing included)."""
        for nid, text in zip(ids, texts, strict=True):
            (self.root / f"{nid}.md").write_text(text, encoding="utf-8")
        os.sync()
        began = time.perf_counter()
        rows = []
        for nid, text in zip(ids, texts, strict=True):
            title, body = _title_body(text)
            rows.append((nid, segment(title), segment(body)))
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO fts(nid, title, body) VALUES (?, ?, ?)", rows)
        self.db.execute("COMMIT")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return time.perf_counter() - began

    def add_one(self, nid: str, text: str) -> None:
        path = self.root / f"{nid}.md"
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        title, body = _title_body(text)
        self.db.execute("INSERT INTO fts(nid, title, body) VALUES (?, ?, ?)", (nid, segment(title), segment(body)))

    def rebuild(self) -> None:
        self.db.execute("DROP TABLE fts")
        self.db.execute(_TABLE)
        rows = []
        for path in sorted(self.root.glob("*.md")):
            title, body = _title_body(path.read_text(encoding="utf-8"))
            rows.append((path.stem, segment(title), segment(body)))
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO fts(nid, title, body) VALUES (?, ?, ?)", rows)
        self.db.execute("COMMIT")

    def search(self, query: str) -> list[str]:
        # BM25 with the title three times the body, as notewell weighs them (nid is not searched)
        sql = "SELECT nid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts, 0.0, 3.0, 1.0) LIMIT 10"
        return [r[0] for r in self.db.execute(sql, (fts_expr(query),))]

    def close(self) -> None:
        self.db.close()


def _round(tmp: Path, r: int, texts: list[str], queries: list[str], adds: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    store_dir, raw_dir = tmp / f"nw{r}", tmp / f"raw{r}"
    with notewell.Store(store_dir, watch=True, embedder=None) as store:
        t = time.perf_counter()
        ids = [n.id for n in store.add_notes(texts)]
        out["nw_import"] = len(texts) / (time.perf_counter() - t)
        out["nw_disk"] = _size(store_dir / ".notewell") / 1e6
        t = time.perf_counter()
        store.reindex()
        out["nw_rebuild"] = len(texts) / (time.perf_counter() - t)
        times = []
        for text in adds:
            t = time.perf_counter()
            store.add_note(text)
            times.append((time.perf_counter() - t) * 1000)
        out["nw_add_p50"] = pct(times, 50)
        found: dict[str, list[str]] = {}
        times = []
        for q in queries:
            t = time.perf_counter()
            found[q] = [c.id for c in store.search_notes(q, limit=10)]
            times.append((time.perf_counter() - t) * 1000)
        out["nw_search_p50"], out["nw_search_p95"] = pct(times, 50), pct(times, 95)
    raw = Raw(raw_dir)
    try:
        t = time.perf_counter()
        table_only = raw.add_many(ids, texts)
        out["raw_import"] = len(texts) / (time.perf_counter() - t)
        out["raw_table_import"] = len(texts) / table_only
        raw.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        out["raw_disk"] = sum(p.stat().st_size for p in raw_dir.glob("fts.db*")) / 1e6
        t = time.perf_counter()
        raw.rebuild()
        out["raw_rebuild"] = len(texts) / (time.perf_counter() - t)
        raw.db.execute("PRAGMA synchronous=FULL")  # a durable add: the commit synced, as notewell's is
        times = []
        for i, text in enumerate(adds):
            t = time.perf_counter()
            raw.add_one(f"single{i}", text)
            times.append((time.perf_counter() - t) * 1000)
        out["raw_add_p50"] = pct(times, 50)
        times, agree = [], []
        for q in queries:
            t = time.perf_counter()
            exact = raw.search(q)
            times.append((time.perf_counter() - t) * 1000)
            if exact and len(q.split()) <= 2:
                agree.append(len(set(exact) & set(found[q])) / len(exact))
        out["raw_search_p50"], out["raw_search_p95"] = pct(times, 50), pct(times, 95)
        out["agreement"] = statistics.mean(agree) if agree else float("nan")
    finally:
        raw.close()
    return out


def _notewell_small(tmp: Path, texts: list[str], queries: list[str]) -> dict[str, float]:
    """notewell's figures for the small leg: import, rebuild, disk, search, one cold search process."""
    out: dict[str, float] = {}
    store_dir = tmp / "nw-small"
    with notewell.Store(store_dir, watch=True, embedder=None) as store:
        t = time.perf_counter()
        store.add_notes(texts)
        out["nw_import"] = len(texts) / (time.perf_counter() - t)
        t = time.perf_counter()
        store.reindex()
        out["nw_index"] = len(texts) / (time.perf_counter() - t)
        out["nw_disk"] = _size(store_dir / ".notewell") / 1e6
        times = []
        for q in queries:
            t = time.perf_counter()
            store.search_notes(q, limit=10)
            times.append((time.perf_counter() - t) * 1000)
        out["nw_search_p50"], out["nw_search_p95"] = pct(times, 50), pct(times, 95)
    # The console script's own call (the CLI module has no __main__), as `notewell search` runs it.
    run = "import sys; from notewell.interfaces.cli.app import main; sys.exit(main(sys.argv[1:]))"
    cli = [sys.executable, "-c", run, "search", queries[0], "--store", str(store_dir)]
    t = time.perf_counter()
    if not subprocess.run(cli, capture_output=True, text=True, check=True).stdout.strip():
        raise SystemExit(f"the cold search of {queries[0]!r} printed nothing")
    out["nw_cold"] = time.perf_counter() - t
    shutil.rmtree(store_dir)
    return out


def _basic_memory_small(tmp: Path, exe: Path, texts: list[str], queries: list[str]) -> dict[str, float]:
    """basic-memory's figures for the small leg, on files of the same texts."""
    out: dict[str, float] = {}
    folder = tmp / "bm-files"
    folder.mkdir()
    for i, text in enumerate(texts):
        (folder / f"n{i:06d}.md").write_text(text, encoding="utf-8")
    bm = BasicMemory(exe)
    try:
        out["bm_index"] = len(texts) / bm.index(folder)
        out["bm_disk"] = bm.disk_bytes() / 1e6
        times = [bm.search(q)[1] * 1000 for q in queries]
        out["bm_search_p50"], out["bm_search_p95"] = pct(times, 50), pct(times, 95)
        out["bm_cold"] = bm.cold_search(queries[0])
    finally:
        bm.close()
        shutil.rmtree(folder)
    return out


def _small_leg(tmp: Path, r: int, exe: Path, texts: list[str], queries: list[str]) -> dict[str, float]:
    """notewell and basic-memory on the same few notes, the first to run alternating by round."""
    legs = [lambda: _notewell_small(tmp, texts, queries), lambda: _basic_memory_small(tmp, exe, texts, queries)]
    out: dict[str, float] = {}
    for leg in legs if r % 2 == 0 else legs[::-1]:
        out.update(leg())
    return out


def _print_small(med: dict[str, float], count: int, version: str) -> None:
    print(f"\n{count:,} of the same notes, notewell beside basic-memory {version} (keyword search; its semantic")
    print("search is off: it fetches a model at run time), medians:")
    _print_table(
        "basic-memory",
        [
            ("index a folder of notes, notes/s", med["nw_index"], med["bm_index"], True),
            ("  notewell's bulk import, notes/s", med["nw_import"], med["bm_index"], True),
            ("index on disk, MB", med["nw_disk"], med["bm_disk"], False),
            ("keyword search p50, ms", med["nw_search_p50"], med["bm_search_p50"], False),
            ("keyword search p95, ms", med["nw_search_p95"], med["bm_search_p95"], False),
            ("one cold search process, s", med["nw_cold"], med["bm_cold"], False),
        ],
        notewell_ahead=True,
    )
    print("ratio: how many times notewell is faster or smaller than basic-memory")


def _print_table(other: str, rows: list[tuple[str, float, float, bool]], *, notewell_ahead: bool) -> None:
    """Rows of (label, notewell's figure, the other's, whether higher is better), with a ratio: how
    many times notewell is ahead (*notewell_ahead*) or behind."""
    print(f"{'figure':34} {'notewell':>12} {other:>12} {'ratio':>8}")
    for label, nw, theirs, higher_better in rows:
        behind = theirs / nw if higher_better else nw / theirs
        print(f"{label:34} {nw:12,.2f} {theirs:12,.2f} {1 / behind if notewell_ahead else behind:7.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--adds", type=int, default=50)
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--chinese", type=float, default=0.05, help="share of notes with Chinese (default 0.05)")
    ap.add_argument("--bm-notes", type=int, default=300, help="notes for the basic-memory leg (0: none)")
    args = ap.parse_args()
    exe = find_basic_memory() if args.bm_notes > 0 else None
    corpus = Corpus(args.seed, chinese=args.chinese)
    texts = [corpus.note(i) for i in range(args.notes)]
    adds = [corpus.note(args.notes + i) for i in range(args.adds)]
    queries = [q for cat, q, f in corpus.queries(args.queries, args.seed) if not f and cat != "question"]
    rows, small = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            got = _round(Path(tmp), r, texts, queries, adds)
            rows.append(got)
            print(f"round {r + 1}: " + ", ".join(f"{k} {v:,.2f}" for k, v in got.items()), flush=True)
            if exe is not None:
                small.append(_small_leg(Path(tmp), r, exe, texts[: args.bm_notes], queries))
                print("  small leg: " + ", ".join(f"{k} {v:,.2f}" for k, v in small[-1].items()), flush=True)
    med = {k: statistics.median(row[k] for row in rows) for k in rows[0]}
    print(f"\n{args.notes:,} notes (bench_store.py's corpus: ~1.5 KB, {args.chinese:.0%} with Chinese), medians of"
          f" {args.rounds} rounds:")  # fmt: skip
    _print_table(
        "raw FTS5",
        [
            ("bulk import, notes/s", med["nw_import"], med["raw_import"], True),
            ("  against the table alone (no files)", med["nw_import"], med["raw_table_import"], True),
            ("rebuild (index present), notes/s", med["nw_rebuild"], med["raw_rebuild"], True),
            ("index on disk, MB", med["nw_disk"], med["raw_disk"], False),
            ("single durable add p50, ms", med["nw_add_p50"], med["raw_add_p50"], False),
            ("keyword search p50, ms", med["nw_search_p50"], med["raw_search_p50"], False),
            ("keyword search p95, ms", med["nw_search_p95"], med["raw_search_p95"], False),
        ],
        notewell_ahead=False,
    )
    print(f"agreement with exact BM25's top 10 (1- and 2-word queries): {med['agreement']:.1%}")
    print("ratio: how many times notewell is slower or bigger than raw FTS5 (1.00x: the same)")
    if exe is None:
        if args.bm_notes > 0:
            print(
                "\nbasic-memory: not installed (scripts/install-basic-memory, or $NOTEWELL_BENCH_BASIC_MEMORY): skipped"
            )
        return
    medians = {k: statistics.median(row[k] for row in small) for k in small[0]}
    _print_small(medians, args.bm_notes, installed_version(exe))


if __name__ == "__main__":
    main()
