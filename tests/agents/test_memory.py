"""ConversationMemory: when it compresses, where it cuts, what the summary keeps, and falling back."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notewell.agents.chat import ChatModel, ChatReply
from notewell.agents.memory import (
    SUMMARY_PREFIX,
    CompressionEvent,
    ConversationMemory,
    ExtractiveSummarizer,
    LLMSummarizer,
    Summarizer,
)
from notewell.errors import InvalidArgumentError, UnavailableError
from notewell.model.token_count import default_counter, estimate_tokens

NOTE_A = "nte_0123456789"
NOTE_B = "nte_abcdefghij"


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def simple_round(i: int, size: int = 100) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"Question {i}: " + "x" * size},
        {"role": "assistant", "content": f"Answer {i}. " + "y" * size},
    ]


def tool_round(i: int, note_id: str = NOTE_A) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"What do my notes say about Go errors? (round {i})"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call(f"s{i}", "search_notes", query="go errors"), call(f"r{i}", "read_note", id=note_id)],
        },
        {"role": "tool", "tool_call_id": f"s{i}", "content": f"{note_id} go-tips.md: errors are values " * 10},
        {"role": "tool", "tool_call_id": f"r{i}", "content": "# Go tips\n\nUse %w to wrap errors. " * 10},
        {"role": "assistant", "content": f"Go returns errors as values. Wrap them with %w (round {i})."},
    ]


def assert_tool_results_follow_their_calls(messages: list[dict[str, Any]]) -> None:
    """Every tool message answers a call made earlier in the same block (no user message between)."""
    pending: set[str] = set()
    for m in messages:
        if m["role"] == "user":
            pending = set()
        for c in m.get("tool_calls") or []:
            pending.add(c["id"])
        if m["role"] == "tool":
            assert m["tool_call_id"] in pending, m


class FakeChat:
    """A ChatModel that records what it was sent and answers from a script (str or exception)."""

    model = "fake-model"

    def __init__(self, *replies: str | Exception) -> None:
        self.replies = list(replies)
        self.sent: list[list[dict[str, Any]]] = []
        self.kwargs: list[dict[str, Any]] = []

    def complete(self, messages, *, tools=None, temperature=None, max_tokens=None) -> ChatReply:
        self.sent.append(messages)
        self.kwargs.append({"tools": tools, "temperature": temperature, "max_tokens": max_tokens})
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return ChatReply(content=reply, model=self.model)


class RecordingSummarizer:
    """A Summarizer that records its inputs and numbers its summaries."""

    name = "recording"

    def __init__(self) -> None:
        self.calls: list[tuple[list[dict[str, Any]], str | None]] = []

    def summarize(self, messages: list[dict[str, Any]], previous: str | None) -> str:
        self.calls.append((messages, previous))
        return f"summary {len(self.calls)}"


def test_the_fakes_satisfy_the_protocols():
    assert isinstance(FakeChat(), ChatModel)
    assert isinstance(RecordingSummarizer(), Summarizer)
    assert isinstance(ExtractiveSummarizer(), Summarizer)
    assert isinstance(LLMSummarizer(FakeChat()), Summarizer)


def test_no_compression_under_the_char_trigger():
    memory = ConversationMemory("You help with notes.", trigger_chars=3000)
    for i in range(5):
        memory.extend(simple_round(i))
    assert memory.total_chars() < 3000
    assert memory.maybe_compress() is None
    assert len(memory) == 11 and memory.summary is None


def test_char_trigger_keeps_prompt_summary_and_last_rounds():
    memory = ConversationMemory("You help with notes.", trigger_chars=1000, keep_rounds=3)
    rounds = [simple_round(i) for i in range(8)]
    for r in rounds:
        memory.extend(r)
    assert memory.total_chars() >= 1000
    event = memory.maybe_compress()
    assert isinstance(event, CompressionEvent)
    messages = memory.get_messages()
    assert messages[0] == {"role": "system", "content": "You help with notes."}
    assert messages[1]["role"] == "system" and messages[1]["content"].startswith(SUMMARY_PREFIX)
    assert messages[2:] == [m for r in rounds[-3:] for m in r]
    assert event.rounds_folded == 5 and event.messages_folded == 10
    assert event.summarizer == "extractive" and event.fallback_reason is None
    assert "Question 0" in event.summary and "Question 4" in event.summary and "Question 5" not in event.summary
    assert messages[1]["content"] == f"{SUMMARY_PREFIX}\n{event.summary}"


def test_event_counts_match_the_messages_before_and_after():
    memory = ConversationMemory("sys", trigger_chars=500, keep_rounds=2, counter=estimate_tokens)
    for i in range(6):
        memory.extend(tool_round(i))
    before = memory.get_messages()
    before_chars, before_tokens = memory.total_chars(), memory.total_tokens()
    event = memory.maybe_compress()
    assert event is not None
    after = memory.get_messages()
    assert (event.before_messages, event.before_chars, event.before_tokens) == (
        len(before),
        before_chars,
        before_tokens,
    )
    assert (event.after_messages, event.after_chars, event.after_tokens) == (
        len(after),
        memory.total_chars(),
        memory.total_tokens(),
    )
    assert event.after_messages == 1 + 1 + 2 * 5 and event.rounds_folded == 4 and event.messages_folded == 20
    chars = sum(len(m["content"] or "") for m in after) + sum(
        len(c["function"]["arguments"]) for m in after for c in m.get("tool_calls") or []
    )
    assert chars == event.after_chars
    assert "\n" not in event.summary_preview and len(event.summary_preview) <= 120
    assert event.summary.startswith(event.summary_preview.rstrip("…"))


def test_tool_call_arguments_count_towards_the_char_trigger():
    memory = ConversationMemory(trigger_chars=300)
    memory.append({"role": "user", "content": "find it"})
    memory.append({"role": "assistant", "content": None, "tool_calls": [call("c1", "search_notes", query="q" * 300)]})
    assert memory.total_chars() == len("find it") + len(json.dumps({"query": "q" * 300}))
    assert memory.over_trigger()


def test_token_trigger_on_chinese_text():
    question = "我笔记里关于错误处理的内容是怎么讲的？请详细说明每一个要点。"
    answer = "笔记说明错误通过返回值传递，用包裹保留底层错误，并用判断函数检查错误类型。"

    def fill(memory: ConversationMemory) -> None:
        for _ in range(6):
            memory.append({"role": "user", "content": question})
            memory.append({"role": "assistant", "content": answer})

    chars = 6 * (len(question) + len(answer))
    tokens = 6 * (estimate_tokens(question) + estimate_tokens(answer))
    # Chinese text is about a token a character: the token count is close to the char count
    assert tokens >= chars * 0.8
    # set, the token trigger is used instead of the char trigger
    quiet = ConversationMemory(trigger_chars=10, trigger_tokens=tokens + 1, keep_rounds=2, counter=estimate_tokens)
    fill(quiet)
    assert quiet.total_tokens() == tokens and quiet.maybe_compress() is None
    loud = ConversationMemory(trigger_tokens=tokens, keep_rounds=2, counter=estimate_tokens)
    fill(loud)
    assert loud.total_chars() < loud.trigger_chars
    event = loud.maybe_compress()
    assert event is not None and event.before_tokens == tokens and event.rounds_folded == 4
    assert question in event.summary  # the question is kept in its own language
    assert event.after_tokens == loud.total_tokens()
    # the default counter (exact where bpe-openai is installed) works the same way
    exact = ConversationMemory(trigger_tokens=50, keep_rounds=2)
    fill(exact)
    count = default_counter()
    assert exact.total_tokens() == 6 * (count(question) + count(answer))
    assert exact.maybe_compress() is not None and len(exact) == 1 + 4


def test_no_compression_with_too_few_rounds_even_over_the_trigger():
    memory = ConversationMemory("sys", trigger_chars=10, keep_rounds=3)
    for i in range(3):
        memory.extend(simple_round(i))
    assert memory.over_trigger()
    assert memory.maybe_compress() is None
    assert len(memory) == 7 and memory.summary is None


def test_a_round_with_tool_calls_is_never_split():
    memory = ConversationMemory("sys", trigger_chars=100, keep_rounds=2)
    rounds = [tool_round(i) for i in range(5)]
    for r in rounds:
        memory.extend(r)
    assert memory.rounds() == [(1 + 5 * i, 6 + 5 * i) for i in range(5)]
    assert memory.maybe_compress() is not None
    messages = memory.get_messages()
    assert messages[2:] == rounds[-2] + rounds[-1]
    assert_tool_results_follow_their_calls(messages)
    assert memory.rounds() == [(2, 7), (7, 12)]


def test_no_cut_at_a_user_message_between_a_call_and_its_result():
    memory = ConversationMemory(trigger_chars=10, keep_rounds=1)
    memory.extend(simple_round(0))
    memory.extend(
        [
            {"role": "user", "content": "look it up"},
            {"role": "assistant", "content": None, "tool_calls": [call("c1", "read_note", id=NOTE_B)]},
            {"role": "user", "content": "(the user typed while the tool ran)"},
            {"role": "tool", "tool_call_id": "c1", "content": "the note"},
            {"role": "assistant", "content": "Done."},
        ]
    )
    # the second user message is no round start: the call and its result would part there
    assert memory.rounds() == [(0, 2), (2, 7)]
    event = memory.maybe_compress()
    assert event is not None and event.rounds_folded == 1
    messages = memory.get_messages()
    assert messages[1]["content"] == "look it up" and len(messages) == 6
    typed_meanwhile = "(the user typed while the tool ran)"
    assert_tool_results_follow_their_calls([m for m in messages if m["content"] != typed_meanwhile])


def test_summary_goes_first_without_a_system_prompt():
    memory = ConversationMemory(trigger_chars=10, keep_rounds=1)
    for i in range(3):
        memory.extend(simple_round(i))
    assert memory.system_prompt is None
    assert memory.maybe_compress() is not None
    messages = memory.get_messages()
    assert messages[0]["content"].startswith(SUMMARY_PREFIX) and messages[1:] == simple_round(2)


def test_second_compression_folds_the_first_summary():
    summarizer = RecordingSummarizer()
    memory = ConversationMemory("sys", summarizer=summarizer, trigger_chars=10, keep_rounds=2)
    rounds = [simple_round(i) for i in range(8)]
    for r in rounds[:4]:
        memory.extend(r)
    first = memory.maybe_compress()
    assert first is not None and first.summary == "summary 1" and first.summarizer == "recording"
    assert summarizer.calls[0] == ([m for r in rounds[:2] for m in r], None)
    for r in rounds[4:]:
        memory.extend(r)
    second = memory.maybe_compress()
    assert second is not None and second.rounds_folded == 4
    assert summarizer.calls[1] == ([m for r in rounds[2:6] for m in r], "summary 1")
    messages = memory.get_messages()
    summaries = [m for m in messages if (m["content"] or "").startswith(SUMMARY_PREFIX)]
    assert summaries == [{"role": "system", "content": f"{SUMMARY_PREFIX}\nsummary 2"}]
    assert messages[0]["content"] == "sys" and messages[1] == summaries[0]
    assert messages[2:] == rounds[-2] + rounds[-1]


def test_extractive_summary_keeps_questions_tools_answers_and_notes():
    memory = ConversationMemory("sys", trigger_chars=100, keep_rounds=1)
    memory.extend(tool_round(0, NOTE_A))
    memory.extend(
        [
            {"role": "user", "content": "给 rag-notes.md 加两个标签：rag 和 embedding\n(second line is dropped)"},
            {"role": "assistant", "content": "", "tool_calls": [call("t1", "add_tag", id=NOTE_B, tags=["rag"])]},
            {"role": "tool", "tool_call_id": "t1", "content": "ok"},
            {"role": "assistant", "content": "已为 rag-notes.md 添加标签。还有别的吗？"},
        ]
    )
    memory.extend(simple_round(9))
    event = memory.maybe_compress()
    assert event is not None
    lines = event.summary.splitlines()
    assert lines[0] == (
        "- User asked: What do my notes say about Go errors? (round 0)"
        f" | tools: search_notes(query=go errors); read_note(id={NOTE_A})"
        " | answer: Go returns errors as values."
    )
    assert lines[1] == (
        "- User asked: 给 rag-notes.md 加两个标签：rag 和 embedding"
        f" | tools: add_tag(id={NOTE_B}, tags=rag) | answer: 已为 rag-notes.md 添加标签。"
    )
    assert lines[2] == f"Notes involved: {NOTE_A}, rag-notes.md, {NOTE_B}, go-tips.md"
    # deterministic
    again = ExtractiveSummarizer().summarize(tool_round(0, NOTE_A), None)
    assert again == ExtractiveSummarizer().summarize(tool_round(0, NOTE_A), None)


def test_extractive_summary_clips_long_questions_at_a_word():
    long = "why " + "does this very long question keep going " * 20
    summary = ExtractiveSummarizer().summarize([{"role": "user", "content": long}], None)
    question = summary.removeprefix("- User asked: ")
    assert question.endswith("…") and len(question) <= 200
    assert long.startswith(question.removesuffix("…")) and long[len(question) - 1] == " "


def distinct_round(i: int, note_id: str) -> list[dict[str, Any]]:
    rounds = tool_round(i, note_id)
    rounds[0] = {"role": "user", "content": f"Q{i} about topic{i}: what do my notes say about Go errors?"}
    return rounds


def test_extractive_summary_stays_bounded_and_keeps_every_round_and_the_notes():
    # The oldest lines used to be dropped ("earlier exchanges omitted"), so after a second
    # compression the first request was gone. Every round stays now: older ones told more briefly,
    # then folded into one line of their questions; past what even that holds, counted.
    for max_chars, named in ((1500, 48), (600, 28)):
        summarizer = ExtractiveSummarizer(max_chars=max_chars)
        previous = None
        for batch in range(12):
            messages = [m for i in range(4) for m in distinct_round(10 * batch + i, f"nte_{batch:010d}")]
            previous = summarizer.summarize(messages, previous)
            assert len(previous) <= max_chars
        asked = sorted(int(q) for q in re.findall(r"\bQ(\d+)\b", previous))
        counted = sum(int(n) for n in re.findall(r"\((\d+) rounds before\)", previous))
        assert len(asked) == named and len(asked) + counted == 48, (max_chars, asked, counted)
        assert asked[-1] == 113 and asked == sorted(set(asked))  # the newest stay, each once
        notes = previous.splitlines()[-1]
        assert notes.startswith("Notes involved:")
        assert all(f"nte_{b:010d}" in notes for b in range(6))  # ids carried over from each previous summary
    lines = (
        ExtractiveSummarizer(max_chars=1500)
        .summarize([m for i in range(30) for m in distinct_round(i, NOTE_A)], None)
        .splitlines()
    )
    assert "| answer:" in lines[-2]  # the newest round keeps its detail while older ones are folded


def test_the_first_request_survives_two_compressions():
    # The tutorial's summary keeps the questions asked, the actions and the notes for the whole
    # conversation: "add the backend tag" must still be there after the second compression.
    memory = ConversationMemory("You help with notes.", trigger_chars=1200, keep_rounds=1)
    memory.append({"role": "user", "content": "Add the backend tag to go-tips.md"})
    memory.append({"role": "assistant", "content": "Added the backend tag to go-tips.md."})
    compressions = 0
    for i in range(12):
        for m in distinct_round(i, NOTE_B):
            memory.append(m)
        compressions += memory.maybe_compress() is not None
    summary = memory.summary or ""
    assert compressions >= 2 and memory.get_messages()[1]["content"].startswith(SUMMARY_PREFIX)
    assert "Add the backend tag" in summary and "go-tips.md" in summary and NOTE_B in summary


def test_llm_summarizer_prompt_has_the_previous_summary_and_a_transcript():
    chat = FakeChat("  用户问了 Go 的错误处理；涉及 go-tips.md。  ")
    summarizer = LLMSummarizer(chat, max_tokens=300, result_chars=100)
    assert summarizer.name == "llm:fake-model"
    text = summarizer.summarize(tool_round(1), "Earlier: the user set up the notes folder.")
    assert text == "用户问了 Go 的错误处理；涉及 go-tips.md。"
    [sent] = chat.sent
    assert chat.kwargs == [{"tools": None, "temperature": None, "max_tokens": 300}]
    assert sent[0]["role"] == "system"
    for wanted in ("questions", "actions", "conclusions", "note", "language"):
        assert wanted in sent[0]["content"]
    prompt = sent[1]["content"]
    assert "Previous summary:\nEarlier: the user set up the notes folder." in prompt
    assert "User: What do my notes say about Go errors? (round 1)" in prompt
    assert 'Assistant called search_notes({"query": "go errors"})' in prompt
    assert f'Assistant called read_note({{"id": "{NOTE_A}"}})' in prompt
    result = next(line for line in prompt.splitlines() if line.startswith("Tool result (read_note): "))
    assert len(result) <= len("Tool result (read_note): ") + 100 and result.endswith("…")
    assert "Assistant: Go returns errors as values. Wrap them with %w (round 1)." in prompt


def test_llm_summarizer_empty_reply_is_unavailable():
    with pytest.raises(UnavailableError, match="empty summary"):
        LLMSummarizer(FakeChat("   ")).summarize(simple_round(0), None)


def test_memory_uses_the_llm_summary_and_passes_the_previous_one():
    chat = FakeChat("first summary", "second summary")
    memory = ConversationMemory("sys", summarizer=LLMSummarizer(chat), trigger_chars=10, keep_rounds=1)
    for i in range(3):
        memory.extend(simple_round(i))
    event = memory.maybe_compress()
    assert event is not None and event.summary == "first summary" and event.summarizer == "llm:fake-model"
    assert "Previous summary" not in chat.sent[0][1]["content"]
    memory.extend(simple_round(3))
    assert memory.maybe_compress().summary == "second summary"
    assert "Previous summary:\nfirst summary" in chat.sent[1][1]["content"]
    assert "Question 2" in chat.sent[1][1]["content"] and "Question 1" not in chat.sent[1][1]["content"]


def test_falls_back_to_the_extractive_summary_when_the_model_is_down():
    chat = FakeChat(UnavailableError("the chat model did not answer (connection refused)"))
    memory = ConversationMemory("sys", summarizer=LLMSummarizer(chat), trigger_chars=10, keep_rounds=1)
    memory.extend(tool_round(0))
    memory.extend(simple_round(1))
    event = memory.maybe_compress()
    assert event is not None and event.summarizer == "extractive"
    assert event.fallback_reason == "llm:fake-model: the chat model did not answer (connection refused)"
    assert NOTE_A in event.summary and "What do my notes say about Go errors?" in event.summary
    assert memory.get_messages()[2:] == simple_round(1)


def test_falls_back_when_a_summarizer_returns_nothing():
    class Blank:
        name = "blank"

        def summarize(self, messages, previous):
            return " \n"

    memory = ConversationMemory(summarizer=Blank(), trigger_chars=10, keep_rounds=1)
    for i in range(2):
        memory.extend(simple_round(i))
    event = memory.maybe_compress()
    assert event.summarizer == "extractive" and event.fallback_reason == "blank returned an empty summary"


def test_get_messages_returns_copies():
    memory = ConversationMemory("sys")
    original = tool_round(0)
    memory.extend(original)
    original[1]["tool_calls"][0]["function"]["name"] = "changed by the caller"
    got = memory.get_messages()
    got[0]["content"] = "changed"
    got[2]["tool_calls"].clear()
    got.append({"role": "user", "content": "extra"})
    again = memory.get_messages()
    assert again[0]["content"] == "sys" and again[1:] == tool_round(0)


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ("hello", "a message must be a dict, not str"),
        ({"role": "bot", "content": "hi"}, "unknown message role 'bot'"),
        ({"content": "hi"}, "unknown message role None"),
        ({"role": "user", "content": ["part"]}, "message content must be a string or None, not list"),
        ({"role": "tool", "content": "result"}, "a tool message needs a tool_call_id"),
        ({"role": "tool", "tool_call_id": "", "content": "result"}, "a tool message needs a tool_call_id"),
        ({"role": "user", "content": "x", "tool_calls": []}, "only assistant messages carry tool_calls"),
        ({"role": "assistant", "content": None, "tool_calls": "x"}, "tool_calls must be a list"),
        (
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": {}}}]},
            r"tool_calls\[0\] needs a string id",
        ),
    ],
)
def test_append_rejects_malformed_messages(message, error):
    memory = ConversationMemory()
    with pytest.raises(InvalidArgumentError, match=error):
        memory.append(message)
    assert len(memory) == 0


def test_extend_adds_nothing_when_one_message_is_invalid():
    memory = ConversationMemory("sys")
    with pytest.raises(InvalidArgumentError):
        memory.extend([{"role": "user", "content": "ok"}, {"role": "tool", "content": "no id"}])
    assert memory.get_messages() == [{"role": "system", "content": "sys"}]


def test_lenient_about_a_tool_result_without_a_known_call():
    memory = ConversationMemory()
    memory.extend([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "unknown", "content": "r"}])
    assert len(memory) == 2 and memory.rounds() == [(0, 2)]


def test_bad_settings_are_rejected():
    for kwargs in ({"trigger_chars": 0}, {"trigger_tokens": 0}, {"keep_rounds": 0}):
        with pytest.raises(InvalidArgumentError):
            ConversationMemory(**kwargs)
    with pytest.raises(InvalidArgumentError):
        ExtractiveSummarizer(max_chars=10)
    with pytest.raises(InvalidArgumentError):
        LLMSummarizer(FakeChat(), max_tokens=0)


def test_clear_keeps_the_system_prompt():
    memory = ConversationMemory("sys", trigger_chars=10, keep_rounds=1)
    for i in range(3):
        memory.extend(simple_round(i))
    memory.maybe_compress()
    memory.clear()
    assert memory.get_messages() == [{"role": "system", "content": "sys"}] and memory.summary is None


def test_saved_messages_restore_the_summary():
    memory = ConversationMemory("sys", trigger_chars=10, keep_rounds=1)
    for i in range(3):
        memory.extend(simple_round(i))
    memory.maybe_compress()
    restored = ConversationMemory()
    restored.extend(memory.get_messages())
    assert restored.get_messages() == memory.get_messages()
    assert restored.system_prompt == "sys" and restored.summary == memory.summary


# -- property: whatever the conversation and settings, the result is prompt, summary, last rounds

_text = st.text(alphabet="abc xyz。错误处理nte_0123456789.md\n", max_size=60)


@st.composite
def conversation_rounds(draw) -> list[list[dict[str, Any]]]:
    rounds = []
    for r in range(draw(st.integers(min_value=0, max_value=8))):
        messages: list[dict[str, Any]] = [{"role": "user", "content": draw(_text)}]
        for step in range(draw(st.integers(min_value=0, max_value=2))):
            ids = [f"c{r}_{step}_{k}" for k in range(draw(st.integers(min_value=1, max_value=3)))]
            calls = [call(i, draw(st.sampled_from(["search_notes", "read_note"])), q=draw(_text)) for i in ids]
            messages.append({"role": "assistant", "content": draw(st.none() | _text), "tool_calls": calls})
            messages.extend({"role": "tool", "tool_call_id": i, "content": draw(_text)} for i in ids)
        messages.append({"role": "assistant", "content": draw(_text)})
        rounds.append(messages)
    return rounds


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rounds=conversation_rounds(),
    split=st.integers(min_value=0, max_value=8),
    prompt=st.none() | _text,
    trigger=st.integers(min_value=1, max_value=1500),
    keep=st.integers(min_value=1, max_value=4),
    by_tokens=st.booleans(),
)
def test_compression_leaves_prompt_summary_and_whole_last_rounds(rounds, split, prompt, trigger, keep, by_tokens):
    tokens = max(trigger // 2, 1) if by_tokens else None
    memory = ConversationMemory(
        prompt, trigger_chars=trigger, trigger_tokens=tokens, keep_rounds=keep, counter=estimate_tokens
    )
    head = [] if prompt is None else [{"role": "system", "content": prompt}]
    kept = []  # the rounds not folded so far
    for batch in (rounds[:split], rounds[split:]):
        for r in batch:
            memory.extend(r)
        kept += batch
        before = memory.get_messages()
        event = memory.maybe_compress()
        messages = memory.get_messages()
        assert messages[: len(head)] == head
        rest = messages[len(head) :]
        if event is None:
            assert messages == before
            assert not memory.over_trigger() or len(kept) <= keep
        else:
            assert memory.total_chars() == event.after_chars and len(messages) == event.after_messages
            assert memory.total_tokens() == event.after_tokens
            assert event.before_messages == len(before) and event.rounds_folded == len(kept) - keep
            kept = kept[-keep:]
        summaries = [m for m in rest if (m["content"] or "").startswith(SUMMARY_PREFIX)]
        assert len(summaries) <= 1 and (memory.summary is None) == (not summaries)
        if summaries:
            assert rest[0] == summaries[0] and len(rest[0]["content"]) <= len(SUMMARY_PREFIX) + 1 + 1500
            rest = rest[1:]
        assert rest == [m for r in kept for m in r]
        assert [messages[start] for start, _ in memory.rounds()] == [r[0] for r in kept]
        assert_tool_results_follow_their_calls(rest)
