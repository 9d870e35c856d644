"""The working-context notebook's MCP tools: stdio only, as notebooks live beside the agent,
not the server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...model.notebook_rules import DEFAULT_BUDGET
from .tool import Arg, ToolSpec

if TYPE_CHECKING:
    from ...agents.notebook import Notebook

__all__ = ["NOTEBOOK_TOOLS"]

_TASK = Arg("task", str | None, "the notebook's task (default: the only one)", None)


def _book(task: str | None) -> Notebook:
    # Imported on a call: the HTTP server and the reference never need the notebook.
    from ...agents.notebook import Notebook, chosen_task

    return Notebook(chosen_task(task))


def _init(api: Any, c: Any, task: str, goal: str, budget: int | None) -> dict[str, Any]:
    from ...agents.notebook import Notebook
    from ...model.notebook_doc import format_help

    # The format with the path: an agent over MCP has no --help to read it from.
    return {"path": str(Notebook.init(task, goal=goal, budget=budget).path), "format": format_help()}


def _log(api: Any, c: Any, label: str, text: str, task: str | None) -> dict[str, Any]:
    event, pointer = _book(task).log(text.encode("utf-8"), label)
    return {**event.to_dict(), "pointer": pointer}


def _accept(api: Any, c: Any, task: str | None) -> dict[str, Any]:
    result = _book(task).accept()
    return {
        "accepted": result.accepted,
        "revision": result.revision,
        "errors": [str(e) for e in result.errors],
        "warnings": [str(w) for w in result.warnings],
    }


NOTEBOOK_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "notebook_init",
        "write",
        "Open a working notebook for a long task: facts with sources, a tracker, notes, ruled-out "
        "attempts, the next step. Edit its notebook.md, then notebook_accept. Answers its path and the"
        " format of its lines.",
        (
            Arg("task", str, "a short task name"),
            Arg("goal", str),
            Arg("budget", int | None, f"tokens (default: $NOTEWELL_NOTEBOOK_BUDGET, else {DEFAULT_BUDGET})", None),
        ),
        _init,
        stdio_only=True,
        group="notebook",
        title="Open a notebook",
        idempotent=False,
    ),
    ToolSpec(
        "notebook_show",
        "read",
        """Read back the accepted notebook: at each phase, after compaction, before a final answer.""",
        (_TASK,),
        lambda api, c, task: {"text": _book(task).show()},
        stdio_only=True,
        group="notebook",
        title="Show the notebook",
        idempotent=True,
    ),
    ToolSpec(
        "notebook_status",
        "read",
        """Budget used, items per section, unaccepted edits, raw events not cited yet, tampering.""",
        (_TASK,),
        lambda api, c, task: _book(task).status(),
        stdio_only=True,
        group="notebook",
        title="Notebook status",
        idempotent=True,
    ),
    ToolSpec(
        "notebook_log",
        "write",
        """Store long tool output once, untouched; keep the returned pointer instead of the output.""",
        (Arg("label", str), Arg("text", str), _TASK),
        _log,
        stdio_only=True,
        group="notebook",
        title="Log raw output",
        idempotent=False,
    ),
    ToolSpec(
        "notebook_recall",
        "read",
        """A bounded part of a raw event (lines with grep, or limit characters from offset).""",
        (
            Arg("event", str),
            Arg("grep", str | None, default=None),
            Arg("offset", int, default=0),
            Arg("limit", int, default=2000),
            _TASK,
        ),
        lambda api, c, event, grep, offset, limit, task: {
            "text": _book(task).recall(event, grep=grep, offset=offset, limit=limit)
        },
        stdio_only=True,
        group="notebook",
        title="Recall raw output",
        idempotent=True,
    ),
    ToolSpec(
        "notebook_accept",
        "write",
        """Validate the edited notebook.md and checkpoint it; errors (with lines) change nothing.""",
        (_TASK,),
        _accept,
        stdio_only=True,
        group="notebook",
        title="Accept the notebook",
        idempotent=False,
    ),
    ToolSpec(
        "notebook_promote",
        "write",
        """Turn accepted facts, ruled-out items and notes into durable notes in the store.""",
        (Arg("ids", list[str]), _TASK),
        lambda api, c, ids, task: api.promote_notebook(c, _book(task), ids),
        stdio_only=True,
        group="notebook",
        title="Promote to notes",
        idempotent=False,
    ),
)
