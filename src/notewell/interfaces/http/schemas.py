"""The OpenAPI pieces the routes share: the component schemas, parameters, bodies and responses."""

from __future__ import annotations

import re
from typing import Any

from ...model.attempt import PROJECT_MAX
from ...model.header import LIMITS
from ...model.ids import ATTEMPT_ID_RE, ID_RE, NOTE_ID_RE
from ...search.filters import FILTERS, MAX_FILTER_CHARS, MAX_FILTER_VALUES, FilterSpec
from ...services.server_api import MAX_LIMIT

__all__ = [
    "ATTEMPT_ID",
    "BLANK",
    "COMPONENTS",
    "FILTER_PARAMS",
    "LIMIT",
    "NOTE_ID",
    "OBJECT",
    "PROJECT",
    "PROJECT_PATH",
    "REVISION",
    "TAG",
    "TEXT",
    "WHEN",
    "body",
    "error_responses",
    "id_schema",
    "json_response",
    "label",
    "or_null",
    "param",
    "ref",
    "svg_response",
]

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
        "superseded_by": {
            "type": "array",
            "items": {"type": "string"},
            "description": "later notes (that you may see) whose supersedes names this one: read them first",
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
        "supersedes": {"type": "array", "items": {"type": "string"}, "description": "the ids it corrects"},
        "superseded_by": {
            "type": "array",
            "items": {"type": "string"},
            "description": "later notes (that you may see) whose supersedes names this one: read them first",
        },
        "body_html": {"type": "string", "description": "render=html only: the body as safe HTML"},
        "may_edit": {"type": "boolean", "description": "render=html only: whether the caller's edit would be taken"},
        "edit_refusal": {"type": ["string", "null"], "description": "render=html only: why not (null: it would)"},
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
COMPONENTS = {
    "schemas": {"Error": _ERROR, "Card": _CARD, "Note": _NOTE},
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
}
OBJECT = {"type": "object"}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def json_response(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def svg_response(description: str) -> dict[str, Any]:
    return {
        "description": description + " (empty: nothing to draw)",
        "content": {"image/svg+xml": {"schema": {"type": "string"}}},
    }


_ERROR_NAMES = {
    400: "bad input",
    401: "no valid token",
    403: "not allowed",
    404: "not found",
    409: "frozen",
    413: "too large",
    421: "not addressed to loopback",
    429: "too many writes or store-wide reads",
    500: "internal error",
    503: "unavailable or busy",
}


def error_responses(*statuses: int) -> dict[str, Any]:
    return {str(s): json_response(ref("Error"), _ERROR_NAMES[s]) for s in statuses}


def param(name: str, where: str, schema: dict[str, Any], description: str, required: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "in": where,
        "required": required or where == "path",
        "schema": schema,
        "description": description,
    }


def id_schema(regex: re.Pattern[str]) -> dict[str, Any]:
    # A JSON Schema pattern matches anywhere in the value: anchored, it says what the server checks.
    return {"type": "string", "pattern": f"^{regex.pattern}$"}


def or_null(schema: dict[str, Any]) -> dict[str, Any]:
    # An optional field sent as null is read as left out.
    return {**schema, "type": [schema["type"], "null"]}


def body(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    """A JSON object body that takes *properties* and no others."""
    schema = {"type": "object", "required": required, "properties": properties, "additionalProperties": False}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


# What str.strip() removes (each character str.isspace() holds true), as \u escapes that
# ECMA-262, Rust and Python regexes read alike: the server strips with it, so the patterns
# say "blank" as it does rather than as a regex dialect's \s (which differs).
BLANK = r"\u0009-\u000d\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# Note text: something besides blanks, and no NUL (the store's byte limit applies too: 413).
TEXT = {"type": "string", "minLength": 1, "pattern": rf"^[^\u0000]*[^\u0000{BLANK}][^\u0000]*$"}
# A name the server slugs. Whether a slug is left ("SAT solver": sat-solver; "¬": nothing)
# depends on Unicode categories and NFKC, which no pattern every validator reads alike can
# say, so the rule is in words (the fuzzing test holds the server to it).
PROJECT = {
    "type": "string",
    "minLength": 1,
    "description": (
        f"a name with a letter or a digit, kept as its slug (at most {PROJECT_MAX} characters);"
        " 'alice:name' is in alice's namespace, where only alice starts work and where private projects live"
    ),
}
TAG = {
    "type": "string",
    "minLength": 1,
    "description": f"a tag with a letter or a digit, kept as its slug (at most {LIMITS['tag']} characters)",
}


def label(most: int) -> dict[str, Any]:
    """A one-line label (model): blanks around it are dropped, then it has at most *most*
    characters and no line break or NUL; blank altogether it is no label at all."""
    inner = rf"[^{BLANK}\u0000](?:[^\u000a\u000d\u0000]{{0,{most - 2}}}[^{BLANK}\u0000])?"
    return {"type": "string", "pattern": rf"^[{BLANK}]*(?:{inner})?[{BLANK}]*$"}


_WHEN = {
    "anyOf": [
        {"type": "string", "format": "date"},
        {"type": "string", "format": "date-time"},
        {"type": "string", "pattern": r"^(?:\d{1,5}[hdwmy]|today|yesterday|now)$"},  # model.timestamps
    ]
}
WHEN = _WHEN  # a moment as the date filters and stale's older_than take it


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


NOTE_ID = param(
    "note_id",
    "path",
    {"type": "string", "minLength": 1, "pattern": rf"^(?:{NOTE_ID_RE.pattern}|.+\.md)$"},
    "a note id (nte_...), or the note's path in the store or its file name (research/go-tips.md, go-tips.md)",
)
ATTEMPT_ID = param("attempt_id", "path", id_schema(ATTEMPT_ID_RE), "an attempt id (att_...)")
PROJECT_PATH = param("project", "path", PROJECT, "a project (its name or slug)")
_SHAPES: dict[str, dict[str, Any]] = {
    "text": {"type": "string", "maxLength": MAX_FILTER_CHARS},
    "when": _WHEN,
    "texts": {
        "type": "array",
        "items": {"type": "string", "maxLength": MAX_FILTER_CHARS},
        "maxItems": MAX_FILTER_VALUES,
    },
}
# Filters whose values the server checks as more than text.
_FILTER_SCHEMAS: dict[str, dict[str, Any]] = {
    "project": PROJECT,
    "campaign": PROJECT,
    "attempt_id": id_schema(ATTEMPT_ID_RE),
    "builds_on": id_schema(ID_RE),
    "tz": _zones(),
}


def _filter_param(spec: FilterSpec) -> dict[str, Any]:
    if spec.choices:
        schema = {"type": "string", "enum": list(spec.choices)}
    else:
        schema = _FILTER_SCHEMAS.get(spec.name, _SHAPES[spec.shape])
    help_text = spec.help + (" (repeat or comma-separate)" if spec.shape == "texts" else "")
    return param(spec.name, "query", schema, help_text)


FILTER_PARAMS = [_filter_param(spec) for spec in FILTERS]
LIMIT = param("limit", "query", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}, "how many cards")
# The server reads at most twelve digits of a number in a query.
REVISION = {"type": "integer", "minimum": 1, "maximum": 10**12 - 1}
