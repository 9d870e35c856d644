"""The assistant, the note tools and `notewell assistant`, against a scripted model over real HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import notewell
from notewell.adapters.openai_chat import OpenAIChatClient
from notewell.agents.assistant import ProjectAssistant, kind_for
from notewell.agents.context import ContextConfig
from notewell.agents.memory import ConversationMemory, ExtractiveSummarizer
from notewell.agents.note_tools import ToolContext, execute_tool, summarize_note, tool_schemas
from tests.interfaces.cli_harness import call
from tests.llm_server import ScriptedLLM


@pytest.fixture
def notes(store):
    blocker = store.add_note(
        "---\ntitle: Dependency conflict\nkind: blocker\ntags: [refactor]\n---\n\n"
        "pydantic 1 and 2 are both required by the business layer.\n"
    )
    pool = store.add_note(
        "---\ntitle: Connection pool sizing\nkind: conclusion\n---\n\nA pool of 32 is enough; 64 did not help.\n"
    )
    text = "---\ntitle: Go tips  # mine\ntags: [go]\nsource: book\n---\n\n# Go tips\n\nErrors are values.\n"
    go = store.add_note(text)
    return {"blocker": blocker.id, "pool": pool.id, "go": go.id, "go_text": text}


def client(llm):
    chat = OpenAIChatClient(llm.url, "scripted", api_key="test-key", retries=0)
    return chat


def test_schemas_are_openai_function_tools():
    schemas = tool_schemas(["add_tag", "summarize_note", "list_tags"])
    assert [s["function"]["name"] for s in schemas] == ["add_tag", "summarize_note", "list_tags"]
    for s in schemas:
        assert s["type"] == "function" and s["function"]["parameters"]["type"] == "object"
        assert s["function"]["description"]
    with pytest.raises(notewell.InvalidArgumentError):
        tool_schemas(["rm"])


def test_summarize_note_writes_only_the_summary(store, notes):
    with ScriptedLLM(["  Go returns errors\nas values.  "]) as llm:
        ctx = ToolContext(store, chat=client(llm), author="agent")
        result = summarize_note(ctx, notes["go"])
        sent = llm.bodies[0]["messages"]
    assert result["summary"] == "Go returns errors as values."
    assert "Errors are values." in sent[1]["content"] and "summary" in sent[0]["content"].lower()
    raw = (store.root / f"{notes['go']}.md").read_text()
    assert raw == notes["go_text"].replace("source: book\n", 'source: book\nsummary: "Go returns errors as values."\n')
    assert store.get_note(notes["go"]).extra == ["# mine", "source: book"]


def test_tools_answer_json_and_errors_as_json(store, notes):
    ctx = ToolContext(store)
    tagged = json.loads(execute_tool("add_tag", json.dumps({"note_id": notes["go"], "tags": ["backend", "go"]}), ctx))
    assert tagged["tags"] == ["go", "backend"]
    again = json.loads(execute_tool("add_tag", {"note_id": notes["go"], "tags": ["Backend"]}, ctx))
    assert again["tags"] == ["go", "backend"] and again["revision"] == tagged["revision"]  # no duplicate
    listing = json.loads(execute_tool("list_tags", "{}", ctx))
    assert {"tag": "backend", "count": 1} in listing["tags"]
    assert any(n["id"] == notes["go"] and n["tags"] == ["go", "backend"] for n in listing["notes"])
    found = json.loads(execute_tool("search_notes", {"query": "pool"}, ctx))["results"]
    assert found[0]["id"] == notes["pool"]
    for name, args, code in [
        ("read_note", {"note_id": "nte_0000000000"}, "not_found"),
        ("read_note", "{not json", "invalid_argument"),
        ("read_note", {"id": "x"}, "invalid_argument"),
        ("rm_rf", {}, "invalid_argument"),
        ("summarize_note", {"note_id": notes["go"]}, "unavailable"),  # no chat model in this context
    ]:
        assert json.loads(execute_tool(name, args, ctx))["error"]["code"] == code, name
    read_only = ToolContext(store, allow_writes=False)
    assert "switched off" in execute_tool("add_tag", {"note_id": notes["go"], "tags": ["x"]}, read_only)


def test_a_turn_end_to_end(store, notes):
    def answer(request):
        tool_results = [m for m in request["messages"] if m["role"] == "tool"]
        assert len(tool_results) == 1 and json.loads(tool_results[0]["content"])["tags"] == ["refactor", "urgent"]
        return f"Tagged it. Fix the conflict first [{notes['blocker']}]; pool stays at 32 [{notes['pool']}]."

    script = [
        {"tool_calls": [{"name": "add_tag", "arguments": {"note_id": notes["blocker"], "tags": ["urgent"]}}]},
        answer,
    ]
    with ScriptedLLM(script) as llm:
        memory = ConversationMemory(summarizer=ExtractiveSummarizer())
        assistant = ProjectAssistant(store, client(llm), project="shop", memory=memory)
        turn = assistant.ask("Tag the dependency problem as urgent, and how big should the pool be?", record=True)
        first = llm.bodies[0]
    system = first["messages"][0]["content"]
    assert f'[blocker {notes["blocker"]}] "Dependency conflict"' in system  # retrieved and cited
    assert f'[conclusion {notes["pool"]}] "Connection pool sizing"' in system
    assert "shop project" in system and first["messages"][-1]["role"] == "user"
    assert {t["function"]["name"] for t in first["tools"]} >= {"add_tag", "summarize_note", "list_tags"}
    assert turn.rounds == 2 and turn.tool_calls[0]["name"] == "add_tag"
    assert turn.cited == [notes["blocker"], notes["pool"]]
    assert store.get_note(notes["blocker"]).tags == ["refactor", "urgent"]
    recorded = store.get_note(turn.recorded)
    assert recorded.kind == "blocker" and recorded.builds_on == [notes["blocker"], notes["pool"]]
    assert "## Answer" in recorded.body and recorded.tags == ["shop", "assistant"]
    roles = [m["role"] for m in memory.get_messages()]
    assert roles == ["user", "assistant", "tool", "assistant"]


def test_memory_compresses_across_turns_and_the_summary_reaches_the_prompt(store, notes):
    with ScriptedLLM(default=lambda request: "Noted. " + "More detail. " * 40) as llm:
        memory = ConversationMemory(summarizer=ExtractiveSummarizer(), trigger_chars=1500, keep_rounds=1)
        assistant = ProjectAssistant(store, client(llm), memory=memory, context=ContextConfig(max_tokens=3000))
        events = [assistant.ask(f"question number {i} about the pool").compression for i in range(4)]
        last_system = llm.bodies[-1]["messages"][0]["content"]
    assert any(events) and events[0] is None
    assert "[Conversation summary]" in last_system and "question number 0" in last_system
    assert memory.get_messages()[0]["role"] == "system"


def test_a_runaway_tool_loop_ends_with_an_answer(store, notes):
    loop = {"tool_calls": [{"name": "list_tags", "arguments": {}}]}
    with ScriptedLLM([loop, loop, "Done looking."]) as llm:
        assistant = ProjectAssistant(store, client(llm), max_tool_rounds=2)
        turn = assistant.ask("what topics are there?")
        assert "tools" not in llm.bodies[-1]  # the last call offers no tools: it must answer
    assert turn.answer == "Done looking." and turn.rounds == 3


def test_kind_for_questions():
    assert kind_for("I hit a problem with versions") == "blocker"
    assert kind_for("依赖版本冲突的问题怎么解决？") == "blocker"
    assert kind_for("Next plan: refactor the business layer") == "action"
    assert kind_for("We reached 85% coverage.") == "conclusion"


def _cli(args, env_extra, cwd, input=None):
    """`notewell ARGS` in the test process (see cli_harness), with no chat model but *env_extra*'s."""
    unset = [k for k in os.environ if k.startswith(("OPENAI_", "NOTEWELL_CHAT"))]
    return call(args, input=input, env=env_extra, unset=unset, cwd=cwd, text=True)


