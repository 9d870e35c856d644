"""Superseded notes, on every backend: ``supersedes:`` in a later note's header marks the
earlier note (``superseded_by``), ranks it right after its correction, leaves it out of
briefs, and shows in the links; a successor the viewer may not see changes nothing."""

from __future__ import annotations

import pytest

import notewell
from notewell.model.visibility import Viewer

OLD = "---\ntitle: Restart policy\nkind: finding\n---\nrestart policy: Luby restarts, unit 100, restart policy.\n"


def _correction(old_id: str, extra: str = "") -> str:
    return f"---\ntitle: Unit corrected\nkind: finding\nsupersedes: [{old_id}]\n---\nThe restart unit is 512.{extra}\n"


def test_a_later_note_marks_the_one_it_supersedes(backend):
    old = backend.add_note(OLD)
    new = backend.add_note(_correction(old.id))
    assert new.supersedes == [old.id] and new.superseded_by == []
    got = backend.get_note(old.id)
    assert got.superseded_by == [new.id] and got.supersedes == []
    assert backend.get_note(new.id).superseded_by == []
    assert {c.id: c.superseded_by for c in backend.list_notes()} == {old.id: [new.id], new.id: []}
    assert got.to_dict()["superseded_by"] == [new.id]
    # The link is the header's: an edit that drops it unmarks the note, a delete too.
    backend.edit_note(new.id, "# Unit corrected\n\nThe restart unit is 512.\n")
    assert backend.get_note(old.id).superseded_by == []
    backend.edit_note(new.id, _correction(old.id))
    assert backend.get_note(old.id).superseded_by == [new.id]
    backend.delete_note(new.id)
    assert backend.get_note(old.id).superseded_by == []


def test_itself_unknown_ids_and_rings(backend):
    old = backend.add_note(OLD)
    with pytest.raises(notewell.InvalidNoteError, match="cannot supersede itself"):
        backend.edit_note(old.id, OLD.replace("kind: finding", f"kind: finding\nsupersedes: [{old.id}]"))
    assert backend.get_note(old.id).revision == 1
    chosen = notewell.new_note_id()
    with pytest.raises(notewell.InvalidNoteError, match="cannot supersede itself"):
        backend.add_note(_correction(chosen), note_id=chosen)
    with pytest.raises(notewell.InvalidNoteError, match="cannot supersede itself"):
        backend.add_notes([OLD, _correction(chosen)], note_ids=[notewell.new_note_id(), chosen])
    assert backend.summary()["total_notes"] == 1  # refused before anything was written
    # An id nothing answers to is kept in the header, as builds_on keeps one, and marks nothing.
    ghost = backend.add_note(_correction("nte_zzzzzzzzzz"))
    assert ghost.supersedes == ["nte_zzzzzzzzzz"] and backend.get_note(ghost.id).superseded_by == []
    # A ring is harmless: only a later note supersedes, so the earlier note's claim is ignored.
    new = backend.add_note(_correction(old.id))
    backend.edit_note(old.id, OLD.replace("kind: finding", f"kind: finding\nsupersedes: [{new.id}]"))
    assert backend.get_note(old.id).supersedes == [new.id]
    assert backend.get_note(old.id).superseded_by == [new.id]
    assert backend.get_note(new.id).superseded_by == []


def test_search_ranks_a_superseded_note_right_after_its_correction(backend):
    old = backend.add_note(OLD)
    other = backend.add_note("---\ntitle: Restart policy elsewhere\n---\nrestart policy of another solver\n")
    new = backend.add_note("---\ntitle: Unit corrected\n---\nThe restart unit is 512 (policy).\n")
    before = [c.id for c in backend.search_notes("restart policy")]
    assert before.index(new.id) > before.index(old.id)
    backend.edit_note(
        new.id, "---\ntitle: Unit corrected\nsupersedes: [" + old.id + "]\n---\nThe restart unit is 512 (policy).\n"
    )
    after = backend.search_notes("restart policy")
    ids = [c.id for c in after]
    assert ids.index(old.id) == ids.index(new.id) + 1  # right after its correction
    assert [i for i in ids if i != old.id] == [i for i in before if i != old.id]  # the rest keep their order
    assert after[ids.index(old.id)].superseded_by == [new.id]
    assert other.id in ids
    # Without its correction in the list, a superseded note keeps its place (still marked).
    alone = backend.search_notes("Luby")
    assert [c.id for c in alone] == [old.id] and alone[0].superseded_by == [new.id]


def test_a_chain_ranks_newest_first_and_links_shows_it_both_ways(backend):
    first = backend.add_note(OLD)
    second = backend.add_note(_correction(first.id, " restart policy"))
    third = backend.add_note(_correction(second.id, " Really 512: restart policy checked."))
    ids = [c.id for c in backend.search_notes("restart policy")]
    assert ids == [third.id, second.id, first.id]
    tree = backend.links(first.id)
    assert [n["id"] for n in tree["superseded_by"]] == [second.id]
    assert [n["id"] for n in tree["superseded_by"][0]["superseded_by"]] == [third.id]
    assert tree["supersedes"] == []
    up = backend.links(third.id)
    assert [n["id"] for n in up["supersedes"]] == [second.id]
    assert [n["id"] for n in up["supersedes"][0]["supersedes"]] == [first.id]
    assert up["superseded_by"] == [] and up["builds_on"] == []


