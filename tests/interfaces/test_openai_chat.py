"""The OpenAI-compatible chat client against a real scripted server on 127.0.0.1 (never the network)."""

from __future__ import annotations

import json
import socket
import time
import urllib.request

import pytest

from notewell import InvalidArgumentError, UnavailableError
from notewell.adapters.openai_chat import (
    OPENAI_URL,
    OpenAIChatClient,
    chat_from_environment,
    describe_chat_setup,
)
from notewell.agents.chat import ChatModel, ChatReply, ToolCall
from tests.llm_server import ScriptedLLM

HI = [{"role": "user", "content": "hi"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "search the notes",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        },
    }
]
KEY = "sk-test-SECRET-0123456789"


def client(llm: ScriptedLLM, **kwargs) -> OpenAIChatClient:
    c = OpenAIChatClient(llm.url, "test-model", **kwargs)
    c.backoff = 0.01  # keep retries fast
    return c


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- replies ------------------------------------------------------------------------------


def test_plain_text_reply():
    with ScriptedLLM(["Hello there."]) as llm:
        c = client(llm)
        assert isinstance(c, ChatModel)
        reply = c.complete(HI)
        llm.assert_exhausted()
    assert reply.content == "Hello there."
    assert reply.tool_calls == []
    assert reply.model == "test-model"
    assert set(reply.usage) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert all(isinstance(v, int) for v in reply.usage.values())
    assert reply.usage["total_tokens"] == reply.usage["prompt_tokens"] + reply.usage["completion_tokens"]
    assert reply.to_message() == {"role": "assistant", "content": "Hello there."}


def test_tool_calls_are_parsed():
    script = [
        {
            "content": None,
            "tool_calls": [
                {"name": "search", "arguments": {"q": "sqlite fts"}},
                {"id": "call_given", "name": "read", "arguments": '{"id": "n1"}'},
            ],
        }
    ]
    with ScriptedLLM(script) as llm:
        reply = client(llm).complete(HI, tools=TOOLS)
    assert reply.content is None
    assert [c.name for c in reply.tool_calls] == ["search", "read"]
    assert reply.tool_calls[1].id == "call_given"
    assert reply.tool_calls[0].id and reply.tool_calls[0].id != reply.tool_calls[1].id
    assert all(isinstance(c.arguments, str) for c in reply.tool_calls)
    assert reply.tool_calls[0].parsed() == {"q": "sqlite fts"}
    assert reply.tool_calls[1].parsed() == {"id": "n1"}
    message = reply.to_message()
    assert message["tool_calls"][0]["function"] == {"name": "search", "arguments": reply.tool_calls[0].arguments}


def test_dict_arguments_and_missing_ids_are_normalized():
    raw_calls = [
        {"type": "function", "function": {"name": "search", "arguments": {"q": "x", "limit": 3}}},
        {"type": "function", "function": {"name": "list", "arguments": None}},
    ]
    with ScriptedLLM([{"content": "", "tool_calls": raw_calls}]) as llm:
        reply = client(llm).complete(HI, tools=TOOLS)
    assert [c.id for c in reply.tool_calls] == ["call_0", "call_1"]
    assert json.loads(reply.tool_calls[0].arguments) == {"q": "x", "limit": 3}
    assert reply.tool_calls[1].arguments == "{}"


def test_a_chat_reply_can_be_scripted_and_callables_see_the_request():
    seen = []

    def echo(request):
        seen.append(request)
        return {"content": "you said " + request["messages"][-1]["content"]}

    scripted = ChatReply(content=None, tool_calls=[ToolCall("c1", "search", '{"q": "a"}')])
    with ScriptedLLM([scripted, echo]) as llm:
        c = client(llm)
        first = c.complete(HI)
        second = c.complete([*HI, first.to_message(), {"role": "tool", "tool_call_id": "c1", "content": "ok"}])
    assert first.tool_calls == [ToolCall("c1", "search", '{"q": "a"}')]
    assert second.content == "you said ok"
    assert seen[0]["messages"][1]["tool_calls"][0]["id"] == "c1"


def test_the_request_body_carries_model_messages_and_tools():
    with ScriptedLLM(["a", "b"]) as llm:
        c = client(llm)
        c.complete(HI, tools=TOOLS, temperature=0.2, max_tokens=50)
        c.complete(HI)
        with_tools, plain = llm.bodies
        paths = [r.path for r in llm.requests]
    assert paths == ["/v1/chat/completions", "/v1/chat/completions"]
    assert with_tools == {
        "model": "test-model",
        "messages": HI,
        "tools": TOOLS,
        "tool_choice": "auto",
        "temperature": 0.2,
        "max_tokens": 50,
    }
    assert plain == {"model": "test-model", "messages": HI}


