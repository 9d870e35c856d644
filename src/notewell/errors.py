"""The one error hierarchy of notewell.

Every error carries a stable ``code``; :data:`ERROR_KINDS` maps each code once to what every
interface makes of it (CLI: a stderr line and an exit code; HTTP: a status and JSON; MCP: a tool
error whose text starts with the code), and the reference is written from it::

    NotewellError                     code "error"
    ├── NotFoundError                 "not_found"
    ├── InvalidIdError                "invalid_id"
    ├── InvalidNoteError              "invalid_note"
    │   ├── NoteTooLargeError         "too_large"
    │   └── SensitiveDataError        "sensitive_data"  (a secret or personal data, NOTEWELL_REDACT=refuse)
    ├── InvalidQueryError             "invalid_query"
    ├── InvalidArgumentError          "invalid_argument"
    ├── FrozenError                   "frozen"
    ├── UnavailableError              "unavailable"
    ├── StorageError                  "storage"
    ├── BusyError                     "busy"
    ├── UnauthorizedError             "unauthorized"  (no token, or not a valid one)
    ├── ForbiddenError                "forbidden"     (the token may not do this)
    └── RateLimitedError              "rate_limited"  (too many writes or reports; retry_after seconds)
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "ERROR_KINDS",
    "BusyError",
    "ConflictError",
    "ErrorKind",
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
    "SensitiveDataError",
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


class SensitiveDataError(InvalidNoteError):
    """The text holds a secret or personal data and the store refuses such texts
    (``NOTEWELL_REDACT=refuse``): *kind* names it (``aws-key``, ``card-number``...), *line* its line."""

    code = "sensitive_data"

    def __init__(self, message: str, *, kind: str = "secret", line: int = 0) -> None:
        super().__init__(message)
        self.kind = kind
        self.line = line


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
    """Too many writes (or reports) from one caller; try again after ``retry_after`` seconds."""

    code = "rate_limited"

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ErrorKind(NamedTuple):
    """What one error code is on each interface (an MCP tool error always says its code)."""

    code: str
    exit_code: int  # the CLI's exit status
    http_status: int
    meaning: str  # for the reference


# The one table of error codes: the CLI, HTTP, MCP and the reference all read it.
ERROR_KINDS: tuple[ErrorKind, ...] = (
    ErrorKind("invalid_argument", 2, 400, "a parameter has a value that cannot be used"),
    ErrorKind("invalid_id", 2, 400, "the text given as an id is not one"),
    ErrorKind("not_found", 3, 404, "no note, revision, attempt or project by that name the caller may see"),
    ErrorKind("invalid_note", 4, 400, "the note text cannot be stored (empty, NUL bytes, a bad header)"),
    ErrorKind("too_large", 4, 413, "the note is over the store's size limit"),
    ErrorKind("invalid_query", 5, 400, "the search query cannot be run"),
    ErrorKind("storage", 6, 500, "the folder or the index could not be read or written (a full disk)"),
    ErrorKind("busy", 7, 503, "another writer held the store longer than the wait allows"),
    ErrorKind("frozen", 8, 409, "the note's attempt has ended: it can no longer change"),
    ErrorKind("unavailable", 9, 503, "a part that needs an optional extra is not installed"),
    ErrorKind("unauthorized", 10, 401, "a server needs a valid token for this"),
    ErrorKind("forbidden", 10, 403, "the caller may not do this"),
    ErrorKind(
        "rate_limited", 11, 429, "too many writes, or store-wide reads, from one caller (HTTP says when to retry)"
    ),
    ErrorKind("conflict", 12, 409, "an id the store has used, or an edit over a text changed since it was read"),
    ErrorKind(
        "sensitive_data", 13, 422, "the text holds a secret or personal data and the store refuses it (NOTEWELL_REDACT)"
    ),
)
