"""`notewell hook EVENT` as each runtime calls it: its JSON on stdin, the documented answer on stdout.

The shapes checked here are the runtimes' documented ones (see interfaces/runtimes.py):
Claude Code and Codex read ``hookSpecificOutput.additionalContext`` on SessionStart; Codex's Stop
must answer JSON and reaches the model only through ``decision: block``; Gemini CLI reads JSON
only; Cursor reads ``additional_context`` on sessionStart and ``followup_message`` on stop.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime, timedelta

import pytest

from notewell.interfaces.runtimes.hook_sessions import SessionState
from notewell.model.token_count import default_counter
from tests.interfaces.cli_harness import call

ALL_RUNTIMES = ("claude-code", "codex", "gemini", "cursor", "plain")


@pytest.fixture
def state(tmp_path, monkeypatch):
    folder = tmp_path / "state"
    monkeypatch.setenv("NOTEWELL_STATE_DIR", str(folder))
    return folder


@pytest.fixture
def store(tmp_path):
    """A store with a digest, an open blocker, an action and recent notes on project shop, and
    one note on another project."""
    from notewell import Store

    root = tmp_path / "notes"
    with Store(root, watch=False, embedder=None) as s:
        run = s.start_attempt("shop", author="tester").id
        other = s.start_attempt("bank", author="tester").id
        ids = {}
        for key, kind, title, body in (
            ("pool", "conclusion", "Connection pool sizing", "A pool of 32 is enough; 64 did not help."),
            ("blocker", "blocker", "Dependency conflict", "pydantic 1 and 2 are both required."),
            ("action", "action", "Refactor the order service", "Start with the tests."),
            ("digest", "digest", "Where the shop stands", "Pool settled; the dependency conflict blocks the refactor."),
        ):
            ids[key] = s.add_note(f"---\ntitle: {title}\nkind: {kind}\n---\n\n{body}\n", attempt=run).id
        ids["bank"] = s.add_note(
            "---\ntitle: Ledger rounding\nkind: finding\n---\n\nRound half even.\n", attempt=other
        ).id
    return root, ids


def hook(store_root, event, payload=None, *args, runtime="claude-code", cwd=None):
    data = b"" if payload is None else (payload if isinstance(payload, bytes) else json.dumps(payload).encode())
    argv = ["--store", str(store_root), "hook", event, "--runtime", runtime, *args]
    return call(argv, input=data, cwd=cwd, unset=("NOTEWELL_STORE", "NOTEWELL_PROJECT", "AGENT_CONTEXT_ROOT"))


def start_payload(runtime, session="sess-1", source="startup"):
    if runtime == "cursor":
        return {"conversation_id": session, "session_id": session, "hook_event_name": "sessionStart"}
    return {"session_id": session, "hook_event_name": "SessionStart", "source": source, "cwd": "/tmp"}


def context_of(runtime, out):
    """The text the runtime gives the model, read the way its documentation says it reads it."""
    if runtime == "plain":
        return out
    data = json.loads(out)
    if runtime == "cursor":
        return data.get("additional_context", "")
    spec = data.get("hookSpecificOutput") or {}
    return spec.get("additionalContext", "")


@pytest.mark.parametrize("runtime", ALL_RUNTIMES)
def test_session_start_gives_the_briefing_in_each_runtimes_format(store, state, runtime):
    root, ids = store
    done = hook(root, "session-start", start_payload(runtime), "--project", "shop", runtime=runtime)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    if runtime != "plain":
        data = json.loads(out)  # JSON only: Gemini and Cursor show anything else to the user
        if runtime in ("claude-code", "codex", "gemini"):
            assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
            assert set(data) == {"hookSpecificOutput"}
        else:
            assert set(data) == {"additional_context"}
    text = context_of(runtime, out)
    assert text.index(ids["digest"]) < text.index(ids["blocker"]) < text.index(ids["action"])
    assert ids["pool"] in text and ids["bank"] not in text  # the project's notes only
    assert "[digest " in text and "add_note" in text
    assert default_counter()(text) <= 1500 and len(text) < 10_000


@pytest.mark.slow
def test_session_start_leaves_a_superseded_note_out(store, state):
    from notewell import Store

    root, ids = store
    with Store(root, watch=False, embedder=None) as s:
        run = s.start_attempt("shop", author="tester").id
        text = f"---\ntitle: Pool sizing, measured\nsupersedes: [{ids['pool']}]\n---\n\n32 is enough.\n"
        fixed = s.add_note(text, attempt=run).id
    briefed = context_of("claude-code", hook(root, "session-start", {}, "--project", "shop").stdout.decode())
    assert fixed in briefed and ids["pool"] not in briefed and ids["blocker"] in briefed


@pytest.mark.slow
def test_the_budget_bounds_the_briefing_and_claude_codes_character_cap_holds(tmp_path, state):
    from notewell import Store

    root = tmp_path / "notes"
    with Store(root, watch=False, embedder=None) as s:
        for n in range(30):
            body = "\n".join(f"Line {i}: deploy step {i} of note {n} needs the cache warmed first." for i in range(40))
            s.add_note(f"---\ntitle: Deploy note {n}\nkind: finding\n---\n\n{body}\n")
    for budget in ("200", "800"):
        text = context_of("claude-code", hook(root, "session-start", {}, "--budget", budget).stdout.decode())
        assert default_counter()(text) <= int(budget)
    big = context_of("claude-code", hook(root, "session-start", {}, "--budget", "20000", "--recent", "30").stdout)
    assert len(big) <= 9500  # Claude Code replaces longer hook text with a file and a preview
    plain = hook(root, "session-start", {}, "--budget", "20000", "--recent", "30", runtime="plain").stdout
    assert len(plain) > 9500  # a person reading it gets the whole budget


def test_an_empty_project_says_how_to_begin_and_a_broken_store_is_one_line_exit_1(store, state, tmp_path):
    root, _ = store
    text = context_of("claude-code", hook(root, "session-start", {}, "--project", "new-thing").stdout.decode())
    assert text.startswith("notewell: no notes yet on project new-thing") and "add_note" in text
    assert "(projects in this store: " in text and "shop" in text and "bank" in text  # a name mistyped?
    (tmp_path / "a-file").write_text("not a folder")
    broken = hook(tmp_path / "a-file", "session-start", {})
    assert broken.returncode == 1  # never 2: runtimes read 2 as "block"
    assert broken.stdout == b"" and len(broken.stderr.decode().strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("runtime", ALL_RUNTIMES)
def test_a_store_not_made_yet_is_no_failure_and_no_hook_makes_it(state, tmp_path, runtime):
    """A runtime runs the hooks in whatever folder it was started in: a store that is not there
    is a store with no notes (how to begin, exit 0), never a hook error, and no hook makes it."""
    nowhere = tmp_path / "nowhere" / "notes"
    session = start_payload(runtime, "first")
    begun = hook(nowhere, "session-start", session, runtime=runtime, cwd=tmp_path)
    assert begun.returncode == 0 and begun.stderr == b"", begun.stderr
    assert context_of(runtime, begun.stdout.decode()).startswith("notewell: no notes yet")
    for event in ("post-compact", "pre-compact", "prompt", "stop"):
        done = hook(nowhere, event, {**session, "hook_event_name": ""}, runtime=runtime, cwd=tmp_path)
        assert done.returncode == 0 and done.stderr == b"", (event, done.stderr)
    # Half an hour on, with no transcript to read: no store, so no note written, so a reminder.
    assert "written no note" in later(nowhere, "stop", {**session, "hook_event_name": "Stop"}, runtime=runtime,
                                      minutes=31)  # fmt: skip
    assert not (tmp_path / "nowhere").exists() and not (tmp_path / "notes").exists()


@pytest.mark.slow
def test_bad_input_on_stdin_still_gets_an_answer(store, state):
    root, ids = store
    for junk in (b"not json", b"[1, 2]", b'{"session_id": 5}', b"\xff\xfe", b'{"session_id": "' + b"x" * 5000 + b'"}'):
        done = hook(root, "session-start", junk)
        assert done.returncode == 0 and ids["digest"] in context_of("claude-code", done.stdout.decode())
        assert hook(root, "stop", junk).stdout == b""
    assert not state.exists() or not any(state.rglob("*.json"))  # no usable session id: nothing kept


def test_a_session_id_never_becomes_a_path(store, state, tmp_path):
    root, _ = store
    hook(root, "session-start", {"session_id": "../../../escape", "source": "startup"})
    made = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix == ".json"]
    assert made and all(p.parent == state / "hook-sessions" for p in made)
    assert not (tmp_path / "escape").exists()


def later(store_root, event, payload, *args, runtime="claude-code", minutes=0.0):
    """The hook's answer as it would be *minutes* from now (the store's notes stay as they are)."""
    from notewell.interfaces.cli.parser import build_parser
    from notewell.interfaces.runtimes.hooks import run_hook

    parsed = build_parser().parse_args(["--store", str(store_root), "hook", event, "--runtime", runtime, *args])
    parsed.database = None
    return run_hook(parsed, payload, now=datetime.now(UTC) + timedelta(minutes=minutes))


@pytest.mark.slow
def test_stop_reminds_once_a_long_session_that_wrote_nothing(store, state):
    root, _ = store
    payload = {"session_id": "long", "hook_event_name": "Stop", "stop_hook_active": False}
    assert hook(root, "session-start", {"session_id": "long", "source": "startup"}).returncode == 0
    assert hook(root, "stop", payload).stdout == b""  # just started: nothing to say
    assert later(root, "stop", payload, minutes=15) == ""  # under --after (20 minutes)
    out = json.loads(later(root, "stop", payload, minutes=45))
    assert out["hookSpecificOutput"]["hookEventName"] == "Stop"
    reminder = out["hookSpecificOutput"]["additionalContext"]
    assert "45 minutes" in reminder and "written no note" in reminder and "once" in reminder
    assert "decision" not in out  # feedback, not a refusal to stop
    assert later(root, "stop", payload, minutes=90) == ""  # once per session
    # a resume is the same session (reminded already); a new session starts afresh
    hook(root, "session-start", {"session_id": "long", "source": "resume"})
    assert later(root, "stop", payload, minutes=120) == ""
    hook(root, "session-start", {"session_id": "other", "source": "startup"})
    looping = {**payload, "session_id": "other", "stop_hook_active": True}  # already continuing from a stop hook
    assert later(root, "stop", looping, minutes=45) == ""
    assert "written no note" in later(root, "stop", {**looping, "stop_hook_active": False}, minutes=45)
    assert later(root, "stop", payload, "--after", "60", minutes=45, runtime="plain") == ""  # no session-start
    hook(root, "session-start", {"session_id": "short", "source": "startup"})
    assert later(root, "stop", {"session_id": "short"}, "--after", "60", minutes=45) == ""


def test_stop_stays_quiet_when_a_note_was_written_since_the_session_began(store, state):
    from notewell import Store

    root, _ = store
    hook(root, "session-start", {"session_id": "wrote", "source": "startup"})
    with Store(root, watch=False, embedder=None) as s:
        s.add_note("---\ntitle: Learned\nkind: finding\n---\n\nThe cache must be warm.\n")
    assert later(root, "stop", {"session_id": "wrote"}, minutes=60) == ""
    assert not SessionState("claude-code", "wrote").get("nudged")


@pytest.mark.slow
def test_claude_codes_transcript_tells_whose_note_it_was(store, state, tmp_path):
    from notewell import Store

    root, _ = store
    transcript = tmp_path / "session.jsonl"
    transcript.write_text('{"type":"user","message":{"role":"user","content":"go"}}\n')
    payload = {"session_id": "t", "transcript_path": str(transcript)}
    hook(root, "session-start", {**payload, "source": "startup"})
    with Store(root, watch=False, embedder=None) as s:  # another agent's note: not this session's
        s.add_note("---\ntitle: Someone else\nkind: finding\n---\n\nNot from this session.\n")
    assert "written no note" in later(root, "stop", payload, minutes=40)
    hook(root, "session-start", {**payload, "session_id": "t2", "source": "startup"})
    big = "x" * (3 << 20)  # the tool's name past the first piece read, and cut across two pieces
    transcript.write_text(
        big[: (1 << 20) - 10] + '{"type":"tool_use","name":"mcp__notewell__add_note","input":{}}\n' + big
    )
    assert later(root, "stop", {**payload, "session_id": "t2"}, minutes=40) == ""
    assert SessionState("claude-code", "t2").get("wrote") is True  # this session's own write: never asked again


def test_cursor_stop_after_the_person_aborted_says_nothing(store, state):
    root, _ = store
    payload = {"conversation_id": "ab", "hook_event_name": "stop", "status": "aborted", "loop_count": 0}
    hook(root, "session-start", start_payload("cursor", "ab"), runtime="cursor")
    assert json.loads(later(root, "stop", payload, runtime="cursor", minutes=30)) == {}
    assert "followup_message" in json.loads(
        later(root, "stop", {**payload, "status": "completed"}, runtime="cursor", minutes=31)
    )


@pytest.mark.slow
def test_hook_mistakes_exit_1_never_2(store, state):
    root, _ = store
    for args in (
        ["session-start", "--budget", "x"],
        ["session-start", "--nope"],
        ["nope"],
        ["session-start", "--budget", "0"],
    ):
        done = call(["--store", str(root), "hook", *args], input=b"{}", unset=("NOTEWELL_STORE",))
        assert done.returncode == 1, (args, done.returncode, done.stderr)
        assert len(done.stderr.decode().strip().splitlines()) == 1
    bad_env = call(["--store", str(root), "hook", "stop"], input=b"{}", env={"NOTEWELL_AUTOWATCH": "sometimes"})
    assert bad_env.returncode == 1


def test_an_unwritable_state_folder_costs_only_the_reminder(store, tmp_path, monkeypatch):
    root, ids = store
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the state folder would be")
    monkeypatch.setenv("NOTEWELL_STATE_DIR", str(blocked))
    done = hook(root, "session-start", {"session_id": "s", "source": "startup"})
    assert done.returncode == 0 and ids["digest"] in context_of("claude-code", done.stdout.decode())


def test_a_long_notebook_after_compaction_stays_under_claude_codes_cap(store, state, tmp_path):
    root, _ = store
    work = tmp_path / "work"
    work.mkdir()
    _notebook(work)
    notebook = work / ".agent-context" / "fix" / "notebook.md"
    facts = "".join(
        f"- [F{i:03d}] fact number {i} about the deploy | source: E0001 | verified\n" for i in range(1, 400)
    )
    revision = next((work / ".agent-context" / "fix").rglob("0001.md"))
    revision.write_text(notebook.read_text().replace("## Facts\n", "## Facts\n" + facts))
    payload = {"session_id": "big", "source": "compact", "cwd": str(work)}
    text = context_of("claude-code", hook(root, "post-compact", payload).stdout.decode())
    assert len(text) <= 9500 and text.endswith("`notewell notebook show`]") and "F001" in text
    plain = hook(root, "post-compact", payload, runtime="plain").stdout.decode()
    assert "F399" in plain  # a person gets it whole


def test_stop_counts_only_the_projects_notes_with_a_project(store, state):
    from notewell import Store

    root, _ = store
    hook(root, "session-start", {"session_id": "p", "source": "startup"}, "--project", "shop")
    with Store(root, watch=False, embedder=None) as s:
        s.add_note("---\ntitle: Unrelated\nkind: finding\n---\n\nNot on the project.\n")
    out = later(root, "stop", {"session_id": "p"}, "--project", "shop", minutes=60)
    assert "on project shop" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


@pytest.mark.slow
def test_codex_stop_answers_json_and_reaches_the_model_by_its_continuation(store, state):
    root, _ = store
    hook(root, "session-start", {"session_id": "c", "source": "startup"}, runtime="codex")
    assert hook(root, "stop", {"session_id": "c"}, runtime="codex").stdout.strip() == b"{}"
    out = json.loads(later(root, "stop", {"session_id": "c", "hook_event_name": "Stop"}, runtime="codex", minutes=30))
    assert out["decision"] == "block" and "written no note" in out["reason"]
    assert json.loads(later(root, "stop", {"session_id": "c"}, runtime="codex", minutes=40)) == {}


def test_cursor_stop_is_a_followup_message(store, state):
    root, _ = store
    payload = {"conversation_id": "k", "hook_event_name": "stop", "status": "completed", "loop_count": 0}
    hook(root, "session-start", start_payload("cursor", "k"), runtime="cursor")
    assert json.loads(hook(root, "stop", payload, runtime="cursor").stdout) == {}
    out = json.loads(later(root, "stop", payload, runtime="cursor", minutes=30))
    assert set(out) == {"followup_message"} and "written no note" in out["followup_message"]


@pytest.mark.slow
def test_gemini_tells_the_user_at_once_and_the_model_on_the_next_prompt(store, state):
    root, _ = store
    hook(root, "session-start", {"session_id": "g", "source": "startup"}, runtime="gemini")
    stop = json.loads(
        later(root, "stop", {"session_id": "g", "hook_event_name": "AfterAgent"}, runtime="gemini", minutes=30)
    )
    assert set(stop) == {"systemMessage"} and "written no note" in stop["systemMessage"]  # no "deny": no retry
    assert stop["systemMessage"].startswith("notewell: this session")
    prompt = {"session_id": "g", "hook_event_name": "BeforeAgent", "prompt": "go on"}
    nxt = json.loads(hook(root, "prompt", prompt, runtime="gemini").stdout)
    assert nxt["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert "written no note" in nxt["hookSpecificOutput"]["additionalContext"]
    assert json.loads(hook(root, "prompt", prompt, runtime="gemini").stdout) == {}  # once


def _notebook(folder):
    done = call(["notebook", "init", "fix", "--goal", "the deploy stops timing out"], cwd=folder,
                unset=("AGENT_CONTEXT_ROOT", "NOTEWELL_NOTEBOOK"))  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_after_a_compaction_the_notebook_comes_back(store, state, tmp_path):
    root, ids = store
    work = tmp_path / "work"
    work.mkdir()
    _notebook(work)
    payload = {"session_id": "n", "hook_event_name": "SessionStart", "source": "compact", "cwd": str(work)}
    for event in ("post-compact", "session-start"):  # Claude Code and Codex: SessionStart with source compact
        text = context_of("claude-code", hook(root, event, payload).stdout.decode())
        assert "the working notebook" in text and "the deploy stops timing out" in text
    # without a notebook, the briefing the compaction took away
    bare = {**payload, "cwd": str(tmp_path)}
    assert ids["digest"] in context_of("claude-code", hook(root, "post-compact", bare).stdout.decode())


@pytest.mark.slow
def test_gemini_answers_a_compression_on_the_next_prompt(store, state, tmp_path):
    root, _ = store
    work = tmp_path / "work"
    work.mkdir()
    _notebook(work)
    base = {"session_id": "gc", "cwd": str(work)}
    prompt = {**base, "hook_event_name": "BeforeAgent", "prompt": "next"}
    assert json.loads(hook(root, "prompt", prompt, runtime="gemini").stdout) == {}  # nothing waiting
    pre = hook(root, "pre-compact", {**base, "hook_event_name": "PreCompress", "trigger": "auto"}, runtime="gemini")
    assert json.loads(pre.stdout) == {}
    text = json.loads(hook(root, "prompt", prompt, runtime="gemini").stdout)["hookSpecificOutput"]["additionalContext"]
    assert "the deploy stops timing out" in text
    assert json.loads(hook(root, "prompt", prompt, runtime="gemini").stdout) == {}


def test_input_nested_past_the_interpreters_limit_still_gets_an_answer(store, state):
    root, ids = store
    for deep in (b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 100_000 + b"1" + b"}" * 100_000):
        done = hook(root, "session-start", deep)
        assert done.returncode == 0 and ids["digest"] in context_of("claude-code", done.stdout.decode())


@pytest.mark.slow
def test_a_transcript_that_is_a_fifo_holds_no_hook_up(store, state, tmp_path):
    root, _ = store
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)
    payload = {"session_id": "s-fifo", "transcript_path": str(fifo), "hook_event_name": "Stop"}
    hook(root, "session-start", {"session_id": "s-fifo", "source": "startup"})
    answered: list[str] = []
    asking = threading.Thread(target=lambda: answered.append(later(root, "stop", payload, minutes=60)), daemon=True)
    asking.start()
    asking.join(10)
    if asking.is_alive():  # let the thread go: open a writer so the FIFO's open returns
        with open(fifo, "wb"):
            pass
    assert answered and "note" in answered[0]  # no transcript to read: the reminder as without one


@pytest.mark.slow
def test_the_briefings_last_line_and_the_attempt_hint_stay_apart_where_a_tool_joins_them(store):
    # `notewell hook session-start; export NOTEWELL_ATTEMPT=$(notewell attempt start shop)` in an agent's
    # shell tool, which shows stdout with its last line break taken off, then stderr (issue 40:
    # "…write it with add_note.(export NOTEWELL_ATTEMPT=…)").
    import pty
    import subprocess
    import sys

    import notewell

    root, _ids = store
    briefed = hook(root, "session-start", None, "--project", "shop", runtime="plain")
    started = call(["--store", str(root), "attempt", "start", "shop"], unset=("NOTEWELL_STORE",))
    assert briefed.returncode == 0 and started.returncode == 0
    shown = briefed.stdout.decode().removesuffix("\n") + started.stderr.decode()
    assert "write it with add_note.\n" in shown
    attempt = started.stdout.decode().strip()
    assert shown.endswith(f"\n(export NOTEWELL_ATTEMPT={attempt} so that `notewell add` writes on it)\n")
    # On a terminal, where nothing joins them, the hint comes with no blank line before it.
    main, child = pty.openpty()
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(notewell.__file__))}
    env.pop("NOTEWELL_STORE", None)
    argv = [sys.executable, "-m", "notewell", "--store", str(root), "attempt", "start", "shop"]
    with os.fdopen(main, "rb", buffering=0) as terminal:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=child, env=env, timeout=60)
        os.close(child)
        said = terminal.read(4096).decode()
    assert done.returncode == 0 and said.startswith("(export NOTEWELL_ATTEMPT=att_")
