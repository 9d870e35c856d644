"""The first read's quick look at the folder (backends/sqlite/quick_check.py) and the full check it owes."""

from __future__ import annotations

import os
import time

import pytest

import notewell
from notewell.backends.sqlite import quick_check
from notewell.backends.sqlite.backend import SqliteBackend
from notewell.interfaces.cli import watcher
from notewell.interfaces.cli.app import main


def _settle(*folders) -> None:
    """Set the folders' mtimes a minute back, as a folder nobody touched lately has."""
    past = time.time() - 60
    for folder in folders:
        os.utime(folder, (past, past))


def _store_with_notes(root) -> dict[str, str]:
    (root / "sub").mkdir(parents=True)
    texts = {
        "keep.md": "# keeper\n\nalpha words",
        "gone.md": "# goner\n\nbeta words",
        "moved.md": "# mover\n\ngamma words",
        "edited.md": "# editee\n\ndelta words",
        "sub/inner.md": "# inner\n\nepsilon words",
    }
    for path, text in texts.items():
        (root / path).write_text(text, encoding="utf-8")
    notewell.Store(root, watch=False, embedder=None).close()  # makes .notewell/ (the root changes)
    _settle(root, root / "sub")
    with notewell.Store(root, watch=False, embedder=None) as store:  # the full check records the mtimes
        found = store.search_notes("words", limit=10)
        assert len(found) == 5 and store.last_check == "scan"
        return {c.title: c.id for c in found}


def _titles(store, query):
    return sorted(c.title for c in store.search_notes(query, limit=20))


def test_a_quick_look_sees_what_came_went_and_moved_and_owes_the_rest(tmp_path):
    root = tmp_path / "notes"
    ids = _store_with_notes(root)
    (root / "gone.md").unlink()
    os.rename(root / "moved.md", root / "sub" / "moved.md")
    (root / "new.md").write_text("# newcomer\n\nzeta words", encoding="utf-8")
    (root / "deeper").mkdir()
    (root / "deeper" / "deep.md").write_text("# deep one\n\neta words", encoding="utf-8")
    with open(root / "edited.md", "a", encoding="utf-8") as fh:  # in place: no folder changes
        fh.write("\nomega")
    os.utime(root / "edited.md", (time.time() + 5, time.time() + 5))
    store = notewell.Store(root, watch=False, embedder=None, quick_check_from=1)
    found = store.search_notes("words OR omega", limit=20)
    assert store.last_check == "quick" and store.full_check_owed
    assert sorted(c.title for c in found) == ["deep one", "editee", "inner", "keeper", "mover", "newcomer"]
    assert [c.id for c in found if c.title == "mover"] == [ids["mover"]]  # a move, not a new note
    assert not [c for c in found if "omega" in c.snippet]  # changed in place: not seen by the quick look
    assert _titles(store, "omega") == [] and store.last_check == "quick"  # nor by the next
    store.refresh()  # the full check owed
    assert not store.full_check_owed and _titles(store, "omega") == ["editee"]
    assert store.get_note(ids["mover"]).path == "sub/moved.md"
    store.close()


def test_an_unchanged_folder_is_not_listed(tmp_path, monkeypatch):
    root = tmp_path / "notes"
    _store_with_notes(root)
    listed = []
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=1) as store:
        monkeypatch.setattr(store.backend.index, "paths_in", lambda rel: listed.append(rel) or set())
        assert _titles(store, "alpha") == ["keeper"] and store.last_check == "quick"
    assert listed == []


def test_below_the_threshold_or_without_recorded_mtimes_the_check_is_full(tmp_path):
    root = tmp_path / "notes"
    _store_with_notes(root)
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=6) as store:  # 5 notes
        store.search_notes("alpha")
        assert store.last_check == "scan" and not store.full_check_owed
    with notewell.Store(root, watch=False, embedder=None) as store:  # not asked for
        store.search_notes("alpha")
        assert store.last_check == "scan"
    with notewell.Store(root, watch=False, embedder=None) as store:
        with store.backend.index.write():
            store.backend.index.set_state("dir_times", '{"": "not a time"}')
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=1) as store:
        store.search_notes("alpha")
        assert store.last_check == "scan"


