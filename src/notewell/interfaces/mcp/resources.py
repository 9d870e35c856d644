"""Notes as MCP resources: ``notewell://note/<id>``, Markdown, as the caller may see them.

``resources/list`` gives the notes the caller may see, most recently updated first, a page
at a time (the cursor is opaque to clients: an offset here); ``resources/read`` gives one
note's text (header included) with the rules of ``get_note``. A note the caller may not see
reads exactly like one that does not exist, and so does a URI that names no note: the same
:class:`~notewell.errors.NotFoundError`, whose message repeats only the URI asked for. The
server turns that into each protocol revision's own error (see :mod:`.server`). Nothing
here imports the MCP SDK.
"""

from __future__ import annotations

from typing import Any

from ...errors import InvalidArgumentError, InvalidIdError, NotFoundError
from ...model.ids import NOTE_ID_RE
from ...services.server_api import MAX_OFFSET, Caller, ServerAPI

__all__ = ["MIME_TYPE", "NOTE_URI", "PAGE", "TEMPLATE", "listed", "note_uri", "read"]

NOTE_URI = "notewell://note/"
TEMPLATE = NOTE_URI + "{id}"
MIME_TYPE = "text/markdown"
PAGE = 50  # resources a page; one more is asked for, to know whether a next page exists
_SHOWN = 200  # characters of an unknown URI said back in the error


def note_uri(note_id: str) -> str:
    """The resource URI of the note *note_id*."""
    return NOTE_URI + note_id


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not (len(cursor) <= 7 and cursor.isascii() and cursor.isdigit() and int(cursor) <= MAX_OFFSET):
        raise InvalidArgumentError("cursor: not a cursor this server gave (list again from the start)")
    return int(cursor)


def listed(api: ServerAPI, caller: Caller, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """One page of the notes *caller* may see as resources (uri, name, title, mimeType and
    when it last changed), and the cursor of the next page (None: this was the last)."""
    offset = _offset(cursor)
    cards = api.list_notes(caller, limit=PAGE + 1, offset=offset)["cards"]
    page = [
        {
            "uri": note_uri(card["id"]),
            "name": card["id"],
            "title": card["title"],
            "mimeType": MIME_TYPE,
            "annotations": {"lastModified": card["updated_at"]},
        }
        for card in cards[:PAGE]
    ]
    following = offset + PAGE
    more = len(cards) > PAGE and following <= MAX_OFFSET
    return page, str(following) if more else None


def read(api: ServerAPI, caller: Caller, uri: str) -> dict[str, Any]:
    """The note *uri* names as a resource's contents (uri, mimeType, text), if *caller* may
    see it; else :class:`NotFoundError`, the same whether it is hidden, gone or never was."""
    unknown = NotFoundError(f"no note at {uri[:_SHOWN]!r}")
    note_id = uri[len(NOTE_URI) :] if uri.startswith(NOTE_URI) else ""
    if NOTE_ID_RE.fullmatch(note_id) is None:
        raise unknown
    try:
        note = api.get_note(caller, note_id)
    except (NotFoundError, InvalidIdError):
        raise unknown from None
    return {"uri": uri, "mimeType": MIME_TYPE, "text": note["text"]}
