"""Searching notes: the same parameters and cards as the MCP tool."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from ...errors import InvalidArgumentError
from ...services.server_api import MAX_QUERY_CHARS, Caller
from .answers import Json
from .context import Context
from .inputs import query_params, search_words
from .operations import Operation
from .schemas import FILTER_PARAMS, LIMIT, param, ref

__all__ = ["ROUTES"]


async def search(ctx: Context, request: Request, caller: Caller) -> Any:
    params = query_params(request)
    if "offset" in params:
        raise InvalidArgumentError("search takes no offset: raise limit (up to 100) instead")
    query = search_words(request)
    if params.get("mode", "keyword") != "keyword" and ctx.ready is not None:
        await run_in_threadpool(ctx.ready)
    return await run_in_threadpool(ctx.api.search_notes, caller, query, **params)


# What a query needs depends on the mode and on other parameters, which a parameter's schema
# cannot say: in words (and held to by the fuzzing test, as for names).
_QUERY = {
    "type": "string",
    "maxLength": MAX_QUERY_CHARS,
    "description": "search words: with a letter or a digit and no NUL, in every mode;"
    " blank or left out only with project or attempt_id, for their recent notes",
}
_RESULT = {
    "type": "object",
    "required": ["query", "mode", "cards"],
    "properties": {
        "query": {"type": "string"},
        "mode": {"type": "string"},
        "cards": {"type": "array", "items": ref("Card")},
        "not_embedded": {"type": "integer"},
    },
}

ROUTES = (
    # Before /api/notes/{note_id}, so that PATCH or DELETE here is refused, not read as a note id.
    Operation(
        "GET",
        "/api/notes/search",
        search,
        Json(_RESULT, "cards"),
        operation_id="search_notes",
        summary="Search notes: cards, not bodies (the same parameters and cards as the MCP tool)",
        parameters=(
            param("query", "query", _QUERY, "search words (as the MCP tool names them)"),
            param("q", "query", _QUERY, "search words: an alias of query (give one of them)"),
            param(
                "mode",
                "query",
                {"type": "string", "enum": ["keyword", "semantic", "both", "hybrid"]},
                "keyword (default, exact), semantic, both (side by side) or hybrid (fused)",
            ),
            LIMIT,
            param("wait", "query", {"type": "boolean"}, "embed waiting notes before a semantic search"),
            *FILTER_PARAMS,
        ),
        # wait=true embeds the backlog: a write, refused to a read-only token and rate limited.
        errors=(400, 401, 403, 404, 429, 503),
    ),
)