def test_a_folder_changed_moments_ago_is_listed_until_it_settles(tmp_path, monkeypatch):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# first\n\nwords", encoding="utf-8")
    monkeypatch.setattr(quick_check, "SETTLED_NS", 3600 * 10**9)  # "moments ago", however slow the machine
    with notewell.Store(root, watch=False, embedder=None) as store:
        store.search_notes("words")
        assert store.backend.index.get_state("dir_times") == '{"":null}'  # too recent to trust
    # A second file in the same clock tick would leave the folder's mtime as recorded: still found.
    mtime = os.stat(root).st_mtime_ns
    (root / "b.md").write_text("# second\n\nwords", encoding="utf-8")
    os.utime(root, ns=(mtime, mtime))
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=1) as store:
        assert _titles(store, "words") == ["first", "second"] and store.last_check == "quick"
    monkeypatch.setattr(quick_check, "SETTLED_NS", 0)
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=1) as store:
        store.search_notes("words")
        assert store.backend.index.get_state("dir_times") == f'{{"":{mtime}}}'


def test_a_gone_folder_makes_the_check_full(tmp_path):
    root = tmp_path / "notes"
    _store_with_notes(root)
    (root / "sub" / "inner.md").unlink()
    (root / "sub").rmdir()
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=1) as store:
        assert "inner" not in _titles(store, "words") and store.last_check == "scan"


def test_the_cli_checks_in_full_after_its_answer_when_no_watcher_can_start(tmp_path, monkeypatch, capsys):
    root = tmp_path / "notes"
    _store_with_notes(root)
    with open(root / "edited.md", "a", encoding="utf-8") as fh:
        fh.write("\nomega")
    os.utime(root / "edited.md", (time.time() + 5, time.time() + 5))
    monkeypatch.setenv("NOTEWELL_AUTOWATCH", "2")  # a folder of 2 notes or more (1 is "on")
    monkeypatch.setattr(watcher, "_spawn_watcher", lambda root: False)
    assert main(["search", "omega", "--store", str(root)]) == 0
    assert "editee" not in capsys.readouterr().out  # the quick look answered first
    with notewell.Store(root, watch=False, embedder=None) as store:
        assert store.refresh().changed == 0  # the command had checked every file after its answer
        assert _titles(store, "omega") == ["editee"]


def test_a_note_replaced_by_a_folder_of_its_name(tmp_path):
    root = tmp_path / "notes"
    _store_with_notes(root)
    (root / "keep.md").unlink()
    (root / "keep.md").mkdir()
    (root / "keep.md" / "inside.md").write_text("# inside\n\nalpha words", encoding="utf-8")
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=1) as store:
        assert _titles(store, "alpha") == ["inside"] and store.last_check == "quick"


def test_a_problem_file_deleted_is_no_problem_after_a_quick_look(tmp_path):
    root = tmp_path / "notes"
    (root).mkdir()
    (root / "bad.md").write_bytes(b"\xff\xfe not utf-8")
    _store_with_notes(root)
    with notewell.Store(root, watch=False, embedder=None) as store:
        assert [p["path"] for p in store.problems()] == ["bad.md"]
    (root / "bad.md").unlink()
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=1) as store:
        store.search_notes("alpha")
        assert store.last_check == "quick" and store.problems() == []


def test_an_edit_the_journal_brings_is_read_at_once(tmp_path):
    # Another machine's edit arrives as a pull does: its file and journal lines, not this index.
    import shutil

    root, other = tmp_path / "notes", tmp_path / "other"
    ids = _store_with_notes(root)
    shutil.copytree(root, other, ignore=shutil.ignore_patterns(".notewell"))
    with notewell.Store(other, watch=False, embedder=None) as there:
        there.edit_note(ids["keeper"], "# keeper\n\nalpha words pulled")
    shutil.copy(other / "keep.md", root / "keep.md")
    shutil.copy(other / ".notewell-history" / "journal.jsonl", root / ".notewell-history" / "journal.jsonl")
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=1) as store:
        assert _titles(store, "pulled") == ["keeper"] and store.last_check == "quick"


def test_recorded_folders_outside_the_store_make_the_check_full(tmp_path):
    root = tmp_path / "notes"
    _store_with_notes(root)
    (tmp_path / "outside.md").write_text("# outside\n\nalpha", encoding="utf-8")
    with notewell.Store(root, watch=False, embedder=None) as store:
        with store.backend.index.write():
            store.backend.index.set_state("dir_times", '{"": null, "..": null}')
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=1) as store:
        assert _titles(store, "alpha") == ["keeper"] and store.last_check == "scan"


