"""notewell: notes that the next agent can find.

A store is a folder of Markdown notes (the source of truth) with a SQLite index
beside it::

    import notewell
    store = notewell.open("notes")
    note = store.add_note("---\\ntitle: Cache stampede\\nkind: blocker\\n---\\nEvery worker refills...")
    cards = store.search_notes("stampede", kind="blocker")
"""

from __future__ import annotations

from .errors import (
    BusyError,
    InvalidArgumentError,
    InvalidIdError,
    InvalidNoteError,
    InvalidQueryError,
    NoteTooLargeError,
    NotewellError,
    NotFoundError,
    StorageError,
)
from .model.header import ParsedNote, parse_note
from .model.note import Card, Note
from .model.slug import slugify
from .services.store import Store, open_store

__version__ = "0.1.0"

open = open_store  # noqa: A001 - notewell.open(path) is the entry point

__all__ = [
    "BusyError",
    "Card",
    "InvalidArgumentError",
    "InvalidIdError",
    "InvalidNoteError",
    "InvalidQueryError",
    "Note",
    "NoteTooLargeError",
    "NotFoundError",
    "NotewellError",
    "ParsedNote",
    "StorageError",
    "Store",
    "__version__",
    "open",
    "open_store",
    "parse_note",
    "slugify",
]
