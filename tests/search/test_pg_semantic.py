"""Semantic search on PostgreSQL, with the deterministic HashEmbedder and a real server (the
``pg_url`` fixture): every write queues its note, servers claim work without embedding a
note twice at once, a vector of an older text never replaces a newer one, and each
server's matrix follows the vector log."""

from __future__ import annotations

import sys
import threading
import time

import pytest

import notewell
from notewell import InvalidArgumentError, UnavailableError
from notewell.backends.postgres import embedding as pg_embedding
from notewell.backends.postgres.db import MIGRATIONS, PgDatabase
from notewell.interfaces.cli import server as server_cli
from notewell.search.embedders import HashEmbedder
from notewell.search.passages import passages
from tests.conftest import embedding_threads

pytest.importorskip("numpy")


class CountingEmbedder(HashEmbedder):
    """The hash embedder, remembering every text it embedded (a little slowly, so that
    two servers embedding at once interleave)."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.delay = delay
        self._lock = threading.Lock()

    def embed_documents(self, texts):
        with self._lock:
            self.texts += texts
        time.sleep(self.delay)
        return super().embed_documents(texts)


@pytest.fixture
def pstore(pg_store_url):
    s = notewell.open(pg_store_url, embedder=HashEmbedder())
    yield s
    s.close()


def _sql(store, query, params=()):
    with store.backend.db.transaction() as conn:
        cur = conn.execute(query, params)
        return cur.fetchall() if cur.description else []


def _queued(store) -> set[str]:
    return {nid for (nid,) in _sql(store, "SELECT note_id FROM embed_queue")}


def test_every_write_that_changes_a_note_queues_it_and_a_delete_forgets_it(pstore):
    note = pstore.add_note("# alpha\n\nfirst words")
    assert _queued(pstore) == {note.id}
    pstore.embed_pending()
    assert _queued(pstore) == set()
    for change in (
        lambda: pstore.edit_note(note.id, "# alpha\n\nsecond words"),
        lambda: pstore.add_tag(note.id, "greek"),
        lambda: pstore.set_summary(note.id, "a letter"),
    ):
        change()
        assert _queued(pstore) == {note.id}
        assert pstore.embed_pending()["pending"] == 0
    pstore.add_tag(note.id, "greek")  # changes nothing: nothing to embed
    assert _queued(pstore) == set()
    run = pstore.start_attempt("letters", author="a")
    ended = pstore.end_attempt(run.id, outcome="done", summary="alpha was first")
    assert _queued(pstore) == {ended.summary_note_id}
    pstore.delete_note(note.id)
    assert _sql(pstore, "SELECT count(*) FROM note_vectors WHERE note_id = %s", (note.id,)) == [(0,)]
    assert pstore.pending_embeddings() == 1  # the attempt's summary only


def test_a_header_change_is_dealt_with_without_running_the_model(pg_url):
    embedder = CountingEmbedder()
    with notewell.open(pg_url, embedder=embedder) as store:
        note = store.add_note("# alpha\n\nfirst words")
        store.embed_pending()
        store.add_tag(note.id, "greek")  # the header changes; the title and body do not
        assert store.embed_pending() == {"embedded": 1, "pending": 0, "revisions": 0}
        assert embedder.texts == ["alpha\n# alpha\n\nfirst words"]
        store.edit_note(note.id, "# alpha\n\nother words")
        store.embed_pending()
        assert len(embedder.texts) == 2


def test_imported_notes_wait_to_be_embedded(tmp_path, pg_url):
    with notewell.open(tmp_path / "notes", embedder=None) as folder:
        kept = folder.add_note("# otters\n\nthey hold hands while sleeping")
    with notewell.open(pg_url, embedder=HashEmbedder()) as db:
        db.import_folder(tmp_path / "notes")
        assert db.pending_embeddings() == 1
        assert [c.id for c in db.search_notes("otters sleeping", mode="semantic", wait=True)] == [kept.id]


def test_a_vector_of_an_older_text_never_replaces_a_newer_one(pg_url, monkeypatch):
    store = notewell.open(pg_url, embedder=HashEmbedder())
    other = notewell.open(pg_url, embedder=None)  # another server, editing
    try:
        note = store.add_note("# heron\n\nold words about herons")
        store.embed_pending()
        store.edit_note(note.id, "# heron\n\nmiddle words about egrets")
        original = HashEmbedder.embed_documents

        def edit_meanwhile(self, texts):
            monkeypatch.setattr(HashEmbedder, "embed_documents", original)
            other.edit_note(note.id, "# heron\n\nnew words about kingfishers")
            return original(self, texts)

        monkeypatch.setattr(HashEmbedder, "embed_documents", edit_meanwhile)
        # The middle text, superseded meanwhile, is embedded as revision 2 (revision 1 takes a
        # copy of the vectors still current, without the model).
        assert store.embed_pending() == {"embedded": 1, "pending": 1, "revisions": 1}
        # The middle text's vectors were not written; the note waits, unclaimed, for its newest.
        assert _sql(store, "SELECT DISTINCT revision FROM note_vectors") == [(1,)]
        assert _sql(store, "SELECT claimed_by FROM embed_queue") == [(None,)]
        assert store.embed_pending() == {"embedded": 1, "pending": 0, "revisions": 0}
        assert _sql(store, "SELECT DISTINCT revision FROM note_vectors") == [(3,)]
        card = store.search_notes("kingfishers", mode="semantic")[0]
        assert card.id == note.id and "kingfishers" in card.snippet
    finally:
        store.close()
        other.close()


def test_a_note_claimed_by_another_server_waits_for_its_lease_to_run_out(pstore):
    pstore.add_note("# claimed\n\nby someone else")
    _sql(pstore, "UPDATE embed_queue SET claimed_by = 'elsewhere', claimed_until = now() + interval '1 hour'")
    assert pstore.embed_pending() == {"embedded": 0, "pending": 1, "revisions": 0}
    _sql(pstore, "UPDATE embed_queue SET claimed_until = now() - interval '1 second'")  # that server died
    assert pstore.embed_pending() == {"embedded": 1, "pending": 0, "revisions": 0}


def test_a_model_failure_releases_the_claims(pg_url):
    class Broken(HashEmbedder):
        def embed_documents(self, texts):
            raise RuntimeError("the model is down")

    with notewell.open(pg_url, embedder=Broken()) as store:
        store.add_note("# one\n\nplum")
        with pytest.raises(RuntimeError):
            store.embed_pending()
        assert _sql(store, "SELECT claimed_by, claimed_until FROM embed_queue") == [(None, None)]
        assert store.pending_embeddings() == 1


def test_vectors_of_another_model_are_embedded_again_never_mixed(pg_url):
    with notewell.open(pg_url, embedder=HashEmbedder(64)) as first:
        first.add_note("# one\n\napple pie")
        first.embed_pending()
    with notewell.open(pg_url, embedder=HashEmbedder(128)) as second:
        assert second.pending_embeddings() == 1
        assert second.search_notes("apple", mode="semantic") == []
        assert second.embed_pending() == {"embedded": 1, "pending": 0, "revisions": 0}
        assert [c.title for c in second.search_notes("apple", mode="semantic")] == ["one"]
        assert _sql(second, "SELECT DISTINCT model, dim FROM note_vectors") == [("hash-128", 128)]


def test_each_server_keeps_its_matrix_current_from_the_log(pg_url):
    reader = notewell.open(pg_url, embedder=HashEmbedder())
    writer = notewell.open(pg_url, embedder=HashEmbedder())
    try:
        first = writer.add_note("# walnut\n\nwalnut shells")
        writer.embed_pending()
        assert [c.id for c in reader.search_notes("walnut", mode="semantic")] == [first.id]
        second = writer.add_note("# chestnut\n\nchestnut roast")
        writer.embed_pending()
        assert reader.search_notes("chestnut roast", mode="semantic")[0].id == second.id
        writer.delete_note(first.id)
        assert [c.id for c in reader.search_notes("walnut", mode="semantic")] == [second.id]
        assert reader.backend.meaning.vectors.full_loads == 1  # the changes were applied, not reloaded
        assert reader.backend.meaning.vectors.live == 1
        third = writer.add_note("# hazel\n\nhazel nuts")
        writer.embed_pending()
        _sql(writer, "DELETE FROM vector_log")  # trimmed past the reader: it never saw the hazel's entry
        writer.add_note("# pecan\n\npecan pie")
        writer.embed_pending()
        assert reader.search_notes("hazel nuts", mode="semantic")[0].id == third.id
        assert reader.backend.meaning.vectors.full_loads == 2 and reader.backend.meaning.vectors.live == 3
    finally:
        reader.close()
        writer.close()


def test_two_servers_embedding_one_database_embed_each_note_once(pg_url, monkeypatch):
    monkeypatch.setattr(pg_embedding, "_BATCH", 8)  # many claims each, so that they interleave
    models = [CountingEmbedder(delay=0.01), CountingEmbedder(delay=0.01)]
    servers = [notewell.open(pg_url, embedder=m) for m in models]
    try:
        notes = servers[0].add_notes([f"# note {i}\n\nword{i} in a shared pool" for i in range(200)])
        start = threading.Barrier(2)
        errors: list[BaseException] = []

        def embed(store) -> None:
            try:
                start.wait()
                store.embed_pending()
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=embed, args=(s,)) for s in servers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        embedded = models[0].texts + models[1].texts
        assert sorted(embedded) == sorted(p[2] for n in notes for p in passages(n.title, n.body))
        assert models[0].texts and models[1].texts  # both took a share
        for store in servers:
            assert store.pending_embeddings() == 0
            for i in (0, 117, 199):
                assert store.search_notes(notes[i].body, mode="semantic", limit=1)[0].id == notes[i].id
    finally:
        for s in servers:
            s.close()


def test_background_threads_of_two_servers_embed_what_comes(pg_url):
    before = set(threading.enumerate())
    models = [CountingEmbedder(), CountingEmbedder()]
    servers = [notewell.open(pg_url, embedder=m) for m in models]
    try:
        for s in servers:
            assert s.start_embedding(idle=0.05)
            assert not s.start_embedding()  # one thread per store
        notes = [servers[i % 2].add_note(f"# n{i}\n\nfig{i} tree") for i in range(40)]
        deadline = time.monotonic() + 30
        while servers[0].pending_embeddings() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert servers[0].pending_embeddings() == 0
        assert len(models[0].texts) + len(models[1].texts) == 40  # none embedded twice
        assert servers[1].search_notes("fig7 tree", mode="semantic", limit=1)[0].id == notes[7].id
    finally:
        for s in servers:
            s.close()  # stops the thread
    assert embedding_threads(before) == []


def test_without_an_embedder_or_numpy_semantic_search_says_what_is_missing(pg_url, monkeypatch):
    with notewell.open(pg_url, embedder=None) as store:
        store.add_note("# lark\n\nsings at dawn")
        for mode in ("semantic", "both", "hybrid"):
            with pytest.raises(UnavailableError, match="without an embedder"):
                store.search_notes("lark", mode=mode)
        with pytest.raises(UnavailableError):
            store.start_embedding()
        assert store.search_notes("lark")[0].mode == "keyword"
    with notewell.open(pg_url, embedder=HashEmbedder()) as store:
        monkeypatch.setitem(sys.modules, "numpy", None)
        for call in (
            lambda: store.search_notes("lark", mode="semantic"),
            lambda: store.search_notes("lark", mode="hybrid"),
            store.embed_pending,
            store.start_embedding,
        ):
            with pytest.raises(UnavailableError, match="'semantic' extra"):
                call()
        assert store.pending_embeddings() == 1  # counting needs no numpy


def test_the_options_a_database_takes(pg_url):
    with pytest.raises(InvalidArgumentError, match="embedder must be"):
        notewell.open(pg_url, embedder="some-hub-id")
    for option in ({"watch": False}, {"ann": True}):
        with pytest.raises(InvalidArgumentError, match="not "):
            notewell.open(pg_url, **option)
    with notewell.open(pg_url, embedder=lambda: HashEmbedder(32)) as store:  # a factory, called on first use
        assert store.backend.embedders.made is None
        store.add_note("# x\n\ny")
        assert store.embed_pending()["embedded"] == 1 and store.backend.embedders.made.dim == 32
    with notewell.open(pg_url, embedder=None) as store, pytest.raises(InvalidArgumentError, match="limit"):
        store.embed_pending(limit=0)


def test_a_version_2_database_queues_its_notes_when_upgraded(pg_url, monkeypatch):
    from notewell.backends.postgres import db as pg

    db = PgDatabase(pg_url)
    try:
        monkeypatch.setattr(pg, "MIGRATIONS", MIGRATIONS[:2])
        assert db.upgrade() == [1, 2]
        with notewell.open(pg_url, embedder=None) as old:
            note = old.add_note("# before\n\nvectors existed")
        monkeypatch.undo()
        assert db.upgrade() == list(range(3, len(MIGRATIONS) + 1))  # 3 and any later
    finally:
        db.close()
    with notewell.open(pg_url, embedder=HashEmbedder()) as store:
        assert store.pending_embeddings() == 1
        assert [c.id for c in store.search_notes("vectors existed", mode="semantic", wait=True)] == [note.id]


def test_serve_starts_embedding_on_a_database_and_says_when_it_cannot(pg_url, capsys):
    with notewell.open(pg_url, embedder=HashEmbedder()) as store:
        server_cli._start_embedding(store, quiet=False)
        assert not store.start_embedding()  # one runs already
    before = set(threading.enumerate())
    with notewell.open(pg_url, embedder=None) as store:
        server_cli._start_embedding(store, quiet=False)
        assert embedding_threads(before) == []
    assert "semantic search off" in capsys.readouterr().err


def test_a_server_without_pgvector_keeps_the_matrix_and_its_schema(pstore):
    from notewell.backends.postgres.vector_schema import enable_pgvector, pgvector_available, vector_ready

    with pstore.backend.db.transaction() as conn:
        if pgvector_available(conn):
            pytest.skip("this server has pgvector: tests/backends/postgres/test_pgvector.py covers it")
    note = pstore.add_note("# sloe\n\nsloe gin")
    pstore.embed_pending()
    assert [c.id for c in pstore.search_notes("sloe gin", mode="semantic")] == [note.id]
    assert (
        pstore.backend.meaning.vector_index is None and pstore.backend.meaning.vectors.full_loads == 1
    )  # the fallback
    with pstore.backend.db.transaction() as conn:
        assert enable_pgvector(conn) is False  # nothing to enable: nothing changed
        assert not vector_ready(conn)
    assert _sql(
        pstore, "SELECT count(*) FROM pg_attribute WHERE attrelid = 'note_vectors'::regclass AND attname = 'embedding'"
    ) == [(0,)]


# -- long notes: every passage embedded, in claims bounded by passages ------------------------


def _paragraphs(count: int, start: int = 0, words: int = 30) -> str:
    """*count* paragraphs of about 27 * *words* characters, each its own passage at 30 words."""
    return "\n\n".join(f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * words for i in range(start, start + count))


def _chunks(store, note_id: str) -> list[tuple[int, bytes, bytes | None]]:
    return [
        (chunk, bytes(vector), None if key is None else bytes(key))
        for chunk, vector, key in _sql(
            store, "SELECT chunk, vector, key FROM note_vectors WHERE note_id = %s ORDER BY chunk", (note_id,)
        )
    ]


def test_a_grown_note_embeds_only_its_new_passages_and_keeps_the_rest(pg_store_url):
    import numpy as np

    from notewell.search.passages import passage_key

    embedder = CountingEmbedder()
    with notewell.open(pg_store_url, embedder=embedder) as store:
        body = _paragraphs(60)  # a long conversation: 60 passages
        note = store.add_note(f"# Chat\n\n{body}")
        store.embed_pending()
        before = {text for _a, _b, text in passages(note.title, note.body)}
        assert len(embedder.texts) == len(before) == 60
        grown = f"{body}\n\n{_paragraphs(3, start=60)}\n\nthe kestrel deployment finished"
        note = store.edit_note(note.id, f"# Chat\n\n{grown}")  # three turns more, imported again
        embedder.texts.clear()
        assert store.embed_pending()["embedded"] == 1
        parts = passages(note.title, note.body)
        new = [text for _a, _b, text in parts if text not in before]
        assert len(parts) == 64 and len(new) == 4
        assert embedder.texts == new  # the model saw the new passages only
        # Every passage has its own text's vector and key, kept or new alike.
        want = HashEmbedder().embed_documents([text for _a, _b, text in parts])
        rows = _chunks(store, note.id)
        assert [r[0] for r in rows] == list(range(64))
        for (_chunk, vector, key), (_a, _b, text), expected in zip(rows, parts, want, strict=True):
            assert np.array_equal(np.frombuffer(vector, dtype="<f4"), expected)
            assert key == passage_key("hash-256", 256, text)
        assert store.search_notes("kestrel deployment", mode="semantic")[0].id == note.id


def _claimed_passages(store, sizes: dict[str, int]) -> int:
    """The passages of the notes this store's embedder holds a claim on now."""
    worker = store.backend.meaning._worker
    held = _sql(store, "SELECT note_id FROM embed_queue WHERE claimed_by = %s", (worker,))
    return sum(sizes[nid] for (nid,) in held)


