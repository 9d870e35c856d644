"""The store API on real files and real SQLite."""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

import notewell
from notewell import (
    InvalidArgumentError,
    InvalidIdError,
    InvalidNoteError,
    NoteTooLargeError,
    NotFoundError,
)
from notewell.model.ids import is_note_id
from tests.services.conftest import on_memory

HEADERED = (
    "---\ntitle: Cache stampede\nkind: blocker\ntags: [cache, perf]\nowner: bob\n---\nEvery worker refills at once.\n"
)


def test_add_get_round_trip_bytes_exact(store, store_dir):
    texts = [HEADERED, "no newline at end", "a\r\nb\r\n", "emoji 🚀 and 中文\n\n\n", "---\nhr only\n---\n"]
    for text in texts:
        note = store.add_note(text, author="alice", model="m1")
        assert is_note_id(note.id)
        assert (store_dir / f"{note.id}.md").read_bytes() == text.encode("utf-8")
        got = store.get_note(note.id)
        assert got.text == text
        assert got.author == "alice"


def test_get_note_shape(backend):
    store = backend
    a = store.add_note(HEADERED)
    b = store.add_note(f"---\ntitle: Fix\nbuilds_on: [{a.id}, nope]\n---\nJitter.\n", author="bo")
    note = store.get_note(a.id)
    assert note.header == {"title": "Cache stampede", "kind": "blocker", "tags": ["cache", "perf"]}
    assert note.extra == ["owner: bob"]
    assert note.body == "Every worker refills at once.\n"
    assert note.backlinks == [{"id": b.id, "title": "Fix", "kind": None, "updated_at": b.updated_at}]
    assert store.get_note(b.id).builds_on == [a.id]
    assert store.get_note(b.id).extra == ["builds_on: nope"]
    d = note.to_dict()
    json.dumps(d)
    for key in (
        "id",
        "title",
        "kind",
        "tags",
        "builds_on",
        "model",
        "author",
        "created_at",
        "updated_at",
        "text",
        "header",
        "extra",
        "body",
        "backlinks",
        "revision",
    ):
        assert key in d


def test_title_falls_back_to_heading_then_first_line_then_file_name(store, store_dir):
    assert store.add_note("# Heading title\n\nbody").title == "Heading title"
    # No title and no heading: the first line, shortened at a word (issue 40: it was the id).
    n = store.add_note("plain body\n\nmore of it")
    assert n.title == "plain body" and store.list_notes(limit=1)[0].title == "plain body"
    long = store.add_note("the checkout hangs when the proxy answers slowly and every retry waits for the full timeout")
    assert long.title == "the checkout hangs when the proxy answers slowly and every retry waits for the…"
    nothing = store.add_note("***\n")  # no words on any line: the file name
    assert nothing.title == nothing.id
    (store_dir / "sub").mkdir()
    (store_dir / "sub" / "hand note.md").write_text("just text")
    assert [c.title for c in store.search_notes("just text")] == ["just text"]


def test_a_preview_leaves_out_the_heading_the_body_opens_with(backend):
    # The card shows that heading as its title already (issue 40: the preview repeated it).
    plain = backend.add_note("# Cache plan\n\nJitter the expiry times.\n")
    under = backend.add_note("---\ntitle: Cache plan\n---\n\n# Cache plan\n\nThe same heading, under a header.\n")
    later = backend.add_note("An opening line.\n\n# A later heading\n\nthe rest\n")
    only = backend.add_note("# Nothing but a heading\n")
    listed = {c.id: c.snippet for c in backend.list_notes()}
    assert listed[plain.id] == "Jitter the expiry times."
    assert listed[under.id] == "The same heading, under a header."
    assert listed[later.id] == "An opening line. # A later heading the rest"  # not an opening one: kept
    assert listed[only.id] == ""
    # A search card whose query shows nowhere in the body: its preview, without the opening heading.
    titled = backend.add_note("---\ntitle: Redis eviction\n---\n# Memory limits\n\nLRU keys go first.\n")
    assert [(c.id, c.snippet) for c in backend.search_notes("title:redis")] == [(titled.id, "LRU keys go first.")]


