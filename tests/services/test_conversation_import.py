"""Importing conversations from Claude Code, ChatGPT and claude.ai on both stores: one note per
conversation on the source's project, titled from its first request, tool calls condensed;
importing again adds only what is new; a bad file is reported and contributes nothing."""

from __future__ import annotations

import gc
import json
import random
import time
import zipfile
from datetime import UTC, datetime

import pytest

from notewell import Viewer
from notewell.errors import InvalidArgumentError, NotFoundError
from notewell.model.conversations import parse_claude_code
from notewell.model.conversations.conversation import PART_BYTES
from notewell.model.header import parse_note
from notewell.services.conversation_import import import_conversations, part_note_id
from tests.services.conversation_fixtures import (
    claude_code_lines,
    write_chatgpt_zip,
    write_claude_code,
    write_claude_zip,
)


@pytest.fixture
def store(backend):
    return backend


def on_project(store, note_id, project):
    return note_id in {c.id for c in store.list_notes(limit=500, project=project)}


def extras(note):
    out = {}
    for line in parse_note(note.text).extra:
        key, _, raw = line.partition(":")
        out[key.strip()] = json.loads(raw.strip())
    return out


def test_claude_code_sessions_become_notes_on_their_project(store, tmp_path):
    paths = write_claude_code(tmp_path / "projects", sessions=3, turns=4)
    report = import_conversations(store, "claude-code", tmp_path / "projects", author="dev")
    assert (report.files, report.conversations, report.new, report.notes, report.errors) == (3, 3, 3, 3, [])
    session = paths[0].stem
    note = store.get_note(part_note_id("claude-code", session, 1))
    assert note.kind == "conversation" and on_project(store, note.id, "claude-code")
    assert set(note.tags) == {"imported", "claude-code"}
    assert note.title.startswith("Can you ") and "Step 1" in note.title  # from the first request
    assert note.summary == f"session {session[:8]}"  # the session's own title
    assert note.model == "claude-sonnet-4-5-20250929"
    body = note.body
    assert "Claude Code session of 2026-11-01" in body and "4 requests" in body and "(branch main)" in body
    assert body.count("**") // 2 == 8  # 4 requests and 4 answers, each one turn
    assert "Read(/home/dev/project-0/" in body and ") failed" not in body.split("**5.")[0]
    assert "<command-name>" not in body and "Caveat" not in body and "Kept model" not in body
    assert "Read the file first" not in body  # thinking stays out
    assert "Find every writer of INDEX_DIR" not in body  # the sub-agent's file is not a session
    x = extras(note)
    assert (x["source"], x["conversation"], x["part"], x["messages"]) == ("claude-code", session, "1", "1-8")
    assert x["started"].startswith("2026-11-01T09:")
    assert [c.id for c in store.search_notes("flaky payment", limit=50)]  # searchable at once


def test_importing_again_adds_only_what_is_new(store, tmp_path):
    paths = write_claude_code(tmp_path / "p", sessions=2, turns=2)
    import_conversations(store, "claude-code", tmp_path / "p")
    again = import_conversations(store, "claude-code", tmp_path / "p")
    assert (again.new, again.continued, again.unchanged, again.notes) == (0, 0, 2, 0)
    # the first session goes on: two more requests appended to its transcript
    rows = [json.loads(line) for line in paths[0].read_text().splitlines()]
    more = claude_code_lines(random.Random(9), paths[0].stem, 2, start=datetime(2026, 11, 2, tzinfo=UTC))
    more = more[4:]  # without the opening snapshot, caveat and slash command: the session goes on
    paths[0].write_text("".join(json.dumps(r) + "\n" for r in rows + more))
    grown = import_conversations(store, "claude-code", tmp_path / "p")
    assert (grown.continued, grown.unchanged, grown.notes) == (1, 1, 1)  # its note written again
    note = store.get_note(part_note_id("claude-code", paths[0].stem, 1))  # one note per session: it grew
    assert extras(note)["messages"] == "1-8" and note.revision == 2 and "**5. user**" in note.body
    with pytest.raises(NotFoundError):
        store.get_note(part_note_id("claude-code", paths[0].stem, 2))
    assert import_conversations(store, "claude-code", tmp_path / "p").notes == 0
    assert store.get_note(note.id).revision == 2


def test_a_session_imported_in_the_middle_of_an_answer_gets_the_rest_later(store, tmp_path):
    paths = write_claude_code(tmp_path / "p", sessions=1, turns=3)
    lines = paths[0].read_text().splitlines(keepends=True)
    cut = max(i for i, line in enumerate(lines) if '"tool_use"' in line) + 1  # just after the last tool call
    paths[0].write_text("".join(lines[:cut]))
    first = import_conversations(store, "claude-code", tmp_path / "p")
    assert first.new == 1
    nid = part_note_id("claude-code", paths[0].stem, 1)
    assert "Step 3" in store.get_note(nid).body and "needs a retry" not in store.get_note(nid).body.split("**6.")[-1]
    paths[0].write_text("".join(lines))  # the answer was finished
    later = import_conversations(store, "claude-code", tmp_path / "p")
    assert (later.continued, later.changed_in_place) == (1, 0)
    assert "needs a retry" in store.get_note(nid).body.split("**6. assistant**")[1]


def test_a_resumed_session_does_not_import_the_turns_it_repeats(store, tmp_path):
    paths = write_claude_code(tmp_path / "p", sessions=1, turns=2)
    rows = [json.loads(line) for line in paths[0].read_text().splitlines()]
    more = claude_code_lines(random.Random(5), "resumed-0000", 1, start=datetime(2026, 12, 1, tzinfo=UTC))[4:]
    copy = tmp_path / "p" / paths[0].parent.name / "resumed-0000.jsonl"
    copy.write_text("".join(json.dumps(r) + "\n" for r in rows + more))  # old lines, then its own
    report = import_conversations(store, "claude-code", tmp_path / "p")
    assert report.new == 2
    resumed = store.get_note(part_note_id("claude-code", "resumed-0000", 1))
    assert extras(resumed)["messages"] == "1-2" and "Step 2" not in resumed.body  # only its own turn
    assert import_conversations(store, "claude-code", tmp_path / "p").notes == 0


@pytest.mark.slow
def test_one_bad_conversation_does_not_stop_the_others(store, tmp_path):
    convs = write_claude_zip(tmp_path / "c.zip", conversations=3, turns=1)
    convs = convs[:3]
    convs[0]["chat_messages"][0]["content"][0]["text"] = "half an emoji \ud83d and a NUL \x00 here"
    convs[1]["chat_messages"][1]["uuid"] = "x\ny" * 40_000  # an id no header line can hold
    convs[2]["chat_messages"][1]["content"] = [
        {"type": "tool_use", "id": f"t{i}", "name": "web_search", "input": {"query": "q" * 60}} for i in range(15_000)
    ]
    (tmp_path / "conversations.json").write_text(json.dumps(convs))
    report = import_conversations(store, "claude", tmp_path / "conversations.json")
    assert report.errors == [] and report.new == 3
    first = store.get_note(part_note_id("claude", convs[0]["uuid"], 1)).body
    assert "half an emoji \ufffd and a NUL  here" in first
    third = store.get_note(part_note_id("claude", convs[2]["uuid"], 1)).body
    assert "and 14,960 more" in third
    assert import_conversations(store, "claude", tmp_path / "conversations.json").notes == 0


