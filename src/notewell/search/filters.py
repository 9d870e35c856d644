"""Filters shared by search and list: project, campaign and attempt (where to look),
kind, tags (any/all), author, model, builds_on, and created/updated ranges."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ..errors import InvalidArgumentError
from ..model.attempt import check_attempt_id, check_project
from ..model.ids import is_link_id
from ..model.note import check_unicode
from ..model.numbers import whole_number
from ..model.slug import slugify
from ..model.timestamps import parse_when, time_zone
from ..model.visibility import Viewer, hidden_projects

__all__ = [
    "DATE_FORMS",
    "FILTERS",
    "Criteria",
    "FILTER_NAMES",
    "MAX_FILTER_CHARS",
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
    time), ``choice`` (one of *choices*). *option*: the command line's name for it. *short*:
    what an agent's tool schema says of it, where its name and type do not (every agent session
    pays for the schema, so the forms of a date are said once, in the tool's description)."""

    name: str
    shape: str
    help: str
    option: str = ""
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    short: str | None = None

    @property
    def cli_option(self) -> str:
        return self.option or "--" + self.name.replace("_", "-")


# The forms a date filter takes, as every interface says them.
DATE_FORMS = "2026-11-30, 2026-11-30T14:05Z, or 7d, 2w, 3m, 1y, 12h, yesterday, today"
_ISO = f" ({DATE_FORMS})"
# The one list of filters: Filters takes these fields, and the CLI's options, the OpenAPI
# parameters and the MCP tool's arguments are made from (or checked against) it.
FILTERS: tuple[FilterSpec, ...] = (
    FilterSpec("project", "text", "only notes written on this project's attempts", short="only notes on its attempts"),
    FilterSpec("campaign", "text", "only notes of projects in this campaign", short="only its projects' notes"),
    FilterSpec("attempt_id", "text", "only notes written on this attempt", option="--attempt", metavar="ID"),
    FilterSpec("kind", "texts", "only notes of this header kind", metavar="KIND", short="header kind(s)"),
    FilterSpec(
        "tags",
        "texts",
        "only notes with this header tag (any of them, unless all are asked for)",
        "--tag",
        metavar="TAG",
        short="header tag(s): any of them, or all with tag_mode",
    ),
    FilterSpec("tag_mode", "choice", "any (default) or all of the tags", "--all-tags", ("any", "all")),
    FilterSpec("author", "text", "only notes by this author"),
    FilterSpec("model", "text", "only notes written by this model"),
    FilterSpec("builds_on", "text", "only notes that build on this note id", metavar="ID", short="a note id"),
    FilterSpec("created_after", "when", "created after this date or time" + _ISO, metavar="DATE"),
    FilterSpec("created_before", "when", "created before this date or time" + _ISO, metavar="DATE"),
    FilterSpec("updated_after", "when", "updated after this date or time" + _ISO, metavar="DATE"),
    FilterSpec("updated_before", "when", "updated before this date or time" + _ISO, metavar="DATE"),
    FilterSpec(
        "tz",
        "text",
        "the time zone dates are read in (Europe/Berlin, +02:00, UTC; default: the machine's)",
        metavar="ZONE",
        short="time zone of the dates (Europe/Berlin, +02:00)",
    ),
)
FILTER_NAMES = tuple(spec.name for spec in FILTERS)

When = str | datetime | None
MAX_FILTER_VALUES = 100  # kinds or tags one filter may name
# Characters of one filter value: a tag, kind, author or model is far shorter; 100 tags of
# 20,000 characters each took 0.8 s to slug before any of them was found wanting.
MAX_FILTER_CHARS = 1000
# Both SQLite and PostgreSQL keep a row offset in a signed 64-bit integer.
MAX_OFFSET = 2**63 - 1


def check_offset(offset: int) -> int:
    """*offset* if it is a whole number a database can skip to; InvalidArgumentError if not."""
    return whole_number("offset", offset, 0, MAX_OFFSET)


def check_filter_text(name: str, value: object) -> str:
    """*value* of the author or model filter, if it is text a database can be asked about."""
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{name}: expected a string")
    return check_unicode(_short(value, name), name)