def test_an_index_from_before_first_line_titles_is_rebuilt_with_them(store_dir):
    import sqlite3

    with notewell.open(store_dir, embedder=None) as s:
        plain = s.add_note("echo piped into add, no header\n").id
    # The index as version 13 left it: the note titled by its id.
    conn = sqlite3.connect(store_dir / ".notewell" / "index.db")
    conn.execute("UPDATE note_index SET title = id")
    conn.execute("PRAGMA user_version = 13")
    conn.commit()
    conn.close()
    with notewell.open(store_dir, embedder=None) as s:
        assert s.built_on_open
        assert [c.title for c in s.list_notes()] == ["echo piped into add, no header"]
        assert [c.id for c in s.search_notes("title:piped")] == [plain]


def test_edit_keeps_previous_revisions(backend):
    store = backend
    n = store.add_note("first version\n", author="a")
    e = store.edit_note(n.id, "second version\n", author="b")
    assert e.revision == 2 and e.text == "second version\n"
    store.edit_note(n.id, "third version\n")
    assert store.get_note(n.id, revision=1).text == "first version\n"
    assert store.get_note(n.id, revision=2).text == "second version\n"
    assert store.get_note(n.id).revision == 3
    hist = store.history(n.id)
    assert [(h["revision"], h["op"], h["author"], h["kept"]) for h in hist] == [
        (1, "add", "a", True),
        (2, "edit", "b", True),
        (3, "edit", None, True),
    ]
    assert store.search_notes("third")[0].id == n.id
    # Words only an older revision has find the note through that revision (spec 002).
    assert [(c.id, c.matched_revision) for c in store.search_notes("first")] == [(n.id, 1)]
    with pytest.raises(NotFoundError):
        store.get_note(n.id, revision=9)
    with pytest.raises(InvalidArgumentError):
        store.get_note(n.id, revision=0)


def test_edit_same_text_is_no_new_revision(backend):
    store = backend
    n = store.add_note("same\n")
    assert store.edit_note(n.id, "same\n").revision == 1


def test_delete(backend):
    store = backend
    n = store.add_note("to delete\n")
    store.edit_note(n.id, "to delete, v2\n")
    store.edit_note(n.id, "to delete\n")
    res = store.delete_note(n.id)
    assert res["deleted"] is True and res["id"] == n.id
    if hasattr(store, "root"):
        assert not (store.root / f"{n.id}.md").exists()
    with pytest.raises(NotFoundError):
        store.get_note(n.id)
    with pytest.raises(NotFoundError):
        store.delete_note(n.id)
    assert store.search_notes("delete") == []
    assert store.history(n.id)[-1]["kept"] is True  # the last text stays in the history
    assert store.get_note(n.id, revision=1).text == "to delete\n"


@pytest.mark.parametrize("bad", ["../x", "nte_../../etc", "", "NTE_0123456789", "nte_012", "/etc/passwd", "a/b"])
def test_path_traversal_ids_are_refused(backend, bad):
    store = backend
    for call in (store.get_note, store.delete_note, store.history):
        with pytest.raises(InvalidIdError):
            call(bad)
    with pytest.raises(InvalidIdError):
        store.edit_note(bad, "x")


def _opened_again(store, request, **options):
    """The same store opened a second time, with *options*: its folder, its database, or the
    memory fake's tables."""
    if on_memory(store):
        from notewell.services.service import NoteService

        return NoteService(store.backend.opened_again(**options))
    return notewell.open(store.root if hasattr(store, "root") else request.getfixturevalue("pg_store_url"), **options)


