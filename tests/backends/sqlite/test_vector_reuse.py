"""A rebuilt index keeps the vectors of unchanged passages (keyed by model, dim and text)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest

import notewell
from notewell.search.embedders import HashEmbedder

pytest.importorskip("numpy")

LONG = "\n\n".join(f"Paragraph {i} about the orchard ledger and its pears, row {i}. " * 8 for i in range(6))


class Counting(HashEmbedder):
    """The hash embedder, counting the passages it is asked to embed."""

    def __init__(self, dim: int = 256) -> None:
        super().__init__(dim)
        self.documents = 0

    def embed_documents(self, texts):
        self.documents += len(texts)
        return super().embed_documents(texts)

    def embed_query(self, text):
        return super().embed_documents([text])[0]  # a query is not a passage: not counted


def _notes(s, count=4):
    notes = [s.add_note(f"# fruit {i}\n\napricot quince orchard {i} keeps its ledger") for i in range(count)]
    notes.append(s.add_note(f"# long ledger\n\n{LONG}"))
    s.embed_pending()
    return notes


def _vectors(s, note_id=None):
    where, args = ("WHERE note_id = ?", (note_id,)) if note_id else ("", ())
    return s.backend.index.conn.execute(
        f"SELECT note_id, chunk, model, start, stop, vector FROM note_vectors {where} ORDER BY note_id, chunk", args
    ).fetchall()


def _index_files(store_dir):
    return sorted(p.name for p in (store_dir / ".notewell").iterdir() if p.name.startswith(("previous-", "rebuild.j")))


def test_a_reindex_keeps_every_vector_and_embeds_nothing(store_dir):
    embedder = Counting()
    s = notewell.open(store_dir, embedder=embedder)
    notes = _notes(s)
    assert len(_vectors(s, notes[-1].id)) > 1  # a note of several passages
    before = _vectors(s)
    s.token_book().create("agent")  # not derived from the folder: a rebuild keeps it
    embedder.documents = 0
    report = s.reindex()
    assert (report.vectors_kept, report.to_embed) == (5, 0)
    assert report.to_dict()["vectors_kept"] == 5
    assert _vectors(s) == before
    # Found at once, with nothing embedded again (not even on a search that waits).
    cards = s.search_notes("apricot quince orchard 2", mode="semantic", wait=True)
    assert cards[0].id == notes[2].id and len(cards) == 5
    assert s.embed_pending() == {"embedded": 0, "pending": 0, "revisions": 0}
    assert embedder.documents == 0
    assert [t.name for t in s.token_book().list()] == ["agent"]
    assert _index_files(store_dir) == []  # the old index is gone once the new one is done
    s.close()
    # Reused vectors carry their keys: a second rebuild keeps them too.
    again = notewell.open(store_dir, embedder=embedder)
    assert (again.reindex().vectors_kept, embedder.documents) == (5, 0)
    again.close()


def test_a_note_edited_on_disk_before_the_reindex_waits_and_its_stale_vectors_go(store_dir):
    embedder = Counting()
    s = notewell.open(store_dir, embedder=embedder)
    notes = _notes(s)
    edited, tail_edited = notes[0], notes[-1]
    path = store_dir / f"{edited.id}.md"
    path.write_text("# fruit 0\n\nmangosteen durian rambutan", encoding="utf-8")
    # Only its last passage changes: the note is queued whole, never part reused.
    (store_dir / f"{tail_edited.id}.md").write_text(f"# long ledger\n\n{LONG} And a new closing line.\n")
    embedder.documents = 0
    report = s.reindex()
    assert (report.vectors_kept, report.to_embed) == (3, 2)
    assert _vectors(s, edited.id) == [] and _vectors(s, tail_edited.id) == []
    assert edited.id not in {c.id for c in s.search_notes("mangosteen durian rambutan", mode="semantic")}
    assert s.embed_pending()["embedded"] == 2
    assert embedder.documents == 1 + len(_vectors(s, tail_edited.id))
    assert s.search_notes("mangosteen durian rambutan", mode="semantic", limit=1)[0].id == edited.id
    s.close()


def test_another_model_s_vectors_are_not_reused(store_dir):
    s = notewell.open(store_dir, embedder=HashEmbedder(256))
    _notes(s)
    s.close()
    other = Counting(128)
    s = notewell.open(store_dir, embedder=other)
    report = s.reindex()
    assert (report.vectors_kept, report.to_embed) == (0, 5)
    assert s.search_notes("apricot quince orchard", mode="semantic") == []
    assert s.embed_pending() == {"embedded": 5, "pending": 0, "revisions": 0}
    assert other.documents == len(_vectors(s)) and {row[2] for row in _vectors(s)} == {"hash-128"}
    assert len(s.search_notes("apricot quince orchard", mode="semantic")) == 5
    s.close()


def test_a_long_lived_matrix_picks_up_the_carried_vectors_from_the_log(store_dir, monkeypatch):
    from notewell.backends.sqlite import backend as store_module

    rebuilder = notewell.open(store_dir, embedder=HashEmbedder())
    notes = _notes(rebuilder)
    server = notewell.open(store_dir, embedder=HashEmbedder())
    assert len(server.search_notes("apricot", mode="semantic")) == 5
    carry = store_module.carry_vectors
    seen: list[int] = []

    def meanwhile(index, old):
        # The new index is complete but has no vectors yet: the server moves to it and loads them (none).
        seen.append(len(server.search_notes("apricot", mode="semantic")))
        return carry(index, old)

    monkeypatch.setattr(store_module, "carry_vectors", meanwhile)
    assert rebuilder.reindex().vectors_kept == 5
    loads = server.backend.vectors.full_loads
    assert seen == [0]
    cards = server.search_notes("apricot quince orchard 1", mode="semantic")
    assert cards[0].id == notes[1].id and len(cards) == 5
    assert server.backend.vectors.full_loads == loads  # applied from the vector log, not reloaded
    # The rebuilding store's own matrix: a new epoch, loaded whole.
    assert len(rebuilder.search_notes("apricot", mode="semantic")) == 5
    for s in (rebuilder, server):
        s.close()


def test_a_reindex_cut_short_puts_the_old_index_back(store_dir):
    s = notewell.open(store_dir, embedder=HashEmbedder())
    _notes(s)
    epoch = s.backend.index.vectors_epoch()

    def interrupt(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        s.reindex(progress=interrupt)
    assert s.backend.index.vectors_epoch() == epoch and _index_files(store_dir) == []
    assert len(s.search_notes("apricot", mode="semantic")) == 5
    assert s.pending_embeddings() == 0
    assert s.reindex().vectors_kept == 5
    s.close()


def test_a_crash_while_the_old_index_is_deleted_leaves_nothing_to_restore(store_dir, monkeypatch):
    # The marker goes before the old files: otherwise an old -wal left by a crash here would be
    # "restored" beside the new database at the next open, and read as the new one's.
    from pathlib import Path

    s = notewell.open(store_dir, embedder=HashEmbedder())
    _notes(s)
    unlink = Path.unlink

    def crash_on_old_files(self, *args, **kwargs):
        if self.name.startswith("previous-"):
            raise KeyboardInterrupt
        return unlink(self, *args, **kwargs)

    monkeypatch.setattr(Path, "unlink", crash_on_old_files)
    with pytest.raises(KeyboardInterrupt):
        s.reindex()
    monkeypatch.setattr(Path, "unlink", unlink)
    assert not (store_dir / ".notewell" / "rebuild.json").exists()
    s.close()
    again = notewell.open(store_dir, embedder=HashEmbedder())  # the new index, as built
    assert len(again.search_notes("apricot", mode="semantic")) == 5 and again.pending_embeddings() == 0
    again.close()


_KILLED = """
import os, signal, sys
import notewell
from notewell.backends.sqlite import vector_reuse
from notewell.search.embedders import HashEmbedder
from notewell.backends.sqlite import backend as store_module

