"""Edits that keep the header, and edits checked against the revision they were written from
(both stores)."""

from __future__ import annotations

import pytest

import notewell

TEXT = "---\ntitle: Plan\nkind: decision\ntags: [a]\n---\nold body\n"


def test_keep_header_replaces_only_the_body(backend):
    note = backend.add_note(TEXT)
    edited = backend.edit_note(note.id, "new body\n", keep_header=True)
    assert edited.text == "---\ntitle: Plan\nkind: decision\ntags: [a]\n---\nnew body\n" and edited.revision == 2
    plain = backend.add_note("no header at all\n")
    assert backend.edit_note(plain.id, "no header at all\nand more\n", keep_header=True).text == (
        "no header at all\nand more\n"  # the same first line: the same title, no header needed
    )


def test_keep_header_keeps_a_first_line_title(backend):
    """A note titled by its first line keeps that title when its body is replaced (the CLI's
    edit --text: "the body only: title, kind and tags stay"), in a header it did not need before."""
    plain = backend.add_note("Redis eviction: volatile-lru\n\nKeys with a TTL go first.\n")
    assert plain.title == "Redis eviction: volatile-lru"
    edited = backend.edit_note(plain.id, "Switched to allkeys-lfu.\n", keep_header=True)
    assert edited.title == "Redis eviction: volatile-lru"
    assert edited.text == '---\ntitle: "Redis eviction: volatile-lru"\n---\nSwitched to allkeys-lfu.\n'
    assert [c.title for c in backend.list_notes()] == ["Redis eviction: volatile-lru"]
    # A body that brings its own heading names the note itself.
    other = backend.add_note("first words\n")
    assert backend.edit_note(other.id, "# A new name\n\nbody\n", keep_header=True).title == "A new name"


def test_base_revision_refuses_an_edit_made_over_a_newer_text(backend):
    note = backend.add_note(TEXT)
    backend.edit_note(note.id, "an agent's edit\n", keep_header=True)  # revision 2, meanwhile
    with pytest.raises(notewell.ConflictError, match="changed since revision 1"):
        backend.edit_note(note.id, "my edit\n", keep_header=True, base_revision=1)
    assert backend.get_note(note.id).body == "an agent's edit\n"  # nothing overwritten
    assert backend.edit_note(note.id, "my merged edit\n", keep_header=True, base_revision=2).revision == 3
    with pytest.raises(notewell.NotFoundError):
        backend.edit_note(note.id, "x", base_revision=9)


def test_an_unchanged_text_makes_no_revision(backend):
    note = backend.add_note(TEXT)
    assert backend.edit_note(note.id, TEXT).revision == 1
    assert backend.edit_note(note.id, "old body\n", keep_header=True).revision == 1
    assert [h["revision"] for h in backend.history(note.id)] == [1]


def test_a_note_that_comes_back_after_a_delete_keeps_its_times(tmp_path):
    with notewell.open(tmp_path / "notes", watch=False, embedder=None) as s:
        note = s.add_note("# Back\n\nagain\n")
        path = tmp_path / "notes" / note.path
        data = path.read_bytes()
        s.delete_note(note.id)
        assert s.history(note.id)[-1]["op"] == "delete"
        path.write_bytes(data)  # the file comes back (a checkout, an undo)
        s.refresh()
        back = s.get_note(note.id)
        assert back.updated_at == note.updated_at and back.created_at == note.created_at
