"""The OpenAPI 3.1 document of the HTTP API (served at /openapi.json)."""

from __future__ import annotations

import re
from typing import Any

from ...model.attempt import PROJECT_MAX
from ...model.header import LIMITS
from ...model.ids import ATTEMPT_ID_RE, ID_RE, NOTE_ID_RE
from ...model.note import MODEL_MAX
from ...search.filters import FILTERS, MAX_FILTER_CHARS, MAX_FILTER_VALUES, FilterSpec
from ...services.agent_api import MAX_LIMIT, MAX_OFFSET, MAX_QUERY_CHARS
from ...version import __version__

__all__ = ["openapi_document"]

_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        }
    },
}
_NULLABLE_STR = {"type": ["string", "null"]}
_CARD = {
    "type": "object",
    "required": ["id", "title", "mode", "score", "snippet"],
    "properties": {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "kind": _NULLABLE_STR,
        "tags": {"type": "array", "items": {"type": "string"}},
        "builds_on": {"type": "array", "items": {"type": "string"}},
        "model": _NULLABLE_STR,
        "author": _NULLABLE_STR,
        "attempt_id": _NULLABLE_STR,
        "project": _NULLABLE_STR,
        "note_kind": {"type": "string"},
        "created_at": {"type": "string"},
        "updated_at": {"type": "string"},
        "snippet": {"type": "string"},
        "score": {"type": ["number", "null"]},
        "mode": {"type": "string"},
        "age": {"type": ["string", "null"], "description": "how old it is in words: 'updated 3 days ago'"},
        "matched_revision": {
            "type": ["integer", "null"],
            "description": "the older revision whose text matched (null: the current text); such cards come last",
        },
    },
}
_NOTE = {
    "type": "object",
    "required": ["id", "title", "text", "body", "revision"],
    "properties": {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "text": {"type": "string"},
        "header": {"type": ["object", "null"]},
        "extra": {"type": "array", "items": {"type": "string"}},
        "body": {"type": "string"},
        "revision": {"type": "integer"},
        "attempt_id": _NULLABLE_STR,
        "attempt": {"type": ["object", "null"]},
        "backlinks": {"type": "array", "items": {"type": "object"}},
        "similar": {
            "type": "array",
            "description": "add_note only: existing notes that say much the same (update one instead of writing"
            " the same finding twice); by words or meaning, with a similarity from 0 to 1",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "title": {"type": "string"},
                    "similarity": {"type": "number"},
                    "by": {"type": "string", "enum": ["words", "meaning"]},
                },
            },
        },
    },
}
_OBJECT = {"type": "object"}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _svg(description: str) -> dict[str, Any]:
    return {
        "description": description + " (empty: nothing to draw)",
        "content": {"image/svg+xml": {"schema": {"type": "string"}}},
    }


def _errors(*statuses: int) -> dict[str, Any]:
    names = {
        400: "bad input",
        401: "no valid token",
        403: "not allowed",
        404: "not found",
        409: "frozen",
        413: "too large",
        429: "too many writes",
        500: "internal error",
        503: "unavailable or busy",
    }
    return {str(s): _json(_ref("Error"), names[s]) for s in statuses}


def _param(name: str, where: str, schema: dict[str, Any], description: str, required: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "in": where,
        "required": required or where == "path",
        "schema": schema,
        "description": description,
    }


def _id(regex: re.Pattern[str]) -> dict[str, Any]:
    # A JSON Schema pattern matches anywhere in the value: anchored, it says what the server checks.
    return {"type": "string", "pattern": f"^{regex.pattern}$"}


# What str.strip() removes (each character str.isspace() holds true), as \u escapes that
# ECMA-262, Rust and Python regexes read alike: the server strips with it, so the patterns
# below say "blank" as it does rather than as a regex dialect's \s (which differs).
_BLANK = r"\u0009-\u000d\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# Note text: something besides blanks, and no NUL (the store's byte limit applies too: 413).
_TEXT = {"type": "string", "minLength": 1, "pattern": rf"^[^\u0000]*[^\u0000{_BLANK}][^\u0000]*$"}
# A name the server slugs. Whether a slug is left ("SAT solver": sat-solver; "¬": nothing)
# depends on Unicode categories and NFKC, which no pattern every validator reads alike can
# say, so the rule is in words (the fuzzing test holds the server to it).
_PROJECT = {
    "type": "string",
    "minLength": 1,
    "description": (
        f"a name with a letter or a digit, kept as its slug (at most {PROJECT_MAX} characters);"
        " 'alice:name' is in alice's namespace, where only alice starts work and where private projects live"
    ),
}
_TAG = {
    "type": "string",
    "minLength": 1,
    "description": f"a tag with a letter or a digit, kept as its slug (at most {LIMITS['tag']} characters)",
}


