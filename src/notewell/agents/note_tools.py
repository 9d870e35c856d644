"""Note tools for a model's function calling: schemas in OpenAI's format and one way to run them.

``tool_schemas()`` lists them for a chat request; ``execute_tool(name, arguments, ctx)`` runs
one and returns JSON text for the ``tool`` message (an error is JSON too, with its code, so the
model can read it and try again; nothing raises into the agent loop). ``ToolContext`` carries
what tools need: the store, the chat model (``summarize_note`` asks it), and who is writing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgumentError, NotewellError, UnavailableError
from ..services.contract import NoteStore
from .chat import ChatModel, ClientChat

__all__ = ["TOOLS", "ToolContext", "execute_tool", "summarize_note", "tool_schemas"]

WRITE_TOOLS = ("add_tag", "summarize_note")
_SUMMARY_MAX = 400
_NOTE_CHARS = 12_000  # what summarize_note sends of a note; what read_note returns at most
_SUMMARY_PROMPT = (
    "Summarize the note below in one or two sentences (at most 300 characters), in the note's own"
    " language. Keep exact values (numbers, names, versions). Reply with the summary only."
)


@dataclass
class ToolContext:
    """What a tool may use: the store, a chat model (or None), the author of writes.

    The Day-5 tutorial's fields work too: ``ToolContext(client=openai_client, chat_model="...")``
    asks that client (anything with ``chat.completions.create``) for summaries. Without a store,
    the one the CLI would use is opened ($NOTEWELL_DATABASE, $NOTEWELL_STORE, else ./notes), and
    :meth:`close` closes it."""

    store: NoteStore | None = None  # type: ignore[assignment]  # set in __post_init__
    chat: ChatModel | None = None
    author: str | None = None
    allow_writes: bool = True
    client: Any = None
    chat_model: str = ""

    def __post_init__(self) -> None:
        if self.client is not None:
            if self.chat is not None:
                raise InvalidArgumentError("give a chat model or a client with chat_model, not both")
            self.chat = ClientChat(self.client, self.chat_model)
        elif self.chat_model:
            raise InvalidArgumentError("chat_model names the model a client uses: give client= too")
        self._opened = self.store is None
        if self.store is None:
            from ..services.opening import location_from_environment, open_store

            self.store = open_store(location_from_environment())

    def close(self) -> None:
        """Close the store if this context opened it."""
        if self._opened and self.store is not None:
            self.store.close()


def _schema(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


_ID = {"type": "string", "description": "the note's id (nte_abc123defg), or its file name or path (go-tips.md)"}
_FILENAME = {"type": "string", "description": "the note's file name, like go-tips.md (instead of note_id)"}
TOOLS: dict[str, dict[str, Any]] = {
    "search_notes": _schema(
        "search_notes",
        "Search the notes by keywords (any language). Returns cards: id, title, kind, tags, snippet.",
        {
            "query": {"type": "string", "description": "search words"},
            "kind": {"type": "string", "description": "only notes of this type (blocker, action, conclusion, ...)"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
        },
        ["query"],
    ),
    "read_note": _schema(
        "read_note",
        "Read one note whole: title, type, tags, summary and text.",
        {"note_id": _ID, "filename": _FILENAME},
        [],
    ),
    "add_tag": _schema(
        "add_tag",
        "Add tags to a note's header (tags it has are kept once). Only when the user asks for tags.",
        {"note_id": _ID, "filename": _FILENAME, "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
        ["tags"],
    ),
    "summarize_note": _schema(
        "summarize_note",
        "Write a short summary of a note into its header. Only when the user asks to save a summary.",
        {"note_id": _ID, "filename": _FILENAME},
        [],
    ),
    "list_tags": _schema(
        "list_tags",
        "Every note's tags and summary, and how often each tag is used: the collection at a glance.",
        {},
        [],
    ),
}


def tool_schemas(names: list[str] | tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The schemas of *names* (default: every tool), ready for a chat request's ``tools``."""
    names = list(TOOLS) if names is None else list(names)
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise InvalidArgumentError(f"unknown tool {unknown[0]!r}; tools are: {', '.join(TOOLS)}")
    return [TOOLS[n] for n in names]