def test_a_claim_of_long_notes_stays_within_the_passage_budget_with_two_servers(pg_url):
    class Watching(CountingEmbedder):
        """Notes, at each call of the model, how many passages its server's claim holds."""

        store = None
        sizes: dict[str, int] = {}

        def __init__(self) -> None:
            super().__init__(delay=0.05)  # so that the two servers' claims interleave
            self.claims: list[int] = []
            self.calls: list[int] = []

        def embed_documents(self, texts):
            self.calls.append(len(texts))
            self.claims.append(_claimed_passages(self.store, self.sizes))
            return super().embed_documents(texts)

    models = [Watching(), Watching()]
    servers = [notewell.open(pg_url, embedder=m) for m in models]
    try:
        # Paragraphs of ~550 characters make more passages than their size suggests: such a
        # claim is cut once the texts are read, and the notes past the budget are released.
        texts = [f"# long {i}\n\n{_paragraphs(60, words=20 if i % 3 else 30)}" for i in range(14)]
        texts += [f"# short {i}\n\nshort note {i}" for i in range(10)]
        notes = servers[0].add_notes(texts)
        sizes = {n.id: len(passages(n.title, n.body)) for n in notes}
        assert min(sizes.values()) == 1 and max(sizes.values()) > 24
        Watching.sizes = sizes
        for model, server in zip(models, servers, strict=True):
            model.store = server
        errors: list[BaseException] = []
        start = threading.Barrier(2)
        threads = [threading.Thread(target=_embed_catching, args=(s, start, errors)) for s in servers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        budget = pg_embedding._BATCH_PASSAGES
        for model in models:  # (one server may have found every claim taken: the other is the faster)
            assert max(model.calls, default=0) <= budget
            assert max(model.claims, default=0) <= budget  # never more claimed than the model does in one call
        embedded = models[0].texts + models[1].texts
        assert sorted(embedded) == sorted(p[2] for n in notes for p in passages(n.title, n.body))  # each once
        assert servers[1].pending_embeddings() == 0
    finally:
        for s in servers:
            s.close()


def _embed_catching(store, start: threading.Barrier, errors: list[BaseException]) -> None:
    try:
        start.wait()
        store.embed_pending()
    except BaseException as exc:  # reported by the test
        errors.append(exc)


def test_a_note_longer_than_a_claim_is_embedded_whole_in_calls_that_renew_its_lease(pg_store_url):
    class Leases(CountingEmbedder):
        store = None

        def __init__(self) -> None:
            super().__init__()
            self.calls: list[int] = []
            self.leases: list = []

        def embed_documents(self, texts):
            self.calls.append(len(texts))
            self.leases += _sql(self.store, "SELECT claimed_until FROM embed_queue WHERE claimed_by IS NOT NULL")
            time.sleep(0.05)  # so that a renewed lease ends visibly later
            return super().embed_documents(texts)

    model = Leases()
    with notewell.open(pg_store_url, embedder=model) as store:
        model.store = store
        body = f"{_paragraphs(600)}\n\nthe quokka migration finished at the very end"
        note = store.add_note(f"# Huge\n\n{body}")
        assert store.embed_pending()["embedded"] == 1
        parts = passages(note.title, note.body)
        assert len(parts) > 2 * pg_embedding._BATCH_PASSAGES
        assert model.calls == [256, 256, len(parts) - 512]  # one claim, the model called 256 at a time
        assert len(model.leases) == 3 and model.leases[0] < model.leases[1] < model.leases[2]  # renewed
        assert len(_chunks(store, note.id)) == len(parts)  # every passage, past the 24 and the 256
        card = store.search_notes("quokka migration finished", mode="semantic")[0]
        assert card.id == note.id and "quokka" in card.snippet


def test_stopping_between_calls_of_the_model_leaves_the_note_queued_and_unclaimed(pg_store_url):
    model = CountingEmbedder()
    with notewell.open(pg_store_url, embedder=model) as store:
        body = _paragraphs(600)
        note = store.add_note(f"# Huge\n\n{body}")
        calls: list[int] = []
        original = model.embed_documents

        def counted(texts):
            calls.append(len(texts))
            return original(texts)

        model.embed_documents = counted
        with store.backend.embedding_steps(model) as step:
            assert step(lambda: bool(calls)) == 0  # what the background thread runs: stop after one call
        assert calls == [256]  # one call of the model, then it stopped
        assert _chunks(store, note.id) == []  # nothing half-written
        assert _sql(store, "SELECT claimed_by, claimed_until FROM embed_queue") == [(None, None)]  # queued, free
        assert store.pending_embeddings() == 1
        assert store.embed_pending()["embedded"] == 1
        assert len(_chunks(store, note.id)) == len(passages(note.title, note.body))


def test_stopping_the_background_embedding_waits_for_one_call_not_a_long_note(pg_store_url):
    started = threading.Event()

    class Slow(HashEmbedder):
        def embed_documents(self, texts):
            started.set()
            time.sleep(0.006 * len(texts))  # 1.5 s a call of 256 passages; the note below takes 4.2 s
            return super().embed_documents(texts)

    with notewell.open(pg_store_url, embedder=Slow()) as store:
        note = store.add_note(f"# Huge\n\n{_paragraphs(700)}")
        assert store.start_embedding(idle=0.05)
        assert started.wait(20)
        began = time.perf_counter()
        store.stop_embedding()
        assert time.perf_counter() - began < 3  # one call of the model, not the note's three
        assert store.pending_embeddings() == 1 and _chunks(store, note.id) == []  # still queued, nothing written
        assert _sql(store, "SELECT claimed_by FROM embed_queue") == [(None,)]  # free for another server now


def _vectors_as_version_5(url: str, notes: list, cap: int) -> None:
    """Give the notes, in the database at *url* (schema version 5), the vectors a notewell of
    before issue 39 stored: the hash embedder's, of their first *cap* passages, without keys."""
    from notewell.backends.postgres.embedding import text_sha

    embedder = HashEmbedder()
    rows = []
    for note in notes:
        parts = passages(note.title, note.body)[:cap]
        vectors = embedder.embed_documents([text for _a, _b, text in parts])
        sha = text_sha(note.title, note.body)
        rows += [
            (note.id, k, embedder.model_id, embedder.dim, sha, note.revision, a, b, vectors[k].tobytes())
            for k, (a, b, _text) in enumerate(parts)
        ]
    db = PgDatabase(url)
    try:
        with db.transaction() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO note_vectors(note_id, chunk, model, dim, sha256, revision, start, stop, vector)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                rows,
            )
            cur.execute("DELETE FROM embed_queue")
    finally:
        db.close()