where = sys.argv[2]
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
s = notewell.open(sys.argv[1], embedder=HashEmbedder())
if where == "begin":  # the old database just set aside
    store_module.Index = die
elif where == "carry":  # two batches of two notes carried and committed, the last under way
    vector_reuse._BATCH = 2
    take = vector_reuse._take_over
    calls = []
    def take_then_die(*args):
        calls.append(1)
        if len(calls) == 3:
            die()
        return take(*args)
    vector_reuse._take_over = take_then_die
s.reindex(progress=die if where == "sync" else None)
"""


@pytest.mark.slow
@pytest.mark.parametrize("where", ["begin", "sync", "carry"])
def test_a_reindex_killed_part_way_leaves_a_store_that_opens_and_searches(store_dir, where):
    s = notewell.open(store_dir, embedder=HashEmbedder())
    notes = _notes(s)
    epoch = s.backend.index.vectors_epoch()
    s.close()
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_KILLED), str(store_dir), where], capture_output=True, timeout=120
    )
    assert child.returncode == -9, child.stderr.decode()
    assert json.loads((store_dir / ".notewell" / "rebuild.json").read_text())["aside"].startswith("previous-")
    # The next open puts the old index back: its epoch, its vectors, nothing to embed.
    s = notewell.open(store_dir, embedder=HashEmbedder())
    assert s.backend.index.vectors_epoch() == epoch and _index_files(store_dir) == []
    assert s.search_notes("apricot quince orchard 3", mode="semantic")[0].id == notes[3].id
    assert s.pending_embeddings() == 0
    assert len(s.search_notes("orchard")) == 5
    assert s.reindex().vectors_kept == 5
    s.close()


def test_vectors_from_before_keys_are_reused_only_for_the_same_text(store_dir):
    embedder = Counting()
    s = notewell.open(store_dir, embedder=embedder)
    notes = _notes(s)
    s.close()
    # An index of an older schema, made before keys were stored: the column did not exist.
    conn = sqlite3.connect(store_dir / ".notewell" / "index.db")
    conn.execute("ALTER TABLE note_vectors DROP COLUMN key")
    conn.execute("PRAGMA user_version = 11")
    conn.close()
    (store_dir / f"{notes[1].id}.md").write_text("# fruit 1\n\nmangosteen durian rambutan", encoding="utf-8")
    embedder.documents = 0
    s = notewell.open(store_dir, embedder=embedder)  # rebuilt at open, the old file's vectors taken over
    assert s.built_on_open and s.pending_embeddings() == 1
    assert s.embed_pending()["embedded"] == 1 and embedder.documents == 1
    assert None not in {row[0] for row in s.backend.index.conn.execute("SELECT key FROM note_vectors")}
    assert s.search_notes("mangosteen durian", mode="semantic")[0].id == notes[1].id
    s.close()


def test_the_rebuild_after_damage_keeps_what_the_old_file_still_reads(store_dir):
    s = notewell.open(store_dir, embedder=HashEmbedder())
    notes = _notes(s)
    # Readable but broken: the notes' table is gone (a damaged page, a foreign schema), one note's
    # vector has the right length but is no unit vector, another's is text.
    other = sqlite3.connect(store_dir / ".notewell" / "index.db", isolation_level=None)
    other.execute("DROP TABLE note_index")
    damaged = "UPDATE note_vectors SET vector = {} WHERE note_id = ?"
    other.execute(damaged.format("CAST(x'00000040' || zeroblob(1020) AS BLOB)"), (notes[2].id,))
    other.execute(damaged.format("'text'"), (notes[0].id,))
    other.close()
    assert len(s.search_notes("orchard")) == 5  # rebuilt on the damage, then answered
    assert _index_files(store_dir) == []
    assert s.pending_embeddings() == 2 and _vectors(s, notes[2].id) == _vectors(s, notes[0].id) == []
    assert s.search_notes("apricot quince orchard 3", mode="semantic")[0].id == notes[3].id
    s.close()


def test_an_unreadable_old_index_carries_nothing(tmp_path):
    from notewell.backends.sqlite.index import Index
    from notewell.backends.sqlite.vector_reuse import carry_vectors

    garbage = tmp_path / "previous-00000000.db"
    garbage.write_bytes(b"not a database at all" * 500)
    index = Index(tmp_path / "store")
    assert carry_vectors(index, garbage) == {} and carry_vectors(index, tmp_path / "missing.db") == {}
    index.close()
