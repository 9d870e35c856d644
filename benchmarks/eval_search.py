#!/usr/bin/env python3
"""Search quality on the evaluation set in benchmarks/eval/: Recall@5 and MRR@10 per mode
and per kind of query, beside the NoteTool chapter's substring search.

The set: notes.jsonl ({key, project, text}) and queries.jsonl ({query, kind, relevant,
filters}). Each project's notes are written on one attempt of that project, so project
filters work. Prints a table; never asserts.

Usage:
    python benchmarks/eval_search.py                       # keyword, semantic (default model), notetool
    python benchmarks/eval_search.py --embedder hash       # the deterministic test embedder instead
    python benchmarks/eval_search.py --embedder fastembed:/path/to/model-dir
    python benchmarks/eval_search.py --database postgresql://…   # the same on PostgreSQL (an empty database)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import notewell
from notewell.search.embedders import HashEmbedder


def choose_embedder(name: str) -> object:
    import os

    from notewell.interfaces.embedder_choice import embedder_from_environment

    os.environ["NOTEWELL_EMBEDDER"] = name
    chosen = embedder_from_environment()
    return chosen if isinstance(chosen, str) or hasattr(chosen, "embed_query") else chosen()


HERE = Path(__file__).resolve().parent / "eval"
MODES = ("keyword", "semantic", "hybrid")


def load() -> tuple[list[dict], list[dict]]:
    notes = [json.loads(line) for line in (HERE / "notes.jsonl").read_text(encoding="utf-8").splitlines() if line]
    queries = [json.loads(line) for line in (HERE / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
    return notes, queries


def notetool_search(texts: dict[str, str], order: list[str], query: str, limit: int = 10) -> list[str]:
    """The chapter's NoteTool: the whole query, lowercased, as a substring; index order."""
    q = query.lower()
    return [key for key in order if q in texts[key].lower()][:limit]


def metrics(ranked: list[str], relevant: set[str]) -> tuple[float, float]:
    recall = len(set(ranked[:5]) & relevant) / len(relevant) if relevant else 0.0
    rr = next((1.0 / (i + 1) for i, key in enumerate(ranked[:10]) if key in relevant), 0.0)
    return recall, rr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--embedder",
        default="default",
        help="default, hash, fastembed:<dir> or sentence-transformers:<dir> (as NOTEWELL_EMBEDDER)",
    )
    ap.add_argument(
        "--weights",
        help="hybrid weights keyword,semantic[,partial] to try (default: the store's); partial scales"
        " the keyword weight of notes found without every word",
    )
    ap.add_argument("--database", metavar="URL", help="evaluate a PostgreSQL store in this empty database instead")
    args = ap.parse_args()
    if args.weights:
        from notewell.search import fusion as store_module

        kw, sem, *partial = (float(x) for x in args.weights.split(","))
        store_module.HYBRID_WEIGHTS.update({"keyword": kw, "semantic": sem})
        if partial:
            store_module.HYBRID_PARTIAL = partial[0]
    notes, queries = load()
    with tempfile.TemporaryDirectory(prefix="nw-eval-") as tmp:
        embedder = HashEmbedder() if args.embedder == "hash" else choose_embedder(args.embedder)
        if args.database:
            store = notewell.open(args.database, embedder=embedder)
            if store.summary()["total_notes"]:
                store.close()
                print(f"eval_search: {args.database.rsplit('/', 1)[-1]} is not empty", file=sys.stderr)
                return 2
        else:
            store = notewell.open(Path(tmp) / "s", watch=False, embedder=embedder)
        attempts = {}
        by_id: dict[str, str] = {}
        texts: dict[str, str] = {}
        for note in notes:
            project = note["project"]
            if project not in attempts:
                attempts[project] = store.start_attempt(project, author="eval").id
            made = store.add_note(note["text"], attempt=attempts[project])
            by_id[made.id] = note["key"]
            texts[note["key"]] = note["text"]
        started = time.perf_counter()
        store.embed_pending()
        embed_s = time.perf_counter() - started
        order = [n["key"] for n in notes]
        scores: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
        for q in queries:
            relevant = set(q["relevant"])
            filters = dict(q.get("filters") or {})
            for mode in MODES:
                try:
                    cards = store.search_notes(q["query"], mode=mode, limit=10, **filters)
                except notewell.NotewellError as exc:
                    print(f"  {mode} {q['query']!r}: {exc.code}: {exc.message}", file=sys.stderr)
                    cards = []
                ranked = [by_id[c.id] for c in cards]
                for kind in (q["kind"], "ALL"):
                    scores[(mode, kind)].append(metrics(ranked, relevant))
            candidates = [k for k in order if all(_passes(notes_by_key(notes)[k], f, v) for f, v in filters.items())]
            ranked = notetool_search(texts, candidates, q["query"])
            for kind in (q["kind"], "ALL"):
                scores[("notetool", kind)].append(metrics(ranked, relevant))
        store.close()
    kinds = sorted({k for _m, k in scores} - {"ALL"}) + ["ALL"]
    print(
        f"evaluation set: {len(notes)} notes, {len(queries)} queries; {'PostgreSQL' if args.database else 'SQLite'};"
        f" embedder {args.embedder}; "
        f"embedding took {embed_s:.1f} s"
    )
    shown = (*MODES, "notetool")
    print(f"{'kind':16s} {'n':>3s}  " + "  ".join(f"{m:>19s}" for m in shown))
    print(f"{'':16s} {'':>3s}  " + "  ".join(f"{'R@5':>9s} {'MRR@10':>9s}" for _ in shown))
    for kind in kinds:
        n = len(scores[("keyword", kind)])
        cells = []
        for mode in shown:
            got = scores[(mode, kind)]
            cells.append(f"{sum(r for r, _ in got) / n:9.3f} {sum(m for _, m in got) / n:9.3f}")
        print(f"{kind:16s} {n:3d}  " + "  ".join(cells))
    return 0


_NOTES_BY_KEY: dict[str, dict] = {}


def notes_by_key(notes: list[dict]) -> dict[str, dict]:
    if not _NOTES_BY_KEY:
        _NOTES_BY_KEY.update({n["key"]: n for n in notes})
    return _NOTES_BY_KEY


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


if __name__ == "__main__":
    raise SystemExit(main())
