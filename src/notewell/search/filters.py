"""Filters shared by search and list: project, campaign and attempt (where to look),
kind, tags (any/all), author, model, builds_on, and created/updated ranges."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ..errors import InvalidArgumentError
from ..model.attempt import check_attempt_id, check_project
from ..model.ids import is_link_id
from ..model.note import check_unicode
from ..model.numbers import whole_number
from ..model.slug import slugify
from ..model.timestamps import parse_when
from ..model.visibility import Viewer, hidden_projects
from .meta_tokens import meta_token

__all__ = [
    "FILTERS",
    "FILTER_NAMES",
    "MAX_FILTER_VALUES",
    "MAX_OFFSET",
    "FilterSpec",
    "Filters",
    "check_filter_text",
    "check_offset",
]


@dataclass(frozen=True, slots=True)
class FilterSpec:
    """One filter, as every interface offers it: its name, what it takes, what it does.
    *shape*: ``text`` (one string), ``texts`` (one or more strings), ``when`` (an ISO date or
    time), ``choice`` (one of *choices*). *option*: the command line's name for it."""

    name: str
    shape: str
    help: str
    option: str = ""
    choices: tuple[str, ...] = ()
    metavar: str | None = None

    @property
    def cli_option(self) -> str:
        return self.option or "--" + self.name.replace("_", "-")


# The one list of filters: Filters takes these fields, and the CLI's options, the OpenAPI
# parameters and the MCP tool's arguments are made from (or checked against) it.
FILTERS: tuple[FilterSpec, ...] = (
    FilterSpec("project", "text", "only notes written on this project's attempts"),
    FilterSpec("campaign", "text", "only notes of projects in this campaign"),
    FilterSpec("attempt_id", "text", "only notes written on this attempt", option="--attempt", metavar="ID"),
    FilterSpec("kind", "texts", "only notes of this header kind", metavar="KIND"),
    FilterSpec(
        "tags",
        "texts",
        "only notes with this header tag (any of them, unless all are asked for)",
        "--tag",
        metavar="TAG",
    ),
    FilterSpec("tag_mode", "choice", "any (default) or all of the tags", "--all-tags", ("any", "all")),
    FilterSpec("author", "text", "only notes by this author"),
    FilterSpec("model", "text", "only notes written by this model"),
    FilterSpec("builds_on", "text", "only notes that build on this note id", metavar="ID"),
    FilterSpec("created_after", "when", "created after this ISO date or time", metavar="DATE"),
    FilterSpec("created_before", "when", "created before this ISO date or time", metavar="DATE"),
    FilterSpec("updated_after", "when", "updated after this ISO date or time", metavar="DATE"),
    FilterSpec("updated_before", "when", "updated before this ISO date or time", metavar="DATE"),
)
FILTER_NAMES = tuple(spec.name for spec in FILTERS)

When = str | datetime | None
MAX_FILTER_VALUES = 100  # kinds or tags one filter may name
# Both SQLite and PostgreSQL keep a row offset in a signed 64-bit integer.
MAX_OFFSET = 2**63 - 1


def check_offset(offset: int) -> int:
    """*offset* if it is a whole number a database can skip to; InvalidArgumentError if not."""
    return whole_number("offset", offset, 0, MAX_OFFSET)


def check_filter_text(name: str, value: object) -> str:
    """*value* of the author or model filter, if it is text a database can be asked about."""
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{name}: expected a string")
    return check_unicode(value, name)