def _label(most: int) -> dict[str, Any]:
    """A one-line label (model): blanks around it are dropped, then it has at most *most*
    characters and no line break or NUL; blank altogether it is no label at all."""
    inner = rf"[^{_BLANK}\u0000](?:[^\u000a\u000d\u0000]{{0,{most - 2}}}[^{_BLANK}\u0000])?"
    return {"type": "string", "pattern": rf"^[{_BLANK}]*(?:{inner})?[{_BLANK}]*$"}


# An outcome: succeeded, failed, abandoned or another short word, in any case (the Kelvin
# sign lowers to k), blanks around it dropped.
_WORD = r"A-Za-z\u212a"
_OUTCOME = {"type": "string", "pattern": rf"^[{_BLANK}]*[{_WORD}][{_WORD}0-9_-]{{0,29}}[{_BLANK}]*$"}
# What a query needs depends on the mode and on other parameters, which a parameter's schema
# cannot say: in words too (and held to by the fuzzing test, as for names).
_QUERY = {
    "type": "string",
    "maxLength": MAX_QUERY_CHARS,
    "description": "search words: with a letter or a digit and no NUL, in every mode;"
    " blank or left out only with project or attempt_id, for their recent notes",
}
_WHEN = {
    "anyOf": [
        {"type": "string", "format": "date"},
        {"type": "string", "format": "date-time"},
        {"type": "string", "pattern": r"^(?:\d{1,5}[hdwmy]|today|yesterday|now)$"},  # model.timestamps
    ]
}


def _zones() -> dict[str, Any]:
    """The time zones a ``tz`` may name: this machine's IANA names, UTC, or an offset to 14 hours."""
    from zoneinfo import available_timezones

    offset = r"^[+-](?:(?:0?\d|1[0-3])(?::?[0-5]\d)?|14(?::?00)?)$"
    return {
        "anyOf": [
            {"type": "string", "enum": sorted(available_timezones() | {"UTC", "GMT", "Z"})},
            {"type": "string", "pattern": offset},
        ]
    }


_NOTE_ID = _param(
    "note_id",
    "path",
    {"type": "string", "minLength": 1, "pattern": rf"^(?:{NOTE_ID_RE.pattern}|.+\.md)$"},
    "a note id (nte_...), or the note's path in the store or its file name (research/go-tips.md, go-tips.md)",
)
_ATTEMPT_ID = _param("attempt_id", "path", _id(ATTEMPT_ID_RE), "an attempt id (att_...)")
_PROJECT_PATH = _param("project", "path", _PROJECT, "a project (its name or slug)")
_SCHEMAS = {
    "text": {"type": "string", "maxLength": MAX_FILTER_CHARS},
    "when": _WHEN,
    "texts": {
        "type": "array",
        "items": {"type": "string", "maxLength": MAX_FILTER_CHARS},
        "maxItems": MAX_FILTER_VALUES,
    },
}
# Filters whose values the server checks as more than text.
_FILTER_SCHEMAS = {
    "project": _PROJECT,
    "campaign": _PROJECT,
    "attempt_id": _id(ATTEMPT_ID_RE),
    "builds_on": _id(ID_RE),
    "tz": _zones(),
}


def _filter_param(spec: FilterSpec) -> dict[str, Any]:
    if spec.choices:
        schema = {"type": "string", "enum": list(spec.choices)}
    else:
        schema = _FILTER_SCHEMAS.get(spec.name, _SCHEMAS[spec.shape])
    help_text = spec.help + (" (repeat or comma-separate)" if spec.shape == "texts" else "")
    return _param(spec.name, "query", schema, help_text)


_FILTER_PARAMS = [_filter_param(spec) for spec in FILTERS]
_LIMIT = _param("limit", "query", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}, "how many cards")
# The server reads at most twelve digits of a number in a query.
_REVISION = {"type": "integer", "minimum": 1, "maximum": 10**12 - 1}
_SECURITY = [{"bearer": []}, {}]


def _or_null(schema: dict[str, Any]) -> dict[str, Any]:
    # An optional field sent as null is read as left out.
    return {**schema, "type": [schema["type"], "null"]}


def _body(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "required": required, "properties": properties, "additionalProperties": False}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _one_change() -> dict[str, Any]:
    """PATCH: exactly one change, the text or tags to add."""
    text = {
        "type": "object",
        "required": ["text"],
        "properties": {
            "text": _TEXT,
            "keep_header": {"type": "boolean", "description": "text is the new body; the header stays as it is"},
            "base_revision": {
                "type": "integer",
                "minimum": 1,
                "description": "the revision the text was written from: 409 conflict if the note changed since",
            },
        },
        "additionalProperties": False,
    }
    tags = {
        "type": "object",
        "required": ["add_tags"],
        "additionalProperties": False,
        "properties": {
            "add_tags": {
                "type": "array",
                "items": _TAG,
                "minItems": 1,
                "description": f"tags to add (a note holds at most {LIMITS['tags']} different ones)",
            }
        },
    }
    return {"required": True, "content": {"application/json": {"schema": {"oneOf": [text, tags]}}}}