def test_a_session_still_being_written_keeps_its_last_line_for_next_time(store, tmp_path):
    paths = write_claude_code(tmp_path / "p", sessions=1, turns=2)
    text = paths[0].read_text()
    paths[0].write_text(text + '{"type":"user","message":{"role":"user","content":"Thanks, now add a te')
    report = import_conversations(store, "claude-code", tmp_path / "p")
    assert report.errors == [] and report.new == 1


def test_a_bad_file_is_reported_and_imports_nothing_while_the_rest_go_in(store, tmp_path):
    paths = write_claude_code(tmp_path / "p", sessions=3, turns=2)
    lines = paths[1].read_text().splitlines()
    lines.insert(4, "{not json")
    paths[1].write_text("\n".join(lines) + "\n")
    paths[2].write_text("[" * 100_000 + "]" * 100_000 + "\n")  # nested past any parser's depth
    report = import_conversations(store, "claude-code", tmp_path / "p")
    assert report.new == 1 and len(report.errors) == 2
    assert {e[0] for e in report.errors} == {str(paths[1]), str(paths[2])}
    assert "line 5 is not JSON" in dict(report.errors)[str(paths[1])]
    with pytest.raises(NotFoundError):
        store.get_note(part_note_id("claude-code", paths[1].stem, 1))


def test_chatgpt_export_zip_sharded_follows_the_shown_branch(store, tmp_path):
    convs = write_chatgpt_zip(tmp_path / "export.zip", conversations=5, turns=3, shards=2)
    report = import_conversations(store, "chatgpt", tmp_path / "export.zip")
    assert report.errors == [] and (report.files, report.conversations, report.new) == (2, 5, 5)  # the empty chat: none
    note = store.get_note(part_note_id("chatgpt", convs[0]["conversation_id"], 1))
    assert on_project(store, note.id, "chatgpt") and note.summary == convs[0]["title"] and note.model == "gpt-5"
    body = note.body
    assert "regenerated away" not in body  # the answer replaced by a regeneration
    assert "python(print(pool.size))" in body  # the tool call, condensed on the answer
    assert "32" not in body.split("python(")[0][-20:]  # tool output is not a turn
    assert "thinking" not in body
    assert body.count("**") // 2 == 6


