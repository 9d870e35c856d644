"""Keyword search: FTS5 with BM25 (title weighted 3x), recency breaking ties,
and cards with highlighted snippets."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from typing import Any

from ...errors import InvalidQueryError
from ...model.note import PREVIEW_CHARS, Card, preview
from ...search.filters import Filters, check_offset
from ...search.fusion import coverage
from ...search.passage_rank import SCAN_CHARS, Candidate, head_size, idf, rerank, within_budget
from ...search.query import CompiledQuery, compile_query, title_expression
from ...search.request import RANK_WINDOW, TITLE_WINDOW, check_limit
from ...search.snippets import make_snippet, phrases_of, snippet_maker
from .bm25 import Weights, bm25_ranks, document_frequency, weigh
from .filters_sql import filter_sql, fts_suffix, hidden_match
from .index import Index

__all__ = ["CARD_COLUMNS", "CARD_FROM", "card_from_row", "card_rows", "keyword_ids", "keyword_search", "list_cards"]

CARD_COLUMNS = (
    "n.rowid, n.id, n.title, n.kind, n.tags, n.builds_on, n.model, n.author, n.created_at, n.updated_at,"
    " n.attempt_id, a.project, coalesce(p.campaign, a.campaign), n.note_kind, a.outcome, a.ended_at"
)
# A campaign set on the project wins over the one its attempt was started with.
CARD_FROM = "note_index n LEFT JOIN attempts a ON a.id = n.attempt_id LEFT JOIN projects p ON p.name = a.project"
Where = tuple[str, list[Any]]  # an SQL condition and its parameters
_NOT = re.compile(r"\bNOT\b")
_ONE_MATCH = "SELECT 1 FROM notes_fts WHERE notes_fts MATCH ? AND rowid = ?"
_PREVIEW = 16  # the column after CARD_COLUMNS
# Up to this many notes holding the query's phrases (summed), FTS5 ranks (its bm25() walks
# them all, about 0.1 µs each); above it bm25.bm25_ranks does, from the candidates' text.
FTS5_WALK = 50_000
# A loose-pass word in more notes than this waits until the rarer words are used up
# (counted exactly: bm25.PROBE is larger).
COMMON = 1000


def card_from_row(row: tuple | sqlite3.Row, snippet: str, score: float | None) -> Card:
    """A card from a CARD_COLUMNS row (the rowid first; tags and builds_on as JSON text)."""
    columns = (*row[1:4], json.loads(row[4]), json.loads(row[5]), *row[6:16])
    return Card.from_columns(columns, snippet, score)


BODY_SQL = "substr(t.text, t.body_at + 1)"  # note_text's body (body_at counts from 0)
# A preview reads this much of the body: enough unless the opening is mostly whitespace.
_HEAD_CHARS = 4 * PREVIEW_CHARS
_HEAD_SQL = f"substr(t.text, t.body_at + 1, {_HEAD_CHARS})"


def _with_preview(index: Index, rows: list[tuple]) -> list[tuple]:
    """*rows* whose last column is a body's opening (_HEAD_CHARS) with a preview of the body
    in its place: the whole body read again for one whose opening did not fill a preview."""
    out = []
    for row in rows:
        head = row[-1] or ""
        shown = preview(head)
        if len(shown) < PREVIEW_CHARS and len(head) >= _HEAD_CHARS:
            (body,) = index.conn.execute(f"SELECT {BODY_SQL} FROM note_text t WHERE t.rowid = ?", (row[0],)).fetchone()
            shown = preview(body or "")
        out.append((*row[:-1], shown))
    return out


def card_rows(index: Index, key: str, values: list[Any], extra: str) -> dict[Any, tuple]:
    """Card rows (CARD_COLUMNS, then the note's ``preview`` or its ``body``: *extra*) of the
    notes whose ``rowid`` or ``id`` (*key*) is in *values*, by that key."""
    at = 0 if key == "rowid" else 1
    marks = ",".join("?" * len(values))
    column = {"preview": _HEAD_SQL, "body": BODY_SQL}[extra]
    rows = index.conn.execute(
        f"SELECT {CARD_COLUMNS}, {column} FROM {CARD_FROM} JOIN note_text t ON t.rowid = n.rowid"
        f" WHERE n.{key} IN ({marks})",
        values,
    ).fetchall()
    return {r[at]: r for r in (_with_preview(index, rows) if extra == "preview" else rows)}


def _ranked(
    index: Index,
    query: str,
    where: str,
    params: list[Any],
    limit: int,
    exclude: set[int],
    suffix: str = "",
    title_filter: Where = ("", []),
    hidden: str | None = None,
) -> tuple[list[tuple[int, float]], Weights]:
    """Rowids and BM25 ranks of the matches, best first (the newest first among equals;
    :func:`_by_passages` then reads the head's passages), and the expression's weights.

    A query matching many notes ranks the RANK_WINDOW most recently written matches that
    pass the filters (rowids grow with every write), together with the newest TITLE_WINDOW
    older notes whose title matches, so that a note named after the words is not cut off
    by the window. FTS5 ranks them when the query's words are in few notes; otherwise
    bm25.bm25_ranks does, with FTS5's formula and without its walk of every note that
    holds each word. With *hidden* (projects the viewer may not see), always the latter, with
    the figures of the notes the viewer may see (FTS5's bm25() counts every note).
    """
    conn = index.conn
    # Filters that FTS5 can answer (*suffix*) are part of the match; the rest join note_index.
    expr = f"({query}){suffix}" if suffix else query
    join = " JOIN note_index n ON n.rowid = f.rowid" if where else ""
    cond = " WHERE notes_fts MATCH ?" + (f" AND {where}" if where else "")
    want = limit + len(exclude)
    # The window counts notes that pass the filters, so it never needs widening.
    window = max(RANK_WINDOW, want)
    candidates = [
        r
        for (r,) in conn.execute(
            f"SELECT f.rowid FROM notes_fts f{join}{cond} ORDER BY f.rowid DESC LIMIT ?", [expr, *params, window + 1]
        )
    ]
    if len(candidates) > window:
        edge = candidates.pop()
        titled = _title_matches(conn, query, title_filter, edge)
        if _NOT.search(query):
            # A title can match "a NOT b" while the body holds b: keep only whole matches.
            titled = [r for r in titled if conn.execute(_ONE_MATCH, [expr, r]).fetchone()]
        candidates += titled
    weights = weigh(index, query, hidden)
    if hidden is None and weights.total <= FTS5_WALK:
        ranks = _fts5_ranks(conn, expr, join, cond, params, candidates)
    else:
        ranks = bm25_ranks(index, weights, candidates)
    # rank, then rowid: exact ties go to the most recently written note.
    order = sorted(candidates, key=lambda r: (ranks.get(r, 0.0), -r))
    return [(r, ranks.get(r, 0.0)) for r in order if r not in exclude], weights


def _by_passages(
    index: Index, ranked: list[tuple[int, float]], weights: Weights, wanted: int
) -> list[tuple[int, float]]:
    """*ranked* (rowid, rank; best first) with its head ranked by each note's best passage
    as well (:mod:`notewell.search.passage_rank`), ranks keeping FTS5's sign (lower is better).
    The head's lengths are read first, so that no text past the budget is read."""
    head = [r for r, _rank in ranked[: head_size(wanted)]]
    if not head or not weights.phrases:
        return ranked
    marks = ",".join("?" * len(head))
    lengths = dict(
        index.conn.execute(f"SELECT rowid, length(text) - body_at FROM note_text WHERE rowid IN ({marks})", head)
    )
    head = head[: within_budget([lengths.get(r, 0) for r in head], len(weights.phrases))]
    marks = ",".join("?" * len(head))
    texts = {
        r: (title or "", body or "")
        for r, title, body in index.conn.execute(
            f"SELECT n.rowid, n.title, substr(t.text, t.body_at + 1, {SCAN_CHARS}) FROM note_index n"
            f" JOIN note_text t ON t.rowid = n.rowid WHERE n.rowid IN ({marks})",
            head,
        )
    }
    candidates = [Candidate(r, -rank, *texts.get(r, ("", ""))) for r, rank in ranked]
    weighed = [idf(weights.rows, c) * n for c, n in zip(weights.counts, weights.repeats, strict=True)]
    ranked_again = rerank(candidates, weights.phrases, weighed, len(head))  # the head's texts are read
    return [(int(c.key), -c.score) for c in ranked_again]


def _fts5_ranks(
    conn: sqlite3.Connection, expr: str, join: str, cond: str, params: list[Any], candidates: list[int]
) -> dict[int, float]:
    """FTS5's own bm25() ranks of *candidates*, from one walk of the matches from the oldest."""
    if not candidates:
        return {}
    marks = ",".join("?" * len(candidates))
    # The CASE asks for the rank (and so runs BM25) only for the rows wanted.
    return dict(
        conn.execute(
            f"SELECT rowid, v FROM (SELECT f.rowid AS rowid, CASE WHEN f.rowid IN ({marks}) THEN f.rank END AS v"
            f" FROM notes_fts f{join}{cond} AND f.rowid >= ?) WHERE v IS NOT NULL",
            [*candidates, expr, *params, min(candidates)],
        )
    )


def _title_matches(conn: sqlite3.Connection, query: str, title_filter: Where, edge: int) -> list[int]:
    """The newest notes at or below rowid *edge* whose title matches and that pass the
    filters (*title_filter*: the full SQL form), from titles_fts (no ranking: a walk)."""
    expr = title_expression(query)  # the same match over titles_fts's one column
    if expr is None:
        return []  # no title can match it (``body: x``)
    where, params = title_filter
    join = " JOIN note_index n ON n.rowid = t.rowid" if where else ""
    try:
        return [
            r
            for (r,) in conn.execute(
                f"SELECT t.rowid FROM titles_fts t{join} WHERE titles_fts MATCH ? AND t.rowid <= ?"
                + (f" AND {where}" if where else "")
                + " ORDER BY t.rowid DESC LIMIT ?",
                [expr, edge, *params, TITLE_WINDOW],
            )
        ]
    except sqlite3.OperationalError:
        return []  # an expression FTS5 reads over notes_fts but not over titles_fts


def _run(
    index: Index,
    cq: CompiledQuery,
    where: str,
    params: list[Any],
    limit: int,
    suffix: str = "",
    title_filter: Where = ("", []),
    hidden: str | None = None,
) -> list[tuple[int, float, str]]:
    hits: list[tuple[int, float, str]] = []
    expr = cq.strict
    try:
        got, weights = _ranked(index, expr, where, params, limit, set(), suffix, title_filter, hidden)
    except sqlite3.OperationalError as exc:
        if cq.fallback is None:
            raise InvalidQueryError(f"query cannot be searched: {exc}") from None
        expr = cq.fallback
        try:
            got, weights = _ranked(index, expr, where, params, limit, set(), suffix, title_filter, hidden)
        except sqlite3.OperationalError as exc2:
            raise InvalidQueryError(f"query cannot be searched: {exc2}") from None
    # A query in FTS5 syntax (a column, NOT, a phrase) ranks as written: passages are read loosely.
    hits.extend((r, s, expr) for r, s in (got if cq.raw else _by_passages(index, got, weights, limit))[:limit])
    if len(hits) < limit and cq.loose:
        for loose in _loose_passes(index, cq, hidden):
            try:
                more, weights = _ranked(
                    index,
                    loose,
                    where,
                    params,
                    limit - len(hits),
                    {r for r, _, _ in hits},
                    suffix,
                    title_filter,
                    hidden,
                )
            except sqlite3.OperationalError:
                continue
            more = _by_passages(index, more, weights, limit - len(hits))
            hits.extend((r, s, loose) for r, s in more[: limit - len(hits)])
            if len(hits) >= limit:
                break
    return hits


def _loose_passes(index: Index, cq: CompiledQuery, hidden: str | None = None) -> list[str]:
    """The loose pass's expressions: any of the informative words first, then any word.

    A word found in very many notes says little about which of them is wanted (BM25
    gives it a low weight) yet costs the most to rank: FTS5 walks its whole list of
    notes. So while some words are rarer, notes are found and ranked by those; the
    common ones come in only to fill up the results (as in Lucene's CommonTermsQuery).
    """
    assert cq.loose is not None
    rare = [term for term in cq.loose_terms if 0 < document_frequency(index, term, hidden=hidden) <= COMMON]
    if not rare or len(rare) == len(cq.loose_terms):
        return [cq.loose]
    return [" OR ".join(rare), cq.loose]


def keyword_search(
    index: Index,
    query: str,
    *,
    limit: int = 10,
    filters: Filters | None = None,
    partial: dict[str, float] | None = None,
    snippets: dict[str, Callable[[], str]] | None = None,
) -> list[Card]:
    """The best *limit* notes for *query*, as cards with highlighted snippets. Notes found
    only by the loose pass (not every word) go into *partial* if given, each with the share
    of the query's words it holds (:func:`notewell.search.fusion.coverage`). With *snippets*, the cards come
    without one and *snippets* maps each id to what makes it (for the few a fusion keeps)."""
    check_limit(limit)  # cheap; the engines are public, and the plan asks them for pools
    cq = compile_query(query)
    filters = filters or Filters()
    where, params = filter_sql(filters, dates_only=True)
    hits = _run(index, cq, where, params, limit, fts_suffix(filters), filter_sql(filters), hidden_match(filters))
    if not hits:
        return []
    marks = ",".join("?" * len(hits))
    wanted = [h[0] for h in hits]
    bodies = dict(index.conn.execute(f"SELECT t.rowid, {BODY_SQL} FROM note_text t WHERE t.rowid IN ({marks})", wanted))
    phrases = {expr: phrases_of(expr) for expr in {h[2] for h in hits}}
    rows = card_rows(index, "rowid", wanted, "preview")
    cards = []
    for rowid, score, expr in hits:
        row = rows.get(rowid)
        if row is None:
            continue
        body = bodies.get(rowid) or ""
        if snippets is None:
            snippet = make_snippet(body, phrases[expr]) or row[_PREVIEW]
        else:
            snippet = ""
            snippets[row[1]] = snippet_maker(body, phrases[expr], row[_PREVIEW])
        cards.append(card_from_row(row, snippet, float(f"{-score:.6g}")))
        if partial is not None and expr not in (cq.strict, cq.fallback):
            partial[row[1]] = coverage(cq, row[2], body)
    return cards


def keyword_ids(index: Index, query: str, *, limit: int = 3, filters: Filters | None = None) -> list[str]:
    """The ids of the best *limit* notes for *query*, without cards (none for a query
    without words)."""
    try:
        cq = compile_query(query)
    except InvalidQueryError:
        return []
    filters = filters or Filters()
    where, params = filter_sql(filters, dates_only=True)
    try:
        hits = _run(index, cq, where, params, limit, fts_suffix(filters), filter_sql(filters), hidden_match(filters))
    except InvalidQueryError:
        return []
    if not hits:
        return []
    rowids = [h[0] for h in hits]
    marks = ",".join("?" * len(rowids))
    ids = dict(index.conn.execute(f"SELECT rowid, id FROM note_index WHERE rowid IN ({marks})", rowids))
    return [ids[r] for r in rowids if r in ids]


def list_cards(index: Index, *, limit: int = 20, offset: int = 0, filters: Filters | None = None) -> list[Card]:
    """Notes newest-updated first, as cards whose snippet is the opening of the body."""
    check_limit(limit)
    check_offset(offset)
    where, params = filter_sql(filters or Filters())
    sql = f"SELECT {CARD_COLUMNS} FROM {CARD_FROM}" + (f" WHERE {where}" if where else "")
    sql += " ORDER BY n.updated_at DESC, n.rowid DESC LIMIT ? OFFSET ?"
    found = index.conn.execute(sql, [*params, limit, offset]).fetchall()
    marks = ",".join("?" * len(found))
    heads = dict(
        index.conn.execute(
            f"SELECT t.rowid, {_HEAD_SQL} FROM note_text t WHERE t.rowid IN ({marks})",
            [r[0] for r in found],
        )
    )
    rows = _with_preview(index, [(*r, heads.get(r[0], "")) for r in found])
    return [card_from_row(r, r[_PREVIEW], None) for r in rows]
