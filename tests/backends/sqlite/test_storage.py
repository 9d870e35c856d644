"""The storage layer on its own: folder, journal, watcher, index repair."""

from __future__ import annotations

import os
import time

import pytest

from notewell import StorageError
from notewell.backends.sqlite.files import NoteFolder
from notewell.backends.sqlite.fts_rows import keyword_index_problems
from notewell.backends.sqlite.history import History
from notewell.backends.sqlite.index import Index
from notewell.backends.sqlite.inotify import COOKIE_PREFIX, Watcher


def test_create_never_overwrites_and_replace_is_whole(tmp_path):
    folder = NoteFolder(tmp_path)
    folder.create("a.md", b"one")
    with pytest.raises(FileExistsError):
        folder.create("a.md", b"two")
    assert (tmp_path / "a.md").read_bytes() == b"one"
    folder.replace("a.md", b"three")
    assert (tmp_path / "a.md").read_bytes() == b"three"
    assert [p for p in os.listdir(tmp_path) if p.endswith(".tmp")] == []
    for bad in ("../x.md", "/etc/x.md", "a/../../x.md", ""):
        with pytest.raises(StorageError):
            folder.abspath(bad)


def test_scan_skips_hidden_and_reports_dangling_links(tmp_path):
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "sub" / "deeper" / "b.md").write_text("bb")
    (tmp_path / ".git" / "c.md").write_text("c")
    (tmp_path / ".hidden.md").write_text("h")
    (tmp_path / "notes.txt").write_text("t")
    os.symlink(tmp_path / "nowhere.md", tmp_path / "dangling.md")
    files, dirs = NoteFolder(tmp_path).scan()
    assert set(files) == {"a.md", "sub/deeper/b.md", "dangling.md"}
    assert files["sub/deeper/b.md"][1] == 2 and files["dangling.md"] == (-1, -1)
    assert dirs == {"", "sub", "sub/deeper"}


def test_journal_survives_a_torn_line(tmp_path):
    history = History(tmp_path)
    history.append([{"op": "add", "id": "nte_0000000001", "at": "t1"}])
    with open(history.journal_path, "ab") as fh:
        fh.write(b'{"op":"add","id":"nte_00')  # a writer killed mid-append
    history.append([{"op": "add", "id": "nte_0000000002", "at": "t2"}])
    records, end = history.read()
    assert [r["id"] for r in records] == ["nte_0000000001", "nte_0000000002"]
    assert end == history.journal_size()
    tail, _ = history.read(end)
    assert tail == []
    assert (history.dir / ".gitattributes").read_text() == "journal.jsonl merge=union\n"


def test_revisions_round_trip(tmp_path):
    history = History(tmp_path)
    history.save_revision("nte_0000000001", 1, b"first")
    assert history.load_revision("nte_0000000001", 1) == b"first"
    assert history.load_revision("nte_0000000001", 2) is None


def test_damaged_index_is_recreated(tmp_path):
    index = Index(tmp_path)
    assert index.rebuilt
    index.close()
    assert not Index(tmp_path).rebuilt
    (tmp_path / ".notewell" / "index.db").write_bytes(b"garbage" * 1000)
    for suffix in ("-wal", "-shm"):
        p = tmp_path / ".notewell" / f"index.db{suffix}"
        if p.exists():
            p.unlink()
    again = Index(tmp_path)
    assert again.rebuilt and again.note_count() == 0


@pytest.mark.slow
def test_watcher_reports_note_changes_and_cookies(tmp_path):
    w = Watcher(str(tmp_path))
    if not w.active:
        pytest.skip("no inotify here")
    (tmp_path / "sub").mkdir()
    assert w.watch({"", "sub"})
    (tmp_path / "a.md").write_text("x")
    (tmp_path / "sub" / "b.md").write_text("y")
    (tmp_path / "ignored.txt").write_text("z")
    (tmp_path / (COOKIE_PREFIX + "abc")).write_text("")
    time.sleep(0.05)
    paths, rescan = w.changes()
    assert paths == {"a.md", "sub/b.md"} and not rescan
    assert w.cookies == [COOKIE_PREFIX + "abc"]
    (tmp_path / "newdir").mkdir()
    time.sleep(0.05)
    assert w.changes()[1] is True  # a new folder needs a full look
    assert w.changes() == (set(), False)
    w.close()


@pytest.mark.slow
def test_watcher_lets_go_of_a_folder_moved_out_and_follows_one_moved_within(tmp_path):
    root, outside = tmp_path / "notes", tmp_path / "outside"
    for rel in ("a/b", "c", "keep"):
        (root / rel).mkdir(parents=True)
    outside.mkdir()
    w = Watcher(str(root))
    if not w.active:
        pytest.skip("no inotify here")
    assert w.watch({"", "a", "a/b", "c", "keep"})
    (root / "a").rename(outside / "a")  # out of the store, with the folder inside it
    (root / "c").rename(root / "keep" / "c")  # within it
    time.sleep(0.05)
    assert w.changes()[1] is True
    assert w.watch({"", "keep", "keep/c"})  # what the rescan finds
    w.let_go_of_moved()
    (outside / "a" / "x.md").write_text("x")
    (outside / "a" / "b" / "y.md").write_text("y")
    (root / "keep" / "c" / "z.md").write_text("z")
    time.sleep(0.05)
    # Nothing under the old names (a/x.md, c/z.md), and the taken-off watches ask no second rescan.
    assert w.changes() == ({"keep/c/z.md"}, False)
    w.close()


