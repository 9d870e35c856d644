"""The agent runtimes notewell plugs into, and how each one's hooks talk.

One home for what differs between Claude Code, Codex CLI, Gemini CLI and Cursor: which of
their events runs which ``notewell hook`` command, and the shape of the answer each expects on
standard output (from each runtime's hook documentation, as read in December 2026):

- Claude Code and Codex: ``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}``
  adds context on SessionStart (matcher ``compact`` after a compaction); on Stop, Claude Code
  takes ``additionalContext`` as feedback and Codex only ``{"decision": "block", "reason": ...}``.
  Codex's Stop must answer JSON.
- Gemini CLI: JSON only on stdout; ``hookSpecificOutput.additionalContext`` on SessionStart and
  BeforeAgent; no event after a compression (PreCompress is advisory), so a compaction is
  answered on the next prompt; AfterAgent's only model-visible answer rejects the response, so
  the reminder waits for the next prompt too and the user is told at once (``systemMessage``).
- Cursor: ``{"additional_context": ...}`` on sessionStart, ``{"followup_message": ...}`` on stop;
  no way back into the context after a compaction.
- ``plain``: the text itself (for a person, or any runtime that reads plain output).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["HOOK_EVENTS", "RUNTIMES", "HookAnswer", "Registration", "Runtime", "answer_text", "runtime_named"]

# notewell's hook commands, in the order `notewell hook --help` lists them
HOOK_EVENTS = ("session-start", "post-compact", "pre-compact", "prompt", "stop")


@dataclass(frozen=True)
class Registration:
    """One of the runtime's events, running one ``notewell hook`` command."""

    event: str  # the runtime's own event name
    command: str  # one of HOOK_EVENTS
    matcher: str | None = None  # None: the event takes no matcher


@dataclass(frozen=True)
class Runtime:
    """A runtime: its name on the command line, the events notewell registers, and its answer's rules."""

    name: str
    registrations: tuple[Registration, ...]
    json_only: bool  # stdout must be JSON (plain text would be shown to the user or refused)
    prompt_event: str = ""  # its event before each prompt (``hook prompt``), when it has one

    def event_of(self, command: str) -> str:
        """The runtime's event name for *command* when its input does not say."""
        if command == "prompt":
            return self.prompt_event
        return next((r.event for r in self.registrations if r.command == command), "")


# Claude Code and Codex document the same events: SessionStart with matcher compact is the way
# back into the context after a compaction (PreCompact and PostCompact cannot add context).
_SESSION_AND_STOP = (
    Registration("SessionStart", "session-start", "startup|resume|clear"),
    Registration("SessionStart", "post-compact", "compact"),
    Registration("Stop", "stop"),
)
RUNTIMES: dict[str, Runtime] = {
    r.name: r
    for r in (
        Runtime("claude-code", _SESSION_AND_STOP, json_only=False, prompt_event="UserPromptSubmit"),
        Runtime("codex", _SESSION_AND_STOP, json_only=True, prompt_event="UserPromptSubmit"),
        Runtime(
            "gemini",
            (
                Registration("SessionStart", "session-start", "*"),
                Registration("PreCompress", "pre-compact", "*"),
                Registration("BeforeAgent", "prompt", "*"),
                Registration("AfterAgent", "stop", "*"),
            ),
            json_only=True,
            prompt_event="BeforeAgent",
        ),
        Runtime(
            "cursor", (Registration("sessionStart", "session-start"), Registration("stop", "stop")), json_only=True
        ),
        Runtime("plain", (), json_only=False),
    )
}


def runtime_named(name: str) -> Runtime:
    """The runtime called *name*; KeyError names the ones there are."""
    try:
        return RUNTIMES[name]
    except KeyError:
        raise KeyError(f"no runtime {name!r}: one of {', '.join(RUNTIMES)}") from None


@dataclass
class HookAnswer:
    """What a hook has to say: *context* for the model, a *reminder* the model should act on,
    a *notice* for the person only. Any may be empty."""

    context: str = ""
    reminder: str = ""
    notice: str = ""


def answer_text(runtime: Runtime, command: str, answer: HookAnswer, event: str | None = None) -> str:
    """*answer* as the runtime reads it on stdout ("" when a runtime wants nothing printed).
    *event*: the runtime's own event name from its input (hookSpecificOutput must echo it)."""
    name = runtime.name
    if name == "plain":
        return "\n\n".join(t for t in (answer.context, answer.reminder, answer.notice) if t)
    event = event or runtime.event_of(command)
    out: dict[str, Any] = {}
    if name == "cursor":
        if answer.context:
            out["additional_context"] = answer.context
        if answer.reminder:
            out["followup_message"] = answer.reminder
    else:
        model_text = "\n\n".join(t for t in (answer.context, answer.reminder) if t)
        if answer.reminder and command == "stop" and name == "codex":
            out = {"decision": "block", "reason": answer.reminder}  # Codex's only way to the model on Stop
        elif model_text:
            out["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": model_text}
        if answer.notice:
            out["systemMessage"] = answer.notice
    if not out:
        return "{}" if runtime.json_only else ""
    return json.dumps(out, ensure_ascii=False)
