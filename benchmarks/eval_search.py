#!/usr/bin/env python3
"""Search quality on the evaluation sets: Recall@5 and MRR@10 per mode and per kind of
query, beside the NoteTool chapter's substring search.

Two sets, written by different hands:
- ``benchmarks/eval/`` (167 notes, 94 queries): the first set. Earlier constants were
  chosen on it, so it counts as a tuning set.
- ``benchmarks/eval2/`` (notes-*.jsonl, queries-*.jsonl; about 240 notes in 12 other
  projects, digests, long logs, Chinese and mixed-language notes): each query carries a
  ``split``: ``tune`` (may be used to choose constants) or ``test`` (never tuned on; the
  figures reported as unseen).

Each file: notes ({key, project, text}) and queries ({query, kind, relevant, filters,
split?}). Each project's notes are written on one attempt of that project, so project
filters work. Prints a table; never asserts.

Usage:
    python benchmarks/eval_search.py                       # both sets, every split, the default model
    python benchmarks/eval_search.py --set eval2 --split test
    python benchmarks/eval_search.py --embedder hash       # the deterministic test embedder instead
    python benchmarks/eval_search.py --embedder fastembed:/path/to/model-dir
    python benchmarks/eval_search.py --database postgresql://…   # the same on PostgreSQL (an empty database)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import notewell
from notewell.search.embedders import HashEmbedder

ROOT = Path(__file__).resolve().parent
SETS = {"eval": ROOT / "eval", "eval2": ROOT / "eval2"}
MODES = ("keyword", "semantic", "hybrid")


def choose_embedder(name: str) -> object:
    """An embedder (or the name 'default') as NOTEWELL_EMBEDDER would choose it."""
    if name == "hash":
        return HashEmbedder()
    from notewell.adapters.embedder_choice import embedder_from_environment

    os.environ["NOTEWELL_EMBEDDER"] = name
    chosen = embedder_from_environment()
    return chosen if isinstance(chosen, str) or hasattr(chosen, "embed_query") else chosen()


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load(name: str) -> tuple[list[dict], list[dict]]:
    """The notes and queries of set *name* (every notes*.jsonl and queries*.jsonl in its folder)."""
    folder = SETS[name]
    notes = [n for p in sorted(folder.glob("notes*.jsonl")) for n in _lines(p)]
    queries = [q for p in sorted(folder.glob("queries*.jsonl")) for q in _lines(p)]
    for q in queries:
        q.setdefault("split", "tune")
        q["set"] = name
    return notes, queries


@dataclass
class Built:
    """One set's notes in an open store, with the map from note ids to the set's keys."""

    name: str
    store: Any
    notes: list[dict]
    queries: list[dict]
    by_id: dict[str, str] = field(default_factory=dict)
    embed_seconds: float = 0.0


def build(name: str, embedder: object, root: Path, database: str | None = None) -> Built:
    """Open a store for set *name* (in *root*, or the empty *database*), add and embed its notes."""
    notes, queries = load(name)
    if database:
        store = notewell.open(database, embedder=embedder)
        if store.summary()["total_notes"]:
            store.close()
            raise SystemExit(f"eval_search: {database.rsplit('/', 1)[-1]} is not empty")
    else:
        store = notewell.open(root / name, watch=False, embedder=embedder)
    built = Built(name, store, notes, queries)
    attempts: dict[str, str] = {}
    for note in notes:
        project = note["project"]
        if project not in attempts:
            attempts[project] = store.start_attempt(project, author="eval").id
        made = store.add_note(note["text"], attempt=attempts[project])
        built.by_id[made.id] = note["key"]
    started = time.perf_counter()
    if embedder is not None:
        store.embed_pending()
    built.embed_seconds = time.perf_counter() - started
    return built


def metrics(ranked: list[str], relevant: set[str]) -> tuple[float, float]:
    recall = len(set(ranked[:5]) & relevant) / len(relevant) if relevant else 0.0
    rr = next((1.0 / (i + 1) for i, key in enumerate(ranked[:10]) if key in relevant), 0.0)
    return recall, rr


def ranked_keys(built: Built, query: dict, mode: str) -> list[str]:
    """The set's keys of the notes *mode* returns for *query*, best first."""
    if mode == "notetool":
        return notetool_search(built, query)
    try:
        cards = built.store.search_notes(query["query"], mode=mode, limit=10, **dict(query.get("filters") or {}))
    except notewell.NotewellError as exc:
        print(f"  {mode} {query['query']!r}: {exc.code}: {exc.message}", file=sys.stderr)
        return []
    return [built.by_id[c.id] for c in cards]