def test_bad_text_is_refused_and_nothing_written(backend, request):
    store = backend
    for bad in ["", "   \n", "nul\x00byte", b"\xff\xfe bad utf8", "\ud800"]:
        with pytest.raises(InvalidNoteError):
            store.add_note(bad)
    with _opened_again(store, request, max_bytes=100) as small:
        with pytest.raises(NoteTooLargeError):
            small.add_note("x" * 101)
        small.add_note("x" * 100)
    assert store.summary()["total_notes"] == 1
    if hasattr(store, "root"):
        assert len([f for f in os.listdir(store.root) if f.endswith(".md")]) == 1
    n = store.add_note("keep me")
    with pytest.raises(InvalidNoteError):
        store.edit_note(n.id, "bad\x00")
    assert store.get_note(n.id).text == "keep me"
    with pytest.raises(InvalidArgumentError):
        store.add_note("ok", author="two\nlines")
    assert store.summary()["total_notes"] == 2


@pytest.mark.slow
def test_default_size_limit_is_one_mib(backend):
    store = backend
    with pytest.raises(NoteTooLargeError):
        store.add_note("x" * (1024 * 1024 + 1))
    assert store.add_note("x" * (1024 * 1024)).id


def test_index_is_ignored_by_git(store, store_dir):
    assert (store_dir / ".notewell" / ".gitignore").read_text().strip().endswith("*")


def _snapshot(store):
    out = {}
    for card in store.list_notes(limit=1000):
        n = store.get_note(card.id)
        out[n.id] = (
            n.path,
            n.title,
            n.created_at,
            n.updated_at,
            n.author,
            n.model,
            n.revision,
            n.builds_on,
            sorted(b["id"] for b in n.backlinks),
            n.text,
        )
    return out


@pytest.mark.slow
def test_rebuild_after_deleting_index_loses_nothing(store_dir):
    s = notewell.open(store_dir)
    a = s.add_note(HEADERED, author="alice", model="m1")
    s.add_note(f"---\ntitle: B\nbuilds_on: [{a.id}]\n---\nbody b\n", author="bob")
    s.edit_note(a.id, HEADERED + "more\n", author="carol")
    (store_dir / "hand.md").write_text("# Hand\nby hand\n")
    time.sleep(0.01)
    before = _snapshot(s)
    hist = s.history(a.id)
    s.close()
    shutil.rmtree(store_dir / ".notewell")
    s2 = notewell.open(store_dir)
    assert _snapshot(s2) == before
    assert s2.history(a.id) == hist
    assert s2.get_note(a.id, revision=1).text == HEADERED
    s2.reindex()
    assert _snapshot(s2) == before
    s2.close()


def test_corrupted_index_is_rebuilt(store_dir):
    s = notewell.open(store_dir)
    n = s.add_note("survives corruption", author="x")
    s.close()
    db = store_dir / ".notewell" / "index.db"
    for suffix in ("-wal", "-shm"):
        if os.path.exists(str(db) + suffix):
            os.unlink(str(db) + suffix)
    db.write_bytes(b"this is not a database" * 100)
    s = notewell.open(store_dir)
    got = s.get_note(n.id)
    assert got.text == "survives corruption" and got.author == "x"
    assert s.search_notes("corruption")[0].id == n.id
    s.close()