def test_a_brief_leaves_superseded_notes_out(backend):
    run = backend.start_attempt("sat", author="ada")
    old = backend.add_note(OLD, attempt=run.id)
    kept = backend.add_note("# Phase saving\n\nhelps.\n", attempt=run.id)
    new = backend.add_note(_correction(old.id), attempt=run.id)
    brief = backend.brief("sat")
    assert {c["id"] for c in brief["recent"]} == {kept.id, new.id}
    assert {c["id"] for c in brief["uncovered"]} == {kept.id, new.id} and brief["uncovered_count"] == 2


def test_a_successor_the_viewer_may_not_see_changes_nothing(backend):
    old = backend.add_note(OLD)
    secret = backend.start_attempt("owner-1:vault", author="owner-1")
    backend.set_project("owner-1:vault", private=True, owner="owner-1")
    backend.add_note("---\ntitle: Restart policy elsewhere\n---\nrestart policy of another solver\n")
    stranger, owner = Viewer(handle="someone"), Viewer(handle="owner-1")
    before = [c.id for c in backend.search_notes("restart policy", viewer=stranger)]
    hidden = backend.add_note(_correction(old.id, " restart policy restart policy"), attempt=secret.id)
    seen = backend.get_note(old.id, viewer=stranger)
    assert seen.superseded_by == [] and hidden.id not in str(seen.to_dict())
    cards = backend.search_notes("restart policy", viewer=stranger)
    assert [c.id for c in cards] == before and all(c.superseded_by == [] for c in cards)
    assert all(c.superseded_by == [] for c in backend.list_notes(viewer=stranger))
    tree = backend.links(old.id, viewer=stranger)
    assert tree["superseded_by"] == [] and hidden.id not in str(tree)
    # Its owner sees the correction, and the ranking follows it.
    assert backend.get_note(old.id, viewer=owner).superseded_by == [hidden.id]
    ids = [c.id for c in backend.search_notes("restart policy", viewer=owner)]
    assert ids.index(old.id) == ids.index(hidden.id) + 1


def test_semantic_and_hybrid_rank_it_after_its_correction(sbackend):
    old = sbackend.add_note("# kiwi frost\n\nkiwi orchard frost damage in spring, frost kiwi\n")
    new = sbackend.add_note(f"---\ntitle: correction\nsupersedes: [{old.id}]\n---\nkiwi orchard damage was hail\n")
    sbackend.embed_pending()
    for mode in ("semantic", "hybrid"):
        ids = [c.id for c in sbackend.search_notes("kiwi frost", mode=mode)]
        assert ids == [new.id, old.id], mode
    both = sbackend.search_notes("kiwi frost", mode="both")
    assert [(c.mode, c.id) for c in both] == [
        ("keyword", new.id),
        ("keyword", old.id),
        ("semantic", new.id),
        ("semantic", old.id),
    ]


def test_an_index_from_before_supersedes_is_rebuilt_with_them(store_dir):
    import sqlite3

    with notewell.open(store_dir, embedder=None) as s:
        old = s.add_note(OLD).id
        new = s.add_note(_correction(old)).id
    # The index as version 14 left it: no note_supersedes table.
    conn = sqlite3.connect(store_dir / ".notewell" / "index.db")
    conn.execute("DROP TABLE note_supersedes")
    conn.execute("PRAGMA user_version = 14")
    conn.commit()
    conn.close()
    with notewell.open(store_dir, embedder=None) as s:
        assert s.built_on_open
        assert s.get_note(old).superseded_by == [new]


@pytest.mark.postgres
def test_a_version_8_database_gets_its_supersedes_links_by_upgrade(pg_url, monkeypatch):
    from notewell.backends.postgres import db as pg
    from notewell.backends.postgres.db import MIGRATIONS, PgDatabase

    monkeypatch.setattr(pg, "MIGRATIONS", MIGRATIONS[:8])  # before note_supersedes
    with notewell.open(pg_url, embedder=None) as store:
        old = store.add_note(OLD).id
        store.add_note("# plain\n\nmentions supersedes in words only\n")
    # A note written by a server of version 8, which kept no supersedes links.
    db = PgDatabase(pg_url)
    new = "nte_" + "n" * 10
    try:
        with db.transaction() as conn:
            conn.execute(
                "INSERT INTO notes(id, path, text, title, body, created_at, updated_at, revision)"
                " VALUES (%s, %s, %s, 'Unit corrected', '', '2999-01-01T00:00:00Z', '2999-01-01T00:00:00Z', 1)",
                (new, f"{new}.md", _correction(old)),
            )
    finally:
        db.close()
    monkeypatch.setattr(pg, "MIGRATIONS", MIGRATIONS)
    db = PgDatabase(pg_url)
    try:
        assert db.upgrade() == list(range(9, len(MIGRATIONS) + 1))
    finally:
        db.close()
    with notewell.open(pg_url, embedder=None) as store:
        assert store.get_note(old).superseded_by == [new]
