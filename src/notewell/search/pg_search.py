"""Keyword search on PostgreSQL: a weighted tsvector (title A, body B) under a GIN index,
``websearch_to_tsquery`` for what was typed, and pg_trgm for CJK text.

Ranking is ``ts_rank`` with the title weighted 3x the body and the score divided by
1 + log(length), in the spirit of the embedded store's BM25 (title 3x, long notes damped);
ties go to the most recently updated note. As on SQLite, when fewer notes than asked for
hold every word, a second pass fills up with notes holding any of the meaningful words.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidArgumentError
from ..model.cjk import CJK_RE
from ..model.note import Card
from .filters import Filters
from .keyword import RANK_WINDOW, TITLE_WINDOW, check_limit
from .query import compile_query
from .snippets import make_snippet, phrases_of

__all__ = ["CARD_SQL", "card_from_pg", "pg_keyword_search", "pg_list_cards"]

# ts_rank's weights run {D, C, B, A}: body (B) 1/3 of title (A).
_WEIGHTS = "'{0, 0, 0.333333, 1.0}'"
CARD_SQL = (
    "n.id, n.title, n.kind, n.tags, n.builds_on, n.model, n.author, n.created_at, n.updated_at,"
    " n.attempt_id, a.project, coalesce(p.campaign, a.campaign), n.note_kind, a.outcome, a.ended_at"
)
_CARD_FROM = "notes n LEFT JOIN attempts a ON a.id = n.attempt_id LEFT JOIN projects p ON p.name = a.project"
_PREVIEW = 200


def card_from_pg(row: tuple, snippet: str, score: float | None) -> Card:
    """A card from a CARD_SQL row (card_from_row's columns without the rowid; tags and
    builds_on arrive as arrays, not JSON text)."""
    nid, title, kind, tags, builds_on, model, author, created, updated = row[:9]
    attempt_id, project, campaign, note_kind, outcome, ended = row[9:15]
    return Card(
        id=nid,
        title=title,
        kind=kind,
        tags=list(tags),
        builds_on=list(builds_on),
        model=model,
        author=author,
        created_at=created,
        updated_at=updated,
        snippet=snippet,
        score=score,
        attempt_id=attempt_id,
        project=project,
        campaign=campaign,
        note_kind=note_kind or "note",
        attempt_outcome=outcome,
        attempt_ended_at=ended,
    )


def _preview(body: str) -> str:
    return " ".join(body.split())[:_PREVIEW]


def pg_keyword_search(
    conn: Any, query: str, *, limit: int = 10, filters: Filters | None = None, partial: set[str] | None = None
) -> list[Card]:
    """The best *limit* notes for *query* as cards with highlighted snippets. Ids found only
    by the loose pass (not every word) are added to *partial* if given."""
    check_limit(limit)
    cq = compile_query(query)  # the same checks and errors as the embedded store
    where, params = (filters or Filters()).pg_sql()
    extra = f" AND {where}" if where else ""
    words = [w for w in query.split() if CJK_RE.search(w)]
    hits: list[tuple[tuple, float, str, str]] = []  # (card row, score, body, FTS5-style expression)
    seen: set[str] = set()

    def run(sql: str, args: list[Any], expr: str) -> None:
        for row in conn.execute(sql, args):
            if row[0] not in seen and len(hits) < limit:
                seen.add(row[0])
                hits.append((row[:15], float(row[15]), row[16], expr))

    if words:
        # CJK has no spaces for a text-search parser to split on: match the characters (pg_trgm).
        likes = " AND ".join("(n.title ILIKE %s OR n.body ILIKE %s)" for _ in words)
        patterns = [p for w in words for p in (_like(w), _like(w))]
        run(
            f"SELECT {CARD_SQL}, 1.0, n.body FROM {_CARD_FROM} WHERE {likes}{extra}"
            " ORDER BY n.updated_at DESC, n.seq DESC LIMIT %s",
            [*patterns, *params, limit],
            cq.strict,
        )
    else:
        strict = "websearch_to_tsquery('english', %s)"
        run(_ranked_sql(strict, extra), [query, *params, *params, limit], cq.strict)
        if len(hits) < limit and cq.loose is not None:
            loose_text = " or ".join(t.strip('"') for t in cq.loose_terms)
            before = len(hits)
            run(_ranked_sql(strict, extra), [loose_text, *params, *params, limit + len(hits)], cq.loose)
            if partial is not None:
                partial.update(h[0][0] for h in hits[before:])
    cards = []
    for row, score, body, expr in hits:
        snippet = make_snippet(body, phrases_of(expr)) or _preview(body)
        cards.append(card_from_pg(row, snippet, float(f"{score:.6g}")))
    return cards


def _ranked_sql(tsquery: str, extra: str) -> str:
    # Ranking reads each candidate's tsvector, so a word in a third of a million notes would
    # cost a third of a million reads. As on SQLite, the candidates are the RANK_WINDOW
    # newest matches and the TITLE_WINDOW newest whose title matches (both walks of an index).
    return (
        f"WITH qq AS (SELECT {tsquery} AS q),"
        f" recent AS (SELECT n.seq FROM notes n, qq WHERE n.tsv @@ qq.q{extra}"
        f" ORDER BY n.seq DESC LIMIT {RANK_WINDOW}),"
        f" titled AS (SELECT n.seq FROM notes n, qq WHERE to_tsvector('english', n.title) @@ qq.q{extra}"
        f" ORDER BY n.seq DESC LIMIT {TITLE_WINDOW}),"
        " picked AS (SELECT seq FROM recent UNION SELECT seq FROM titled)"
        f" SELECT {CARD_SQL}, ts_rank({_WEIGHTS}, n.tsv, qq.q, 1) AS score, n.body"
        " FROM picked JOIN notes n ON n.seq = picked.seq LEFT JOIN attempts a ON a.id = n.attempt_id"
        " LEFT JOIN projects p ON p.name = a.project CROSS JOIN qq"
        " ORDER BY score DESC, n.updated_at DESC, n.seq DESC LIMIT %s"
    )


def _like(word: str) -> str:
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def pg_list_cards(conn: Any, *, limit: int = 20, offset: int = 0, filters: Filters | None = None) -> list[Card]:
    """Notes newest-updated first, as cards whose snippet is the opening of the body."""
    check_limit(limit)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidArgumentError(f"offset must be a whole number ≥ 0, got {offset!r}")
    where, params = (filters or Filters()).pg_sql()
    sql = f"SELECT {CARD_SQL}, n.body FROM {_CARD_FROM}" + (f" WHERE {where}" if where else "")
    sql += " ORDER BY n.updated_at DESC, n.seq DESC LIMIT %s OFFSET %s"
    return [card_from_pg(r[:15], _preview(r[15]), None) for r in conn.execute(sql, [*params, limit, offset])]