def test_notes_embedded_under_the_old_cap_of_24_are_queued_once_by_the_upgrade(pg_url, monkeypatch):
    from notewell.backends.postgres import db as pg
    from notewell.search.passages import OLD_CAP

    monkeypatch.setattr(pg, "MIGRATIONS", MIGRATIONS[:5])  # a database of before issue 39
    with notewell.open(pg_url, embedder=None) as old:
        long = old.add_note(f"# Long\n\n{_paragraphs(60)}\n\nthe quokka migration finished at the very end")
        exact = old.add_note(f"# Exact\n\n{_paragraphs(24)}")
        short = old.add_note("# Short\n\nsomething else")
    assert len(passages(long.title, long.body)) > OLD_CAP == len(passages(exact.title, exact.body))
    _vectors_as_version_5(pg_url, [long, exact, short], OLD_CAP)  # the long note's stopped at 24
    monkeypatch.undo()
    db = PgDatabase(pg_url)
    try:
        assert db.upgrade() == list(range(6, len(MIGRATIONS) + 1))  # 6 keys the vectors, 7 queues
    finally:
        db.close()
    model = CountingEmbedder()
    with notewell.open(pg_url, embedder=model) as store:
        assert _queued(store) == {long.id, exact.id}  # not the short note
        assert store.embed_pending()["embedded"] == 2
        parts = passages(long.title, long.body)
        assert model.texts == [text for _a, _b, text in parts[OLD_CAP:]]  # the first 24 kept their vectors
        assert len(_chunks(store, long.id)) == len(parts) and len(_chunks(store, exact.id)) == OLD_CAP
        assert store.search_notes("quokka migration", mode="semantic")[0].id == long.id
    with notewell.open(pg_url, embedder=model) as store:  # once: a server starting again queues none
        assert store.pending_embeddings() == 0 and store.embed_pending()["embedded"] == 0
    db = PgDatabase(pg_url)
    try:
        assert db.upgrade() == []
    finally:
        db.close()


def test_older_revisions_of_long_notes_are_claimed_within_the_passage_budget(pg_store_url):
    class Calls(CountingEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[int] = []

        def embed_documents(self, texts):
            self.calls.append(len(texts))
            return super().embed_documents(texts)

    model = Calls()
    with notewell.open(pg_store_url, embedder=model) as store:
        note = store.add_note(f"# Log\n\n{_paragraphs(60)}")
        for turn in range(5):  # five texts superseded before any was embedded: each waits for the model
            note = store.edit_note(note.id, f"# Log\n\n{_paragraphs(60, start=100 * (turn + 1))}")
        assert _sql(store, "SELECT count(*) FROM old_embed_queue") == [(5,)]
        assert store.backend.embed_older(model, None) == 5
        assert len(model.calls) == 2 and max(model.calls) <= pg_embedding._BATCH_PASSAGES  # not one call of 300
        assert _sql(store, "SELECT count(*) FROM old_embed_queue") == [(0,)]
