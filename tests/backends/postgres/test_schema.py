"""Schema version 4 of the PostgreSQL store: each note's CJK characters and pairs
(cjk_grams) for keyword search, on new databases and on ones upgraded from version 3."""

from __future__ import annotations

import re

import pytest

import notewell
from notewell.backends.postgres.db import MIGRATIONS, PgDatabase
from notewell.model.cjk import CJK_RE


def _ranges() -> list[tuple[str, str]]:
    """The (first, last) characters of each range of CJK_RE's class."""
    body = CJK_RE.pattern.strip("[]")
    return re.findall(r"(.)-(.)", body, flags=re.DOTALL)


def test_the_grams_function_reads_the_same_characters_as_cjk_re(pg_url):
    db = PgDatabase(pg_url)
    try:
        db.upgrade()
        ranges = _ranges()
        assert len(ranges) == 11
        probes = []
        for first, last in ranges:
            probes += [chr(ord(first) - 1), first, chr(ord(first) + 1), last, chr(ord(last) + 1)]
        probes = [c for c in probes if not 0xD800 <= ord(c) <= 0xDFFF]  # no text holds a lone surrogate
        with db.transaction() as conn:
            got = dict(conn.execute("SELECT c, notewell_cjk_grams('', c) FROM unnest(%s::text[]) AS t(c)", [probes]))
        for c in probes:
            assert (got[c] == [c]) == bool(CJK_RE.fullmatch(c)), hex(ord(c))
    finally:
        db.close()


def test_grams_are_each_runs_characters_and_pairs_never_across_the_title_and_body(pg_url):
    with notewell.open(pg_url) as store:
        note = store.add_note("# 素数 x\n\n关于素数 abc 的\n")
        with store.backend.db.transaction() as conn:
            (grams,) = conn.execute("SELECT cjk_grams FROM notes WHERE id = %s", (note.id,)).fetchone()
        assert sorted(grams) == sorted({"素", "数", "素数", "关", "于", "关于", "于素", "的"})
        plain = store.add_note("# plain\n\nno CJK here\n")
        with store.backend.db.transaction() as conn:
            (grams,) = conn.execute("SELECT cjk_grams FROM notes WHERE id = %s", (plain.id,)).fetchone()
        assert grams == []


def test_a_version_3_database_gains_the_grams_of_its_notes_by_upgrade(pg_url, monkeypatch):
    from notewell.backends.postgres import db as pg

    monkeypatch.setattr(pg, "MIGRATIONS", MIGRATIONS[:3])  # the schema before cjk_grams
    with notewell.open(pg_url) as store:
        title = store.add_note("# 素数\n\nprimes\n")
        body = store.add_note("# primes\n\n关于素数的笔记\n")
        store.add_note("# 素\n\n数\n")
    monkeypatch.undo()
    with pytest.raises(notewell.StorageError, match="notewell db upgrade"):
        notewell.open(pg_url)
    db = PgDatabase(pg_url)
    try:
        assert db.upgrade() == list(range(4, len(MIGRATIONS) + 1))  # 4 and any later
        with db.transaction() as conn:
            assert conn.execute("SELECT to_regclass('notes_body_trgm')").fetchone()[0] is None
            assert conn.execute("SELECT count(*) FROM notes WHERE cjk_grams @> '{素数}'").fetchone()[0] == 2
    finally:
        db.close()
    with notewell.open(pg_url) as store:
        assert {c.id for c in store.search_notes("素数")} == {body.id, title.id}
        assert len(store.search_notes("数")) == 3
        later = store.add_note("# 后来\n\n素数\n")  # and a note added after the upgrade
        assert {c.id for c in store.search_notes("素数")} == {body.id, title.id, later.id}


def test_a_version_4_database_gains_its_older_revisions_by_upgrade(pg_url, monkeypatch):
    from notewell.backends.postgres import db as pg

    monkeypatch.setattr(pg, "MIGRATIONS", MIGRATIONS[:4])  # the schema before old_revisions
    with notewell.open(pg_url) as store:
        note = store.add_note("---\ntitle: plan\n---\nthe numbat survey\n")
        store.edit_note(note.id, "---\ntitle: plan\n---\nthe survey\n")
        store.edit_note(note.id, "---\ntitle: plan\n---\nthe survey, done\n")
    monkeypatch.undo()
    db = PgDatabase(pg_url)
    try:
        assert db.upgrade() == list(range(5, len(MIGRATIONS) + 1))  # 5 and any later
        with db.transaction() as conn:
            rows = conn.execute("SELECT revision, title, body FROM old_revisions ORDER BY revision").fetchall()
        assert rows == [(1, "plan", "the numbat survey\n"), (2, "plan", "the survey\n")]  # the header left out
    finally:
        db.close()
    with notewell.open(pg_url) as store:
        assert [(c.id, c.matched_revision) for c in store.search_notes("numbat")] == [(note.id, 1)]
        assert store.search_notes("title") == []  # header words are not body text


def test_a_version_5_database_titles_its_untitled_notes_by_their_first_line_by_upgrade(pg_url, monkeypatch):
    from notewell.backends.postgres import db as pg

    monkeypatch.setattr(pg, "MIGRATIONS", MIGRATIONS[:5])  # the schema before titles from the first line
    with notewell.open(pg_url) as store:
        plain = store.add_note("the checkout hangs behind the proxy\n\nfor ten seconds\n")
        titled = store.add_note("# Kept\n\nbody words\n")
        with store.backend.db.transaction() as conn:  # as version 5 wrote it: titled by its file name
            conn.execute("UPDATE notes SET title = id WHERE id = %s", (plain.id,))
            conn.execute("DELETE FROM embed_queue")
    monkeypatch.undo()
    with pytest.raises(notewell.StorageError, match="notewell db upgrade"):
        notewell.open(pg_url)
    db = PgDatabase(pg_url)
    try:
        assert db.upgrade() == list(range(6, len(MIGRATIONS) + 1))  # 6 and any later
        with db.transaction() as conn:
            queued = [r[0] for r in conn.execute("SELECT note_id FROM embed_queue")]
    finally:
        db.close()
    assert queued == [plain.id]  # its passages open with the title: embedded again
    with notewell.open(pg_url) as store:
        titles = {c.id: c.title for c in store.list_notes()}
        assert titles == {plain.id: "the checkout hangs behind the proxy", titled.id: "Kept"}
        assert [c.id for c in store.search_notes("title:checkout")] == [plain.id]
