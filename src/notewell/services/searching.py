"""A search as every interface answers it: the cards, and how many notes the model has not
embedded yet (which a semantic, both or hybrid search cannot have seen).

The CLI, the search helper and the servers (through :class:`~.server_api.ServerAPI`) all answer
through :func:`search`, so the "not embedded yet" figure means the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import NotewellError
from ..model.note import Card
from ..model.visibility import Viewer
from .contract import NoteStore

__all__ = ["SearchAnswer", "search"]

_BY_MEANING = ("semantic", "both", "hybrid")  # the modes that ask the model


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """The cards of a search, and the notes it could not have found by meaning."""

    cards: list[Card]
    # Always 0 for a keyword search, which needs no model; None for a viewer kept from some
    # private project: the store-wide count would tell them how much is written there.
    not_embedded: int | None


def search(
    store: NoteStore,
    query: str,
    *,
    mode: str = "keyword",
    limit: int = 10,
    wait: bool = False,
    viewer: Viewer | None = None,
    **filters: Any,
) -> SearchAnswer:
    """Search *store* (as :meth:`NoteStore.search_notes`) and count what the model has not seen."""

    def run() -> list[Card]:
        return store.search_notes(query, mode=mode, limit=limit, wait=wait, viewer=viewer, **filters)

    if mode not in _BY_MEANING:
        return SearchAnswer(run(), 0)  # keyword search needs no model (and a bad mode fails in it)
    if store.hidden_projects(viewer):
        return SearchAnswer(run(), None)
    # Counted before the search too: a note embedded while it ran was not seen by it, and a
    # count made only after would say nothing was missed. (A search that waits embeds first.)
    before = None if wait else _pending(store)
    cards = run()
    return SearchAnswer(cards, max(store.pending_embeddings(), before or 0))


def _pending(store: NoteStore) -> int | None:
    """The store's count of notes waiting for the model; None when it cannot count (no model:
    the search then says why, in its own words)."""
    try:
        return store.pending_embeddings()
    except NotewellError:
        return None
