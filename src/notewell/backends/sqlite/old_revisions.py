"""Searching older revisions in the embedded index, after the current texts (the rows
themselves: :mod:`.old_revision_rows`; their vectors, each distinct passage of a note once:
:mod:`.old_vectors`).

Searches ask them only for the places the current texts left (:func:`~...search.plan.run_search`),
so a word or meaning only an older text has still finds its note, below every current match,
on a card naming that revision (``matched_revision``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import replace

from ...model.cjk import unsegment
from ...model.note import Card, preview
from ...search.embedders import Embedder
from ...search.filters import Filters
from ...search.old_passages import OldPassage, OldPassages
from ...search.passages import passage_snippet, query_vector, with_feedback
from ...search.query import compile_query
from ...search.request import RANK_WINDOW
from ...search.snippets import make_snippet, phrases_of
from .filters_sql import filter_sql
from .index import Index
from .keyword import card_from_row, card_rows
from .old_revision_rows import OLD_VECTORS_STATE
from .semantic import allowed_notes

__all__ = ["older_keyword_search", "older_semantic_search"]


def _excluding(exclude: set[str]) -> tuple[str, list[str]]:
    if not exclude:
        return "", []
    return f" AND n.id NOT IN ({','.join('?' * len(exclude))})", sorted(exclude)


def older_keyword_search(index: Index, query: str, *, limit: int, filters: Filters, exclude: set[str]) -> list[Card]:
    """The best *limit* notes (none in *exclude*) that *query* finds only in an older revision,
    as cards of the note as it is now whose snippet is from the revision that matched
    (``matched_revision``); scoreless, since they rank below every current match.

    The candidates are the RANK_WINDOW notes (not revisions: one note edited a thousand times
    crowds out no other) with the newest matching revisions that pass the filters. They are
    ranked by FTS5's BM25 over the older revisions; for a viewer who may not see some
    projects, by recency alone (the newest matching revision first), since those figures
    count the hidden projects' revisions too and an order built on them would tell which
    words those revisions hold."""
    cq = compile_query(query)  # the current pass has refused a bad query already
    where, params = filter_sql(filters)
    cond = f" AND {where}" if where else ""
    skip, skipped = _excluding(exclude)
    ranked = not filters.criteria.hidden_projects
    rank = "f.rank" if ranked else "0"
    conn = index.conn
    window = max(RANK_WINDOW, limit)
    for expr in (cq.strict, cq.fallback):
        if expr is None:
            continue
        best: dict[str, tuple[float, int, int, str]] = {}  # note -> (rank, -rowid, revision, body)
        try:
            # The newest matching revisions first (rowids follow writes), until the window holds
            # enough notes; FTS5's rank only for the rows read.
            for nid, revision, value, rowid, body in conn.execute(
                f"SELECT o.note_id, o.revision, {rank}, f.rowid, f.body FROM old_revisions_fts f"
                " JOIN old_revisions o ON o.rowid = f.rowid JOIN note_index n ON n.id = o.note_id"
                f" WHERE old_revisions_fts MATCH ? AND o.revision < n.revision{cond}{skip}"
                " ORDER BY f.rowid DESC",
                [expr, *params, *skipped],
            ):
                entry = (float(value), -rowid, revision, body)
                if nid in best:
                    best[nid] = min(best[nid], entry)
                elif len(best) < window:
                    best[nid] = entry
                else:
                    break
        except sqlite3.OperationalError:
            continue
        chosen = sorted(best.items(), key=lambda item: item[1][:2])[:limit]
        phrases = phrases_of(expr)
        hits = [(nid, e[2], make_snippet(unsegment(e[3]), phrases) or preview(unsegment(e[3]))) for nid, e in chosen]
        return _cards(index, hits, "keyword", limit)
    return []


def _cards(index: Index, hits: list[tuple[str, int, str]], mode: str, limit: int) -> list[Card]:
    """Cards of the notes as they are now, scoreless (they rank below every current match,
    so no figure of theirs is set beside the current cards'), naming the revision matched."""
    if not hits:
        return []
    rows = card_rows(index, "id", [nid for nid, _r, _s in hits], "preview")
    cards = []
    for nid, revision, snippet in hits:
        row = rows.get(nid)
        if row is not None:  # else deleted since the hit was found
            cards.append(replace(card_from_row(row, snippet, None), matched_revision=revision, mode=mode))
    return cards[:limit]


def _vector_key(index: Index, embedder: Embedder) -> tuple[object, ...]:
    return (index.vectors_epoch(), embedder.model_id, embedder.dim, index.get_state(OLD_VECTORS_STATE))


def _vector_rows(index: Index, embedder: Embedder) -> Iterator[OldPassage]:
    yield from index.conn.execute(
        "SELECT note_id, revision, start, stop, vector FROM old_vectors WHERE model = ? AND dim = ?",
        (embedder.model_id, embedder.dim),
    )


def older_semantic_search(
    index: Index,
    embedder: Embedder,
    matrix: OldPassages,
    query: str,
    *,
    limit: int,
    filters: Filters,
    exclude: set[str],
    openings: Callable[[], object],
) -> list[Card]:
    """The *limit* notes (none in *exclude*) nearest *query* in an older revision's passages
    (none under the embedder's floor), as scoreless cards of the note as it is now with that
    revision's passage as snippet. *openings*: the feedback notes' opening vectors, as the
    current pass moved the query vector with them."""
    raw = query_vector(embedder, query, limit)
    wanted = with_feedback(raw, openings())  # type: ignore[arg-type]
    hits = matrix.best(
        embedder,
        _vector_key(index, embedder),
        lambda: _vector_rows(index, embedder),
        wanted,
        limit=limit,
        allowed=allowed_notes(index, filters),
        exclude=exclude,
    )
    if not hits:
        return []
    bodies = {}
    for nid, revision, _score, _span in hits:
        row = index.conn.execute(
            "SELECT f.body FROM old_revisions o JOIN old_revisions_fts f ON f.rowid = o.rowid"
            " WHERE o.note_id = ? AND o.revision = ?",
            (nid, revision),
        ).fetchone()
        bodies[nid] = unsegment(row[0]) if row else ""
    spans = [(nid, revision, passage_snippet(bodies[nid], start, stop)) for nid, revision, _s, (start, stop) in hits]
    return _cards(index, spans, "semantic", limit)