def _short(value: str, name: str) -> str:
    if len(value) > MAX_FILTER_CHARS:
        raise InvalidArgumentError(f"{name}: a value is at most {MAX_FILTER_CHARS} characters, got {len(value):,}")
    return value


def _as_list(value: str | list[str] | tuple[str, ...] | None, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [_short(value, name)]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        if len(value) > MAX_FILTER_VALUES:
            # Each value is slugged and matched: the cost grows with them, so it has a bound.
            raise InvalidArgumentError(f"{name}: at most {MAX_FILTER_VALUES} values, got {len(value)}")
        return [_short(v, name) for v in value]
    raise InvalidArgumentError(f"{name}: expected a string or a list of strings")


@dataclass(frozen=True, slots=True)
class Criteria:
    """Filters checked and normalised (slugs, ids, parsed times): what a backend renders in
    its SQL. ``campaign_projects`` is None without a campaign filter (empty: none match)."""

    hidden_projects: tuple[str, ...]
    project: str | None
    campaign_projects: tuple[str, ...] | None
    attempt_id: str | None
    kinds: tuple[str, ...]
    tags: tuple[str, ...]
    all_tags: bool
    author: str | None
    model: str | None
    builds_on: str | None
    dates: tuple[tuple[str, str, str], ...]  # (column, ">=" or "<", ISO time)


_DATES = (
    ("created_after", "created_at", ">="),
    ("created_before", "created_at", "<"),
    ("updated_after", "updated_at", ">="),
    ("updated_before", "updated_at", "<"),
)


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
    tz: str | None = None  # the caller's time zone: relative dates and dates without an offset
    # Not filters a caller passes; the store sets them: private projects the viewer may not
    # see, and the projects that make up the campaign asked for.
    hidden_projects: tuple[str, ...] = ()
    campaign_projects: tuple[str, ...] | None = None

    criteria: Criteria = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Checked once, here: a Filters that exists is valid, and each backend renders its
        # criteria in its own SQL without checking anything again.
        object.__setattr__(self, "criteria", self._check())

    def _check(self) -> Criteria:
        # In the order a caller reads the filters: the first bad one is the one reported.
        project = self._scope("project")
        campaign = self._scope("campaign")
        attempt_id = self._scope("attempt_id")
        kinds = tuple(slugify(k) for k in _as_list(self.kind, "kind"))
        tags = tuple(slugify(t) for t in _as_list(self.tags, "tags"))
        if tags and self.tag_mode not in ("any", "all"):
            raise InvalidArgumentError(f"tag_mode: expected 'any' or 'all', got {self.tag_mode!r}")
        author = check_filter_text("author", self.author) if self.author is not None else None
        model = check_filter_text("model", self.model) if self.model is not None else None
        if self.builds_on is not None and not is_link_id(self.builds_on):
            raise InvalidArgumentError(f"builds_on: {self.builds_on!r} is not a note or attempt id (nte_… or att_…)")
        zone = self.tz
        if zone is not None:
            if not isinstance(zone, str) or not zone.strip():
                raise InvalidArgumentError("tz: give a time zone name (Europe/Berlin, UTC) or an offset (+02:00)")
            time_zone(check_filter_text("tz", zone))  # a bad zone is an error even with no date
        dates = tuple(
            (column, op, parse_when(value, name=name, zone=zone))
            for name, column, op in _DATES
            if (value := getattr(self, name)) is not None
        )
        return Criteria(
            hidden_projects=tuple(self.hidden_projects),
            project=project,
            campaign_projects=tuple(self.campaign_projects or ()) if campaign is not None else None,
            attempt_id=attempt_id,
            kinds=kinds,
            tags=tags,
            all_tags=self.tag_mode == "all",
            author=author,
            model=model,
            builds_on=self.builds_on,
            dates=dates,
        )

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

    def _scope(self, name: str) -> str | None:
        value = getattr(self, name)
        if value is None:
            return None
        if name == "attempt_id":
            return check_attempt_id(value)
        return check_project(value, name)