@pytest.mark.slow
def test_the_cli_full_check_after_its_answer_keeps_the_size_limit(tmp_path, monkeypatch, capsys):
    root = tmp_path / "notes"
    monkeypatch.setenv("NOTEWELL_MAX_BYTES", str(3 * 1024 * 1024))
    _store_with_notes(root)
    big = root / "big.md"
    big.write_text("# big one\n\n" + "kappa words " * 150_000, encoding="utf-8")  # 1.8 MB
    with notewell.Store(root, watch=False, embedder=None, max_bytes=3 * 1024 * 1024) as store:
        assert _titles(store, "kappa") == ["big one"]
    _settle(root)
    with notewell.Store(root, watch=False, embedder=None, max_bytes=3 * 1024 * 1024) as store:
        store.refresh()
    with open(big, "a", encoding="utf-8") as fh:
        fh.write("\nlambda")
    monkeypatch.setenv("NOTEWELL_AUTOWATCH", "2")
    monkeypatch.setattr(watcher, "_spawn_watcher", lambda root: False)
    assert main(["search", "alpha", "--store", str(root)]) == 0
    capsys.readouterr()
    with notewell.Store(root, watch=False, embedder=None, max_bytes=3 * 1024 * 1024) as store:
        assert store.refresh().changed == 0 and store.problems() == []
        assert _titles(store, "lambda") == ["big one"]


def test_a_watched_store_answers_its_first_read_quickly_and_checks_in_full_beside(tmp_path, monkeypatch):
    import threading

    root = tmp_path / "notes"
    _store_with_notes(root)
    (root / "new.md").write_text("# newcomer\n\nzeta words", encoding="utf-8")
    with open(root / "edited.md", "a", encoding="utf-8") as fh:
        fh.write("\nomega")
    os.utime(root / "edited.md", (time.time() + 5, time.time() + 5))
    first_read_done = threading.Event()  # the check beside may not win the race with the first search
    check = SqliteBackend._check_owed
    monkeypatch.setattr(SqliteBackend, "_check_owed", lambda self: first_read_done.wait(10) and check(self))
    with notewell.Store(root, watch=True, embedder=None, quick_check_from=1) as store:
        found = store.search_notes("zeta OR omega", limit=10)
        first_read_done.set()
        assert [c.title for c in found] == ["newcomer"]  # the in-place edit waits for the full check
        deadline = time.monotonic() + 20
        while store.full_check_owed and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not store.full_check_owed
        assert store.last_check == "quick"  # how the last read was served: the check beside served none
        assert _titles(store, "omega") == ["editee"]
        (root / "later.md").write_text("# later\n\nzeta again", encoding="utf-8")  # seen by inotify
        assert _titles(store, "zeta") == ["later", "newcomer"] and store.last_check == "inotify"


