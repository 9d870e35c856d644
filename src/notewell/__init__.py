"""notewell: notes that the next agent can find.

A store is a folder of Markdown notes (the source of truth) with a SQLite index
beside it::

    import notewell
    store = notewell.open("notes")
    note = store.add_note("---\\ntitle: Cache stampede\\nkind: blocker\\n---\\nEvery worker refills...")
    cards = store.search_notes("stampede", kind="blocker")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import (
    BusyError,
    ConflictError,
    ForbiddenError,
    FrozenError,
    InvalidArgumentError,
    InvalidIdError,
    InvalidNoteError,
    InvalidQueryError,
    NoteTooLargeError,
    NotewellError,
    NotFoundError,
    RateLimitedError,
    SensitiveDataError,
    StorageError,
    UnauthorizedError,
    UnavailableError,
)

if TYPE_CHECKING:
    from .model.attempt import Attempt
    from .model.header import ParsedNote, parse_note
    from .model.ids import new_note_id
    from .model.note import Card, Note
    from .model.slug import slugify
    from .model.visibility import Viewer
    from .services.contract import NoteStore
    from .services.opening import PgStore, Store, open_store

# The rest loads on first use, so `import notewell` costs only the error classes.
_LAZY = {
    "Attempt": ".model.attempt",
    "ParsedNote": ".model.header",
    "parse_note": ".model.header",
    "new_note_id": ".model.ids",
    "Card": ".model.note",
    "Note": ".model.note",
    "slugify": ".model.slug",
    "Viewer": ".model.visibility",
    "PgStore": ".services.opening",
    "Store": ".services.opening",
    "NoteStore": ".services.contract",
    "open_store": ".services.opening",
    "open": ".services.opening",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'notewell' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), "open_store" if name == "open" else name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


from .version import __version__  # noqa: E402 - after the lazy table, as before

__all__ = [
    "Attempt",
    "BusyError",
    "ConflictError",
    "Card",
    "ForbiddenError",
    "FrozenError",
    "InvalidArgumentError",
    "InvalidIdError",
    "InvalidNoteError",
    "InvalidQueryError",
    "Note",
    "NoteStore",
    "NoteTooLargeError",
    "NotFoundError",
    "NotewellError",
    "ParsedNote",
    "PgStore",
    "RateLimitedError",
    "SensitiveDataError",
    "StorageError",
    "Store",
    "UnauthorizedError",
    "UnavailableError",
    "Viewer",
    "__version__",
    "open",
    "open_store",
    "new_note_id",
    "parse_note",
    "slugify",
]