@pytest.mark.slow
def test_watcher_misses_nothing_written_in_a_moved_folder_before_the_rescan_watches_it(tmp_path):
    (tmp_path / "a" / "sub").mkdir(parents=True)
    w = Watcher(str(tmp_path))
    if not w.active:
        pytest.skip("no inotify here")
    assert w.watch({"", "a", "a/sub"})
    (tmp_path / "a").rename(tmp_path / "b")
    time.sleep(0.05)
    assert w.changes()[1] is True
    (tmp_path / "b" / "sub" / "early.md").write_text("x")  # after the rescan listed it, before its watch
    time.sleep(0.05)
    assert w.changes() == (set(), True)  # under its old name it asks another rescan, not a wrong path
    (tmp_path / "b" / "sub" / "late.md").write_text("y")
    assert w.watch({"", "b", "b/sub"})  # the rescan's watches: the same folders, their new names
    w.let_go_of_moved()
    time.sleep(0.05)
    assert w.changes() == ({"b/sub/late.md"}, False)
    (tmp_path / "b" / "sub" / "later.md").write_text("z")
    time.sleep(0.05)
    assert w.changes() == ({"b/sub/later.md"}, False)
    w.close()


def _note_indexes(index: Index) -> set[str]:
    return {
        name
        for (name,) in index.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'note%' AND sql IS NOT NULL"
        )
    }


def test_missing_secondary_indexes_come_back_at_open(tmp_path):
    index = Index(tmp_path)
    every = _note_indexes(index)
    from notewell.backends.sqlite.schema import NOTE_INDEXES

    assert "note_index_files" in every and len(every) == len(NOTE_INDEXES)
    with index.write():
        index.drop_note_indexes()
    assert _note_indexes(index) == set()
    index.close()
    again = Index(tmp_path)  # a rebuild cut short: the next open makes them again
    assert _note_indexes(again) == every
    again.close()


def test_bulk_rebuild_makes_its_indexes_again(tmp_path, monkeypatch):
    import notewell
    from notewell.backends.sqlite import sync

    monkeypatch.setattr(sync, "_OPTIMIZE_AFTER", 5)
    monkeypatch.setattr(sync, "_BATCH", 4)
    store = notewell.open(tmp_path / "s", watch=False)
    notes = store.add_notes([f"---\ntags: [t{i % 3}]\n---\n# note {i}\n\nword{i} shared" for i in range(12)])
    store.reindex()
    assert _note_indexes(store.backend.index) >= {"note_index_files", "note_tags_note", "note_links_note"}
    assert len(store.search_notes("shared", limit=20)) == 12
    assert {c.id for c in store.list_notes(limit=20)} == {n.id for n in notes}
    store.close()


def test_malformed_journal_records_are_skipped_at_rebuild(tmp_path):
    import json
    import shutil

    import notewell

    s = notewell.open(tmp_path / "s")
    att = s.start_attempt("p", author="a")
    note = s.add_note("# kept", attempt=att.id)
    s.set_project("p", private=False)
    s.close()
    journal = tmp_path / "s" / ".notewell-history" / "journal.jsonl"
    bad = [
        {"op": "attempt", "id": "att_aaaaaaaaaa", "project": "p"},  # no time
        {"op": "attempt", "id": "att_bbbbbbbbbb", "project": {"x": 1}, "at": "2026"},
        {"op": "project", "id": "p", "owner": ["list"]},
        {"op": "project", "id": "p", "private": "false"},  # not true: stays public
        {"op": "read", "id": 5},
        {"op": "add"},
        ["not", "a", "record"],
    ]
    with open(journal, "a", encoding="utf-8") as fh:
        for record in bad:
            fh.write(json.dumps(record) + "\n")
    shutil.rmtree(tmp_path / "s" / ".notewell")
    s = notewell.open(tmp_path / "s")
    assert s.get_note(note.id).attempt_id == att.id
    assert s.get_project("p")["private"] is False
    assert [a.id for a in s.list_attempts()] == [att.id]
    s.close()


def test_a_run_of_add_records_with_a_malformed_one_keeps_the_others(tmp_path):
    index = Index(tmp_path / "s")
    good = [
        {"op": "add", "id": f"nte_{i:010d}", "path": f"n{i}.md", "at": "2026-01-01T00:00:00Z", "rev": 1, "sha256": "x"}
        for i in range(4)
    ]
    bad = {"op": "add", "id": "nte_bbbbbbbbbb", "path": {"not": "a path"}, "rev": 1}
    with index.write():
        index.apply_records([good[0], good[1], bad, ["not", "a", "record"], good[2], good[3]])
    rows = index.conn.execute("SELECT id, path, revision FROM journal_meta ORDER BY id").fetchall()
    assert rows == [(f"nte_{i:010d}", f"n{i}.md", 1) for i in range(4)]
    assert index.conn.execute("SELECT count(*) FROM revisions").fetchone() == (4,)
    with index.write():
        index.apply_records(good)  # again: idempotent
    assert index.conn.execute("SELECT count(*) FROM journal_meta").fetchone() == (4,)
    index.close()