def test_cli_without_a_model_says_so(tmp_path):
    done = _cli(["assistant", "--store", str(tmp_path / "notes"), "hello"], {}, tmp_path)
    assert done.returncode == 9 and "no chat model is configured" in done.stderr and "NOTEWELL_CHAT_URL" in done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.slow
def test_cli_answers_records_and_reads_stdin(store, notes, tmp_path):
    with ScriptedLLM(["The blocker comes first.", "Second answer.", "Third."]) as llm:
        env = {"NOTEWELL_CHAT_URL": llm.url, "NOTEWELL_CHAT_MODEL": "scripted"}
        once = _cli(
            ["assistant", "--store", str(store.root), "--json", "--record", "what is blocking us?"], env, tmp_path
        )
        assert once.returncode == 0, once.stderr
        out = json.loads(once.stdout)
        assert out["answer"] == "The blocker comes first." and notes["blocker"] in out["context"]["notes"]
        assert store.get_note(out["recorded"]).kind == "blocker"
        piped = _cli(["assistant", "--store", str(store.root)], env, tmp_path, input="first?\n\nsecond?\nquit\n")
        assert piped.returncode == 0, piped.stderr
        assert piped.stdout.splitlines() == ["Second answer.", "Third."]
        assert "notes in context" in piped.stderr


