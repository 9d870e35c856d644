"""The Codex CLI and Gemini CLI session parsers: what they keep and leave out of each format
(the current one and the older ones their sources show), that they never crash on odd JSON, and
that the worst inputs within the limits (one 10 MB line, deep nesting, 100k tiny lines) stay
linear (thread CPU time, the machine is shared)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.errors import InvalidArgumentError
from notewell.model.conversations import parse_codex, parse_gemini
from tests.conftest import cpu_seconds
from tests.services.conversation_fixtures import codex_lines, gemini_record

START = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
SESSION = "0199a213-81c0-7800-8aa1-bbab2a035a53"


def jsonl(lines) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_a_codex_rollout_keeps_requests_answers_and_calls_and_leaves_out_the_rest():
    conv = parse_codex(jsonl(codex_lines(random.Random(1), SESSION, 3, start=START)), f"rollout-x-{SESSION}")
    assert conv is not None and conv.source == "codex" and conv.source_id == SESSION
    assert [t.role for t in conv.turns] == ["user", "assistant"] * 3  # event echoes and reasoning: not turns
    assert (conv.where, conv.branch, conv.model) == ("/home/dev/shop", "main", "gpt-5-codex")
    assert conv.turns[0].text.startswith("Can you ") and "environment_context" not in conv.turns[0].text
    assert conv.turns[1].tools == ["shell(rg -n pool src/db/pool.py)"]
    assert conv.turns[3].tools[0].endswith(" failed")  # exit code 1 in its output's metadata
    assert "Reading the pool" not in " ".join(t.text for t in conv.turns)
    assert conv.turns[0].at == "2026-11-01T09:02:00Z" and len({t.ident for t in conv.turns}) == 6


def test_an_old_codex_rollout_bare_session_object_and_items_reads_alike():
    legacy = codex_lines(random.Random(1), SESSION, 3, start=START, legacy=True)
    legacy.insert(2, {"record_type": "state"})
    conv = parse_codex(jsonl(legacy), "rollout-2025-05-07T17-24-21")
    new = parse_codex(jsonl(codex_lines(random.Random(1), SESSION, 3, start=START)), "x")
    assert conv is not None and new is not None and conv.source_id == SESSION
    assert [(t.role, t.text, t.tools) for t in conv.turns] == [(t.role, t.text, t.tools) for t in new.turns]
    assert all(t.at == "2026-11-01T09:00:00Z" for t in conv.turns)  # no time per line: the session's


def test_codex_odd_items_a_cut_last_line_and_a_broken_one():
    lines = [
        {"type": "session_meta", "payload": {"id": SESSION, "cwd": "/w"}},
        {"type": "response_item", "payload": {"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": "<permissions instructions>sandboxed</permissions instructions>"}]}},
        {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "# AGENTS.md instructions for /w\n\nBe terse."},
            {"type": "input_text", "text": "Look at this"}, {"type": "input_image", "image_url": "data:..."}]}},
        {"type": "response_item", "payload": {"type": "local_shell_call", "call_id": "c1", "status": "completed",
                                              "action": {"type": "exec", "command": ["ls", "-la"]}}},
        {"type": "response_item", "payload": {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch",
                                              "input": "*** Begin Patch\n*** Update File: a.py"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c2",
                                              "output": {"content": "bad patch", "success": False}}},
        {"type": "response_item", "payload": {"type": "web_search_call", "action": {"type": "search", "query": "h11"}}},
        {"type": "compacted", "payload": {"message": "Summary of the work so far"}},
        {"type": "session_meta", "payload": {"id": "another-session"}},  # a fork's copy of its parent's
    ]  # fmt: skip
    data = jsonl(lines) + b'{"type": "response_item", "payl'
    conv = parse_codex(data, "s")
    assert conv is not None and conv.source_id == SESSION
    assert conv.turns[0].text == "Look at this\n[1 image]"
    assert conv.turns[1].tools == ["shell(ls -la)", "apply_patch(Begin Patch) failed", "web_search(h11)"]
    assert "Summary of the work" not in conv.turns[1].text
    with pytest.raises(InvalidArgumentError, match="line 2 is not JSON"):
        parse_codex(jsonl(lines[:1]) + b"{broken\n" + jsonl(lines[1:]), "s")
    assert parse_codex(jsonl(lines[:2]), "s") is None  # no request of the person's: no conversation
    assert parse_codex(b"", f"rollout-{SESSION}") is None


def test_a_gemini_session_keeps_requests_answers_and_calls_and_leaves_out_the_rest():
    for parts in (False, True):
        record = gemini_record(random.Random(2), SESSION, 3, start=START, parts=parts)
        conv = parse_gemini(json.dumps(record).encode(), "session-x")
        assert conv is not None and conv.source == "gemini" and conv.source_id == SESSION
        assert [t.role for t in conv.turns] == ["user", "assistant"] * 3  # a call and the words: one answer
        assert conv.model == "gemini-2.5-pro" and conv.turns[0].text.startswith("Can you ")
        assert conv.turns[1].tools == ["read_file(/home/dev/src/db/pool.py)"] and "The cause" in conv.turns[1].text
        assert conv.turns[3].tools[0].endswith(" failed")
        words = " ".join(t.text for t in conv.turns)
        assert "fallback model" not in words and "Look at the pool first" not in words
        assert conv.turns[0].ident == record["messages"][0]["id"]


def test_gemini_shown_text_summary_and_what_is_not_a_session():
    record = gemini_record(random.Random(2), SESSION, 1, start=START)
    record["messages"][0]["displayContent"] = [{"text": "Fix @src/a.py"}]
    record["messages"][0]["content"] = [{"text": "Fix @src/a.py\n--- Content from src/a.py ---\nx = 1"}]
    record["messages"][2]["content"] = [{"text": "thinking", "thought": True}, {"text": "Done."}]
    record["summary"] = "Fixing a.py"
    conv = parse_gemini(json.dumps(record).encode(), "s")
    assert conv is not None and conv.turns[0].text == "Fix @src/a.py" and conv.turns[1].text == "Done."
    assert conv.title == "Fixing a.py"
    for bad, why in ((b'{"sessionId": "a", "messa', "not JSON"), (b"[]", "no list of messages"),
                     (b"[" * 100_000, "nested too deep|not JSON")):  # fmt: skip
        with pytest.raises(InvalidArgumentError, match=why):
            parse_gemini(bad, "s")
    assert parse_gemini(b'{"messages": [{"type": "info", "content": "hi"}]}', "s") is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20)
    | st.sampled_from(["message", "user", "assistant", "gemini", "function_call", "response_item", "session_meta"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "payload", "role", "content", "text", "id", "call_id", "output", "arguments",
                         "messages", "toolCalls", "status", "name", "args", "timestamp", "sessionId", "action"]),
        children, max_size=6),
    max_leaves=50,
)  # fmt: skip


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(JSON, max_size=10), JSON)
def test_both_read_any_json_without_crashing(lines, record):
    for conv in (parse_codex(jsonl(lines), "s"), _gemini_or_none(record)):
        assert conv is None or (any(t.role == "user" for t in conv.turns) and conv.source_id)


def _gemini_or_none(record):
    try:
        return parse_gemini(json.dumps(record).encode(), "s")
    except InvalidArgumentError:
        return None


def _cpu(parse, data: bytes) -> float:
    return cpu_seconds(lambda: parse(data, "s"))


@pytest.mark.slow
def test_the_worst_inputs_stay_linear():
    ask = {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                "content": [{"type": "input_text", "text": "go"}]}}  # fmt: skip

    def big_line(n: int) -> bytes:  # one line of n MB: an answer of many parts
        part = {"type": "output_text", "text": "x" * 1000}
        line = {
            "type": "response_item",
            "payload": {"type": "message", "role": "assistant", "content": [part] * n * 1000},
        }
        return jsonl([ask, line])

    def tiny_lines(n: int) -> bytes:  # n calls in one answer, each a line
        call = {"type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{}"}}
        return jsonl([ask] + [call] * n)

    def gemini_many(n: int) -> bytes:
        messages = [{"type": "user" if i % 2 == 0 else "gemini", "content": "a", "id": str(i)} for i in range(n)]
        return json.dumps({"sessionId": "s", "messages": messages}).encode()

    for make, parse, small, large in (
        (big_line, parse_codex, 1, 10), (tiny_lines, parse_codex, 10_000, 100_000),
        (gemini_many, parse_gemini, 10_000, 100_000),
    ):  # fmt: skip
        a, b = make(small), make(large)
        one, ten = _cpu(parse, a), _cpu(parse, b)
        assert ten < 25 * max(one, 0.01), (make.__name__, one, ten)  # linear: ten times the input, not 100
    deep = b'{"type": "response_item", "payload": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"
    with pytest.raises(InvalidArgumentError, match="nested too deep"):
        parse_codex(jsonl([ask]) + deep + jsonl([ask]), "s")
