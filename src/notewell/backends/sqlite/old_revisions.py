"""Searching older revisions in the embedded index, after the current texts, and embedding
them (the rows themselves: :mod:`.old_revision_rows`).

Searches ask them only for the places the current texts left (:func:`~...search.plan.run_search`),
so a word or meaning only an older text has still finds its note, below every current match,
on a card naming that revision (``matched_revision``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import replace

from ...model.cjk import unsegment
from ...model.note import Card
from ...search.embedders import Embedder, numpy
from ...search.filters import Filters
from ...search.old_passages import OldPassage, OldPassages
from ...search.passages import passage_snippet, passages, query_vector, similarity_floor, with_feedback
from ...search.query import compile_query
from ...search.request import RANK_WINDOW
from ...search.snippets import make_snippet, phrases_of
from .filters_sql import filter_sql
from .index import Index
from .keyword import card_from_row, card_rows

__all__ = ["embed_old_revisions", "keep_superseded_vectors", "older_keyword_search", "older_semantic_search"]

_PREVIEW = 200
# Older revisions without vectors whose text is the one the note's current vectors were made from.
_COPYABLE_FROM = (
    "FROM old_revisions o JOIN revisions r ON r.id = o.note_id AND r.revision = o.revision"
    " JOIN note_vectors v ON v.note_id = o.note_id AND v.sha256 = r.sha256 AND v.model = ?"
    " WHERE NOT EXISTS (SELECT 1 FROM old_vectors w WHERE w.note_id = o.note_id AND w.revision = o.revision"
    " AND w.model = v.model)"
)
_COPYABLE = f"SELECT 1 {_COPYABLE_FROM} LIMIT 1"
_EMBED_BATCH = 64


def _excluding(exclude: set[str]) -> tuple[str, list[str]]:
    if not exclude:
        return "", []
    return f" AND n.id NOT IN ({','.join('?' * len(exclude))})", sorted(exclude)


def older_keyword_search(index: Index, query: str, *, limit: int, filters: Filters, exclude: set[str]) -> list[Card]:
    """The best *limit* notes (none in *exclude*) that *query* finds only in an older revision,
    as cards of the note as it is now whose snippet is from the revision that matched
    (``matched_revision``); scoreless, since they rank below every current match. Ranked by
    BM25 over the revisions among the RANK_WINDOW newest that pass the filters."""
    cq = compile_query(query)  # the current pass has refused a bad query already
    where, params = filter_sql(filters)
    cond = f" AND {where}" if where else ""
    skip, skipped = _excluding(exclude)
    conn = index.conn
    for expr in (cq.strict, cq.fallback):
        if expr is None:
            continue
        try:
            # The newest matching revisions first (rowids follow writes); FTS5's rank only for those.
            found = conn.execute(
                "SELECT o.note_id, o.revision, f.rank, f.body FROM old_revisions_fts f"
                " JOIN old_revisions o ON o.rowid = f.rowid JOIN note_index n ON n.id = o.note_id"
                f" WHERE old_revisions_fts MATCH ? AND o.revision < n.revision{cond}{skip}"
                " ORDER BY f.rowid DESC LIMIT ?",
                [expr, *params, *skipped, max(RANK_WINDOW, limit)],
            ).fetchall()
        except sqlite3.OperationalError:
            continue
        best: dict[str, tuple[float, int, str]] = {}
        for nid, revision, rank, body in found:
            if nid not in best or (rank, -revision) < (best[nid][0], -best[nid][1]):
                best[nid] = (rank, revision, body)
        chosen = sorted(best.items(), key=lambda item: (item[1][0], -item[1][1]))[:limit]
        phrases = phrases_of(expr)
        return _cards(
            index,
            [
                (nid, revision, make_snippet(unsegment(body), phrases) or _preview(body))
                for nid, (_r, revision, body) in chosen
            ],
            None,
        )
    return []


def _preview(body: str) -> str:
    return " ".join(unsegment(body).split())[:_PREVIEW]


def _cards(index: Index, hits: list[tuple[str, int, str]], scores: dict[str, float] | None) -> list[Card]:
    if not hits:
        return []
    rows = card_rows(index, "id", [nid for nid, _r, _s in hits], "preview")
    cards = []
    for nid, revision, snippet in hits:
        row = rows.get(nid)
        if row is None:
            continue
        score = None if scores is None else scores[nid]
        card = replace(card_from_row(row, snippet, score), matched_revision=revision)
        cards.append(card if scores is None else replace(card, mode="semantic"))
    return cards


def _vector_key(index: Index, embedder: Embedder) -> tuple:
    count, last = index.conn.execute(
        "SELECT count(*), coalesce(max(seq), 0) FROM old_vectors WHERE model = ? AND dim = ?",
        (embedder.model_id, embedder.dim),
    ).fetchone()
    return (index.vectors_epoch(), embedder.model_id, embedder.dim, count, last)


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
    """The *limit* notes (none in *exclude*) nearest *query* in an older revision's passages,
    as cards of the note as it is now with that revision's passage as snippet and its cosine
    as score (none under the embedder's floor). *openings*: the feedback notes' opening
    vectors, as the current pass moved the query vector with them."""
    raw = query_vector(embedder, query, limit)
    wanted = with_feedback(raw, openings())  # type: ignore[arg-type]
    where, params = filter_sql(filters)
    allowed = None
    if where:
        allowed = {nid for (nid,) in index.conn.execute(f"SELECT n.id FROM note_index n WHERE {where}", params)}
    hits = matrix.best(
        _vector_key(index, embedder),
        embedder.dim,
        lambda: _vector_rows(index, embedder),
        wanted,
        limit=limit,
        allowed=allowed,
        exclude=exclude,
        floor=similarity_floor(embedder),
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
    return _cards(
        index,
        [(nid, revision, passage_snippet(bodies[nid], start, stop)) for nid, revision, _s, (start, stop) in hits],
        {nid: round(score, 6) for nid, _r, score, _span in hits},
    )


def keep_superseded_vectors(conn: sqlite3.Connection, note_id: str) -> None:
    """Before a note's vectors are replaced: keep those made from a text that is now an older
    revision (matched by the file's sha256 in the journal's revisions) as that revision's."""
    conn.execute(
        "INSERT OR IGNORE INTO old_vectors(note_id, revision, chunk, model, dim, start, stop, vector)"
        " SELECT v.note_id, o.revision, v.chunk, v.model, v.dim, v.start, v.stop, v.vector"
        " FROM note_vectors v JOIN note_index n ON n.id = v.note_id"
        " JOIN old_revisions o ON o.note_id = v.note_id AND o.revision = (SELECT max(r.revision) FROM revisions r"
        "   WHERE r.id = v.note_id AND r.sha256 = v.sha256 AND r.revision < n.revision)"
        " WHERE v.note_id = ?",
        (note_id,),
    )


def embed_old_revisions(index: Index, embedder: Embedder, limit: int | None) -> int:
    """Embed up to *limit* older revisions that have no vectors of this model yet (newest
    first), from their indexed text; returns how many. Vectors of other models are dropped."""
    np = numpy()
    conn = index.conn
    other = "FROM old_vectors WHERE model < ? OR model > ?"  # two ranges of old_vectors_model, not !=
    if conn.execute(f"SELECT 1 {other} LIMIT 1", (embedder.model_id, embedder.model_id)).fetchone():
        with index.write():
            conn.execute(f"DELETE {other}", (embedder.model_id, embedder.model_id))
    # A revision whose text the note's current vectors were made from (an edit not embedded
    # yet) takes a copy of them, without the model.
    if conn.execute(_COPYABLE, (embedder.model_id,)).fetchone():
        with index.write():
            conn.execute(
                "INSERT OR IGNORE INTO old_vectors(note_id, revision, chunk, model, dim, start, stop, vector)"
                " SELECT v.note_id, o.revision, v.chunk, v.model, v.dim, v.start, v.stop, v.vector"
                f" {_COPYABLE_FROM}",
                (embedder.model_id,),
            )
    todo = conn.execute(
        "SELECT o.note_id, o.revision, f.title, f.body FROM old_revisions o JOIN old_revisions_fts f"
        " ON f.rowid = o.rowid WHERE NOT EXISTS (SELECT 1 FROM old_vectors v WHERE v.note_id = o.note_id"
        " AND v.revision = o.revision AND v.model = ?) ORDER BY o.rowid DESC LIMIT ?",
        (embedder.model_id, -1 if limit is None else limit),
    ).fetchall()
    done = 0
    for at in range(0, len(todo), _EMBED_BATCH):
        group = [(nid, rev, passages(unsegment(t), unsegment(b))) for nid, rev, t, b in todo[at : at + _EMBED_BATCH]]
        texts = [p[2] for _n, _r, parts in group for p in parts]
        vectors = embedder.embed_documents(texts) if texts else np.zeros((0, embedder.dim), np.float32)
        model, dim = embedder.model_id, embedder.dim
        position = 0
        with index.write():
            for nid, rev, parts in group:
                conn.executemany(
                    "INSERT OR IGNORE INTO old_vectors(note_id, revision, chunk, model, dim, start, stop, vector)"
                    " SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM old_revisions"
                    " WHERE note_id = ? AND revision = ?)",
                    [
                        (nid, rev, k, model, dim, a, b, vectors[position + k].tobytes(), nid, rev)
                        for k, (a, b, _t) in enumerate(parts)
                    ],
                )
                position += len(parts)
        done += len(group)
    return done