def test_the_default_memory_summarizes_with_the_model_over_http(store, notes):
    summaries = []

    def answer(request):
        if (
            "Previous summary" in request["messages"][-1]["content"]
            or "New part of the conversation" in (request["messages"][-1]["content"])
        ):
            summaries.append(request["messages"][-1]["content"])
            return "The user asked about the pool (32 is enough) and the blocker."
        return "Answer. " + "Detail. " * 60

    with ScriptedLLM(default=answer) as llm:
        assistant = ProjectAssistant(store, client(llm))  # ConversationMemory with LLMSummarizer
        assistant.memory.trigger_chars = 1200
        events = [assistant.ask(f"question {i} about the pool?").compression for i in range(5)]
    event = next(e for e in events if e)
    assert event.summarizer == "llm:scripted" and event.fallback_reason is None
    assert "User: question 0 about the pool?" in summaries[0]
    assert assistant.memory.get_messages()[0]["content"].endswith("32 is enough) and the blocker.")


@pytest.mark.slow
def test_the_example_runs_the_chapters_scenario(tmp_path):
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "project_assistant.py")
    with ScriptedLLM(default=lambda request: "Use a virtual environment and pin versions.") as llm:
        env = {"NOTEWELL_CHAT_URL": llm.url, "NOTEWELL_CHAT_MODEL": "scripted"}
        done = _cli_script(example, [str(tmp_path / "notes")], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("assistant: Use a virtual environment") == 3
    summary = json.loads(done.stdout[done.stdout.index("\n{") :])
    assert {k["kind"]: k["count"] for k in summary["by_kind"]} == {"action": 1, "blocker": 1}
    missing = _cli_script(example, [], {}, tmp_path)
    assert missing.returncode == 2 and "NOTEWELL_CHAT_URL" in missing.stderr


# Real process: the example is a script a user runs (its own __main__ and exit status), not the CLI.
def _cli_script(path, args, env_extra, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "NOTEWELL_CHAT"))}
    env.update(env_extra)
    return subprocess.run([sys.executable, path, *args], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.mark.slow
def test_review_fixes_in_the_turn(store, notes):
    # A model error leaves no half exchange in memory.
    with ScriptedLLM([400]) as llm:
        memory = ConversationMemory(summarizer=ExtractiveSummarizer())
        assistant = ProjectAssistant(store, client(llm), memory=memory)
        with pytest.raises(notewell.UnavailableError):
            assistant.ask("anything?")
        assert memory.get_messages() == []
    # Repeated tool-call ids are made unique in the turn; a huge tool result is clipped to the budget.
    big = store.add_note(
        "---\ntitle: Huge\n---\n\n" + "\n".join(f"line {i} of a very long runbook" for i in range(3000))
    )
    same = {"id": "call_0", "name": "read_note", "arguments": {"note_id": big.id}}
    with ScriptedLLM([{"tool_calls": [same, dict(same)]}, "ok"]) as llm:
        assistant = ProjectAssistant(store, client(llm), context=ContextConfig(max_tokens=3000, reserve_tokens=500))
        turn = assistant.ask("read the runbook")
        sent = llm.bodies[-1]["messages"]
        ids = [c["id"] for m in sent if m.get("tool_calls") for c in m["tool_calls"]]
        results = [m for m in sent if m["role"] == "tool"]
        assert len(set(ids)) == 2 and [m["tool_call_id"] for m in results] == ids
        assert "clipped" in results[-1]["content"]
        assert assistant.builder.tokens_of(sent, None) <= 3000 - 500
    assert turn.answer == "ok"
    # Tool calls on the last allowed round are not stored without their results.
    loop = {"tool_calls": [{"name": "list_tags", "arguments": {}}]}
    with ScriptedLLM([loop, loop]) as llm:
        memory = ConversationMemory(summarizer=ExtractiveSummarizer())
        turn = ProjectAssistant(store, client(llm), memory=memory, max_tool_rounds=1).ask("topics?")
    assert "kept asking for tools" in turn.answer
    last = memory.get_messages()[-1]
    assert last["role"] == "assistant" and not last.get("tool_calls")


def test_a_broken_summarizer_falls_back(store, notes):
    class Broken:
        name = "broken"

        def summarize(self, messages, previous):
            raise ValueError("boom")

    with ScriptedLLM(default=lambda request: "An answer. " * 40) as llm:
        memory = ConversationMemory(summarizer=Broken(), trigger_chars=800, keep_rounds=1)
        assistant = ProjectAssistant(store, client(llm), memory=memory)
        turns = [assistant.ask(f"question {i}?", record=True) for i in range(3)]
    event = next(t.compression for t in turns if t.compression)
    assert event.summarizer == "extractive" and "boom" in event.fallback_reason
    assert all(t.recorded for t in turns)


@pytest.mark.slow
def test_cli_keeps_going_after_a_failed_turn(store, notes, tmp_path):
    with ScriptedLLM(["first answer", 400, "third answer"]) as llm:
        env = {"NOTEWELL_CHAT_URL": llm.url, "NOTEWELL_CHAT_MODEL": "scripted"}
        done = _cli(["assistant", "--store", str(store.root)], env, tmp_path, input="one?\ntwo?\nthree?\n")
    assert done.stdout.splitlines() == ["first answer", "third answer"]
    assert done.returncode != 0 and "1 question(s) could not be answered" in done.stderr
    bad = _cli(
        ["assistant", "--store", str(store.root), "--record-kind", "bad kind!", "q"],
        {"NOTEWELL_CHAT_URL": "http://127.0.0.1:9/v1", "NOTEWELL_CHAT_MODEL": "m"},
        tmp_path,
    )
    assert bad.returncode == 2 and "--record-kind" in bad.stderr


@pytest.mark.slow
def test_the_tutorials_tool_context_takes_an_openai_client_and_a_model_name(store, notes, tmp_path, monkeypatch):
    # Day 5: tool_ctx = ToolContext(client=client, chat_model=CHAT_MODEL); the real OpenAI SDK here,
    # against the scripted server. Without a store, the CLI's own is opened ($NOTEWELL_STORE).
    openai = pytest.importorskip("openai")
    with ScriptedLLM(["Go returns errors as values."]) as llm:
        sdk = openai.OpenAI(base_url=llm.url, api_key="test-key", max_retries=0)
        ctx = ToolContext(store, client=sdk, chat_model="scripted")
        got = json.loads(execute_tool("summarize_note", {"note_id": notes["go"]}, ctx))
        assert llm.bodies[0]["model"] == "scripted"
    assert got["summary"] == "Go returns errors as values."
    assert store.get_note(notes["go"]).summary == "Go returns errors as values."
    monkeypatch.setenv("NOTEWELL_STORE", str(tmp_path / "own"))
    monkeypatch.delenv("NOTEWELL_DATABASE", raising=False)
    own = ToolContext(client=sdk, chat_model="scripted")
    try:
        assert own.store.root == (tmp_path / "own").resolve()
        assert json.loads(execute_tool("list_tags", {}, own)) is not None
    finally:
        own.close()
    with pytest.raises(notewell.InvalidArgumentError, match="chat.completions.create"):
        ToolContext(store, client=object(), chat_model="m")
    with pytest.raises(notewell.InvalidArgumentError, match="chat_model"):
        ToolContext(store, client=sdk)


def test_the_tutorials_tools_name_notes_by_file_name(store, notes):
    # summarize_note({"filename": "go-tips.md"}) and add_tag on rag-notes.md, as Day 5 calls them.
    (store.root / "rag-notes.md").write_text("# RAG notes\n\nchunk, embed, retrieve\n")
    store.refresh()
    ctx = ToolContext(store)
    tagged = json.loads(execute_tool("add_tag", {"filename": "rag-notes.md", "tags": ["rag", "embedding"]}, ctx))
    assert tagged["tags"] == ["rag", "embedding"]
    read = json.loads(execute_tool("read_note", {"note_id": "rag-notes.md"}, ctx))
    assert read["title"] == "RAG notes" and read["tags"] == ["rag", "embedding"]
    with ScriptedLLM(["Chunk, embed and retrieve."]) as llm:
        summarized = json.loads(
            execute_tool("summarize_note", {"filename": "rag-notes.md"}, ToolContext(store, chat=client(llm)))
        )
    assert summarized["summary"] == "Chunk, embed and retrieve."
    both = json.loads(execute_tool("read_note", {"note_id": notes["go"], "filename": "rag-notes.md"}, ctx))
    assert both["error"]["code"] == "invalid_argument" and "once" in both["error"]["message"]
    gone = json.loads(execute_tool("read_note", {"filename": "nope.md"}, ctx))
    assert gone["error"]["code"] == "not_found"


def test_a_clients_errors_reach_the_model_without_its_key(store, notes):
    from notewell.agents.chat import ClientChat

    class Failing:
        api_key = "sk-live-0123456789abcdef"

        class chat:  # noqa: N801 - the OpenAI client's shape: client.chat.completions.create
            class completions:  # noqa: N801
                @staticmethod
                def create(**body):
                    raise RuntimeError("401 invalid api key sk-live-0123456789abcdef for this project")

    class Erring(Failing):
        class chat:  # noqa: N801
            class completions:  # noqa: N801
                @staticmethod
                def create(**body):
                    return {"error": {"message": "model overloaded"}}

    with pytest.raises(notewell.UnavailableError) as failed:
        ClientChat(Failing(), "m").complete([{"role": "user", "content": "x"}])
    assert "sk-live" not in str(failed.value) and "***" in str(failed.value)
    with pytest.raises(notewell.UnavailableError, match="answered an error: model overloaded"):
        ClientChat(Erring(), "m").complete([{"role": "user", "content": "x"}])
    with pytest.raises(notewell.InvalidArgumentError, match="give client= too"):
        ToolContext(store, chat_model="m")


@pytest.mark.slow
def test_a_conversation_makes_the_full_check_its_first_quick_look_left(tmp_path, monkeypatch):
    import time

    from notewell.backends.sqlite import quick_check
    from notewell.model.ids import derived_note_id

    root = tmp_path / "notes"
    root.mkdir()
    for name in ("keep", "other"):
        (root / f"{name}.md").write_text(f"# {name}\n\nalpha words", encoding="utf-8")
    notewell.Store(root, watch=False, embedder=None).close()
    past = time.time() - 60
    os.utime(root, (past, past))
    with notewell.Store(root, watch=False, embedder=None) as first:  # its full check records the mtimes
        assert first.search_notes("alpha", limit=5)
    (root / "hand.md").write_text("# by hand\n\nzebra crossing", encoding="utf-8")
    monkeypatch.setattr(quick_check, "LIST_LIMIT", 0)  # the root is too big to list: left to the full check
    from notewell.interfaces.cli import watcher

    monkeypatch.setattr(watcher, "_spawn_watcher", lambda root: False)  # no watcher after the command
    with ScriptedLLM(["first answer", "second answer"]) as llm:
        env = {"NOTEWELL_CHAT_URL": llm.url, "NOTEWELL_CHAT_MODEL": "scripted", "NOTEWELL_AUTOWATCH": "2"}
        done = _cli(["assistant", "--store", str(root), "--json"], env, tmp_path, input="zebra?\nzebra?\n")
    assert done.returncode == 0, done.stderr
    first, second = (json.loads(line)["context"]["notes"] for line in done.stdout.splitlines())
    assert derived_note_id("hand.md") not in first and derived_note_id("hand.md") in second