def test_a_deleted_note_brought_back_keeps_its_id(tmp_path):
    import notewell

    store = notewell.open(tmp_path / "s", watch=False)
    (store.root / "a.md").write_text("# alpha\n\nneedle one\n")
    first = store.search_notes("needle")[0].id
    os.rename(store.root / "a.md", store.root / "b.md")
    assert store.search_notes("needle")[0].id == first
    os.unlink(store.root / "b.md")
    assert store.search_notes("needle") == []
    (store.root / "b.md").write_text("# alpha\n\nneedle one\n")  # restored from a backup
    assert store.search_notes("needle")[0].id == first
    assert store.get_note(first).revisions >= 1
    store.close()


def test_leftovers_of_a_killed_writer_are_swept(tmp_path, monkeypatch):

    import notewell

    root = tmp_path / "notes"
    with notewell.open(root) as s:
        s.add_note("# keep me\n")
    old = [root / ".nte_abc.md.0123abcd.tmp", root / "sub" / ".x.md.deadbeef.undo"]
    fresh = root / ".nte_def.md.89abcdef.tmp"
    other = root / ".vimrc.tmp"  # not a name notewell makes
    (root / "sub").mkdir()
    for path in (*old, fresh, other):
        path.write_text("partial")
    from notewell.backends.sqlite import files

    # ctime cannot be set back by hand: let the sweep count "an hour" as no time at all.
    monkeypatch.setattr(files.NoteFolder.sweep, "__defaults__", (-1.0,))
    with notewell.open(root) as s:
        assert len(s.list_notes()) == 1
    assert not any(p.exists() for p in (*old, fresh))  # all older than "an hour" here
    assert other.exists()  # not a name notewell makes


def test_a_live_undo_link_with_an_old_mtime_is_not_swept(tmp_path):
    import os
    import time

    import notewell

    root = tmp_path / "notes"
    with notewell.open(root) as s:
        note = s.add_note("# keep me\n")
    live = root / f".{note.id}.md.0123abce.undo"
    os.link(root / f"{note.id}.md", live)
    os.utime(live, (time.time() - 7200, time.time() - 7200))  # mtime two hours back, ctime now
    with notewell.open(root) as s:
        s.list_notes()
    assert live.exists()


def _titles_consistent(store) -> None:
    """titles_fts holds exactly the notes, each findable by every word of its title."""
    conn = store.backend.index.conn
    assert keyword_index_problems(conn) == []
    rows = dict(conn.execute("SELECT rowid, title FROM note_index"))
    assert {r for (r,) in conn.execute("SELECT id FROM titles_fts_docsize")} == set(rows)
    for rowid, title in rows.items():
        for word in title.split():
            found = {r for (r,) in conn.execute("SELECT rowid FROM titles_fts WHERE titles_fts MATCH ?", [f'"{word}"'])}
            assert rowid in found, (title, word)
            assert found <= {r for r, t in rows.items() if word.casefold() in t.casefold()}


def test_the_title_index_follows_every_write(tmp_path):
    import notewell

    store = notewell.open(tmp_path / "s", watch=False)
    a, b, c = store.add_notes(["# alpha beta\n\nbody", "# gamma 你好\n\nbody", "# delta\n\nbody"])
    store.edit_note(a.id, "# alpha renamed\n\nnew body")
    store.delete_note(c.id)
    (store.root / b.path).write_text("# gamma moved outside\n\nbody\n", encoding="utf-8")
    store.refresh()
    _titles_consistent(store)
    assert [n.id for n in store.search_notes("renamed")] == [a.id]
    store.reindex()
    _titles_consistent(store)
    store.close()


def test_a_link_to_another_note_is_reported_not_indexed_twice(tmp_path):
    # A link to a note of the store made a second note with the same text (and an edit of one
    # changed both). The note is indexed once, under its own name; the link is a problem.
    import notewell

    root = tmp_path / "notes"
    with notewell.open(root, watch=True, embedder=None) as store:
        original = store.add_note("# heron\n\nwading birdword")
        os.symlink(root / original.path, root / "alias.md")
        os.makedirs(root / "sub")
        os.symlink(os.path.join("..", original.path), root / "sub" / "relative.md")
        (root / ".archive").mkdir()
        (root / ".archive" / "kept.md").write_text("# kept\n\narchived birdword\n")
        os.symlink(root / ".archive" / "kept.md", root / "kept.md")  # its target is no note: the link is
        for _ in range(2):  # as the watcher sees it, then after a rebuild from the folder
            store.refresh()
            assert sorted(c.title for c in store.search_notes("birdword")) == ["heron", "kept"]
            problems = {p["path"]: p["error"] for p in store.problems()}
            assert set(problems) == {"alias.md", "sub/relative.md"}
            assert all("link to another note" in why for why in problems.values())
            store.reindex()