def test_chatgpt_a_plain_conversations_json_and_a_cut_short_one(store, tmp_path):
    convs = write_chatgpt_zip(tmp_path / "e.zip", conversations=2, turns=1)
    with zipfile.ZipFile(tmp_path / "e.zip") as z:
        data = z.read("conversations.json")
    (tmp_path / "conversations.json").write_bytes(data)
    assert import_conversations(store, "chatgpt", tmp_path / "conversations.json").new == 2
    cut = tmp_path / "cut" / "conversations.json"
    cut.parent.mkdir()
    cut.write_bytes(data[: len(data) // 2])
    report = import_conversations(store, "chatgpt", cut.parent)
    assert report.notes == 0 and len(report.errors) == 1 and "not JSON" in report.errors[0][1]
    odd = tmp_path / "odd.json"
    bad_id = {"conversation_id": "x\ny", "mapping": convs[0]["mapping"], "current_node": convs[0]["current_node"]}
    odd.write_text(json.dumps([bad_id, "not a conversation", {"id": 5}]))
    report = import_conversations(store, "chatgpt", odd)
    assert report.notes == 0 and len(report.errors) == 2


def test_claude_ai_export_uses_the_blocks_and_the_newest_branch(store, tmp_path):
    convs = write_claude_zip(tmp_path / "claude.zip", conversations=4, turns=2, branched_every=2)
    report = import_conversations(store, "claude", tmp_path / "claude.zip")
    assert report.errors == [] and report.new == 4
    branched = store.get_note(part_note_id("claude", convs[0]["uuid"], 1))
    body = branched.body
    assert "earlier wording" not in body and "answer to the earlier" not in body
    assert "Private reasoning" not in body and "flattened text" not in body
    assert "attached: notes.txt" in body and "web_search(step 1" in body
    assert branched.summary == convs[0]["name"] and on_project(store, branched.id, "claude")


def test_a_note_deleted_here_is_not_brought_back_and_imports_share_one_attempt(store, tmp_path):
    write_claude_zip(tmp_path / "c.zip", conversations=2, turns=1)
    import_conversations(store, "claude", tmp_path / "c.zip")
    victim = store.list_notes(limit=1, project="claude")[0].id
    store.delete_note(victim)  # imported notes stay the owner's to delete
    write_claude_zip(tmp_path / "c.zip", conversations=3, turns=1)  # the same two, and one more
    again = import_conversations(store, "claude", tmp_path / "c.zip")
    assert (again.deleted_here, again.unchanged, again.new, again.notes) == (1, 1, 1, 1)
    with pytest.raises(NotFoundError):
        store.get_note(victim)
    runs = store.list_attempts(project="claude")
    assert len(runs) == 1 and runs[0].ended_at is None and runs[0].model == "notewell-import"


@pytest.mark.slow
def test_a_long_conversation_is_split_into_parts_that_build_on_each_other(store, tmp_path):
    convs = write_claude_zip(tmp_path / "long.zip", conversations=1, turns=120, answer_size=3000)
    report = import_conversations(store, "claude", tmp_path / "long.zip")
    assert report.new == 1 and report.notes > 2
    ids = [part_note_id("claude", convs[0]["uuid"], n) for n in range(1, report.notes + 1)]
    notes = [store.get_note(i) for i in ids]
    assert all(len(n.text.encode()) < PART_BYTES + 10_000 for n in notes)
    assert [n.builds_on for n in notes] == [[]] + [[i] for i in ids[:-1]]
    spans = [extras(n)["messages"] for n in notes]
    assert spans[0].startswith("1-") and spans[-1].endswith("-240")
    assert import_conversations(store, "claude", tmp_path / "long.zip").notes == 0


def test_what_is_not_an_export_is_refused_in_one_line(store, tmp_path):
    with pytest.raises(NotFoundError):
        import_conversations(store, "chatgpt", tmp_path / "nowhere.zip")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidArgumentError, match="no conversations"):
        import_conversations(store, "claude", tmp_path / "empty")
    with pytest.raises(InvalidArgumentError, match="give the chatgpt export"):
        import_conversations(store, "chatgpt")
    with pytest.raises(InvalidArgumentError, match="source must be"):
        import_conversations(store, "slack", tmp_path)


def test_the_wrong_exports_format_and_a_damaged_zip_are_reported(store, tmp_path):
    write_claude_zip(tmp_path / "claude.zip", conversations=2, turns=1)
    wrong = import_conversations(store, "chatgpt", tmp_path / "claude.zip")
    assert wrong.notes == 0 and len(wrong.errors) == 1
    assert "not a chatgpt export" in wrong.errors[0][1] and "notewell import claude" in wrong.errors[0][1]
    data = (tmp_path / "claude.zip").read_bytes()
    (tmp_path / "cut.zip").write_bytes(data[: len(data) // 2])
    cut = import_conversations(store, "claude", tmp_path / "cut.zip")
    assert cut.notes == 0 and "damaged zip" in cut.errors[0][1]


def _grow(path, seed, requests, answer_size=400):
    """Two more requests (or *requests*) appended to a Claude Code transcript: the session goes on."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    more = claude_code_lines(
        random.Random(seed), path.stem, requests, start=datetime(2026, 11, 2, tzinfo=UTC), answer_size=answer_size
    )[4:]  # without the opening snapshot, caveat and slash command
    path.write_text("".join(json.dumps(r) + "\n" for r in rows + more))


def test_a_conversation_keeps_the_private_project_it_was_first_imported_on(store, tmp_path):
    store.set_project("me:private-chats", private=True)
    paths = write_claude_code(tmp_path / "p", sessions=1, turns=2)
    import_conversations(store, "claude-code", tmp_path / "p", project="me:private-chats")
    _grow(paths[0], 9, 30, answer_size=4000)  # past one part: new parts are written
    grown = import_conversations(store, "claude-code", tmp_path / "p")  # the routine run, no --project
    assert grown.continued == 1 and grown.notes >= 1 and grown.elsewhere == grown.notes
    ids = [part_note_id("claude-code", paths[0].stem, n) for n in range(1, grown.notes + 1)]
    assert all(on_project(store, i, "me:private-chats") for i in ids)
    assert store.list_notes(limit=50, project="claude-code") == []
    stranger = Viewer("stranger")
    assert store.search_notes("retry smaller pool", limit=50, viewer=stranger) == []
    assert store.list_notes(limit=50, viewer=stranger) == []


def test_reimporting_never_reverts_what_a_person_changed(store, tmp_path):
    paths = write_claude_code(tmp_path / "p", sessions=1, turns=2)
    import_conversations(store, "claude-code", tmp_path / "p")
    nid = part_note_id("claude-code", paths[0].stem, 1)
    store.add_tag(nid, "reviewed")
    store.set_summary(nid, "the flaky payment test, solved")
    fixed = store.get_note(nid).text.replace("needs a retry", "needs a retry (corrected: a lock)", 1)
    store.edit_note(nid, fixed)
    mine = store.get_note(nid)
    again = import_conversations(store, "claude-code", tmp_path / "p")  # the same transcript
    assert (again.unchanged, again.continued, again.notes) == (1, 0, 0)
    assert store.get_note(nid).text == mine.text and store.get_note(nid).revision == mine.revision
    _grow(paths[0], 9, 2)  # it goes on: what is new comes in a part of its own
    grown = import_conversations(store, "claude-code", tmp_path / "p")
    assert (grown.continued, grown.notes) == (1, 1)
    kept = store.get_note(nid)
    assert kept.text == mine.text and "reviewed" in kept.tags and kept.summary == "the flaky payment test, solved"
    second = store.get_note(part_note_id("claude-code", paths[0].stem, 2))
    assert second.builds_on == [nid] and "**5. user**" in second.body and "**4. assistant**" not in second.body
    assert import_conversations(store, "claude-code", tmp_path / "p").notes == 0


@pytest.mark.slow
def test_an_export_is_read_one_conversation_at_a_time(store, tmp_path):
    import tracemalloc

    bomb = tmp_path / "bomb.zip"  # 48 MB of JSON in a zip of well under 1 MB
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        item = json.dumps({"title": "x", "note": "a" * 1000})
        z.writestr("conversations.json", "[" + ",".join([item] * 48_000) + "]")
    huge = tmp_path / "huge.zip"  # one conversation of 40 MB
    with zipfile.ZipFile(huge, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("conversations.json", json.dumps([{"mapping": {}, "title": "b" * (40 << 20)}]))
    assert bomb.stat().st_size < 1 << 20 and huge.stat().st_size < 1 << 20

    def measured(export):
        tracemalloc.start()
        try:
            return import_conversations(store, "chatgpt", export), tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    (many, many_peak), (one, one_peak) = measured(bomb), measured(huge)
    assert many.notes == 0 and "no conversation has 'mapping'" in many.errors[0][1]
    assert one.notes == 0 and "a conversation of more than 32 MB" in one.errors[0][1]
    # Measured: 4.4 MB streamed, against 130 MB for json.loads of the same 48 MB; the 40 MB
    # conversation is refused once 32 MB of it are held.
    assert many_peak < 32 << 20 and one_peak < 200 << 20


def test_fifos_and_devices_are_refused_at_once(store, tmp_path):
    import os
    import threading

    folder = tmp_path / "export"
    folder.mkdir()
    os.mkfifo(folder / "conversations.json")
    transcripts = tmp_path / "projects" / "-home-dev"
    transcripts.mkdir(parents=True)
    os.mkfifo(transcripts / "0b1f.jsonl")
    os.mkfifo(tmp_path / "one.jsonl")
    calls = [
        ("chatgpt", folder),
        ("chatgpt", tmp_path / "export" / "conversations.json"),
        ("claude", "/dev/zero"),
        ("claude-code", tmp_path / "projects"),
        ("claude-code", tmp_path / "one.jsonl"),
        ("claude-code", "/dev/zero"),
    ]
    reports = []

    def run():
        for source, path in calls:
            reports.append(import_conversations(store, source, path))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(30)
    for fifo in (folder / "conversations.json", transcripts / "0b1f.jsonl", tmp_path / "one.jsonl"):
        if worker.is_alive():  # a reader blocked in open(): a writer lets it go, so the test can end
            with open(fifo, "wb"):
                pass
    assert not worker.is_alive() and len(reports) == len(calls)
    for report in reports:
        assert report.notes == 0 and len(report.errors) == 1 and "not a regular file" in report.errors[0][1]


@pytest.mark.slow
def test_a_call_failing_again_and_again_and_a_huge_tool_name_stay_one_short_line(store, tmp_path):
    rng = random.Random(4)
    session = "0c0ffee0-0000-4000-8000-000000000000"
    lines = claude_code_lines(rng, session, 1, start=datetime(2026, 11, 1, tzinfo=UTC))
    use = next(r for r in lines if r.get("type") == "assistant" and r["message"]["content"][0]["type"] == "tool_use")
    use["message"]["content"][0]["name"] = "N" * (2 << 20)
    tool_id = use["message"]["content"][0]["id"]
    fail = {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tool_id, "content": "no", "is_error": True}]}}  # fmt: skip
    path = tmp_path / "p" / "-home-dev" / f"{session}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in lines[:-2] + [fail] * 20_000 + lines[-2:]))
    report = import_conversations(store, "claude-code", tmp_path / "p")
    assert (report.new, report.notes, report.errors) == (1, 1, [])
    body = store.get_note(part_note_id("claude-code", session, 1)).body
    tools = next(line for line in body.splitlines() if line.startswith("tools: "))
    assert len(tools) < 200 and tools.count("failed") == 1


def test_a_resumed_session_holds_only_its_own_turns_and_goes_where_its_parent_is(store, tmp_path):
    store.set_project("me:private-chats", private=True)
    paths = write_claude_code(tmp_path / "a", sessions=1, turns=2)
    import_conversations(store, "claude-code", tmp_path / "a", project="me:private-chats")
    rows = [json.loads(line) for line in paths[0].read_text().splitlines()]
    rows.append({"type": "custom-title", "customTitle": "zebrasecret merger plan", "sessionId": paths[0].stem})
    more = claude_code_lines(random.Random(5), "resumed-0000", 1, start=datetime(2026, 12, 1, tzinfo=UTC))[4:-1]
    (tmp_path / "b").mkdir()
    copy = tmp_path / "b" / "resumed-0000.jsonl"
    copy.write_text("".join(json.dumps(r) + "\n" for r in rows + more))  # A's lines, then its own
    report = import_conversations(store, "claude-code", copy)  # alone, without --project
    # A's copy holds a title A's own file now has too: A's note (private) takes it, B goes where A is
    assert (report.new, report.continued, report.notes, report.elsewhere) == (1, 1, 2, 2)
    resumed = store.get_note(part_note_id("claude-code", "resumed-0000", 1))
    assert ": 1 request," in resumed.body and resumed.summary is None  # its own turns; not its parent's title
    assert on_project(store, resumed.id, "me:private-chats")  # the continuation of private work stays private
    assert store.search_notes("retry smaller pool", limit=50, viewer=Viewer("stranger")) == []
    assert store.search_notes("zebrasecret", limit=50, viewer=Viewer("stranger")) == []
    again = import_conversations(store, "claude-code", copy)  # unchanged: nothing written, nothing moved
    assert (again.unchanged, again.notes) == (2, 0) and store.get_note(resumed.id).revision == 1
    asked = tmp_path / "c" / "resumed-1111.jsonl"  # one resumed the same way, onto a project asked for
    asked.parent.mkdir()
    asked.write_text(copy.read_text().replace("resumed-0000", "resumed-1111"))
    there = import_conversations(store, "claude-code", asked, project="claude-code")
    assert there.new == 1 and on_project(store, part_note_id("claude-code", "resumed-1111", 1), "claude-code")
    assert store.search_notes("zebrasecret", limit=50, viewer=Viewer("stranger")) == []  # its parent's stay


def test_a_session_whose_own_file_is_gone_is_imported_from_the_copy_that_resumed_it(store, tmp_path):
    a = write_claude_code(tmp_path / "a", sessions=1, turns=2)[0]
    b = _resume(tmp_path, "sess-b", a, 5, datetime(2026, 12, 1, tzinfo=UTC))
    a.unlink()  # Claude Code's clean-up removed the old transcript; the copy in B's file is all that is left
    report = import_conversations(store, "claude-code", b)
    assert (report.new, report.errors) == (2, [])
    kept = store.get_note(part_note_id("claude-code", a.stem, 1))
    assert ": 2 requests," in kept.body and "sessb" not in kept.body
    assert ": 1 request," in store.get_note(part_note_id("claude-code", "sess-b", 1)).body


def test_a_resume_inside_another_session_adds_to_the_resumed_one(store, tmp_path):
    x, y = write_claude_code(tmp_path / "p", sessions=2, turns=1, folders=1)
    for seed, at in ((9, datetime(2026, 12, 1, tzinfo=UTC)), (10, datetime(2026, 12, 2, tzinfo=UTC))):
        more = claude_code_lines(random.Random(seed), y.stem, 1, start=at)[4:]
        for row in more:
            if row.get("type") == "user" and isinstance(row["message"]["content"], str):
                row["message"]["content"] = f"kiwimisfiled{seed} " + row["message"]["content"]
        with x.open("a") as f:  # `/resume Y` inside X: Y's new lines go into X's file (Y's has its start)
            f.write("".join(json.dumps(r) + "\n" for r in more))
        report = import_conversations(store, "claude-code", tmp_path / "p")
        assert report.errors == [] and report.strays == 0
        assert store.search_notes(f"kiwimisfiled{seed}", limit=5)  # first new, then grown: both in Y's note
    y_note = store.get_note(part_note_id("claude-code", y.stem, 1))
    assert (
        ": 3 requests," in y_note.body
        and "kiwimisfiled" not in store.get_note(part_note_id("claude-code", x.stem, 1)).body
    )


def test_a_transcript_imported_under_its_file_name_is_found_again(store, tmp_path):
    store.set_project("me:secret", private=True)
    a = write_claude_code(tmp_path / "a", sessions=1, turns=2)[0]
    rows = [json.loads(line) for line in a.read_text().splitlines()]
    renamed = tmp_path / "in" / "client-x-debug.jsonl"
    renamed.parent.mkdir()
    renamed.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "sessionId"}) + "\n" for r in rows))
    first = import_conversations(store, "claude-code", renamed, project="me:secret")  # keyed by the file's name,
    assert first.new == 1 and store.get_note(part_note_id("claude-code", "client-x-debug", 1))  # as before 0.9
    renamed.write_text("".join(json.dumps(r) + "\n" for r in rows))  # its lines carry the session's id
    for _ in range(2):
        again = import_conversations(store, "claude-code", renamed)  # no --project
        assert (again.new, again.unchanged, again.notes) == (0, 1, 0)
    more = claude_code_lines(random.Random(7), a.stem, 1, start=datetime(2026, 12, 1, tzinfo=UTC))[4:]
    renamed.write_text("".join(json.dumps(r) + "\n" for r in rows + more))
    grown = import_conversations(store, "claude-code", renamed)
    assert (grown.continued, grown.elsewhere) == (1, 1)
    with pytest.raises(NotFoundError):
        store.get_note(part_note_id("claude-code", a.stem, 1))
    assert store.search_notes("retry", limit=50, viewer=Viewer("stranger")) == []


def _resume(tmp_path, name, of, seed, at):
    """A transcript *name* resumed from the transcript *of*: its lines (their sessionId theirs), then its
    own, whose request holds the word *name* with its dash taken out (to search for)."""
    rows = [json.loads(line) for line in of.read_text().splitlines()]
    own = claude_code_lines(random.Random(seed), name, 1, start=at)[4:]
    for row in own:
        if row.get("type") == "user" and isinstance(row["message"]["content"], str):
            row["message"]["content"] = f"{name.replace('-', '')} " + row["message"]["content"]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows + own))
    return path


def test_a_chain_of_resumed_sessions_keeps_each_ones_turns_where_they_are(store, tmp_path):
    store.set_project("me:secret", private=True)
    a = write_claude_code(tmp_path / "a", sessions=1, turns=1)[0]
    b = _resume(tmp_path, "sess-b", a, 5, datetime(2026, 12, 1, tzinfo=UTC))
    c = _resume(tmp_path, "sess-c", b, 6, datetime(2026, 12, 2, tzinfo=UTC))
    import_conversations(store, "claude-code", b, project="me:secret")  # B first, privately
    import_conversations(store, "claude-code", a)  # then A alone, publicly
    report = import_conversations(store, "claude-code", c)  # then C alone: B's turns must stay private
    assert report.new == 1
    c_note = store.get_note(part_note_id("claude-code", "sess-c", 1))
    assert ": 1 request," in c_note.body and "sessc" in c_note.body
    assert store.search_notes("sessb", limit=50, viewer=Viewer("stranger")) == []  # B's words, private
    assert store.search_notes("sessb", limit=50)  # (they are in the store)
    for _ in range(2):  # all of them again, in one run: nothing more written, nothing moved
        again = import_conversations(store, "claude-code", tmp_path / "a")
        assert again.notes == 0
    everything = tmp_path / "all"
    everything.mkdir()
    for path in (a, b, c):
        (everything / path.name).write_text(path.read_text())
    bulk = import_conversations(store, "claude-code", everything)
    assert (bulk.notes, bulk.changed_in_place) == (0, 0)
    assert store.search_notes("sessb", limit=50, viewer=Viewer("stranger")) == []


def test_an_asked_project_is_where_a_resumed_session_goes_and_it_grows_on_reimport(store, tmp_path):
    store.set_project("me:secret", private=True)
    a = write_claude_code(tmp_path / "a", sessions=1, turns=1)[0]
    import_conversations(store, "claude-code", a)  # A public
    b = _resume(tmp_path, "sess-b", a, 5, datetime(2026, 12, 1, tzinfo=UTC))
    first = import_conversations(store, "claude-code", b, project="me:secret")
    assert first.elsewhere == 0 and on_project(store, part_note_id("claude-code", "sess-b", 1), "me:secret")
    _grow(b, 7, 1)  # B goes on: its new turns come in, as its earlier ones were counted
    again = import_conversations(store, "claude-code", b)
    assert (again.continued, again.changed_in_place, again.elsewhere) == (1, 0, 1)  # B stays on me:secret


def test_lines_claiming_another_sessions_id_are_never_written_anywhere(store, tmp_path):
    store.set_project("alice:secret", private=True, owner="alice")
    victim = write_claude_code(tmp_path / "v", sessions=1, turns=1)[0]
    import_conversations(store, "claude-code", victim, project="alice:secret")
    forged = claude_code_lines(random.Random(8), victim.stem, 1, start=datetime(2026, 12, 3, tzinfo=UTC))[4:]
    for row in forged:
        if row.get("type") == "user" and isinstance(row["message"]["content"], str):
            row["message"]["content"] = "plumtext " + row["message"]["content"]
    own = claude_code_lines(random.Random(9), "sess-x", 1, start=datetime(2026, 12, 4, tzinfo=UTC))[4:]
    path = tmp_path / "sess-x.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in forged + own))
    report = import_conversations(store, "claude-code", path)
    assert report.new == 1 and report.strays == 2  # the lines claiming alice's session: said, never written
    assert store.search_notes("plumtext", limit=50) == []
    # X's own turns lean private: beside a private session's lines (a copy after a rewind looks the same)
    assert on_project(store, part_note_id("claude-code", "sess-x", 1), "alice:secret")
    assert store.get_note(part_note_id("claude-code", victim.stem, 1)).revision == 1  # alice's note untouched


@pytest.mark.slow
def test_an_export_of_many_members_or_of_no_conversations_is_given_up_early(store, tmp_path):
    many = tmp_path / "many.zip"
    with zipfile.ZipFile(many, "w") as z:
        for i in range(1002):
            z.writestr(f"conversations-{i:04d}.json", "[]")
    report = import_conversations(store, "chatgpt", many)
    assert report.files == 1001 and "more than 1,000 conversations*.json" in report.errors[-1][1]
    empty = tmp_path / "empty.zip"  # 3 MB of empty objects: none a conversation, said after the first 10,000
    with zipfile.ZipFile(empty, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("conversations.json", "[" + ",".join(["{}"] * 1_000_000) + "]")
    began = time.monotonic()
    report = import_conversations(store, "chatgpt", empty)
    assert "no conversation has 'mapping'" in report.errors[0][1] and time.monotonic() - began < 5


@pytest.mark.slow
def test_broken_members_are_charged_to_the_export_budget(store, tmp_path, monkeypatch):
    from notewell.services import conversation_files

    monkeypatch.setattr(conversation_files, "EXPORT_READ", 1 << 20)  # the budget, small enough to spend here
    many = tmp_path / "broken.zip"
    with zipfile.ZipFile(many, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(20):
            z.writestr(f"conversations-{i:02d}.json", "[" + ",".join(['{"mapping": {}}'] * 50_000))  # no "]"
    report = import_conversations(store, "chatgpt", many)
    assert report.files < 20 and "not read further" in report.errors[-1][1]


def test_a_renamed_transcript_and_a_continuation_file_are_their_sessions_own(store, tmp_path):
    paths = write_claude_code(tmp_path / "a", sessions=1, turns=2)
    renamed = tmp_path / "my-debug-session.jsonl"  # a copy under another name: the same session
    renamed.write_text(paths[0].read_text())
    first = import_conversations(store, "claude-code", renamed)
    assert (first.new, first.notes) == (1, 1)
    assert store.get_note(part_note_id("claude-code", paths[0].stem, 1))
    again = import_conversations(store, "claude-code", paths[0])  # the original: found, nothing new
    assert (again.unchanged, again.notes) == (1, 0)
    rows = [json.loads(line) for line in paths[0].read_text().splitlines()]
    more = claude_code_lines(random.Random(9), paths[0].stem, 2, start=datetime(2026, 11, 2, tzinfo=UTC))[4:]
    for row in more:
        if row.get("type") == "user" and isinstance(row["message"]["content"], str):
            row["message"]["content"] = "kiwicontinued " + row["message"]["content"]
    continuation = tmp_path / "3240e317-0000-4000-8000-000000000000.jsonl"  # its lines keep the session's id
    continuation.write_text("".join(json.dumps(r) + "\n" for r in rows + more))
    grown = import_conversations(store, "claude-code", continuation)
    assert grown.continued == 1 and store.search_notes("kiwicontinued", limit=5)


def test_the_most_complete_of_two_files_of_one_session_is_imported_and_a_short_one_removes_nothing(store, tmp_path):
    paths = write_claude_code(tmp_path / "p", sessions=1, turns=2, folders=1)
    (paths[0].parent / "main.jsonl").write_text(paths[0].read_text())  # a backup copy, "main" also a branch
    import_conversations(store, "claude-code", tmp_path / "p")
    _grow(paths[0], 9, 2)  # the session goes on in its own file; the backup stays as it was
    grown = import_conversations(store, "claude-code", tmp_path / "p")
    assert (grown.continued, grown.errors) == (1, [])
    nid = part_note_id("claude-code", paths[0].stem, 1)
    whole = store.get_note(nid).text
    assert "**5. user**" in whole
    rows = [json.loads(line) for line in paths[0].read_text().splitlines()]
    tail = tmp_path / "q" / "-home-dev" / "3240e317-0000-4000-8000-000000000000.jsonl"
    tail.parent.mkdir(parents=True)
    last_request = max(
        i for i, r in enumerate(rows) if r.get("type") == "user" and isinstance(r["message"]["content"], str)
    )
    tail.write_text("".join(json.dumps(r) + "\n" for r in rows[last_request:]))  # only the session's end
    short = import_conversations(store, "claude-code", tail)
    assert short.notes == 0 and store.get_note(nid).text == whole  # nothing of the kept part removed


def test_lines_claiming_a_held_session_that_do_not_continue_it_are_counted_not_written(store, tmp_path):
    paths = write_claude_code(tmp_path / "p", sessions=1, turns=1)
    rows = [json.loads(line) for line in paths[0].read_text().splitlines()]
    other = claude_code_lines(random.Random(3), "sess-y", 1, start=datetime(2026, 12, 5, tzinfo=UTC))[4:]
    paths[0].write_text("".join(json.dumps(r) + "\n" for r in rows + other))  # Y's lines, filed in X's file
    report = import_conversations(store, "claude-code", tmp_path / "p")
    assert (report.new, report.strays, report.errors) == (2, 0, [])  # Y is a session of its own
    claim = claude_code_lines(random.Random(4), "sess-y", 1, start=datetime(2026, 12, 6, tzinfo=UTC))[4:]
    for row in claim:  # lines claiming Y that do not hold the last message kept of it
        row["uuid"] = "forged-" + str(row.get("uuid"))
    own = claude_code_lines(random.Random(5), "sess-z", 1, start=datetime(2026, 12, 7, tzinfo=UTC))[4:]
    (tmp_path / "p" / "sess-z.jsonl").write_text("".join(json.dumps(r) + "\n" for r in claim + own))
    again = import_conversations(store, "claude-code", tmp_path / "p")
    assert (again.new, again.notes, again.strays, again.errors) == (1, 1, 2, [])  # said in the summary, not a failure
    assert ": 1 request," in store.get_note(part_note_id("claude-code", "sess-y", 1)).body


def test_a_fork_of_a_private_session_never_publishes_its_turns_whatever_the_order(store, tmp_path):
    store.set_project("me:secret", private=True)
    folder = tmp_path / "p"
    a = write_claude_code(folder, sessions=1, turns=1, folders=1)[0]
    import_conversations(store, "claude-code", a, project="me:secret")
    rows = [json.loads(line) for line in a.read_text().splitlines()]
    fork = a.parent / "0000-fork.jsonl"  # a copy whose lines carry its own id, same message ids
    fork.write_text(
        "".join(json.dumps({**r, "sessionId": "0000-fork"} if "sessionId" in r else r) + "\n" for r in rows)
    )
    _grow(a, 9, 1)  # A goes on after the fork
    report = import_conversations(store, "claude-code", folder)  # routine, no --project
    assert report.errors == []
    for card in store.list_notes(limit=50, viewer=Viewer("stranger")):
        assert "retry" not in store.get_note(card.id).body  # no turn of A's in anything a stranger sees


def test_an_unchanged_reimport_writes_nothing_not_even_an_attempt(store, tmp_path):
    write_claude_code(tmp_path / "p", sessions=2, turns=1)
    import_conversations(store, "claude-code", tmp_path / "p")
    (run,) = store.list_attempts(project="claude-code")
    store.end_attempt(run.id, outcome="succeeded")  # its notes are frozen now
    again = import_conversations(store, "claude-code", tmp_path / "p")
    assert (again.unchanged, again.notes, again.errors) == (2, 0, [])
    assert len(store.list_attempts(project="claude-code")) == 1  # no import attempt started for nothing


def _pairs(session, prefix, requests, day, word, hour=0):
    """*requests* request/answer line pairs of *session* on 2026-11-*day*, message ids prefix-u0, prefix-a0...,
    each request holding *word*."""
    out = []
    for i in range(requests):
        at = f"2026-11-{day:02d}T{hour + i:02d}:00:00.000Z"
        out.append(
            {
                "type": "user",
                "sessionId": session,
                "uuid": f"{prefix}-u{i}",
                "timestamp": at,
                "message": {"role": "user", "content": f"{word} request {i}"},
            }
        )
        out.append(
            {
                "type": "assistant",
                "sessionId": session,
                "uuid": f"{prefix}-a{i}",
                "timestamp": at[:17] + "30.000Z",
                "message": {
                    "role": "assistant",
                    "model": "m",
                    "content": [{"type": "text", "text": f"{word} answer {i}"}],
                },
            }
        )
    return out  # fmt: skip


def _jsonl(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _stranger_sees(store, word):
    return store.search_notes(word, limit=50, viewer=Viewer("stranger"))


def test_turns_another_file_puts_before_those_kept_are_counted_and_the_part_keeps_its_start(store, tmp_path):
    a = _pairs("sess-a", "a", 6, 1, "alpha")
    own = _jsonl(tmp_path / "p" / "sess-a.jsonl", a[0:4] + a[8:12])  # requests 0, 1, 4, 5
    _jsonl(tmp_path / "p" / "sess-x.jsonl", _pairs("sess-x", "x", 1, 1, "xray", hour=20) + a[4:8])  # 2, 3
    import_conversations(store, "claude-code", own)
    bulk = import_conversations(store, "claude-code", tmp_path / "p")
    assert (bulk.notes, bulk.strays) == (1, 4)  # X's note; A's two requests found late are said, not written
    note = store.get_note(part_note_id("claude-code", "sess-a", 1))
    assert note.revision == 1 and "alpha request 0" in note.body and "alpha request 5" in note.body
    again = import_conversations(store, "claude-code", tmp_path / "p")
    assert (again.notes, again.unchanged) == (0, 2)


def test_every_session_found_beside_private_work_stays_private(store, tmp_path):
    store.set_project("me:secret", private=True)
    a = _pairs("sess-a", "a", 2, 1, "alphasecret")
    import_conversations(store, "claude-code", _jsonl(tmp_path / "a" / "sess-a.jsonl", a), project="me:secret")
    b, c = _pairs("sess-b", "b", 1, 2, "bravosecret"), _pairs("sess-c", "c", 1, 3, "charlie")
    report = import_conversations(store, "claude-code", _jsonl(tmp_path / "c" / "sess-c.jsonl", a + b + c))
    assert (report.new, report.elsewhere) == (2, 2)  # B (its own file gone) and C: beside A, on its project
    assert _stranger_sees(store, "bravosecret") == [] and _stranger_sees(store, "charlie") == []
    store.set_project("team", private=False)
    pub = _pairs("sess-p", "p", 1, 4, "papapublic")
    import_conversations(store, "claude-code", _jsonl(tmp_path / "p" / "sess-p.jsonl", pub), project="team")
    d = _pairs("sess-d", "d", 1, 5, "deltasecret")  # resumed A, then `/resume P` inside it: A is private
    later = _pairs("sess-p", "p2", 1, 6, "papalater")
    import_conversations(store, "claude-code", _jsonl(tmp_path / "d" / "sess-d.jsonl", a + d + pub + later))
    assert _stranger_sees(store, "deltasecret") == []
    assert [n.id for n in _stranger_sees(store, "papalater")] == [part_note_id("claude-code", "sess-p", 1)]


def test_a_fork_of_private_work_goes_where_it_is(store, tmp_path):
    store.set_project("me:secret", private=True)
    s = _pairs("sess-s", "s", 2, 1, "sierrasecret")
    _jsonl(tmp_path / "p" / "sess-s.jsonl", s)
    import_conversations(store, "claude-code", tmp_path / "p", project="me:secret")
    fork = [dict(line, sessionId="sess-f") for line in s] + _pairs("sess-f", "f", 1, 2, "foxtrotgoeson")
    _jsonl(tmp_path / "p" / "sess-f.jsonl", fork)
    report = import_conversations(store, "claude-code", tmp_path / "p")
    assert (report.new, report.elsewhere) == (1, 1)
    assert _stranger_sees(store, "foxtrotgoeson") == [] and _stranger_sees(store, "sierrasecret") == []


def test_lines_claiming_a_held_session_never_join_it_from_a_file_of_their_own(store, tmp_path):
    store.set_project("alice:secret", private=True, owner="alice")
    p = _pairs("sess-p", "p", 2, 1, "papa")
    import_conversations(store, "claude-code", _jsonl(tmp_path / "v" / "sess-p.jsonl", p), project="alice:secret")
    _jsonl(tmp_path / "run" / "sess-b.jsonl", p + _pairs("sess-b", "b", 1, 3, "bravo"))  # a true copy of P
    _jsonl(tmp_path / "run" / "sess-x.jsonl", _pairs("sess-p", "evil", 1, 5, "plumforged"))  # only claims
    report = import_conversations(store, "claude-code", tmp_path / "run")
    assert report.strays == 2 and "plumforged" not in store.get_note(part_note_id("claude-code", "sess-p", 1)).text
    assert store.search_notes("plumforged", limit=5) == []


def test_a_file_named_like_one_imported_under_its_name_is_not_taken_for_it(store, tmp_path):
    store.set_project("me:secret", private=True)
    for with_ids in (True, False):
        old = [{k: v for k, v in line.items() if k != "sessionId"} for line in _pairs("x", "k", 2, 1, "kilo")]
        if not with_ids:
            old = [{k: v for k, v in line.items() if k != "uuid"} for line in old]
        name = f"debug{with_ids}"
        import_conversations(store, "claude-code", _jsonl(tmp_path / "a" / f"{name}.jsonl", old))
        other = _pairs(f"sess-n{with_ids}", f"n{with_ids}", 3, 5, "novembersecret")
        report = import_conversations(
            store, "claude-code", _jsonl(tmp_path / "b" / f"{name}.jsonl", other), project="me:secret"
        )
        assert (report.new, report.continued, report.changed_in_place) == (1, 0, 0)
        assert "novembersecret" not in store.get_note(part_note_id("claude-code", name, 1)).text
    assert _stranger_sees(store, "novembersecret") == []


def test_a_session_read_only_as_strays_still_keeps_its_ids_from_a_fork(store, tmp_path):
    store.set_project("me:secret", private=True)
    s = _pairs("sess-s", "s", 3, 1, "sierrasecret")
    import_conversations(store, "claude-code", _jsonl(tmp_path / "v" / "sess-s.jsonl", s), project="me:secret")
    early = s[:2]  # S's first request: as copied by B, and rewritten to F's id by a fork
    fork = [dict(line, sessionId="sess-f") for line in early] + _pairs("sess-f", "f", 1, 2, "foxtrot")
    _jsonl(tmp_path / "run" / "sess-f.jsonl", fork)
    _jsonl(tmp_path / "run" / "sess-b.jsonl", early + _pairs("sess-b", "b", 1, 3, "bravo"))
    import_conversations(store, "claude-code", tmp_path / "run")
    assert _stranger_sees(store, "sierrasecret") == []


@pytest.mark.slow
def test_a_file_of_many_sessions_and_summaries_reads_in_linear_time(store, tmp_path):
    def timed(sessions):
        lines = []
        for i in range(sessions):
            lines.append(
                {
                    "type": "user",
                    "sessionId": f"s{i}",
                    "uuid": f"u{i}",
                    "timestamp": "2026-11-01T00:00:00Z",
                    "message": {"role": "user", "content": f"q {i}"},
                }
            )
            lines.append({"type": "summary", "summary": f"sum {i}", "leafUuid": f"u{i}"})
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        gc.disable()  # a collection's pause grows with the heap, not with the parse
        try:
            # This thread's CPU time: other processes on a busy machine do not count in it.
            began = time.thread_time()
            pieces = parse_claude_code(data, "one")
            took = time.thread_time() - began
        finally:
            gc.enable()
        assert {p.source_id: p.title for p in pieces} == {f"s{i}": f"sum {i}" for i in range(sessions)}
        return took

    # Sizes alternated and the best of three kept: a busy machine slows some runs, never all.
    runs = [(timed(4000), timed(16000)) for _ in range(3)]
    small, big = min(r[0] for r in runs), min(r[1] for r in runs)
    assert big < 10 * small  # 4x the sessions: ~4.5x here (16x before: every session looked at every summary)
    ask = {"type": "user", "message": {"role": "user", "content": "hi"}}
    bad = [{**ask, "sessionId": "x" * 300 + str(i), "uuid": f"u{i}"} for i in range(200)]
    report = import_conversations(store, "claude-code", _jsonl(tmp_path / "odd.jsonl", bad))
    assert len(report.errors) == 21 and "and 180 more" in report.errors[-1][1]


def test_a_session_resumed_from_a_rewound_private_one_stays_private(store, tmp_path):
    store.set_project("me:secret", private=True)
    a = _pairs("sess-a", "a", 3, 1, "alphasecret")
    import_conversations(store, "claude-code", _jsonl(tmp_path / "v" / "sess-a.jsonl", a), project="me:secret")
    rewound = _pairs("sess-a", "r", 1, 1, "alpharewound", hour=10)  # A taken back to its first request, then on
    b = _pairs("sess-b", "b", 2, 2, "bravocontinues")
    _jsonl(tmp_path / "p" / "sess-b.jsonl", a[:2] + rewound + b)  # B copies A's chain as it is now
    report = import_conversations(store, "claude-code", tmp_path / "p")
    assert (report.new, report.elsewhere, report.strays) == (1, 1, 2)  # A's new branch: said, not written
    assert _stranger_sees(store, "bravocontinues") == [] and _stranger_sees(store, "alpharewound") == []


def test_a_turn_a_copy_puts_between_those_kept_is_counted_when_the_own_file_is_gone(store, tmp_path):
    a = _pairs("sess-a", "a", 2, 1, "alpha")
    extra = [
        dict(line, timestamp=line["timestamp"].replace(":00:", ":10:")) for line in _pairs("sess-a", "x", 1, 1, "xtra")
    ]
    import_conversations(store, "claude-code", _jsonl(tmp_path / "p" / "sess-a.jsonl", a))
    (tmp_path / "p" / "sess-a.jsonl").unlink()  # cleaned up; B's copy holds one more turn of A's in the middle
    _jsonl(tmp_path / "p" / "sess-b.jsonl", a[:2] + extra + a[2:] + _pairs("sess-b", "b", 1, 2, "bravo"))
    report = import_conversations(store, "claude-code", tmp_path / "p")
    assert (report.new, report.unchanged, report.strays) == (1, 1, 2)


def test_an_older_copy_of_a_held_session_is_not_counted_as_strays(store, tmp_path):
    a = _pairs("sess-a", "a", 3, 1, "alpha")
    _jsonl(tmp_path / "p" / "sess-b.jsonl", a[:4] + _pairs("sess-b", "b", 1, 2, "bravo"))  # B resumed A early
    _jsonl(tmp_path / "p" / "sess-a.jsonl", a)
    import_conversations(store, "claude-code", tmp_path / "p")
    (tmp_path / "p" / "sess-a.jsonl").unlink()  # A's file cleaned up: B's copy is older than A's note
    for _ in range(2):
        again = import_conversations(store, "claude-code", tmp_path / "p")
        assert (again.notes, again.strays) == (0, 0)


def test_a_session_resumed_after_a_private_one_was_compacted_stays_private(store, tmp_path):
    store.set_project("me:secret", private=True)
    p = _pairs("sess-p", "p", 2, 1, "papasecret")
    boundary = {"type": "system", "subtype": "compact_boundary", "sessionId": "sess-p", "uuid": "p-cb",
                "timestamp": "2026-11-01T05:00:00.000Z", "content": "Conversation compacted"}  # fmt: skip
    summary = {"type": "user", "sessionId": "sess-p", "uuid": "p-cs", "timestamp": "2026-11-01T05:00:01.000Z",
               "isCompactSummary": True, "message": {"role": "user", "content": "continued: papasecret"}}  # fmt: skip
    _jsonl(tmp_path / "p" / "sess-p.jsonl", p + [boundary, summary])
    import_conversations(store, "claude-code", tmp_path / "p", project="me:secret")
    _jsonl(tmp_path / "p" / "sess-n.jsonl", [boundary, summary] + _pairs("sess-n", "n", 2, 2, "novembergoeson"))
    report = import_conversations(store, "claude-code", tmp_path / "p")  # N's file names P only by those lines
    assert (report.new, report.elsewhere) == (1, 1) and _stranger_sees(store, "novembergoeson") == []


def test_a_rewound_turn_in_the_same_minute_as_the_last_kept_is_counted(store, tmp_path):
    def at(m, s):
        return f"2026-11-01T10:{m:02d}:{s:02d}.000Z"

    a = _pairs("sess-a", "a", 2, 1, "alpha")
    for line, when in zip(a, (at(0, 0), at(0, 5), at(0, 10), at(0, 15)), strict=True):
        line["timestamp"] = when
    import_conversations(store, "claude-code", _jsonl(tmp_path / "p" / "sess-a.jsonl", a))
    rewound = _pairs("sess-a", "r", 1, 1, "alpharewound")  # taken back to the first request, 15 s later
    rewound[0]["timestamp"], rewound[1]["timestamp"] = at(0, 30), at(0, 40)
    (tmp_path / "p" / "sess-a.jsonl").unlink()
    _jsonl(tmp_path / "p" / "sess-b.jsonl", a[:2] + rewound + _pairs("sess-b", "b", 1, 2, "bravo"))
    report = import_conversations(store, "claude-code", tmp_path / "p")
    # The rewound pair, and the kept pair of that minute too (the part shows minutes, and no file of the
    # run holds its last message: counted twice rather than lost without a word).
    assert (report.new, report.strays) == (1, 4)
    for n in range(3):  # more copies of the same lines: each turn is counted once, not once per copy
        _jsonl(tmp_path / "p" / f"sess-c{n}.jsonl", a[:2] + rewound + _pairs(f"sess-c{n}", f"c{n}", 1, 3, "charlie"))
    assert import_conversations(store, "claude-code", tmp_path / "p").strays == 4


def test_turns_only_a_sessions_own_file_holds_before_those_kept_are_counted(store, tmp_path):
    a = _pairs("sess-a", "a", 4, 1, "alpha")
    _jsonl(tmp_path / "p" / "sess-a.jsonl", a)
    b = _jsonl(
        tmp_path / "p" / "sess-b.jsonl", a[4:] + _pairs("sess-b", "b", 1, 2, "bravo")
    )  # resumed after a compaction
    import_conversations(store, "claude-code", b)  # alone first: A is made from B's copy (its last two requests)
    for _ in range(2):
        report = import_conversations(store, "claude-code", tmp_path / "p")
        assert (report.notes, report.strays) == (0, 4)  # A's first two requests: said, not lost without a word


def test_turns_a_true_copy_brings_are_not_also_counted_as_strays(store, tmp_path):
    p = _pairs("sess-p", "p", 3, 1, "papa")
    import_conversations(store, "claude-code", _jsonl(tmp_path / "p" / "sess-p.jsonl", p))
    (tmp_path / "p" / "sess-p.jsonl").unlink()
    later = _pairs("sess-p", "q", 2, 2, "papalater")
    untimed = [{k: v for k, v in line.items() if k != "timestamp"} for line in _pairs("sess-p", "z", 1, 2, "zulu")]
    _jsonl(tmp_path / "p" / "sess-a.jsonl", _pairs("sess-a", "a", 1, 3, "alpha") + p + later)  # a true copy, and more
    _jsonl(tmp_path / "p" / "sess-b.jsonl", _pairs("sess-b", "b", 1, 3, "bravo") + later + untimed)  # some of it again
    report = import_conversations(store, "claude-code", tmp_path / "p")
    assert "papalater" in store.get_note(part_note_id("claude-code", "sess-p", 1)).body
    assert report.strays == 2  # B's turns without a time (they cannot be placed); not the ones A brought
