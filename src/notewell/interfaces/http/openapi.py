"""The OpenAPI 3.1 document of the HTTP API (served at /openapi.json), made from the route table."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...version import __version__
from .operations import Operation
from .routes import ROUTES
from .schemas import COMPONENTS, error_responses

__all__ = ["openapi_document"]


def _operation(op: Operation) -> dict[str, Any]:
    """One operation as the document says it."""
    doc: dict[str, Any] = {"operationId": op.operation_id, "summary": op.summary}
    if op.parameters:
        doc["parameters"] = list(op.parameters)
    if op.request_body is not None:
        doc["requestBody"] = op.request_body
    responses = {**op.answer.responses(), **error_responses(*op.errors)}
    if op.answer.guarded:
        # Any operation that reads the store can meet a busy store or a bug; both answer the error shape.
        responses.update(error_responses(500, 503))
    if op.path.startswith("/api/"):
        responses.update(error_responses(421))
    doc["responses"] = responses
    doc["security"] = op.answer.security
    return doc


def openapi_document(routes: Iterable[Operation] = ROUTES) -> dict[str, Any]:
    """The API described for clients and for the fuzzing tests: every documented route of *routes*."""
    paths: dict[str, dict[str, Any]] = {}
    for op in routes:
        if op.operation_id:
            paths.setdefault(op.documented_path, {})[op.method.lower()] = _operation(op)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "notewell",
            "version": __version__,
            "description": "Notes that the next agent can find: search, read and write a notewell store.",
        },
        "paths": paths,
        "components": COMPONENTS,
    }
