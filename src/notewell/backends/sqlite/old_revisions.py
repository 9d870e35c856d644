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
from ...model.note import Card, preview
from ...search.embedders import Embedder, numpy
from ...search.filters import Filters
from ...search.old_passages import OldPassage, OldPassages
from ...search.passages import passage_snippet, passages, query_vector, with_feedback
from ...search.query import compile_query
from ...search.request import RANK_WINDOW
from ...search.snippets import make_snippet, phrases_of
from .filters_sql import filter_sql
from .index import Index
from .keyword import card_from_row, card_rows
from .old_revision_rows import OLD_VECTORS_STATE, old_vectors_changed
from .semantic import allowed_notes

__all__ = ["embed_old_revisions", "keep_superseded_vectors", "older_keyword_search", "older_semantic_search"]

_EMBED_BATCH = 64


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


def _vector_key(index: Index, embedder: Embedder) -> tuple:
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


def keep_superseded_vectors(conn: sqlite3.Connection, note_id: str) -> None:
    """Before a note's vectors are replaced: keep those made from a text that is now an older
    revision (matched by the file's sha256 in the journal's revisions) as that revision's."""
    moved = conn.execute(
        "INSERT OR IGNORE INTO old_vectors(note_id, revision, chunk, model, dim, start, stop, vector)"
        " SELECT v.note_id, o.revision, v.chunk, v.model, v.dim, v.start, v.stop, v.vector"
        " FROM note_vectors v JOIN note_index n ON n.id = v.note_id"
        " JOIN old_revisions o ON o.note_id = v.note_id AND o.searchable = 1 AND o.revision ="
        " (SELECT max(r.revision) FROM revisions r WHERE r.id = v.note_id AND r.sha256 = v.sha256"
        " AND r.revision < n.revision)"
        " WHERE v.note_id = ?",
        (note_id,),
    ).rowcount
    if moved:
        conn.execute(
            "DELETE FROM old_embed_queue WHERE note_id = ? AND revision IN"
            " (SELECT revision FROM old_vectors WHERE note_id = ?)",
            (note_id, note_id),
        )
        old_vectors_changed(conn)


def embed_old_revisions(index: Index, embedder: Embedder, limit: int | None) -> int:
    """Embed up to *limit* older revisions waiting for vectors of this model (newest first),
    from their indexed text; returns how many. One whose text the note's current vectors were
    made from takes a copy of them instead (no model). Vectors of another model are dropped
    and their revisions wait again. With nothing waiting this reads two index entries."""
    np = numpy()
    conn = index.conn
    model, dim = embedder.model_id, embedder.dim
    other = "FROM old_vectors WHERE model < ? OR model > ?"  # two ranges of old_vectors_model, not !=
    if conn.execute(f"SELECT 1 {other} LIMIT 1", (model, model)).fetchone():
        with index.write():
            conn.execute(
                f"INSERT OR IGNORE INTO old_embed_queue(note_id, revision) SELECT note_id, revision {other}",
                (model, model),
            )
            conn.execute(f"DELETE {other}", (model, model))
            old_vectors_changed(conn)
    todo = conn.execute(
        # CROSS JOIN: from the queue (small, often empty) outwards, never a walk of the texts.
        "SELECT q.note_id, q.revision, f.title, f.body, r.sha256 FROM old_embed_queue q"
        " CROSS JOIN old_revisions o ON o.note_id = q.note_id AND o.revision = q.revision"
        " CROSS JOIN old_revisions_fts f ON f.rowid = o.rowid"
        " LEFT JOIN revisions r ON r.id = q.note_id AND r.revision = q.revision"
        " ORDER BY o.rowid DESC LIMIT ?",
        (-1 if limit is None else limit,),
    ).fetchall()
    done = 0
    for at in range(0, len(todo), _EMBED_BATCH):
        batch = todo[at : at + _EMBED_BATCH]
        copies = [(nid, rev) for nid, rev, _t, _b, sha in batch if sha and _copyable(conn, nid, sha, model)]
        copied = set(copies)
        group = [
            (nid, rev, passages(unsegment(t), unsegment(b))) for nid, rev, t, b, _s in batch if (nid, rev) not in copied
        ]
        texts = [p[2] for _n, _r, parts in group for p in parts]
        vectors = embedder.embed_documents(texts) if texts else np.zeros((0, dim), np.float32)
        position = 0
        with index.write():
            for nid, rev in copies:
                conn.execute(
                    "INSERT OR IGNORE INTO old_vectors(note_id, revision, chunk, model, dim, start, stop, vector)"
                    " SELECT v.note_id, ?, v.chunk, v.model, v.dim, v.start, v.stop, v.vector FROM note_vectors v"
                    " JOIN revisions r ON r.id = v.note_id AND r.revision = ? AND r.sha256 = v.sha256"
                    " WHERE v.note_id = ? AND v.model = ?",
                    (rev, rev, nid, model),
                )
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
            conn.executemany(
                "DELETE FROM old_embed_queue WHERE note_id = ? AND revision = ?", [(n, r) for n, r, *_ in batch]
            )
            old_vectors_changed(conn)
        done += len(group)
    return done


def _copyable(conn: sqlite3.Connection, note_id: str, sha: str, model: str) -> bool:
    """Whether the note's current vectors of *model* were made from the text with *sha*."""
    found = conn.execute(
        "SELECT 1 FROM note_vectors WHERE note_id = ? AND chunk = 0 AND sha256 = ? AND model = ?", (note_id, sha, model)
    ).fetchone()
    return found is not None
