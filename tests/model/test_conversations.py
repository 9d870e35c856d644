"""The conversation parsers on anything: they read what they can, never crash on odd JSON, stay
linear on hostile inputs, and every note they lay out reads back with the header it was given."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from notewell.errors import InvalidArgumentError
from notewell.model.conversations import (
    Conversation,
    Turn,
    conversation_parts,
    merged_sessions,
    parse_chatgpt,
    parse_claude_ai,
    parse_claude_code,
)
from notewell.model.header import parse_note
from notewell.model.note import check_text

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=40,
)
KEYS = st.sampled_from(
    ["type", "message", "content", "role", "uuid", "text", "tool_use", "tool_result", "id", "name", "input",
     "mapping", "current_node", "parent", "children", "author", "parts", "recipient", "chat_messages", "sender",
     "conversation_id", "timestamp", "create_time", "isMeta", "is_error", "tool_use_id", "parent_message_uuid"]
)  # fmt: skip
WORDS = st.sampled_from(["user", "assistant", "text", "human"])
SHAPED = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20) | WORDS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=8),
    max_leaves=60,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(SHAPED | JSON, max_size=12))
def test_claude_code_reads_any_json_lines_without_crashing(lines):
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    pieces = parse_claude_code(data, "s")
    assert len({p.source_id for p in pieces}) == len(pieces) and all(p.own_file for p in pieces[:1])
    for piece in pieces:
        assert all(t.role in ("user", "assistant") for t in piece.turns)
        conv = merged_sessions([piece])
        assert conv is None or any(t.role == "user" for t in conv.turns)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(SHAPED | JSON)
@example({"current_node": [], "id": "0", "mapping": {}, "type": None})  # once: unhashable type: 'list'
@example({"uuid": "c", "chat_messages": [{"uuid": ["a"], "parent_message_uuid": "p"}, {"parent_message_uuid": "q"}]})
def test_the_exports_read_any_object_without_crashing(item):
    if isinstance(item, dict):
        for parse in (parse_chatgpt, parse_claude_ai):
            conv = parse(item)
            assert conv is None or any(t.role == "user" for t in conv.turns)


def test_a_line_that_is_not_json_is_refused_but_a_cut_last_line_waits():
    good = json.dumps({"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hello there"}})
    assert parse_claude_code((good + "\n" + '{"type": "us').encode(), "s")[0].turns[0].text == "hello there"
    try:
        parse_claude_code(('{"type": "us\n' + good + "\n").encode(), "s")
    except InvalidArgumentError as exc:
        assert "line 1 is not JSON" in exc.message
    else:
        raise AssertionError("a broken line in the middle was read past")


ROLES = st.sampled_from(["user", "assistant"])


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(ROLES, st.text(max_size=300), st.text(max_size=60)), min_size=1, max_size=12),
    st.text(max_size=80),
)
def test_every_part_is_a_note_the_store_takes_and_reads_back(turns, ident):
    made = [Turn(role, text, None, [tool] if tool else [], ident) for role, text, tool in turns]
    conv = Conversation("claude", "conv-1", made, title=ident, model=ident)
    parts = conversation_parts(conv, part_bytes=2000)
    assert parts and parts[0].first == 1 and parts[-1].last == len(turns)
    for part in parts:
        check_text(part.text)  # the store's own check: UTF-8, no NUL, under the limits
        parsed = parse_note(part.text)
        assert parsed.header is not None and parsed.header["kind"] == "conversation"
        extra = dict(line.split(": ", 1) for line in parsed.extra)
        assert json.loads(extra["conversation"]) == "conv-1" and json.loads(extra["part"]) == str(part.number)
        if "last_message" in extra:
            assert json.loads(extra["last_message"]) == ident


@pytest.mark.slow
def test_hostile_inputs_stay_linear():
    blocks = [{"type": "text", "text": f"piece {i}"} for i in range(40_000)]
    line = {"type": "assistant", "uuid": "a", "message": {"id": "m", "role": "assistant", "content": blocks}}
    ask = {"type": "user", "uuid": "u", "message": {"role": "user", "content": "go"}}
    data = (json.dumps(ask) + "\n" + "\n".join(json.dumps({**line, "uuid": f"a{i}"}) for i in range(5)) + "\n").encode()
    began = time.perf_counter()
    conv = merged_sessions(parse_claude_code(data, "s"))
    assert conv is not None and time.perf_counter() - began < 3
    markers = "\ue200" * 50_000 + " text"
    export = {"conversation_id": "c", "current_node": "n", "mapping": {"n": {"id": "n", "parent": None, "message": {
        "author": {"role": "user"}, "content": {"content_type": "text", "parts": [markers]}}}}}  # fmt: skip
    began = time.perf_counter()
    assert parse_chatgpt(export) is not None and time.perf_counter() - began < 3
    markup = "<command-name>" * 50_000
    began = time.perf_counter()
    parse_claude_code((json.dumps({**ask, "message": {"role": "user", "content": markup}}) + "\n").encode(), "s")
    assert time.perf_counter() - began < 3


def _session_lines(session: str, requests: int, prefix: str) -> list[dict]:
    out = []
    for i in range(requests):
        at = f"2026-11-0{1 + i // 20}T{i % 20:02d}:00:00Z"
        out.append(
            {
                "type": "user",
                "sessionId": session,
                "uuid": f"{prefix}u{i}",
                "timestamp": at,
                "message": {"role": "user", "content": f"request {prefix}{i}"},
            }
        )
        for k in range(2):
            out.append(
                {
                    "type": "assistant",
                    "sessionId": session,
                    "uuid": f"{prefix}a{i}.{k}",
                    "timestamp": at,
                    "message": {"role": "assistant", "content": [{"type": "text", "text": f"answer {prefix}{i}.{k}"}]},
                }
            )
    return out  # fmt: skip


def _starts(lines: list[dict]) -> list[int]:
    return [i for i, line in enumerate(lines) if line["type"] == "user"] + [len(lines)]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12), st.data())
def test_a_session_read_from_any_files_holding_its_lines_is_the_session_read_whole(requests, data):
    lines = _session_lines("s-a", requests, "a")
    whole = merged_sessions(parse_claude_code("".join(json.dumps(x) + "\n" for x in lines).encode(), "s-a"))
    cuts = _starts(lines)
    files = []  # a backup, a resumed copy, lines written into another file: each a run of whole turns
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.sampled_from(cuts))
        j = data.draw(st.sampled_from([c for c in cuts if c >= i]))
        other = _session_lines("s-b", data.draw(st.integers(0, 2)), "b")  # another session's lines beside them
        files.append((data.draw(st.sampled_from(["s-a", "s-b", "copy"])), lines[i:j] + other))
    rest = [c for c in cuts if c not in {0}]
    files.append(("s-a", lines[: min(rest)]))  # its own file holds at least its first request
    covered = set()
    for _, held in files:
        covered.update(x["uuid"] for x in held if x["sessionId"] == "s-a")
    pieces = []
    for stem, held in files:
        pieces += [p for p in parse_claude_code("".join(json.dumps(x) + "\n" for x in held).encode(), stem)
                   if p.source_id == "s-a"]  # fmt: skip
    conv = merged_sessions(pieces)
    expected = [t for t in whole.turns if t.ident in covered]
    assert conv is not None and conv.source_id == "s-a"
    assert [(t.role, t.text, t.ident) for t in conv.turns] == [(t.role, t.text, t.ident) for t in expected]