def score(built: Built, modes: tuple[str, ...], split: str = "all") -> dict[tuple[str, str], list[tuple[float, float]]]:
    """(mode, kind) -> each query's (R@5, RR@10); kind "ALL" holds every query."""
    scores: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for q in built.queries:
        if split != "all" and q["split"] != split:
            continue
        relevant = set(q["relevant"])
        for mode in modes:
            got = metrics(ranked_keys(built, q, mode), relevant)
            for kind in (q["kind"], "ALL"):
                scores[(mode, kind)].append(got)
    return scores


def notetool_search(built: Built, query: dict, limit: int = 10) -> list[str]:
    """The chapter's NoteTool: the whole query, lowercased, as a substring; index order."""
    q = query["query"].lower()
    filters = dict(query.get("filters") or {})
    return [
        n["key"] for n in built.notes if all(_passes(n, f, v) for f, v in filters.items()) and q in n["text"].lower()
    ][:limit]


def _passes(note: dict, name: str, value: str) -> bool:
    """The filter, applied the way the store does, for the NoteTool baseline's candidates."""
    from notewell import parse_note, slugify

    header = parse_note(note["text"]).header or {}
    if name == "project":
        return note["project"] == slugify(value)
    if name == "kind":
        return header.get("kind") == slugify(value)
    if name == "tags":
        return slugify(value) in header.get("tags", [])
    return True


def table(title: str, scores: dict[tuple[str, str], list[tuple[float, float]]], shown: tuple[str, ...]) -> str:
    """The figures as a text table: one row per kind of query, R@5 and MRR@10 per mode."""
    kinds = sorted({k for _m, k in scores} - {"ALL"}) + ["ALL"]
    out = [title, f"{'kind':16s} {'n':>3s}  " + "  ".join(f"{m:>19s}" for m in shown)]
    out.append(f"{'':16s} {'':>3s}  " + "  ".join(f"{'R@5':>9s} {'MRR@10':>9s}" for _ in shown))
    for kind in kinds:
        n = len(scores[(shown[0], kind)])
        if not n:
            continue
        cells = []
        for mode in shown:
            got = scores[(mode, kind)]
            cells.append(f"{sum(r for r, _ in got) / n:9.3f} {sum(m for _, m in got) / n:9.3f}")
        out.append(f"{kind:16s} {n:3d}  " + "  ".join(cells))
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--embedder",
        default="default",
        help="default, hash, fastembed:<dir> or sentence-transformers:<dir> (as NOTEWELL_EMBEDDER)",
    )
    ap.add_argument("--set", choices=(*SETS, "all"), default="all", help="which evaluation set (default: all)")
    ap.add_argument("--split", choices=("tune", "test", "all"), default="all", help="which queries (default: all)")
    ap.add_argument("--database", metavar="URL", help="evaluate a PostgreSQL store in this empty database instead")
    args = ap.parse_args()
    names = [n for n in SETS if (SETS[n] / "queries.jsonl").exists() or list(SETS[n].glob("queries*.jsonl"))]
    names = names if args.set == "all" else [args.set]
    if args.database and len(names) > 1:
        print("eval_search: with --database give one --set", file=sys.stderr)
        return 2
    embedder = choose_embedder(args.embedder)
    shown = (*MODES, "notetool")
    with tempfile.TemporaryDirectory(prefix="nw-eval-") as tmp:
        for name in names:
            built = build(name, embedder, Path(tmp), args.database)
            splits = ["all"] if args.split == "all" and name == "eval" else [args.split]
            if args.split == "all" and name != "eval":
                splits = ["tune", "test", "all"]
            for split in splits:
                scores = score(built, shown, split)
                print(
                    table(
                        f"\n{name} ({split}): {len(built.notes)} notes, {len(scores[(shown[0], 'ALL')])} queries;"
                        f" {'PostgreSQL' if args.database else 'SQLite'}; embedder {args.embedder};"
                        f" embedding took {built.embed_seconds:.1f} s",
                        scores,
                        shown,
                    )
                )
            built.store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