def _as_list(value: str | list[str] | tuple[str, ...] | None, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        if len(value) > MAX_FILTER_VALUES:
            # Each value is slugged and matched: the cost grows with them, so it has a bound.
            raise InvalidArgumentError(f"{name}: at most {MAX_FILTER_VALUES} values, got {len(value)}")
        return list(value)
    raise InvalidArgumentError(f"{name}: expected a string or a list of strings")


@dataclass(frozen=True, slots=True)
class Filters:
    """Which notes a search or listing may return. Every field is optional."""

    project: str | None = None
    campaign: str | None = None
    attempt_id: str | None = None
    kind: str | list[str] | None = None
    tags: str | list[str] | None = None
    tag_mode: str = "any"
    author: str | None = None
    model: str | None = None
    builds_on: str | None = None
    created_after: When = None
    created_before: When = None
    updated_after: When = None
    updated_before: When = None
    # Not filters a caller passes; the store sets them: private projects the viewer may not
    # see, and the projects that make up the campaign asked for.
    hidden_projects: tuple[str, ...] = ()
    campaign_projects: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        # Checked once, here: a Filters that exists is valid, and rendering it (sql, pg_sql,
        # fts) cannot fail. Rendering once runs every check, with the errors callers know.
        self.sql()

    @classmethod
    def from_kwargs(cls, kwargs: dict[str, Any]) -> Filters:
        unknown = sorted(set(kwargs) - set(FILTER_NAMES))
        if unknown:
            raise InvalidArgumentError(f"unknown filter {unknown[0]!r}; filters are: {', '.join(FILTER_NAMES)}")
        return cls(**kwargs)

    def scoped(
        self,
        viewer: Viewer | None,
        *,
        private_projects: Callable[[], Iterable[tuple[str, str | None]]],
        campaign_members: Callable[[str], Iterable[str]],
    ) -> Filters:
        """These filters with what the store knows filled in: the private projects *viewer*
        may not see (from every private project's (name, owner)) and, for a campaign, the
        projects in it (*campaign_members* of its slug). Each store supplies the two lookups."""
        members = None
        if self.campaign is not None:
            members = tuple(campaign_members(check_project(self.campaign, "campaign")))
        return replace(self, hidden_projects=hidden_projects(viewer, private_projects), campaign_projects=members)

    def fts(self) -> str | None:
        """The filters on kind, tags, author, model and builds_on as an FTS5 expression over
        notes_fts.meta (None when there are none); :meth:`sql` with ``dates_only`` has the rest."""
        parts: list[str] = []

        def any_of(field: str, values: list[str], op: str = " OR ") -> None:
            tokens = list(dict.fromkeys(meta_token(field, v) for v in values))
            parts.append("meta : (" + op.join(f'"{t}"' for t in tokens) + ")")

        for name, letter in (("project", "p"), ("attempt_id", "x")):
            value = self._scope(name)
            if value is not None:
                any_of(letter, [value])
        if self._scope("campaign") is not None:
            # No project in the campaign: a token no project has, so nothing matches.
            any_of("p", list(self.campaign_projects or ("\x00",)))
        kinds = [slugify(k) for k in _as_list(self.kind, "kind")]
        if kinds:
            any_of("k", kinds)
        tags = [slugify(t) for t in _as_list(self.tags, "tags")]
        if tags:
            any_of("t", tags, " AND " if self.tag_mode == "all" else " OR ")
        for name, field in (("author", "a"), ("model", "m")):
            value = getattr(self, name)
            if value is not None:
                any_of(field, [value])
        if self.builds_on is not None:
            any_of("b", [self.builds_on])
        return " AND ".join(parts) or None

    def fts_suffix(self) -> str:
        """What a match expression gets appended, in parentheses before it: the FTS5
        filters (`` AND …``) and the hidden projects (`` NOT …``); '' when neither."""
        suffix = ""
        meta = self.fts()
        if meta:
            suffix += f" AND ({meta})"
        if self.hidden_projects:
            tokens = " OR ".join(f'"{meta_token("p", p)}"' for p in self.hidden_projects)
            suffix += f" NOT meta : ({tokens})"
        return suffix

    def sql(self, alias: str = "n", *, dates_only: bool = False) -> tuple[str, list[Any]]:
        """A WHERE fragment over note_index (as *alias*) and its parameters ('' when no filter);
        with *dates_only*, just the created/updated ranges."""
        clauses: list[str] = []
        params: list[Any] = []
        if dates_only:
            self._dates(alias, clauses, params)
            return " AND ".join(clauses), params
        if self.hidden_projects:
            marks = ",".join("?" * len(self.hidden_projects))
            clauses.append(
                f"({alias}.attempt_id IS NULL OR {alias}.attempt_id NOT IN"
                f" (SELECT id FROM attempts WHERE project IN ({marks})))"
            )
            params.extend(self.hidden_projects)
        project = self._scope("project")
        if project is not None:
            clauses.append(f"{alias}.attempt_id IN (SELECT id FROM attempts WHERE project = ?)")
            params.append(project)
        if self._scope("campaign") is not None:
            members = list(self.campaign_projects or ())
            marks = ",".join("?" * len(members)) or "NULL"
            clauses.append(f"{alias}.attempt_id IN (SELECT id FROM attempts WHERE project IN ({marks}))")
            params.extend(members)
        attempt = self._scope("attempt_id")
        if attempt is not None:
            clauses.append(f"{alias}.attempt_id = ?")
            params.append(attempt)
        kinds = [slugify(k) for k in _as_list(self.kind, "kind")]
        if kinds:
            clauses.append(f"{alias}.kind IN ({','.join('?' * len(kinds))})")
            params.extend(kinds)
        tags = [slugify(t) for t in _as_list(self.tags, "tags")]
        if tags:
            if self.tag_mode not in ("any", "all"):
                raise InvalidArgumentError(f"tag_mode: expected 'any' or 'all', got {self.tag_mode!r}")
            marks = ",".join("?" * len(tags))
            if self.tag_mode == "all" and len(set(tags)) > 1:
                clauses.append(
                    f"{alias}.rowid IN (SELECT note FROM note_tags WHERE tag IN ({marks})"
                    f" GROUP BY note HAVING count(*) = {len(set(tags))})"
                )
            else:
                clauses.append(f"{alias}.rowid IN (SELECT note FROM note_tags WHERE tag IN ({marks}))")
            params.extend(tags)
        for name in ("author", "model"):
            value = getattr(self, name)
            if value is not None:
                clauses.append(f"{alias}.{name} = ?")
                params.append(check_filter_text(name, value))
        if self.builds_on is not None:
            if not is_link_id(self.builds_on):
                raise InvalidArgumentError(
                    f"builds_on: {self.builds_on!r} is not a note or attempt id (nte_… or att_…)"
                )
            clauses.append(f"{alias}.rowid IN (SELECT note FROM note_links WHERE target = ?)")
            params.append(self.builds_on)
        self._dates(alias, clauses, params)
        return " AND ".join(clauses), params

    def pg_sql(self, alias: str = "n") -> tuple[str, list[Any]]:
        """The same filters as :meth:`sql`, over the PostgreSQL ``notes`` table (as *alias*),
        with ``%s`` parameters."""
        clauses: list[str] = []
        params: list[Any] = []
        if self.hidden_projects:
            clauses.append(
                f"({alias}.attempt_id IS NULL OR {alias}.attempt_id NOT IN"
                " (SELECT id FROM attempts WHERE project = ANY(%s)))"
            )
            params.append(list(self.hidden_projects))
        project = self._scope("project")
        if project is not None:
            clauses.append(f"{alias}.attempt_id IN (SELECT id FROM attempts WHERE project = %s)")
            params.append(project)
        if self._scope("campaign") is not None:
            clauses.append(f"{alias}.attempt_id IN (SELECT id FROM attempts WHERE project = ANY(%s))")
            params.append(list(self.campaign_projects or ()))
        attempt = self._scope("attempt_id")
        if attempt is not None:
            clauses.append(f"{alias}.attempt_id = %s")
            params.append(attempt)
        kinds = [slugify(k) for k in _as_list(self.kind, "kind")]
        if kinds:
            clauses.append(f"{alias}.kind = ANY(%s)")
            params.append(kinds)
        tags = [slugify(t) for t in _as_list(self.tags, "tags")]
        if tags:
            clauses.append(f"{alias}.tags {'@>' if self.tag_mode == 'all' else '&&'} %s")
            params.append(sorted(set(tags)))
        for name in ("author", "model"):
            value = getattr(self, name)
            if value is None:
                continue
            if "\x00" in check_filter_text(name, value):
                # PostgreSQL text cannot hold NUL, so no note has this value: it matches
                # nothing, as on SQLite, instead of failing in the driver.
                clauses.append("false")
            else:
                clauses.append(f"{alias}.{name} = %s")
                params.append(value)
        if self.builds_on is not None:
            clauses.append(f"{alias}.builds_on @> %s")
            params.append([self.builds_on])
        self._dates(alias, clauses, params, mark="%s")
        return " AND ".join(clauses), params

    def _scope(self, name: str) -> str | None:
        value = getattr(self, name)
        if value is None:
            return None
        if name == "attempt_id":
            return check_attempt_id(value)
        return check_project(value, name)

    def _dates(self, alias: str, clauses: list[str], params: list[Any], mark: str = "?") -> None:
        for name, column, op in (
            ("created_after", "created_at", ">="),
            ("created_before", "created_at", "<"),
            ("updated_after", "updated_at", ">="),
            ("updated_before", "updated_at", "<"),
        ):
            value = getattr(self, name)
            if value is not None:
                clauses.append(f"{alias}.{column} {op} {mark}")
                params.append(parse_when(value, name=name))
