"""The OpenAPI 3.1 document of the HTTP API (served at /openapi.json)."""

from __future__ import annotations

from typing import Any

from ..model.ids import NOTE_ID_RE
from ..search.filters import FILTERS, FilterSpec
from ..services.agent_api import MAX_LIMIT, MAX_QUERY_CHARS
from ..version import __version__

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
    },
}
_OBJECT = {"type": "object"}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


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


_NOTE_ID = _param("note_id", "path", {"type": "string", "pattern": NOTE_ID_RE.pattern}, "a note id (nte_...)")
_ATTEMPT_ID = _param("attempt_id", "path", {"type": "string"}, "an attempt id")
_SCHEMAS = {
    "text": {"type": "string"},
    "when": {"type": "string"},
    "texts": {"type": "array", "items": {"type": "string"}},
}


def _filter_param(spec: FilterSpec) -> dict[str, Any]:
    schema = {"type": "string", "enum": list(spec.choices)} if spec.choices else _SCHEMAS[spec.shape]
    help_text = spec.help + (" (repeat or comma-separate)" if spec.shape == "texts" else "")
    return _param(spec.name, "query", schema, help_text)


_FILTER_PARAMS = [_filter_param(spec) for spec in FILTERS]
_LIMIT = _param("limit", "query", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}, "how many cards")
_SECURITY = [{"bearer": []}, {}]


def _body(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "required": required, "properties": properties, "additionalProperties": False}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _one_change() -> dict[str, Any]:
    """PATCH: exactly one change, the text or tags to add."""
    text = {
        "type": "object",
        "required": ["text"],
        "properties": {"text": {"type": "string"}},
        "additionalProperties": False,
    }
    tags = {
        "type": "object",
        "required": ["add_tags"],
        "additionalProperties": False,
        "properties": {"add_tags": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
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
                    _param("q", "query", {"type": "string", "maxLength": MAX_QUERY_CHARS}, "search words"),
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
                "responses": {"200": _json(search_result, "cards"), **_errors(400, 401, 404, 503)},
            }
        },
        "/api/notes": {
            "get": {
                "operationId": "list_notes",
                "summary": "Notes, most recently updated first",
                "parameters": [
                    _LIMIT,
                    _param("offset", "query", {"type": "integer", "minimum": 0}, "skip"),
                    *_FILTER_PARAMS,
                ],
                "responses": {"200": _json(cards, "cards"), **_errors(400, 401, 404)},
            },
            "post": {
                "operationId": "add_note",
                "summary": "Write a note (one finding), on your running attempt if given",
                "requestBody": _body(
                    ["text"],
                    {"text": {"type": "string"}, "attempt_id": {"type": "string"}, "model": {"type": "string"}},
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
                    _param("working_attempt_id", "query", {"type": "string"}, "record the read on it"),
                    _param("revision", "query", {"type": "integer", "minimum": 1}, "an earlier text"),
                    _param("render", "query", {"type": "string", "enum": ["html"]}, "add body_html (safe HTML)"),
                ],
                "responses": {"200": _json(_ref("Note"), "the note"), **_errors(400, 401, 403, 404)},
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
                    {"project": {"type": "string"}, "model": {"type": "string"}, "campaign": {"type": "string"}},
                ),
                "responses": {"201": _json(_OBJECT, "the attempt"), **_errors(400, 401, 403, 429)},
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
                "requestBody": _body(["outcome"], {"outcome": {"type": "string"}, "summary": {"type": "string"}}),
                "responses": {"200": _json(_OBJECT, "the attempt"), **_errors(400, 401, 403, 404, 409, 429)},
            }
        },
        "/api/projects/{project}/brief": {
            "get": {
                "operationId": "brief",
                "summary": "The one thing to read first on a project: its digest, the recent stream, what is new",
                "parameters": [_param("project", "path", {"type": "string"}, "a project")],
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
                "parameters": [_param("project", "path", {"type": "string"}, "a project"), _LIMIT],
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
                "responses": {"200": _json(_OBJECT, "tags"), **_errors(401)},
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
