"""add_tag, set_summary and each note's tags at a glance, on a real store."""

from __future__ import annotations

import pytest

from notewell import FrozenError, InvalidArgumentError, NotFoundError


@pytest.fixture
def store(backend):
    """Every test here runs on both stores."""
    return backend


def test_add_tag_and_summary_edit_the_header_carefully(store):
    text = "---\ntitle: Go tips  # mine\ntags: [go]\nsource: book\n---\n\nErrors are values.\n"
    note = store.add_note(text)
    tagged = store.add_tag(note.id, "Backend", "go", "backend")
    assert tagged.tags == ["go", "backend"] and tagged.revision == 2
    assert tagged.text == store.get_note(note.id).text == text.replace("tags: [go]", "tags: [go, backend]")
    assert store.add_tag(note.id, "GO").revision == 2  # nothing new: no new revision
    summed = store.set_summary(note.id, "Go returns errors\nas values.")
    assert summed.summary == "Go returns errors as values." and summed.revision == 3
    assert summed.extra == ["# mine", "source: book"]
    assert store.get_note(note.id, revision=1).text == text  # the old text is a revision
    assert [c.id for c in store.search_notes("errors", tags="backend")] == [note.id]
    plain = store.add_note("# Plain note\n\nno header here")
    assert store.add_tag(plain.id, "misc").header == {"tags": ["misc"]}
    overview = {n["id"]: n for n in store.note_tags()}
    assert overview[note.id] == {
        "id": note.id,
        "title": "Go tips",
        "tags": ["go", "backend"],
        "summary": "Go returns errors as values.",
    }
    assert overview[plain.id]["tags"] == ["misc"] and overview[plain.id]["summary"] is None
    assert {t["tag"]: t["count"] for t in store.list_tags()} == {"go": 1, "backend": 1, "misc": 1}


def test_tag_tools_refuse_bad_input_and_frozen_notes(store):
    att = store.start_attempt("p", author="a")
    n = store.add_note("# x", attempt=att.id)
    with pytest.raises(InvalidArgumentError):
        store.add_tag(n.id)
    with pytest.raises(InvalidArgumentError):
        store.add_tag(n.id, "???")
    with pytest.raises(InvalidArgumentError):
        store.set_summary(n.id, "  ")
    with pytest.raises(NotFoundError):
        store.add_tag("nte_0000000000", "x")
    store.end_attempt(att.id, outcome="succeeded")
    with pytest.raises(FrozenError):
        store.add_tag(n.id, "late")
    with pytest.raises(FrozenError):
        store.set_summary(n.id, "late")
    assert store.get_note(n.id).revision == 1