def test_authorization_header_only_with_a_key():
    with ScriptedLLM(["a", "b"]) as llm:
        client(llm, api_key=KEY).complete(HI)
        client(llm).complete(HI)
        with_key, without = llm.requests
    assert with_key.header("Authorization") == f"Bearer {KEY}"
    assert with_key.header("Content-Type") == "application/json"
    assert without.header("Authorization") is None
    assert KEY not in repr(OpenAIChatClient("http://127.0.0.1:1/v1", "m", api_key=KEY))


# -- failures -----------------------------------------------------------------------------


def test_retries_a_busy_server_then_succeeds():
    with ScriptedLLM([503, 502, "finally"]) as llm:
        reply = client(llm).complete(HI)
        assert len(llm.requests) == 3
    assert reply.content == "finally"


def test_gives_up_after_the_retries():
    with ScriptedLLM([503] * 3) as llm:
        with pytest.raises(UnavailableError, match="HTTP 503 after 3 tries"):
            client(llm, retries=2).complete(HI)
        llm.assert_exhausted()


@pytest.mark.slow
def test_429_honours_retry_after():
    with ScriptedLLM([{"status": 429, "retry_after": 0}, {"status": 429, "retry_after": 0.3}, "ok"]) as llm:
        c = client(llm)
        c.backoff = 5.0  # Retry-After wins over the backoff
        started = time.monotonic()
        assert c.complete(HI).content == "ok"
        elapsed = time.monotonic() - started
    assert 0.3 <= elapsed < 3


def test_retry_after_is_bounded():
    with ScriptedLLM([{"status": 429, "retry_after": 3600}, "ok"]) as llm:
        c = client(llm)
        c.max_wait = 0.05
        started = time.monotonic()
        assert c.complete(HI).content == "ok"
    assert time.monotonic() - started < 2
    assert OpenAIChatClient.max_wait <= 10


def test_a_refused_key_never_shows_the_key():
    refusal = {"status": 401, "message": f"Incorrect API key provided: {KEY}"}
    with ScriptedLLM([refusal, 403]) as llm:
        c = client(llm, api_key=KEY)
        with pytest.raises(UnavailableError) as first:
            c.complete(HI)
        with pytest.raises(UnavailableError) as second:
            c.complete(HI)
        assert len(llm.requests) == 2  # not retried
    for error in (first.value, second.value):
        assert "API key" in str(error) and "refused" in str(error)
        assert KEY not in str(error) and KEY not in repr(error.to_dict())
    assert "HTTP 401" in str(first.value) and "HTTP 403" in str(second.value)


def test_an_error_body_message_is_shown():
    with ScriptedLLM([{"status": 404, "message": "model 'nope' not found"}]) as llm:
        with pytest.raises(UnavailableError, match="HTTP 404.*model 'nope' not found"):
            client(llm).complete(HI)


def test_an_error_object_with_status_200_is_unavailable():
    with ScriptedLLM([{"json": {"error": {"message": "context length exceeded"}}}]) as llm:
        with pytest.raises(UnavailableError, match="context length exceeded"):
            client(llm).complete(HI)


def test_unreachable_server_fails_fast():
    url = f"http://127.0.0.1:{closed_port()}/v1"
    c = OpenAIChatClient(url, "m", timeout=2, retries=3)
    started = time.monotonic()
    with pytest.raises(UnavailableError, match=r"cannot reach the chat model at http://127\.0\.0\.1:\d+/v1"):
        c.complete(HI)
    assert time.monotonic() - started < 2


@pytest.mark.slow
def test_a_slow_server_times_out():
    with ScriptedLLM([{"content": "late", "delay": 1.5}]) as llm:
        c = client(llm, timeout=0.2)
        with pytest.raises(UnavailableError, match="did not answer within"):
            c.complete(HI)


@pytest.mark.slow
@pytest.mark.parametrize(
    "item",
    [
        {"raw": "<html>502 Bad Gateway</html>"},
        {"raw": b"\xff\xfe not json"},
        {"json": [1, 2, 3]},
        {"json": {"object": "chat.completion"}},
        {"json": {"choices": []}},
        {"json": {"choices": [{"index": 0}]}},
        {"json": {"choices": [{"message": {"content": "x", "tool_calls": [{"function": {"arguments": "{}"}}]}}]}},
    ],
)
def test_garbage_answers_are_unavailable(item):
    with ScriptedLLM([item]) as llm:
        with pytest.raises(UnavailableError, match="did not answer"):
            client(llm).complete(HI)


