"""The filters (:class:`~...search.filters.Filters`, checked once) in SQLite's SQL: a WHERE
fragment over ``note_index`` and an FTS5 expression over ``notes_fts.meta``."""

from __future__ import annotations

from typing import Any

from ...search.filters import Criteria, Filters
from ...search.meta_tokens import meta_token

__all__ = ["filter_sql", "fts", "fts_suffix", "hidden_match"]


def _dates(c: Criteria, alias: str, clauses: list[str], params: list[Any]) -> None:
    for column, op, value in c.dates:
        clauses.append(f"{alias}.{column} {op} ?")
        params.append(value)


def filter_sql(filters: Filters, alias: str = "n", *, dates_only: bool = False) -> tuple[str, list[Any]]:
    """A WHERE fragment over note_index (as *alias*) and its parameters ('' when no filter);
    with *dates_only*, just the created/updated ranges."""
    c = filters.criteria
    clauses: list[str] = []
    params: list[Any] = []
    if dates_only:
        _dates(c, alias, clauses, params)
        return " AND ".join(clauses), params
    if c.hidden_projects:
        marks = ",".join("?" * len(c.hidden_projects))
        clauses.append(
            f"({alias}.attempt_id IS NULL OR {alias}.attempt_id NOT IN"
            f" (SELECT id FROM attempts WHERE project IN ({marks})))"
        )
        params.extend(c.hidden_projects)
    if c.project is not None:
        clauses.append(f"{alias}.attempt_id IN (SELECT id FROM attempts WHERE project = ?)")
        params.append(c.project)
    if c.campaign_projects is not None:
        marks = ",".join("?" * len(c.campaign_projects)) or "NULL"
        clauses.append(f"{alias}.attempt_id IN (SELECT id FROM attempts WHERE project IN ({marks}))")
        params.extend(c.campaign_projects)
    if c.attempt_id is not None:
        clauses.append(f"{alias}.attempt_id = ?")
        params.append(c.attempt_id)
    if c.kinds:
        clauses.append(f"{alias}.kind IN ({','.join('?' * len(c.kinds))})")
        params.extend(c.kinds)
    if c.tags:
        marks = ",".join("?" * len(c.tags))
        distinct = len(set(c.tags))
        if c.all_tags and distinct > 1:
            clauses.append(
                f"{alias}.rowid IN (SELECT note FROM note_tags WHERE tag IN ({marks})"
                f" GROUP BY note HAVING count(*) = {distinct})"
            )
        else:
            clauses.append(f"{alias}.rowid IN (SELECT note FROM note_tags WHERE tag IN ({marks}))")
        params.extend(c.tags)
    for name, value in (("author", c.author), ("model", c.model)):
        if value is not None:
            clauses.append(f"{alias}.{name} = ?")
            params.append(value)
    if c.builds_on is not None:
        clauses.append(f"{alias}.rowid IN (SELECT note FROM note_links WHERE target = ?)")
        params.append(c.builds_on)
    _dates(c, alias, clauses, params)
    return " AND ".join(clauses), params


def fts(filters: Filters) -> str | None:
    """The filters on where, kind, tags, author, model and builds_on as an FTS5 expression
    over notes_fts.meta (None when there are none); :func:`filter_sql` with ``dates_only`` has the rest."""
    c = filters.criteria
    parts: list[str] = []

    def any_of(field: str, values: list[str] | tuple[str, ...], op: str = " OR ") -> None:
        tokens = list(dict.fromkeys(meta_token(field, v) for v in values))
        parts.append("meta : (" + op.join(f'"{t}"' for t in tokens) + ")")

    for letter, value in (("p", c.project), ("x", c.attempt_id)):
        if value is not None:
            any_of(letter, [value])
    if c.campaign_projects is not None:
        # No project in the campaign: a token no project has, so nothing matches.
        any_of("p", c.campaign_projects or ("\x00",))
    if c.kinds:
        any_of("k", c.kinds)
    if c.tags:
        any_of("t", c.tags, " AND " if c.all_tags else " OR ")
    for field, value in (("a", c.author), ("m", c.model)):
        if value is not None:
            any_of(field, [value])
    if c.builds_on is not None:
        any_of("b", [c.builds_on])
    return " AND ".join(parts) or None


def fts_suffix(filters: Filters) -> str:
    """What a match expression gets appended, in parentheses before it: the FTS5 filters
    (`` AND …``) and the hidden projects (`` NOT …``); '' when neither."""
    suffix = ""
    meta = fts(filters)
    if meta:
        suffix += f" AND ({meta})"
    hidden = hidden_match(filters)
    if hidden:
        suffix += f" NOT {hidden}"
    return suffix


def hidden_match(filters: Filters) -> str | None:
    """The FTS5 match of the notes in the projects the viewer may not see (None: none)."""
    hidden = filters.criteria.hidden_projects
    if not hidden:
        return None
    tokens = " OR ".join(f'"{meta_token("p", p)}"' for p in hidden)
    return f"meta : ({tokens})"
