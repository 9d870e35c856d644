"""Keyword search: FTS5 with BM25 (title weighted 3x), recency breaking ties,
and cards with highlighted snippets."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ..errors import InvalidArgumentError, InvalidQueryError
from ..model.cjk import unsegment
from ..model.note import Card
from ..storage.index import Index
from ..storage.schema import TITLE_WEIGHT
from .filters import Filters
from .query import CompiledQuery, compile_query

__all__ = ["CARD_COLUMNS", "card_from_row", "keyword_search", "list_cards"]

CARD_COLUMNS = "n.rowid, n.id, n.title, n.kind, n.tags, n.builds_on, n.model, n.author, n.created_at, n.updated_at"
_OPEN, _CLOSE = "\ue000", "\ue001"
_SNIPPET_TOKENS = 24
_MAX_LIMIT = 1000
RANK_WINDOW = 1000
_RANGE_GAP = 3000  # rowids closer than this share one walk of the matches between them


def card_from_row(row: tuple | sqlite3.Row, snippet: str, score: float | None) -> Card:
    _rowid, nid, title, kind, tags, builds_on, model, author, created, updated = row[:10]
    return Card(
        id=nid,
        title=title,
        kind=kind,
        tags=json.loads(tags),
        builds_on=json.loads(builds_on),
        model=model,
        author=author,
        created_at=created,
        updated_at=updated,
        snippet=snippet,
        score=score,
    )


def check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= _MAX_LIMIT:
        raise InvalidArgumentError(f"limit must be a whole number from 1 to {_MAX_LIMIT}, got {limit!r}")
    return limit


def _clean_snippet(raw: str) -> str:
    text = unsegment(raw)
    text = text.replace(_CLOSE + _OPEN, "")  # adjacent hits (CJK characters) form one highlight
    text = " ".join(text.split())
    return text.replace(_OPEN, "**").replace(_CLOSE, "**")


def _ranked(
    index: Index, expr: str, where: str, params: list[Any], limit: int, exclude: set[int]
) -> list[tuple[int, float]]:
    """Rowids and BM25 ranks of the best matches, the newest first among equals.

    BM25 scores every match it is asked to rank, at a few µs a note; so a query
    matching many notes ranks the RANK_WINDOW most recently written matches
    (rowids grow with every write), widening the window while filters leave too
    few of them, plus the best title matches, so that a note named after the
    words is never cut off by the window.
    """
    conn = index.conn
    join = " JOIN note_index n ON n.rowid = f.rowid" if where else ""
    cond = " WHERE notes_fts MATCH ?" + (f" AND {where}" if where else "")
    want = limit + len(exclude)
    window = RANK_WINDOW
    while True:
        boundary = conn.execute(
            "SELECT rowid FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            [expr, window],
        ).fetchone()
        since = " AND f.rowid > ?" if boundary else ""
        # rank, then rowid: exact ties go to the most recently written note.
        rows = conn.execute(
            f"SELECT f.rowid, f.rank FROM notes_fts f{join}{cond}{since} ORDER BY f.rank, f.rowid DESC LIMIT ?",
            [expr, *params, *([boundary[0]] if boundary else []), want],
        ).fetchall()
        if boundary is None or len(rows) >= want:
            break
        window *= 8
    if boundary is not None:
        rows = _with_title_matches(conn, expr, join, cond, params, want, rows)
    return [(r, s) for r, s in rows if r not in exclude][:limit]


def _with_title_matches(
    conn: sqlite3.Connection, expr: str, join: str, cond: str, params: list[Any], want: int, rows: list
) -> list[tuple[int, float]]:
    """Add the best title matches (scored in full) to a windowed ranking."""
    titled_expr = f"title : ({expr})"
    try:
        # Title matches are far fewer than body matches; past the window, the newest ones.
        boundary = conn.execute(
            "SELECT rowid FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            [titled_expr, RANK_WINDOW],
        ).fetchone()
        since = " AND f.rowid > ?" if boundary else ""
        titled = [
            r
            for (r,) in conn.execute(
                f"SELECT f.rowid FROM notes_fts f{join}{cond}{since} ORDER BY f.rank LIMIT ?",
                [titled_expr, *params, *([boundary[0]] if boundary else []), want],
            )
        ]
    except sqlite3.OperationalError:
        return rows  # an expression FTS5 cannot put under a column filter
    have = {r for r, _ in rows}
    extra = [r for r in titled if r not in have]
    if not extra:
        return rows
    scored = _for_rowids(conn, expr, extra, f"bm25(notes_fts, {TITLE_WEIGHT}, 1.0)")
    return sorted([*rows, *scored.items()], key=lambda rs: (rs[1], -rs[0]))[:want]


def _for_rowids(conn: sqlite3.Connection, expr: str, rowids: list[int], function: str) -> dict[int, Any]:
    """An FTS5 auxiliary function (bm25, snippet) for a few matching rows.

    ``rowid IN (...)`` next to MATCH makes FTS5 run the whole match once per rowid. A
    rowid range is walked once instead, calling the function only for the wanted rows;
    rowids far apart get ranges of their own, since walking the matches between them
    would cost more than a separate seek.
    """
    out: dict[int, Any] = {}
    ordered = sorted(set(rowids))
    groups: list[list[int]] = []
    for rowid in ordered:
        if groups and rowid - groups[-1][-1] <= _RANGE_GAP:
            groups[-1].append(rowid)
        else:
            groups.append([rowid])
    for group in groups:
        marks = ",".join("?" * len(group))
        out.update(
            conn.execute(
                f"SELECT rowid, v FROM (SELECT rowid, CASE WHEN rowid IN ({marks}) THEN {function} END AS v"
                " FROM notes_fts WHERE notes_fts MATCH ? AND rowid BETWEEN ? AND ?) WHERE v IS NOT NULL",
                [*group, expr, group[0], group[-1]],
            )
        )
    return out


def _run(index: Index, cq: CompiledQuery, where: str, params: list[Any], limit: int) -> list[tuple[int, float, str]]:
    hits: list[tuple[int, float, str]] = []
    expr = cq.strict
    try:
        got = _ranked(index, expr, where, params, limit, set())
    except sqlite3.OperationalError as exc:
        if cq.fallback is None:
            raise InvalidQueryError(f"query cannot be searched: {exc}") from None
        expr = cq.fallback
        try:
            got = _ranked(index, expr, where, params, limit, set())
        except sqlite3.OperationalError as exc2:
            raise InvalidQueryError(f"query cannot be searched: {exc2}") from None
    hits.extend((r, s, expr) for r, s in got)
    if len(hits) < limit and cq.loose:
        try:
            more = _ranked(index, cq.loose, where, params, limit - len(hits), {r for r, _, _ in hits})
        except sqlite3.OperationalError:
            more = []
        hits.extend((r, s, cq.loose) for r, s in more)
    return hits


def keyword_search(index: Index, query: str, *, limit: int = 10, filters: Filters | None = None) -> list[Card]:
    """The best *limit* notes for *query*, as cards with highlighted snippets."""
    check_limit(limit)
    cq = compile_query(query)
    where, params = (filters or Filters()).sql()
    hits = _run(index, cq, where, params, limit)
    if not hits:
        return []
    snippets: dict[int, str] = {}
    by_expr: dict[str, list[int]] = {}
    for rowid, _score, expr in hits:
        by_expr.setdefault(expr, []).append(rowid)
    snippet_call = f"snippet(notes_fts, 1, '{_OPEN}', '{_CLOSE}', '…', {_SNIPPET_TOKENS})"
    for expr, rowids in by_expr.items():
        for rowid, snip in _for_rowids(index.conn, expr, rowids, snippet_call).items():
            snippets[rowid] = _clean_snippet(snip or "")
    marks = ",".join("?" * len(hits))
    rows = {
        r[0]: r
        for r in index.conn.execute(
            f"SELECT {CARD_COLUMNS}, n.preview FROM note_index n WHERE n.rowid IN ({marks})",
            [h[0] for h in hits],
        )
    }
    cards = []
    for rowid, score, _expr in hits:
        row = rows.get(rowid)
        if row is None:
            continue
        snippet = snippets.get(rowid) or row[10]
        cards.append(card_from_row(row, snippet, float(f"{-score:.6g}")))
    return cards


def list_cards(index: Index, *, limit: int = 20, offset: int = 0, filters: Filters | None = None) -> list[Card]:
    """Notes newest-updated first, as cards whose snippet is the opening of the body."""
    check_limit(limit)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidArgumentError(f"offset must be a whole number ≥ 0, got {offset!r}")
    where, params = (filters or Filters()).sql()
    sql = f"SELECT {CARD_COLUMNS}, n.preview FROM note_index n" + (f" WHERE {where}" if where else "")
    sql += " ORDER BY n.updated_at DESC, n.rowid DESC LIMIT ? OFFSET ?"
    rows = index.conn.execute(sql, [*params, limit, offset]).fetchall()
    return [card_from_row(r, r[10], None) for r in rows]
