"""Reading a request's input: the note a path names, query parameters, body fields; anything
the endpoint does not take is refused, not dropped unseen."""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request

from ...errors import InvalidArgumentError, NotFoundError
from ...search.filters import FILTER_NAMES, FILTERS, MAX_FILTER_CHARS, MAX_FILTER_VALUES

__all__ = ["fields", "flag", "int_param", "note_ref", "query_params", "search_words", "text_field", "whole"]


def note_ref(request: Request) -> str:
    """The note a path names: an id, or a path in the store ending in .md. Anything else with a
    slash (/api/notes/search/, /api/notes/ID/history) is no route, as before paths were taken."""
    ref = str(request.path_params["note_id"])
    if "/" in ref and not ref.endswith(".md"):
        raise NotFoundError(f"no route {request.url.path}")
    return ref


def search_words(request: Request) -> str:
    """The search words: ``query`` (the MCP tool's name for them), or ``q``, its alias."""
    given = [request.query_params.getlist(name) for name in ("query", "q")]
    words = [w for values in given for w in values]
    if len(words) > 1:
        raise InvalidArgumentError("give the search words once, as query (or its alias q)")
    return words[0] if words else ""


def query_params(request: Request) -> dict[str, Any]:
    """Search and list parameters from the query string (kind and tags may repeat or be comma-separated)."""
    q = request.query_params
    known = {"query", "q", "mode", "limit", "offset", "wait", *FILTER_NAMES}
    unknown = sorted(set(q.keys()) - known)
    if unknown:
        raise InvalidArgumentError(f"unknown parameter(s): {', '.join(unknown)}")
    out: dict[str, Any] = {"mode": q["mode"]} if "mode" in q else {}
    for spec in FILTERS:
        if spec.shape == "texts":  # may repeat, or be comma-separated
            given = q.getlist(spec.name)
            # Counted as given, as the document counts them: blank ones are dropped below.
            if len(given) > MAX_FILTER_VALUES:
                raise InvalidArgumentError(f"{spec.name}: at most {MAX_FILTER_VALUES} values, got {len(given)}")
            if any(len(value) > MAX_FILTER_CHARS for value in given):  # as given, as the document says
                raise InvalidArgumentError(f"{spec.name}: a value is at most {MAX_FILTER_CHARS} characters")
            values = [v.strip() for value in given for v in value.split(",") if v.strip()]
            if values:
                out[spec.name] = values
        elif spec.name in q:
            value = q[spec.name]
            # The search layer reads tag_mode only beside tags: checked here, "AAA" is refused either way.
            if spec.choices and value not in spec.choices:
                raise InvalidArgumentError(f"{spec.name} takes {' or '.join(spec.choices)}, got {value[:40]!r}")
            out[spec.name] = value
    for name in ("limit", "offset"):
        if name in q:
            out[name] = whole(name, q[name])
    if "wait" in q:
        out["wait"] = flag("wait", q["wait"])
    return out


_FLAGS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def flag(name: str, value: str) -> bool:
    """A query parameter's yes or no (true/false as the document says, 1/0 and yes/no as the page sends)."""
    try:
        return _FLAGS[value.strip().lower()]
    except KeyError:
        raise InvalidArgumentError(f"{name} takes true or false, got {value[:40]!r}") from None


_WHOLE = re.compile(r"-?[0-9]{1,12}")


def whole(name: str, value: str) -> int:
    """A query parameter's whole number (ASCII digits only: int() would take '²'-like digits too)."""
    if not _WHOLE.fullmatch(value.strip()):
        raise InvalidArgumentError(f"{name} must be a whole number, got {value[:40]!r}")
    return int(value)


def int_param(request: Request, name: str) -> int | None:
    value = request.query_params.get(name)
    return None if value is None else whole(name, value)


def fields(data: dict[str, Any], *names: str) -> None:
    """Refuse a body field the endpoint does not take (a misspelt optional one would be dropped unseen)."""
    unknown = sorted(set(data) - set(names))
    if unknown:
        shown = ", ".join(repr(name[:40]) for name in unknown[:5])
        raise InvalidArgumentError(f"unknown field(s): {shown}; this body takes {', '.join(names)}")


def text_field(data: dict[str, Any], name: str, *, required: bool = True) -> Any:
    value = data.get(name)
    if value is None:
        if required:
            raise InvalidArgumentError(f"the body needs {name!r}")
        return None
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{name!r} must be a string")
    return value
