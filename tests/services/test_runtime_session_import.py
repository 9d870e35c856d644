"""Importing Codex CLI and Gemini CLI sessions on every store: one note per session on the
source's project, idempotent by the session's id, a session that went on written again (a new
revision), a session grown past a part continued in new parts, a bad file reported in one line
while the others go in, a folder or one file, and the tools' own folders by default."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pytest

from notewell.errors import NotFoundError
from notewell.services.conversation_import import default_path, import_conversations, part_note_id
from tests.services.conversation_fixtures import codex_lines, gemini_record, write_codex, write_gemini


@pytest.fixture
def store(backend):
    return backend


def _sid(source, path):
    return path.stem[-36:] if source == "codex" else json.loads(path.read_text())["sessionId"]


WRITERS = {"codex": write_codex, "gemini": write_gemini}


@pytest.mark.parametrize("source", ["codex", "gemini"])
def test_sessions_become_notes_once_and_a_session_that_went_on_is_written_again(store, tmp_path, source):
    paths = WRITERS[source](tmp_path / "in", sessions=3, turns=2)
    report = import_conversations(store, source, tmp_path / "in", author="dev")
    assert (report.files, report.conversations, report.new, report.notes, report.errors) == (3, 3, 3, 3, [])
    note = store.get_note(part_note_id(source, _sid(source, paths[0]), 1))
    assert note.kind == "conversation" and set(note.tags) == {"imported", source}
    assert note.title.startswith("Can you ") and "4 requests" not in note.body and "2 requests" in note.body
    assert note.model in ("gpt-5-codex", "gemini-2.5-pro") and "failed" in note.body
    assert note.id in {c.id for c in store.list_notes(limit=50, project=source)}
    again = import_conversations(store, source, tmp_path / "in")
    assert (again.unchanged, again.notes) == (3, 0)
    # the first session goes on: two more requests
    sid = _sid(source, paths[0])
    later = datetime(2026, 11, 3, tzinfo=UTC)
    if source == "codex":
        more = codex_lines(random.Random(7), sid, 2, start=later)[2:]  # without its meta and injected context
        paths[0].write_text(paths[0].read_text() + "".join(json.dumps(r) + "\n" for r in more))
    else:
        record = json.loads(paths[0].read_text())
        record["messages"] += gemini_record(random.Random(7), sid, 2, start=later)["messages"]
        paths[0].write_text(json.dumps(record))  # Gemini CLI rewrites the file whole
    grown = import_conversations(store, source, tmp_path / "in")
    assert (grown.continued, grown.unchanged, grown.notes) == (1, 2, 1)
    note = store.get_note(part_note_id(source, sid, 1))
    assert note.revision == 2 and "**8. assistant**" in note.body and "4 requests" in note.body
    with pytest.raises(NotFoundError):
        store.get_note(part_note_id(source, sid, 2))
    assert import_conversations(store, source, tmp_path / "in").notes == 0


@pytest.mark.slow
@pytest.mark.parametrize("source", ["codex", "gemini"])
def test_a_long_session_is_parts_and_grows_in_new_ones_after_a_person_edits_it(store, tmp_path, source):
    paths = WRITERS[source](tmp_path / "in", sessions=1, turns=60, answer_size=3000)
    first = import_conversations(store, source, paths[0])  # one file, given by itself
    sid = _sid(source, paths[0])
    assert first.new == 1 and first.notes >= 2
    last = store.get_note(part_note_id(source, sid, first.notes))
    store.edit_note(last.id, last.text + "\nA person's remark.\n")
    if source == "codex":
        more = codex_lines(random.Random(8), sid, 1, start=datetime(2026, 12, 1, tzinfo=UTC))[2:]
        paths[0].write_text(paths[0].read_text() + "".join(json.dumps(r) + "\n" for r in more))
    else:
        record = json.loads(paths[0].read_text())
        record["messages"] += gemini_record(random.Random(8), sid, 1, start=datetime(2026, 12, 1, tzinfo=UTC))[
            "messages"
        ]
        paths[0].write_text(json.dumps(record))
    grown = import_conversations(store, source, tmp_path / "in")
    assert (grown.continued, grown.notes) == (1, 1)
    assert "A person's remark." in store.get_note(last.id).text  # the edited part stays theirs
    added = store.get_note(part_note_id(source, sid, first.notes + 1))
    assert "**121. user**" in added.body and last.id in added.builds_on


@pytest.mark.parametrize("source", ["codex", "gemini"])
def test_a_bad_file_is_one_line_and_the_others_go_in(store, tmp_path, source):
    paths = WRITERS[source](tmp_path / "in", sessions=3, turns=1)
    paths[1].write_text("{broken\n" + paths[1].read_text())
    fifo = paths[2].parent / (paths[2].name.replace(".json", "-fifo.json"))
    import os

    os.mkfifo(fifo)
    report = import_conversations(store, source, tmp_path / "in")
    assert report.new == 2 and report.files == 4
    assert [where for where, _ in report.errors] == sorted([str(paths[1]), str(fifo)])
    assert all("\n" not in why for _, why in report.errors)


def test_default_folders_are_the_tools_own(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert default_path("codex") == tmp_path / ".codex" / "sessions"
    assert default_path("gemini") == tmp_path / ".gemini" / "tmp"
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "elsewhere"))
    assert default_path("codex") == tmp_path / "elsewhere" / "sessions"


def test_a_codex_session_id_is_its_meta_and_a_gemini_checkpoint_is_not_a_session(store, tmp_path):
    write_gemini(tmp_path / "g", sessions=2, turns=1)  # beside checkpoint-*.json and logs.json
    report = import_conversations(store, "gemini", tmp_path / "g")
    assert (report.files, report.new, report.errors) == (2, 2, [])
    path = write_codex(tmp_path / "c", sessions=1, turns=1)[0]
    renamed = path.with_name("rollout-renamed.jsonl")
    path.rename(renamed)
    report = import_conversations(store, "codex", tmp_path / "c")
    assert report.new == 1 and store.get_note(part_note_id("codex", path.stem[-36:], 1))
