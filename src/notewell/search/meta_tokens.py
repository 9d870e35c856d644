"""The tokens that carry a note's filterable values (kind, tags, author, model, builds_on,
project) in the keyword index's ``meta`` column, and that filters and queries match."""

from __future__ import annotations

__all__ = ["meta_token"]

_MARK = "\ue000"  # a private-use character: a token char to FTS5 that no one types


def meta_token(field: str, value: str) -> str:
    """The notes_fts.meta token for one filterable value (*field*: one letter).

    Hex keeps any value one token whatever its characters; the mark keeps these tokens
    apart from every word a note or a query can contain.
    """
    return _MARK + field + value.encode("utf-8").hex()
