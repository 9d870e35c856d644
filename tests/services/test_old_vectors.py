"""Older revisions' vectors grow with a note's distinct passages, not with revisions x passages
(a conversation re-imported after each exchange), and older-revision search by meaning still
answers what it did: a passage the note dropped finds it at the newest revision that held it;
one it still holds finds it as a current match. On both stores; a rebuild and an upgrade of an
index (or a PostgreSQL database) of the schema before keep them without the model."""

from __future__ import annotations

import hashlib
import re
import sqlite3

import pytest

import notewell
from notewell.model.header import parse_note
from notewell.search.passages import passages

pytest.importorskip("numpy")

from notewell.search.embedders import HashEmbedder  # noqa: E402 - numpy first

TITLE = "Conversation"


def _paragraph(i: int, words: int = 30) -> str:
    # Words no other paragraph has, unrelated in their letters (the hash embedder's buckets
    # come from CRC-32, whose values for words alike in their letters are alike too).
    return " ".join("q" + hashlib.sha256(f"{i}:{j}".encode()).hexdigest()[:8] for j in range(words))


def _text(paragraphs: list[int]) -> str:
    return f"# {TITLE}\n\n" + "\n\n".join(_paragraph(i) for i in paragraphs) + "\n"


def _passages(text: str) -> list[str]:
    """The texts a note with *text* is embedded as (the store's own cut)."""
    return [p for _a, _b, p in passages(TITLE, parse_note(text).body)]