@pytest.mark.parametrize("watch", [True, False])
def test_outside_changes_are_picked_up(store_dir, watch):
    s = notewell.open(store_dir, watch=watch)
    n = s.add_note("original words\n")
    # edit in place
    with open(store_dir / f"{n.id}.md", "a") as fh:
        fh.write("appended zebra\n")
    assert [c.id for c in s.search_notes("zebra")] == [n.id]
    got = s.get_note(n.id)
    assert got.revision == 2 and got.text.endswith("zebra\n")
    assert s.get_note(n.id, revision=1).text == "original words\n"  # the text before the outside edit
    # new file in a new subfolder
    (store_dir / "deep" / "er").mkdir(parents=True)
    (store_dir / "deep" / "er" / "giraffe.md").write_text("---\ntags: [animal]\n---\na giraffe\n")
    cards = s.search_notes("giraffe")
    assert len(cards) == 1 and cards[0].tags == ["animal"]
    gid = cards[0].id
    # rename keeps the id
    os.rename(store_dir / "deep" / "er" / "giraffe.md", store_dir / "deep" / "renamed.md")
    cards = s.search_notes("giraffe")
    assert [c.id for c in cards] == [gid]
    assert s.get_note(gid).path == "deep/renamed.md"
    # delete
    os.unlink(store_dir / "deep" / "renamed.md")
    assert s.search_notes("giraffe") == []
    with pytest.raises(NotFoundError):
        s.get_note(gid)
    s.close()


def test_outside_made_ids_are_stable_across_rebuilds(store_dir):
    store_dir.mkdir()
    (store_dir / "a.md").write_text("alpha")
    (store_dir / "b.md").write_text("beta")
    s = notewell.open(store_dir)
    ids = {c.title: c.id for c in s.list_notes()}
    s.close()
    shutil.rmtree(store_dir / ".notewell")
    shutil.rmtree(store_dir / ".notewell-history")  # even without the journal
    s = notewell.open(store_dir)
    assert {c.title: c.id for c in s.list_notes()} == ids
    s.close()


def test_hidden_folders_and_other_files_are_not_notes(store_dir):
    (store_dir / ".obsidian").mkdir(parents=True)
    (store_dir / ".obsidian" / "workspace.md").write_text("not a note")
    (store_dir / "notes_index.json").write_text("{}")
    (store_dir / "readme.txt").write_text("not a note")
    (store_dir / "real.md").write_text("a real note")
    s = notewell.open(store_dir)
    assert [c.title for c in s.list_notes()] == ["a real note"]
    s.close()


def test_notetool_workspace(store_dir):
    store_dir.mkdir()
    (store_dir / "notes_index.json").write_text(json.dumps({"notes": [], "metadata": {}}))
    (store_dir / "note_20250119_153000_0.md").write_text(
        "---\nid: note_20250119_153000_0\ntitle: Dependency Conflict Issue\ntype: blocker\n"
        'tags: ["dependency", "urgent"]\ncreated_at: 2025-01-19T15:30:00\nupdated_at: 2025-01-19T15:30:00\n---\n'
        "# Dependency Conflict Issue\n\nFound some third-party library versions incompatible.\n"
    )
    s = notewell.open(store_dir)
    cards = s.search_notes("incompatible versions", kind="blocker", tags=["urgent"])
    assert (
        len(cards) == 1 and cards[0].title == "Dependency Conflict Issue" and cards[0].tags == ["dependency", "urgent"]
    )
    s.close()


def test_unreadable_files_are_reported_and_the_rest_served(store_dir):
    store_dir.mkdir()
    (store_dir / "good.md").write_text("good note about otters")
    (store_dir / "bad.md").write_bytes(b"\xff\xfe not utf8")
    (store_dir / "nul.md").write_bytes(b"has a \x00 byte")
    os.symlink(store_dir / "missing-target.md", store_dir / "dangling.md")
    s = notewell.open(store_dir, max_bytes=1000)
    (store_dir / "huge.md").write_text("y" * 2000)
    assert [c.title for c in s.search_notes("otters")] == ["good note about otters"]
    problems = {p["path"]: p["error"] for p in s.summary()["problems"]}
    assert set(problems) == {"bad.md", "nul.md", "dangling.md", "huge.md"}
    assert "UTF-8" in problems["bad.md"] and "NUL" in problems["nul.md"] and "limit" in problems["huge.md"]
    # fixing a file clears its problem
    (store_dir / "bad.md").write_text("now fine")
    assert "bad.md" not in {p["path"] for p in s.problems()}
    s.close()


