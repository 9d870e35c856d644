"""What every handler is given beside its request: the API, the tokens, and the server's own parts."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from ...errors import InvalidArgumentError, NoteTooLargeError
from ...model.access_tokens import Tokens
from ...services.server_api import Caller, ServerAPI, caller_from_header

__all__ = ["Context", "body_limit"]


def body_limit(api: ServerAPI) -> int:
    """Bytes a request body may have: a note at the store's limit, JSON-escaped, and room around it."""
    return api.store.max_bytes * 2 + 64 * 1024


@dataclass(frozen=True)
class Context:
    """One server's state, made once by ``make_app`` and passed to each handler.

    *ready* waits for a model still loading in the background; *document* is the OpenAPI
    document served; *assets* are the web page's files by name, with their media types."""

    api: ServerAPI
    tokens: Tokens
    ready: Callable[[], None] | None = None
    document: dict[str, Any] = field(default_factory=dict)
    assets: dict[str, tuple[bytes, str]] = field(default_factory=dict)

    @property
    def limit(self) -> int:
        return body_limit(self.api)

    def caller(self, request: Request) -> Caller:
        """The caller a request's bearer token names; a token that is not valid is refused."""
        return caller_from_header(self.tokens, request.headers.get("authorization"))

    async def body(self, request: Request) -> dict[str, Any]:
        """The request's JSON object, refused past :attr:`limit` bytes."""
        limit = self.limit
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            if int(declared) <= 4 * limit:
                # Read and drop a body not far over the limit, so that a client still sending
                # it reads the 413 instead of a broken connection; a larger one is cut off.
                async for _chunk in request.stream():
                    pass
            raise NoteTooLargeError(f"the request body is {declared} bytes; at most {limit}")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise NoteTooLargeError(f"the request body is over {limit} bytes")
            chunks.append(chunk)
        try:
            data = json.loads(b"".join(chunks) or b"null")
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise InvalidArgumentError("the request body must be JSON (and not nested too deeply)") from None
        if not isinstance(data, dict):
            raise InvalidArgumentError("the request body must be a JSON object")
        return data