class CountingEmbedder(HashEmbedder):
    """The hash embedder, counting the passages it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.passages = 0

    def embed_documents(self, texts):
        self.passages += len(texts)
        return super().embed_documents(texts)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def place(request, tmp_path):
    """Where a store lives (a folder, or a PostgreSQL database), and a reader of its
    old_vectors table: (rows, bytes of vectors)."""
    if request.param == "sqlite":
        root = tmp_path / "notes"

        def count() -> tuple[int, int]:
            with sqlite3.connect(root / ".notewell" / "index.db") as conn:
                return conn.execute("SELECT count(*), coalesce(sum(length(vector)), 0) FROM old_vectors").fetchone()

        return root, count
    url = request.getfixturevalue("pg_store_url")

    def pg_count() -> tuple[int, int]:
        import psycopg

        with psycopg.connect(url) as conn:
            return conn.execute("SELECT count(*), coalesce(sum(length(vector)), 0) FROM old_vectors").fetchone()

    return url, pg_count


def _grow(store, revisions: int, *, embed: bool = True) -> tuple[str, list[str]]:
    """A note grown by a paragraph at each of *revisions* revisions (embedded after each, as
    the background would); its id and its texts, oldest first."""
    texts = [_text(list(range(n))) for n in range(1, revisions + 1)]
    note = store.add_note(texts[0])
    if embed:
        store.embed_pending()
    for text in texts[1:]:
        store.edit_note(note.id, text)
        if embed:
            store.embed_pending()
    return note.id, texts


def _words(text: str) -> set[str]:
    return set(re.findall(r"\bq[0-9a-f]{8}\b", text))


def _apart(dropped: dict[str, int], current: str) -> dict[str, int]:
    """The *dropped* passages that share no word with the *current* text: the current pass
    does not find them (under the floor the tests set)."""
    return {p: r for p, r in dropped.items() if not _words(p) & _words(current)}


def _found(store, query: str) -> list[tuple[str, int | None]]:
    return [(c.id, c.matched_revision) for c in store.search_notes(query, mode="semantic")]


def _dropped(texts: list[str]) -> dict[str, int]:
    """Each passage an older text had and the newest does not, with the newest revision holding it."""
    newest: dict[str, int] = {}
    for revision, text in enumerate(texts[:-1], start=1):
        for passage in _passages(text):
            newest[passage] = revision
    current = set(_passages(texts[-1]))
    return {p: r for p, r in newest.items() if p not in current}


@pytest.mark.slow
def test_older_vectors_grow_with_distinct_passages_not_revisions(place):
    where, count = place
    with notewell.open(where, embedder=HashEmbedder()) as store:
        _note, texts = _grow(store, 40)
        dropped = _dropped(texts)
        rows, size = count()
    every = sum(len(_passages(t)) for t in texts[:-1])  # what a row per revision and passage came to
    distinct = len({p for t in texts for p in _passages(t)})
    assert rows == len(dropped) and size == rows * 256 * 4
    assert rows <= distinct < every / 3


@pytest.mark.slow
def test_older_search_finds_a_dropped_passage_at_the_newest_revision_holding_it(place, monkeypatch):
    monkeypatch.setattr(HashEmbedder, "similarity_floor", 0.5, raising=False)
    where, _count = place
    with notewell.open(where, embedder=HashEmbedder()) as store:
        note, texts = _grow(store, 24)
        texts.append(_text(list(range(4)) + list(range(20, 24))))  # the middle goes
        store.edit_note(note, texts[-1])
        store.embed_pending()
        dropped = _apart(_dropped(texts), texts[-1])

        def held(passage: str) -> int:
            return sum(passage in _passages(t) for t in texts)

        # One passage held by many revisions (whole, it stopped changing), one by a single one
        # (the growing end, cut otherwise at the next revision).
        many, once = max(dropped, key=held), min(dropped, key=held)
        assert held(many) > 3 and held(once) == 1
        for query in (many, once):
            cards = store.search_notes(query, mode="semantic")
            assert [(c.id, c.matched_revision) for c in cards] == [(note, dropped[query])]
            assert cards[0].snippet.strip("…").split()[0] in query
        # A passage the note still holds: found as a current match, and once.
        assert _found(store, _passages(texts[-1])[-1]) == [(note, None)]


@pytest.mark.slow
def test_another_model_embeds_every_older_revision_again(place, monkeypatch):
    monkeypatch.setattr(HashEmbedder, "similarity_floor", 0.5, raising=False)
    where, count = place
    with notewell.open(where, embedder=HashEmbedder()) as store:
        note, texts = _grow(store, 12)
        texts.append(_text([0]))
        store.edit_note(note, texts[-1])
        store.embed_pending()
    dropped = _dropped(texts)
    with notewell.open(where, embedder=HashEmbedder(128)) as store:
        # Every older revision again but the first, whose text is the current one's.
        assert store.embed_pending()["revisions"] == len(texts) - 2
        assert count() == (len(dropped), len(dropped) * 128 * 4)  # this model's vectors only
        for passage, revision in _apart(dropped, texts[-1]).items():
            assert _found(store, passage) == [(note, revision)]


@pytest.mark.slow
def test_revisions_embedded_late_take_their_passages_from_the_note_and_each_other(tmp_path, monkeypatch):
    monkeypatch.setattr(HashEmbedder, "similarity_floor", 0.5, raising=False)
    embedder = CountingEmbedder()
    with notewell.open(tmp_path / "notes", embedder=embedder) as store:
        note, texts = _grow(store, 20, embed=False)  # twenty revisions before the embedder comes round
        store.embed_pending()
        distinct = {p for t in texts for p in _passages(t)}
        assert embedder.passages == len(distinct)  # each passage through the model once, not once per revision
        dropped = _dropped(texts)
        with sqlite3.connect(tmp_path / "notes" / ".notewell" / "index.db") as conn:
            assert conn.execute("SELECT count(*) FROM old_vectors").fetchone()[0] == len(dropped)
        texts.append(_text([0]))
        store.edit_note(note, texts[-1])
        store.embed_pending()
        passage, revision = max(_apart(_dropped(texts), texts[-1]).items(), key=lambda item: item[1])
        assert _found(store, passage) == [(note, revision)]


@pytest.mark.slow
def test_a_rebuild_carries_the_older_vectors_without_the_model(tmp_path, monkeypatch):
    monkeypatch.setattr(HashEmbedder, "similarity_floor", 0.5, raising=False)
    root = tmp_path / "notes"
    with notewell.open(root, embedder=HashEmbedder()) as store:
        note, texts = _grow(store, 15)
        texts.append(_text([0]))
        store.edit_note(note, texts[-1])
        store.embed_pending()
    dropped = _dropped(texts)
    embedder = CountingEmbedder()
    with notewell.open(root, embedder=embedder) as store:
        store.reindex()
        assert store.embed_pending() == {"embedded": 0, "pending": 0, "revisions": 0}
        assert embedder.passages == 0
        with sqlite3.connect(root / ".notewell" / "index.db") as conn:
            assert conn.execute("SELECT count(*) FROM old_vectors").fetchone()[0] == len(dropped)
        for passage, revision in _apart(dropped, texts[-1]).items():
            assert _found(store, passage) == [(note, revision)]


# old_vectors as schema version 12 made it: a row per revision and passage, without keys.
_V12_OLD_VECTORS = """
CREATE TABLE old_vectors(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  note_id TEXT NOT NULL,
  revision INTEGER NOT NULL,
  chunk INTEGER NOT NULL,
  model TEXT NOT NULL,
  dim INTEGER NOT NULL,
  start INTEGER NOT NULL,
  stop INTEGER NOT NULL,
  vector BLOB NOT NULL,
  UNIQUE(note_id, revision, model, chunk)
);
CREATE INDEX old_vectors_model ON old_vectors(model, dim);
"""


def _as_version_12(db, note: str, texts: list[str]) -> int:
    """Make the index at *db* one of schema version 12, its older vectors each revision's every
    passage (what that version stored); returns how many rows that is."""
    embedder = HashEmbedder()
    rows = []
    for revision, text in enumerate(texts[:-1], start=1):
        parts = passages(TITLE, parse_note(text).body)
        vectors = embedder.embed_documents([p for _a, _b, p in parts])
        rows += [
            (note, revision, k, embedder.model_id, embedder.dim, a, b, vectors[k].tobytes())
            for k, (a, b, _p) in enumerate(parts)
        ]
    with sqlite3.connect(db) as conn:
        conn.executescript("DROP TABLE old_vectors;" + _V12_OLD_VECTORS)
        conn.executemany(
            "INSERT INTO old_vectors(note_id, revision, chunk, model, dim, start, stop, vector)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.execute("DELETE FROM old_embed_queue")
        conn.execute("PRAGMA user_version = 12")
    return len(rows)


@pytest.mark.slow
def test_an_index_of_schema_12_is_upgraded_keeping_its_older_vectors(tmp_path, monkeypatch):
    monkeypatch.setattr(HashEmbedder, "similarity_floor", 0.5, raising=False)
    root = tmp_path / "notes"
    db = root / ".notewell" / "index.db"
    with notewell.open(root, embedder=HashEmbedder()) as store:
        note, texts = _grow(store, 20)
        texts.append(_text([0, 1]))
        store.edit_note(note, texts[-1])
        store.embed_pending()
    before = _as_version_12(db, note, texts)
    embedder = CountingEmbedder()
    with notewell.open(root, embedder=embedder) as store:
        assert store.embed_pending() == {"embedded": 0, "pending": 0, "revisions": 0}
        assert embedder.passages == 0  # every older passage carried over, none embedded again
        dropped = _dropped(texts)
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] > 12
            assert conn.execute("SELECT count(*) FROM old_vectors").fetchone()[0] == len(dropped) < before / 3
        for passage, revision in _apart(dropped, texts[-1]).items():
            assert _found(store, passage) == [(note, revision)]


def _as_version_5(url: str, note: str) -> int:
    """Give the PostgreSQL store at *url* (schema version 5) the vectors that version stored:
    the note's current passages, and each older revision's every passage; returns how many
    older rows that is."""
    import psycopg

    from notewell.backends.postgres.embedding import text_sha

    embedder = HashEmbedder()
    model, dim = embedder.model_id, embedder.dim
    with psycopg.connect(url) as conn:
        title, body, current = conn.execute("SELECT title, body, revision FROM notes WHERE id = %s", (note,)).fetchone()
        parts = passages(title, body)
        vectors = embedder.embed_documents([p for _a, _b, p in parts])
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO note_vectors(note_id, chunk, model, dim, sha256, revision, start, stop, vector)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (note, k, model, dim, text_sha(title, body), current, a, b, vectors[k].tobytes())
                    for k, (a, b, _p) in enumerate(parts)
                ],
            )
        rows = []
        for revision, title, body in conn.execute(
            "SELECT revision, title, body FROM old_revisions WHERE id = %s", (note,)
        ):
            parts = passages(title, body)
            vectors = embedder.embed_documents([p for _a, _b, p in parts])
            rows += [(note, revision, k, model, dim, a, b, vectors[k].tobytes()) for k, (a, b, _p) in enumerate(parts)]
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO old_vectors(note_id, revision, chunk, model, dim, start, stop, vector)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                rows,
            )
        conn.execute("DELETE FROM embed_queue")
        conn.execute("DELETE FROM old_embed_queue")
    return len(rows)


@pytest.mark.postgres
def test_a_version_5_database_keeps_one_row_per_passage_by_upgrade(pg_url, monkeypatch):
    import psycopg

    from notewell.backends.postgres import db as pg
    from notewell.backends.postgres.db import MIGRATIONS, PgDatabase

    monkeypatch.setattr(HashEmbedder, "similarity_floor", 0.5, raising=False)
    monkeypatch.setattr(pg, "MIGRATIONS", MIGRATIONS[:5])  # old_vectors a row per revision and passage
    with notewell.open(pg_url, embedder=None) as store:
        note, texts = _grow(store, 20, embed=False)
        texts.append(_text([0, 1]))
        store.edit_note(note, texts[-1])
    before = _as_version_5(pg_url, note)
    monkeypatch.setattr(pg, "MIGRATIONS", MIGRATIONS)
    db = PgDatabase(pg_url)
    try:
        assert db.upgrade() == list(range(6, len(MIGRATIONS) + 1))  # 6 and any later
    finally:
        db.close()

    def rows() -> int:
        with psycopg.connect(pg_url) as conn:
            return conn.execute("SELECT count(*) FROM old_vectors").fetchone()[0]

    dropped = _dropped(texts)
    assert rows() == len(dropped) < before / 3
    embedder = CountingEmbedder()
    with notewell.open(pg_url, embedder=embedder) as store:
        assert store.embed_pending() == {"embedded": 0, "pending": 0, "revisions": 0}
        assert embedder.passages == 0  # every vector kept, none embedded again
        for passage, revision in _apart(dropped, texts[-1]).items():
            assert _found(store, passage) == [(note, revision)]
        texts.append(_text([0, 1, 5]))  # and from here on the embedder keeps them so
        store.edit_note(note, texts[-1])
        store.embed_pending()
        assert rows() == len(_dropped(texts))