def test_an_exhausted_script_fails_loudly():
    with ScriptedLLM(["only one"]) as llm:
        c = client(llm, retries=0)
        c.complete(HI)
        with pytest.raises(UnavailableError, match="script is exhausted"):
            c.complete(HI)


def test_the_default_answers_when_the_script_is_empty_and_models_are_listed():
    with ScriptedLLM(["first"], default=lambda request: f"n={len(request['messages'])}", model="m1") as llm:
        c = client(llm)
        assert [c.complete(HI).content for _ in range(3)] == ["first", "n=1", "n=1"]
        with urllib.request.urlopen(llm.url + "/models", timeout=5) as response:
            models = json.loads(response.read())
    assert models["data"][0]["id"] == "m1"


def test_bad_configuration_is_invalid():
    with pytest.raises(InvalidArgumentError):
        OpenAIChatClient("localhost:8080", "m")
    with pytest.raises(InvalidArgumentError):
        OpenAIChatClient("http://127.0.0.1:1/v1", "")
    with pytest.raises(InvalidArgumentError):
        OpenAIChatClient("http://127.0.0.1:1/v1", "m", timeout=0)


# -- configuration from the environment ---------------------------------------------------


def test_nothing_configured_is_none():
    assert chat_from_environment({}) is None
    assert chat_from_environment({"OPENAI_MODEL": "gpt-x", "NOTEWELL_CHAT_URL": " "}) is None
    line = describe_chat_setup()
    assert "NOTEWELL_CHAT_URL" in line and "NOTEWELL_CHAT_MODEL" in line and "\n" not in line


def test_notewell_variables_win():
    env = {
        "NOTEWELL_CHAT_URL": "http://127.0.0.1:11434/v1/",
        "NOTEWELL_CHAT_MODEL": "llama3",
        "NOTEWELL_CHAT_KEY": "local-key",
        "OPENAI_BASE_URL": "https://example.invalid/v1",
        "OPENAI_MODEL": "gpt-x",
        "OPENAI_API_KEY": KEY,
    }
    c = chat_from_environment(env)
    assert c is not None
    assert (c.url, c.model) == ("http://127.0.0.1:11434/v1/chat/completions", "llama3")
    assert c._headers()["Authorization"] == "Bearer local-key"
    without_key = chat_from_environment({**env, "NOTEWELL_CHAT_KEY": ""})
    assert without_key is not None and "Authorization" not in without_key._headers()  # OpenAI's key stays home


def test_openai_variables():
    c = chat_from_environment({"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1", "OPENAI_MODEL": "qwen"})
    assert c is not None and c.url == "http://127.0.0.1:8000/v1/chat/completions" and c.model == "qwen"
    assert "Authorization" not in c._headers()


def test_openai_key_alone_means_openai():
    c = chat_from_environment({"OPENAI_API_KEY": KEY})
    assert c is not None
    assert c.url == OPENAI_URL + "/chat/completions"
    assert c.model
    assert c._headers()["Authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(c)
    named = chat_from_environment({"OPENAI_API_KEY": KEY, "OPENAI_MODEL": "gpt-x"})
    assert named is not None and named.model == "gpt-x"


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"NOTEWELL_CHAT_URL": "http://127.0.0.1:1/v1"}, "NOTEWELL_CHAT_MODEL"),
        ({"NOTEWELL_CHAT_URL": "http://127.0.0.1:1/v1", "OPENAI_MODEL": "gpt-x"}, "NOTEWELL_CHAT_MODEL"),
        ({"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, "OPENAI_MODEL"),
        ({"NOTEWELL_CHAT_MODEL": "llama3"}, "NOTEWELL_CHAT_URL"),
    ],
)
def test_a_url_without_a_model_names_the_variable(env, variable):
    with pytest.raises(InvalidArgumentError, match=variable):
        chat_from_environment(env)


def test_an_invalid_url_in_the_environment_is_invalid():
    with pytest.raises(InvalidArgumentError):
        chat_from_environment({"NOTEWELL_CHAT_URL": "127.0.0.1:11434", "NOTEWELL_CHAT_MODEL": "m"})