@pytest.mark.slow
def test_a_watched_store_whose_recorded_folder_went_or_became_a_link_checks_in_full(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    for change in ("gone", "link"):
        root = tmp_path / change
        _store_with_notes(root)
        for path in (root / "sub").iterdir():
            path.unlink()
        (root / "sub").rmdir()
        if change == "link":
            os.symlink(outside, root / "sub")
        with notewell.Store(root, watch=True, embedder=None, quick_check_from=1) as store:
            assert _titles(store, "epsilon") == [] and store.last_check == "scan"
            (outside / "secret.md").write_text("# secret\n\nepsilon outside", encoding="utf-8")
            (root / "later.md").write_text("# later\n\nepsilon inside", encoding="utf-8")
            assert _titles(store, "epsilon") == ["later"] and store.last_check == "inotify"  # still watching
        (outside / "secret.md").unlink()


def test_a_write_before_the_owed_check_makes_it(tmp_path, monkeypatch):
    root = tmp_path / "notes"
    ids = _store_with_notes(root)
    (root / "edited.md").write_text("# editee\n\ndelta words changed by hand", encoding="utf-8")
    os.utime(root / "edited.md", (time.time() + 5, time.time() + 5))
    monkeypatch.setattr(SqliteBackend, "_check_owed", lambda self: None)  # a thread that has not run yet
    with notewell.Store(root, watch=True, embedder=None, quick_check_from=1) as store:
        assert _titles(store, "alpha") == ["keeper"] and store.full_check_owed
        note = store.edit_note(ids["editee"], "# editee\n\nedited through notewell")
        assert note.revision == 3 and not store.full_check_owed  # the hand edit kept as revision 2


def test_a_failed_owed_check_makes_reads_check_in_full(tmp_path, monkeypatch):
    import sqlite3

    root = tmp_path / "notes"
    _store_with_notes(root)
    real = SqliteBackend.full_sync
    calls = []

    def failing(self, *args, **kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            raise sqlite3.OperationalError("disk I/O error")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SqliteBackend, "full_sync", failing)
    with notewell.Store(root, watch=True, embedder=None, quick_check_from=1) as store:
        assert _titles(store, "alpha") == ["keeper"]
        deadline = time.monotonic() + 10
        while not store.backend._owed_failed and time.monotonic() < deadline:
            time.sleep(0.02)
        assert store.backend._owed_failed
        assert _titles(store, "alpha") == ["keeper"] and store.last_check == "scan" and not store.full_check_owed


def test_journal_lines_naming_files_the_walk_does_not_reach_are_not_read(tmp_path):
    import json

    root = tmp_path / "notes"
    _store_with_notes(root)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x.md").write_text("# outside\n\nsecret theta", encoding="utf-8")
    os.symlink(tmp_path / "elsewhere", root / "linked")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "y.md").write_text("# hidden\n\nsecret theta", encoding="utf-8")
    lines = [
        {"op": "add", "id": f"nte_{i:010d}", "path": path, "at": "2026-01-01T00:00:00Z", "rev": 1, "sha256": "x"}
        for i, path in enumerate(["linked/x.md", ".hidden/y.md", "../z.md", "bad\x00.md"])
    ]
    with open(root / ".notewell-history" / "journal.jsonl", "a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(line) + "\n" for line in lines)
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=1) as store:
        assert _titles(store, "theta") == [] and store.last_check == "quick"


def test_a_folder_of_more_notes_than_a_quick_look_lists_is_left_to_the_full_check(tmp_path, monkeypatch):
    root = tmp_path / "notes"
    _store_with_notes(root)
    with notewell.Store(root, watch=False, embedder=None) as other:  # another process, while none is open
        other.add_note("# journaled\n\nzeta words")
    (root / "hand.md").write_text("# by hand\n\nzeta words", encoding="utf-8")  # in the root: 4 notes there
    (root / "sub" / "small.md").write_text("# small folder\n\nzeta words", encoding="utf-8")
    monkeypatch.setattr(quick_check, "LIST_LIMIT", 3)
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=1) as store:
        # What notewell wrote is in; the root is not listed, the small folder is.
        assert _titles(store, "zeta") == ["journaled", "small folder"] and store.last_check == "quick"
        assert store.full_check_owed
        assert _titles(store, "zeta") == ["journaled", "small folder"] and store.last_check == "quick"
        store.refresh()  # the full check owed lists it
        assert not store.full_check_owed and _titles(store, "zeta") == ["by hand", "journaled", "small folder"]
    monkeypatch.setattr(quick_check, "LIST_LIMIT", 1000)
    (root / "hand.md").unlink()
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=1) as store:
        assert _titles(store, "zeta") == ["journaled", "small folder"] and store.last_check == "quick"


def test_a_pulled_deletion_in_a_folder_too_big_to_list_is_applied(tmp_path, monkeypatch):
    import shutil

    root, there = tmp_path / "notes", tmp_path / "there"
    ids = _store_with_notes(root)
    shutil.copytree(root, there, ignore=shutil.ignore_patterns(".notewell"))  # another machine: no index
    with notewell.Store(there, watch=False, embedder=None) as other:
        other.delete_note(ids["goner"])
    history = ".notewell-history/journal.jsonl"
    shutil.copy(there / history, root / history)  # the pull: its journal, and the file gone
    (root / "gone.md").unlink()
    monkeypatch.setattr(quick_check, "LIST_LIMIT", 3)
    with notewell.Store(root, watch=False, embedder=None, quick_check_from=1) as store:
        assert _titles(store, "beta") == [] and store.last_check == "quick"