def test_summary_tags_list(backend):
    store = backend
    store.add_note("---\nkind: blocker\ntags: [a, b]\n---\nx")
    store.add_note("---\nkind: blocker\ntags: [a]\n---\ny")
    store.add_note("z")
    summ = store.summary()
    assert summ["total_notes"] == 3
    assert {(r["kind"], r["count"]) for r in summ["by_kind"]} == {("blocker", 2), (None, 1)}
    assert len(summ["recent_notes"]) == 3
    assert store.list_tags() == [{"tag": "a", "count": 2}, {"tag": "b", "count": 1}]
    assert [c.snippet for c in store.list_notes(limit=1)] == ["z"]
    assert len(store.list_notes(kind="blocker")) == 2
    assert len(store.list_notes(limit=2, offset=2)) == 1
    with pytest.raises(InvalidArgumentError):
        store.list_notes(bogus=1)


def test_resolve_path(store, store_dir):
    (store_dir / "x.md").write_text("by path")
    nid = store.resolve("x.md")
    assert store.get_note(nid).text == "by path"
    with pytest.raises(NotFoundError):
        store.resolve("../outside.md")


def test_copies_of_a_note_file_get_distinct_ids(store_dir):
    s = notewell.open(store_dir)
    n = s.add_note("original text")
    (store_dir / "a").mkdir()
    (store_dir / "b").mkdir()
    (store_dir / "a" / f"{n.id}.md").write_text("copy one")
    (store_dir / "b" / f"{n.id}.md").write_text("copy two")
    ids = {c.id for c in s.list_notes()}
    assert len(ids) == 3 and n.id in ids
    s.close()
    shutil.rmtree(store_dir / ".notewell")
    s = notewell.open(store_dir)
    assert {c.id for c in s.list_notes()} == ids
    s.close()


def test_a_new_file_never_takes_a_deleted_notes_id(store_dir):
    s = notewell.open(store_dir)
    store_dir.joinpath("todo.md").write_text("OLD v1: secret plan\n")
    old_id = s.list_notes()[0].id
    store_dir.joinpath("todo.md").write_text("OLD v2\n")
    s.refresh()
    store_dir.joinpath("todo.md").unlink()
    s.refresh()
    store_dir.joinpath("todo.md").write_text("NEW unrelated list\n")
    new_id = s.list_notes()[0].id
    assert new_id != old_id
    assert s.get_note(old_id, revision=1).text == "OLD v1: secret plan\n"
    assert s.get_note(old_id, revision=2).text == "OLD v2\n"
    s.close()


def test_file_saved_between_scan_and_read(store_dir):
    s = notewell.open(store_dir, watch=False)
    notes = [s.add_note(f"note {i} text") for i in range(5)]
    fs, _ = s.backend.folder.scan()
    (store_dir / f"{notes[2].id}.md").write_text("a longer text saved by an editor just now")
    s.backend.syncer.paths(fs, None)  # the scan's sizes are stale for one file
    s.backend.syncer.paths(s.backend.folder.scan()[0], None)
    assert s.get_note(notes[2].id).text == "a longer text saved by an editor just now"
    assert [c.id for c in s.search_notes("editor")] == [notes[2].id]
    s.close()


def test_moving_many_files_keeps_ids(store_dir, monkeypatch):
    from notewell.backends.sqlite import sync

    monkeypatch.setattr(sync, "_BATCH", 3)
    store_dir.mkdir()
    for i in range(10):
        (store_dir / f"page-{i}.md").write_text(f"page {i}")
    s = notewell.open(store_dir)
    before = {c.title: c.id for c in s.list_notes()}
    (store_dir / "archive").mkdir()
    for i in range(10):
        os.rename(store_dir / f"page-{i}.md", store_dir / "archive" / f"page-{i}.md")
    assert {c.title: c.id for c in s.list_notes()} == before
    assert s.last_sync.moved == 10 and s.last_sync.removed == 0
    s.close()