def summarize_note(ctx: ToolContext, note_id: str) -> dict[str, Any]:
    """Ask the chat model for a summary of the note and write it into the note's header
    (``summary:``), changing nothing else in the file."""
    if ctx.chat is None:
        raise UnavailableError("summarize_note needs a chat model; none is configured")
    note = ctx.store.get_note(ctx.store.resolve(note_id))  # an id, or a file name (go-tips.md)
    reply = ctx.chat.complete(
        [
            {"role": "system", "content": _SUMMARY_PROMPT},
            {"role": "user", "content": f"# {note.title}\n\n{note.body[:_NOTE_CHARS]}"},
        ],
        max_tokens=200,
    )
    summary = " ".join((reply.content or "").split())
    if len(summary) > _SUMMARY_MAX:  # asked for 300 characters; a header line stays short whatever it says
        summary = summary[: _SUMMARY_MAX - 1].rsplit(" ", 1)[0] + "…"
    if not summary:
        raise UnavailableError("the chat model answered an empty summary")
    updated = ctx.store.set_summary(note.id, summary, author=ctx.author)
    return {"note_id": updated.id, "summary": updated.summary, "revision": updated.revision}


def _search(ctx: ToolContext, query: str, kind: str | None = None, limit: int = 5) -> dict[str, Any]:
    filters = {"kind": kind} if kind else {}
    cards = ctx.store.search_notes(query, limit=limit, **filters)
    keys = ("id", "title", "kind", "tags", "snippet", "updated_at")
    return {"results": [{k: getattr(c, k) for k in keys} for c in cards]}


def _note_ref(ctx: ToolContext, note_id: str | None, filename: str | None) -> str:
    """The note a tool call names: by ``note_id`` (an id or a path) or, as the Day-5 tutorial's
    tools do, by ``filename``; one of them."""
    given = [r for r in (note_id, filename) if r is not None]
    if len(given) != 1 or not isinstance(given[0], str) or not given[0].strip():
        raise InvalidArgumentError("name the note once: note_id (nte_... or a file name) or filename (go-tips.md)")
    assert ctx.store is not None
    return ctx.store.resolve(given[0].strip())


def _read(ctx: ToolContext, note_id: str | None = None, filename: str | None = None) -> dict[str, Any]:
    note = ctx.store.get_note(_note_ref(ctx, note_id, filename))
    body = note.body if len(note.body) <= _NOTE_CHARS else note.body[:_NOTE_CHARS] + "\n[… the note goes on]"
    return {
        "id": note.id,
        "title": note.title,
        "kind": note.kind,
        "tags": note.tags,
        "summary": note.summary,
        "updated_at": note.updated_at,
        "text": body,
    }


def _add_tag(
    ctx: ToolContext, tags: list[str], note_id: str | None = None, filename: str | None = None
) -> dict[str, Any]:
    if not isinstance(tags, list) or not tags or not all(isinstance(t, str) for t in tags):
        raise InvalidArgumentError("tags is a non-empty list of strings")
    note = ctx.store.add_tag(_note_ref(ctx, note_id, filename), *tags, author=ctx.author)
    return {"note_id": note.id, "tags": note.tags, "revision": note.revision}


def _list_tags(ctx: ToolContext) -> dict[str, Any]:
    return {"tags": ctx.store.list_tags(), "notes": ctx.store.note_tags()}


_RUN: dict[str, Callable[..., dict[str, Any]]] = {
    "search_notes": _search,
    "read_note": _read,
    "add_tag": _add_tag,
    "summarize_note": lambda ctx, note_id=None, filename=None: summarize_note(ctx, _note_ref(ctx, note_id, filename)),
    "list_tags": _list_tags,
}


def execute_tool(name: str, arguments: str | dict[str, Any] | None, ctx: ToolContext) -> str:
    """Run tool *name* with *arguments* (JSON text or a dict); the result or the error as JSON."""
    try:
        if not isinstance(name, str) or name not in _RUN:
            raise InvalidArgumentError(f"unknown tool {name!r}; tools are: {', '.join(_RUN)}")
        if name in WRITE_TOOLS and not ctx.allow_writes:
            raise InvalidArgumentError(f"{name} changes notes, and writing is switched off here")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments.strip() or "{}")
            except ValueError as exc:
                raise InvalidArgumentError(f"the arguments are not JSON: {exc}") from None
        arguments = arguments or {}
        if not isinstance(arguments, dict):
            raise InvalidArgumentError("the arguments are a JSON object")
        allowed = set(TOOLS[name]["function"]["parameters"]["properties"])
        extra = sorted(set(arguments) - allowed)
        missing = [r for r in TOOLS[name]["function"]["parameters"]["required"] if r not in arguments]
        if extra or missing:
            raise InvalidArgumentError(
                f"{name} takes {', '.join(sorted(allowed)) or 'no arguments'}"
                + (f"; missing {', '.join(missing)}" if missing else "")
                + (f"; unknown {', '.join(extra)}" if extra else "")
            )
        result = _RUN[name](ctx, **arguments)
    except NotewellError as exc:
        return json.dumps({"error": exc.to_dict()}, ensure_ascii=False)
    return json.dumps(result, ensure_ascii=False)
