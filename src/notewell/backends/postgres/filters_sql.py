"""The filters (:class:`~...search.filters.Filters`, checked once) as a WHERE fragment over
PostgreSQL's ``notes`` table, with ``%s`` parameters."""

from __future__ import annotations

from typing import Any

from ...search.filters import Filters

__all__ = ["pg_filter_sql"]


def pg_filter_sql(filters: Filters, alias: str = "n") -> tuple[str, list[Any]]:
    """The filters over ``notes`` (as *alias*): the same notes as SQLite's ``filter_sql``."""
    c = filters.criteria
    clauses: list[str] = []
    params: list[Any] = []
    if c.hidden_projects:
        clauses.append(
            f"({alias}.attempt_id IS NULL OR {alias}.attempt_id NOT IN"
            " (SELECT id FROM attempts WHERE project = ANY(%s)))"
        )
        params.append(list(c.hidden_projects))
    if c.project is not None:
        clauses.append(f"{alias}.attempt_id IN (SELECT id FROM attempts WHERE project = %s)")
        params.append(c.project)
    if c.campaign_projects is not None:
        clauses.append(f"{alias}.attempt_id IN (SELECT id FROM attempts WHERE project = ANY(%s))")
        params.append(list(c.campaign_projects))
    if c.attempt_id is not None:
        clauses.append(f"{alias}.attempt_id = %s")
        params.append(c.attempt_id)
    if c.kinds:
        clauses.append(f"{alias}.kind = ANY(%s)")
        params.append(list(c.kinds))
    if c.tags:
        clauses.append(f"{alias}.tags {'@>' if c.all_tags else '&&'} %s")
        params.append(sorted(set(c.tags)))
    for name, value in (("author", c.author), ("model", c.model)):
        if value is None:
            continue
        if "\x00" in value:
            # PostgreSQL text cannot hold NUL, so no note has this value: it matches nothing,
            # as on SQLite, instead of failing in the driver.
            clauses.append("false")
        else:
            clauses.append(f"{alias}.{name} = %s")
            params.append(value)
    if c.builds_on is not None:
        clauses.append(f"{alias}.builds_on @> %s")
        params.append([c.builds_on])
    for column, op, value in c.dates:
        clauses.append(f"{alias}.{column} {op} %s")
        params.append(value)
    return " AND ".join(clauses), params
