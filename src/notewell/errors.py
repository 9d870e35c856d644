"""The one error hierarchy of notewell.

Every error carries a stable ``code`` that the interfaces map in one place
(CLI: stderr line + exit code; HTTP: status + JSON; MCP: tool error)::

    NotewellError                     code "error"
    ├── NotFoundError                 "not_found"
    ├── InvalidIdError                "invalid_id"
    ├── InvalidNoteError              "invalid_note"
    │   └── NoteTooLargeError         "too_large"
    ├── InvalidQueryError             "invalid_query"
    ├── InvalidArgumentError          "invalid_argument"
    ├── FrozenError                   "frozen"
    ├── UnavailableError              "unavailable"
    ├── StorageError                  "storage"
    ├── BusyError                     "busy"
    ├── UnauthorizedError             "unauthorized"  (no token, or not a valid one)
    ├── ForbiddenError                "forbidden"     (the token may not do this)
    └── RateLimitedError              "rate_limited"  (too many writes; retry_after seconds)
"""

from __future__ import annotations

__all__ = [
    "BusyError",
    "ConflictError",
    "ForbiddenError",
    "FrozenError",
    "InvalidArgumentError",
    "InvalidIdError",
    "InvalidNoteError",
    "InvalidQueryError",
    "NoteTooLargeError",
    "NotFoundError",
    "NotewellError",
    "RateLimitedError",
    "StorageError",
    "UnauthorizedError",
    "UnavailableError",
]


class NotewellError(Exception):
    """Base of every error notewell raises on purpose."""

    code: str = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, str]:
        """The error as the JSON shape every interface uses."""
        return {"code": self.code, "message": self.message}


class NotFoundError(NotewellError):
    """No note (or revision) with that id."""

    code = "not_found"


class InvalidIdError(NotewellError, ValueError):
    """The text given as an id is not an id (e.g. ``../x``)."""

    code = "invalid_id"


class InvalidNoteError(NotewellError, ValueError):
    """The note text cannot be stored (empty, NUL bytes, not UTF-8, ...)."""

    code = "invalid_note"


class NoteTooLargeError(InvalidNoteError):
    """The note is over the store's size limit."""

    code = "too_large"


class InvalidQueryError(NotewellError, ValueError):
    """The search query cannot be run, even after quoting its words."""

    code = "invalid_query"


class InvalidArgumentError(NotewellError, ValueError):
    """A parameter (filter, limit, date, ...) has a value that cannot be used."""

    code = "invalid_argument"


class ConflictError(NotewellError):
    """The request meets what the store holds already (an id it has used)."""

    code = "conflict"


class FrozenError(NotewellError):
    """The note's attempt has ended, so the note can no longer change (or the attempt
    itself has ended and takes no more notes)."""

    code = "frozen"


class UnavailableError(NotewellError):
    """A part that needs an optional extra (e.g. the embedding model) is not installed."""

    code = "unavailable"


class StorageError(NotewellError):
    """The folder or the index could not be read or written."""

    code = "storage"


class BusyError(NotewellError):
    """Another writer held the store for longer than the wait allows."""

    code = "busy"


class UnauthorizedError(NotewellError):
    """A server needs a (valid) token for this."""

    code = "unauthorized"


class ForbiddenError(NotewellError):
    """The caller is known but may not do this (a read-only token writing, another author's note)."""

    code = "forbidden"


class RateLimitedError(NotewellError):
    """Too many writes from one token; try again after ``retry_after`` seconds."""

    code = "rate_limited"

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after
