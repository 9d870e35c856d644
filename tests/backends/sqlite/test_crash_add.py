"""A writer killed in the middle of a private add leaves the note whole or absent, never public;
one killed between its journal record and the file's name is finished by the next open.

Before, a note's file got its name before its journal record was written: a writer killed in
between left a file that the next open adopted as a note made outside notewell (no author, no
attempt), and so public, though it was written in alice's private project.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import notewell
from notewell.model.visibility import Viewer

_CHILD = textwrap.dedent(
    """
    import os, sys
    import notewell
    from notewell.backends.sqlite.files import NoteFolder
    from notewell.backends.sqlite.sync import Syncer

    root, point, attempt = sys.argv[1:4]
    store = notewell.open(root, embedder=None, watch=False)
    commit, sync_dirs = Syncer.commit_records, getattr(NoteFolder, "sync_dirs", None)

    def journal(self, records, **kw):
        adding = any(r.get("op") == "add" for r in records)
        if adding and point == "before_journal":
            os._exit(9)
        commit(self, records, **kw)
        if adding and point == "after_journal":
            os._exit(9)

    def named(self, relpaths):
        sync_dirs(self, relpaths)
        if point == "after_naming":
            os._exit(9)

    Syncer.commit_records, NoteFolder.sync_dirs = journal, named
    texts = ["---\\ntitle: Secret plan\\n---\\nzebra secret words {}".format(i) for i in range(int(sys.argv[4]))]
    store.add_notes(texts, attempt=attempt, batch=2)
    print("not killed")
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("count", [1, 5])
@pytest.mark.parametrize("point", ["before_journal", "after_journal", "after_naming"])
def test_a_writer_killed_mid_add_never_publishes_a_private_note(tmp_path, point, count):
    root = tmp_path / "notes"
    with notewell.open(root, embedder=None, watch=False) as store:
        store.set_project("alice:hidden", private=True, owner="alice")
        attempt = store.start_attempt("alice:hidden", author="alice").id
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), point, attempt, str(count)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 9, done.stderr
    for rebuild in (False, True):
        with notewell.open(root, embedder=None, watch=False) as store:
            if rebuild:
                store.reindex()
            for viewer in (Viewer(), Viewer(handle="bob")):
                assert store.search_notes("zebra", viewer=viewer) == []
                assert store.list_notes(viewer=viewer) == []
            found = store.search_notes("zebra", limit=50)
            if point == "after_naming":  # named after its record: complete, with its attempt and author
                assert len(found) >= 1
            elif point == "after_journal":  # journaled, not named: the next open names it, whole
                assert len(found) >= min(count, 2)
            else:  # killed before its record: absent
                assert found == []
            for card in found:
                note = store.get_note(card.id)
                assert (note.attempt_id, note.author) == (attempt, "alice")
            for viewer in (Viewer(), Viewer(handle="bob")):
                assert all(c.id not in {f.id for f in found} for c in store.list_notes(viewer=viewer, limit=100))
        visible = [p.name for p in root.iterdir() if p.suffix == ".md" and not p.name.startswith(".")]
        assert len(visible) == len(found)


_IMPORTER = textwrap.dedent(
    """
    import os, sys
    import notewell
    from notewell.backends.sqlite.sync import Syncer
    from notewell.services.conversation_import import import_conversations

    root, export = sys.argv[1:3]
    store = notewell.open(root, embedder=None, watch=False)
    commit = Syncer.commit_records

    def journal(self, records, **kw):
        commit(self, records, **kw)
        if sum(r.get("op") == "add" for r in records) > 1:  # the batch of parts, not the attempt
            os._exit(9)

    Syncer.commit_records = journal
    import_conversations(store, "claude", export)
    print("not killed")
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("staged_files", ["kept", "gone"])
def test_an_import_killed_before_naming_its_files_loses_no_conversation(tmp_path, staged_files):
    from notewell.services.conversation_import import import_conversations
    from tests.services.conversation_fixtures import write_claude_zip

    root, export = tmp_path / "notes", tmp_path / "c.zip"
    write_claude_zip(export, conversations=5, turns=2)
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTER, str(root), str(export)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 9, done.stderr
    staged = [p for p in root.iterdir() if p.name.endswith(".tmp")]
    assert len(staged) == 5 and not list(root.glob("*.md"))
    if staged_files == "gone":  # swept, or cleaned away by hand: the import writes them again
        for p in staged:
            p.unlink()
    with notewell.open(root, embedder=None, watch=False) as store:
        again = import_conversations(store, "claude", export)
        assert again.deleted_here == 0 and again.errors == []
        assert again.new + again.unchanged == 5 and again.notes == again.new
        assert again.new == (5 if staged_files == "gone" else 0)
        assert len(store.list_notes(limit=50, project="claude")) == 5
    assert len(list(root.glob("*.md"))) == 5