def openapi_document() -> dict[str, Any]:
    """The API described for clients and for the fuzzing tests."""
    cards = {
        "type": "object",
        "required": ["cards"],
        "properties": {"cards": {"type": "array", "items": _ref("Card")}},
    }
    search_result = {
        "type": "object",
        "required": ["query", "mode", "cards"],
        "properties": {
            "query": {"type": "string"},
            "mode": {"type": "string"},
            "cards": {"type": "array", "items": _ref("Card")},
            "not_embedded": {"type": "integer"},
        },
    }
    paths: dict[str, Any] = {
        "/healthz": {
            "get": {
                "operationId": "healthz",
                "summary": "liveness",
                "security": [{}],
                "responses": {"200": _json(_OBJECT, "up")},
            }
        },
        "/api/notes/search": {
            "get": {
                "operationId": "search_notes",
                "summary": "Search notes: cards, not bodies (the same parameters and cards as the MCP tool)",
                "parameters": [
                    _param("query", "query", _QUERY, "search words (as the MCP tool names them)"),
                    _param("q", "query", _QUERY, "search words: an alias of query (give one of them)"),
                    _param(
                        "mode",
                        "query",
                        {"type": "string", "enum": ["keyword", "semantic", "both", "hybrid"]},
                        "keyword (default, exact), semantic, both (side by side) or hybrid (fused)",
                    ),
                    _LIMIT,
                    _param("wait", "query", {"type": "boolean"}, "embed waiting notes before a semantic search"),
                    *_FILTER_PARAMS,
                ],
                # wait=true embeds the backlog: a write, refused to a read-only token and rate limited.
                "responses": {"200": _json(search_result, "cards"), **_errors(400, 401, 403, 404, 429, 503)},
            }
        },
        "/api/notes": {
            "get": {
                "operationId": "list_notes",
                "summary": "Notes, most recently updated first",
                "parameters": [
                    _LIMIT,
                    _param("offset", "query", {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET}, "skip"),
                    *_FILTER_PARAMS,
                ],
                "responses": {"200": _json(cards, "cards"), **_errors(400, 401, 404)},
            },
            "post": {
                "operationId": "add_note",
                "summary": "Write a note (one finding), on your running attempt if given",
                "requestBody": _body(
                    ["text"],
                    {"text": _TEXT, "attempt_id": _or_null(_id(ATTEMPT_ID_RE)), "model": _or_null(_label(MODEL_MAX))},
                ),
                "responses": {"201": _json(_ref("Note"), "the new note"), **_errors(400, 401, 403, 404, 409, 413, 429)},
            },
        },
        "/api/notes/{note_id}": {
            "get": {
                "operationId": "get_note",
                "summary": "A whole note: text, parsed header, body, attempt, backlinks",
                "parameters": [
                    _NOTE_ID,
                    _param("working_attempt_id", "query", _id(ATTEMPT_ID_RE), "record the read on it"),
                    _param("revision", "query", _REVISION, "an earlier text"),
                    _param("render", "query", {"type": "string", "enum": ["html"]}, "add body_html (safe HTML)"),
                ],
                # working_attempt_id records the read: a write, on a running attempt.
                "responses": {"200": _json(_ref("Note"), "the note"), **_errors(400, 401, 403, 404, 409, 429)},
            },
            "patch": {
                "operationId": "edit_note",
                "summary": "Replace a note's text, or add tags to its header",
                "parameters": [_NOTE_ID],
                "requestBody": _one_change(),
                "responses": {"200": _json(_ref("Note"), "the note"), **_errors(400, 401, 403, 404, 409, 413, 429)},
            },
            "delete": {
                "operationId": "delete_note",
                "summary": "Remove a note (its text stays in the history)",
                "parameters": [_NOTE_ID],
                "responses": {"200": _json(_OBJECT, "deleted"), **_errors(400, 401, 403, 404, 409, 429)},
            },
        },
        "/api/notes/{note_id}/graph.svg": {
            "get": {
                "operationId": "note_graph",
                "summary": "A picture (SVG) of what a note builds on and what builds on it; empty when nothing",
                "parameters": [_NOTE_ID],
                "responses": {"200": _svg("the graph"), **_errors(400, 401, 404)},
            }
        },
        "/api/notes/{note_id}/links": {
            "get": {
                "operationId": "links",
                "summary": "What a note builds on and what builds on it",
                "parameters": [
                    _NOTE_ID,
                    _param("depth", "query", {"type": "integer", "minimum": 1, "maximum": 10}, "steps out"),
                ],
                "responses": {"200": _json(_OBJECT, "links"), **_errors(400, 401, 404)},
            }
        },
        "/api/attempts": {
            "post": {
                "operationId": "start_attempt",
                "summary": "Start a run on a project; notes written with its id land on it",
                "requestBody": _body(
                    ["project"],
                    {"project": _PROJECT, "model": _or_null(_label(MODEL_MAX)), "campaign": _or_null(_PROJECT)},
                ),
                "responses": {"201": _json(_OBJECT, "the attempt"), **_errors(400, 401, 403, 413, 429)},
            }
        },
        "/api/attempts/{attempt_id}": {
            "get": {
                "operationId": "get_attempt",
                "summary": "An attempt",
                "parameters": [_ATTEMPT_ID],
                "responses": {"200": _json(_OBJECT, "the attempt"), **_errors(400, 401, 404)},
            }
        },
        "/api/attempts/{attempt_id}/end": {
            "post": {
                "operationId": "end_attempt",
                "summary": "End your attempt with an outcome (and a summary note); its notes freeze",
                "parameters": [_ATTEMPT_ID],
                "requestBody": _body(["outcome"], {"outcome": _OUTCOME, "summary": _or_null(_TEXT)}),
                "responses": {"200": _json(_OBJECT, "the attempt"), **_errors(400, 401, 403, 404, 409, 413, 429)},
            }
        },
        "/api/attempts/{attempt_id}/reads": {
            "get": {
                "operationId": "attempt_reads",
                "summary": "The notes read while working on an attempt, oldest first",
                "parameters": [_ATTEMPT_ID],
                "responses": {"200": _json(_OBJECT, "reads"), **_errors(400, 401, 404)},
            }
        },
        "/api/attempts/{attempt_id}/picture.svg": {
            "get": {
                "operationId": "attempt_picture",
                "summary": "A picture (SVG) of an attempt: its notes, what it read, its outcome, on its time line",
                "parameters": [_ATTEMPT_ID],
                "responses": {"200": _svg("the attempt"), **_errors(400, 401, 404)},
            }
        },
        "/api/projects/{project}/timeline.svg": {
            "get": {
                "operationId": "project_timeline",
                "summary": "A picture (SVG) of a project's attempts on a time line, coloured by outcome",
                "parameters": [_PROJECT_PATH],
                "responses": {"200": _svg("the timeline"), **_errors(400, 401, 404)},
            }
        },
        "/api/projects/{project}/brief": {
            "get": {
                "operationId": "brief",
                "summary": "The one thing to read first on a project: its digest, the recent stream, what is new",
                "parameters": [_PROJECT_PATH],
                "responses": {"200": _json(_OBJECT, "the brief"), **_errors(400, 401, 404)},
            }
        },
        "/api/projects": {
            "get": {
                "operationId": "list_projects",
                "summary": "Every project you may see: settings, counts, last activity",
                "responses": {"200": _json(_OBJECT, "projects"), **_errors(401)},
            }
        },
        "/api/projects/{project}/attempts": {
            "get": {
                "operationId": "list_attempts",
                "summary": "A project's attempts, newest first: author, model, outcome, times",
                "parameters": [_PROJECT_PATH, _LIMIT],
                "responses": {"200": _json(_OBJECT, "attempts"), **_errors(400, 401, 404)},
            }
        },
        "/api/tags": {
            "get": {
                "operationId": "list_tags",
                "summary": "Every tag with its count",
                "parameters": [
                    _param("notes", "query", {"type": "boolean"}, "also each note's tags and summary"),
                    _param("tag", "query", {"type": "string"}, "with notes: only this tag's notes"),
                ],
                "responses": {"200": _json(_OBJECT, "tags"), **_errors(400, 401)},
            }
        },
        "/api/summary": {
            "get": {
                "operationId": "notes_summary",
                "summary": "Counts by kind and the most recent notes",
                "responses": {"200": _json(_OBJECT, "summary"), **_errors(401)},
            }
        },
    }
    for path, item in paths.items():
        for op in item.values():
            op.setdefault("security", _SECURITY)
            if path != "/healthz":
                # Any operation can meet a busy store or a bug; both answer the error shape.
                op["responses"].update(_errors(500, 503))
                if path.startswith("/api/") and "421" not in op["responses"]:
                    op["responses"]["421"] = _json(_ref("Error"), "not addressed to loopback")
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "notewell",
            "version": __version__,
            "description": "Notes that the next agent can find: search, read and write a notewell store.",
        },
        "paths": paths,
        "components": {
            "schemas": {"Error": _ERROR, "Card": _CARD, "Note": _NOTE},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