def test_outside_edit_into_unreadable_file(store_dir):
    s = notewell.open(store_dir)
    n = s.add_note("original text about otters")
    (store_dir / f"{n.id}.md").write_bytes(b"new text about beavers \xff")
    assert s.search_notes("otters") == []  # the old text is no longer served
    assert f"{n.id}.md" in {p["path"] for p in s.problems()}
    assert s.get_note(n.id, revision=1).text == "original text about otters"  # but it is kept
    (store_dir / f"{n.id}.md").write_text("fixed text about beavers")
    assert [c.id for c in s.search_notes("beavers")] == [n.id]  # same id once readable again
    s.close()


def test_file_name_not_utf8_is_reported(store_dir):
    store_dir.mkdir()
    (store_dir / "good.md").write_text("good otter")
    with open(os.path.join(os.fsencode(store_dir), b"caf\xe9.md"), "wb") as fh:
        fh.write(b"bad name")
    s = notewell.open(store_dir)
    assert [c.title for c in s.search_notes("otter")] == ["good otter"]
    assert any("UTF-8" in p["error"] for p in s.summary()["problems"])
    s.close()


@pytest.mark.slow
def test_index_damaged_while_in_use_is_rebuilt(store_dir):
    s = notewell.open(store_dir, watch=False)
    s.add_notes([f"note number {i} about corruption" for i in range(300)], author="me")
    s.close()
    db = store_dir / ".notewell" / "index.db"
    size = db.stat().st_size
    with open(db, "r+b") as fh:
        fh.seek(size // 2)
        fh.write(os.urandom(size // 4))
    s = notewell.open(store_dir, watch=False)
    assert len(s.search_notes("corruption", limit=1000)) == 300
    assert {c.author for c in s.list_notes(limit=1000)} == {"me"}
    s.close()


def test_reindex_by_another_process_is_noticed(store_dir):
    a = notewell.open(store_dir)
    n = a.add_note("first", author="alice")
    b = notewell.open(store_dir)
    b.reindex()
    a.edit_note(n.id, "second", author="bob")
    c = notewell.open(store_dir)
    assert [(h["revision"], h["op"], h["author"]) for h in c.history(n.id)] == [(1, "add", "alice"), (2, "edit", "bob")]
    for s in (a, b, c):
        s.close()


def test_journal_replaced_by_a_longer_one_is_read_again(store_dir):
    s = notewell.open(store_dir)
    x = s.add_note("note x", author="a")
    journal = store_dir / ".notewell-history" / "journal.jsonl"
    x_line = journal.read_text()
    # What a merge from another clone may leave: its own line first, then ours.
    y_id = "nte_yyyyyyyyyy"
    y_line = (
        json.dumps(
            {
                "op": "add",
                "id": y_id,
                "path": f"{y_id}.md",
                "at": "2026-01-01T00:00:00.000000Z",
                "author": "b",
                "rev": 1,
            }
        )
        + "\n"
    )
    (store_dir / f"{y_id}.md").write_text("note y from the other clone")
    journal.write_text(y_line + x_line)
    assert s.get_note(y_id).author == "b"
    assert s.get_note(x.id).author == "a"
    s.close()


def test_torn_journal_tail_does_not_keep_readers_writing(store_dir):
    s = notewell.open(store_dir)
    s.add_note("one")
    with open(store_dir / ".notewell-history" / "journal.jsonl", "a") as fh:
        fh.write('{"op":"add","id":"nte_')
    s.list_notes()
    assert not s.backend.syncer.journal_behind()
    s.close()


def test_same_size_edit_is_seen_after_an_unchanged_check(store_dir):
    s = notewell.open(store_dir, watch=False)
    n = s.add_note("aaaa bbbb")
    assert s.search_notes("aaaa")  # the check records the folder's fingerprint
    assert s.search_notes("aaaa")  # unchanged: the fingerprint matches
    path = store_dir / f"{n.id}.md"
    st = path.stat()
    path.write_text("cccc bbbb")  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert [c.id for c in s.search_notes("cccc")] == [n.id]
    s.close()


def test_a_bulk_add_merges_the_keyword_index_only_when_it_is_a_good_part_of_the_store(tmp_path, monkeypatch):
    from notewell.backends.sqlite import backend as store_module
    from notewell.backends.sqlite.index import Index

    merges = []
    original = Index.optimize
    monkeypatch.setattr(store_module, "_OPTIMIZE_AFTER", 10)
    monkeypatch.setattr(Index, "optimize", lambda self: merges.append(self.note_count()) or original(self))
    with notewell.open(tmp_path / "notes", watch=False, embedder=None) as s:
        s.add_notes([f"note {i}" for i in range(40)], batch=5)  # into an empty store: merged
        for batch in range(3):  # 10 more onto 40, 50, 60: a quarter or less of the store
            s.add_notes([f"more {batch} {i}" for i in range(10)], batch=5)
        s.add_notes([f"big {i}" for i in range(30)], batch=5)  # 30 onto 70: merged
        assert merges == [40, 100]
        assert len(s.search_notes("more", limit=50)) == 30


def test_a_file_name_names_one_note_or_says_which_paths_it_could_be(tmp_path):
    with notewell.open(tmp_path / "notes", embedder=None) as store:
        for path in ("go-tips.md", "research/rag-notes.md", "a/same.md", "b/same.md", "50%_off.md"):
            (store.root / path).parent.mkdir(parents=True, exist_ok=True)
            (store.root / path).write_text(f"# {path}\n\nbody\n")
        store.refresh()
        assert store.get_note(store.resolve("rag-notes.md")).path == "research/rag-notes.md"
        assert store.resolve("research/rag-notes.md") == store.resolve("rag-notes.md")
        assert store.get_note(store.resolve("50%_off.md")).path == "50%_off.md"  # no LIKE wildcards
        with pytest.raises(
            notewell.InvalidArgumentError, match=r"same.md names 2 notes: give its path \(a/same.md, b/same.md\)"
        ):
            store.resolve("same.md")
        with pytest.raises(notewell.NotFoundError, match="no note at nope.md"):
            store.resolve("nope.md")
        with pytest.raises(notewell.NotFoundError):
            store.resolve("x/rag-notes.md")  # a path is a path: only the bare name is looked up anywhere


def test_a_new_store_is_its_owners_alone(tmp_path):
    import stat

    root = tmp_path / "fresh" / "notes"
    with notewell.open(root) as s:
        s.add_note("# private plan\n\nonly mine")
    for folder in (root, root / ".notewell", root / ".notewell-history"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_notes_whose_files_move_one_after_another_are_each_read_caught_up(tmp_path, monkeypatch):
    # A sweep of `mv`s: each candidate of similar_notes is behind its file once, at a different
    # moment. Each load catches up for itself; none fails the read (add_note answers with these).
    from notewell.backends.sqlite import backend as sqlite_backend

    with notewell.open(tmp_path / "n", embedder=None, watch=False) as s:
        ids = [s.add_note(f"# walrus {i}\nwalrus tusks ivory arctic {i}").id for i in range(3)]
        real, moved = sqlite_backend.load_note, set()

        def moving(index, folder, history, note_id, *args, **kwargs):
            if note_id in ids and note_id not in moved:
                moved.add(note_id)
                raise FileNotFoundError(2, "No such file or directory", f"{note_id}.md")
            return real(index, folder, history, note_id, *args, **kwargs)

        monkeypatch.setattr(sqlite_backend, "load_note", moving)
        found = s.similar_notes("walrus tusks ivory arctic")
        assert moved == set(ids) and {c["id"] for c in found} == set(ids)
