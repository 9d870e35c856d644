"""Attempts: one run, by an agent or a person, on a project. Notes are written on them.

A note written on an attempt can change while the attempt runs and is frozen once it
ends; a project may belong to a campaign. Notes may also be written outside any attempt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import FrozenError, InvalidArgumentError, InvalidIdError, NotFoundError
from .header import compose_note, parse_note
from .ids import ATTEMPT_ID_RE
from .note import written_title
from .slug import slugify

__all__ = [
    "ATTEMPT_COLUMNS",
    "NAMESPACE_MARK",
    "OUTCOMES",
    "PROJECT_MAX",
    "Attempt",
    "check_attempt_id",
    "check_outcome",
    "check_project",
    "project_namespace",
    "attempt_from_row",
    "require_running",
    "require_unfrozen",
    "titled_summary",
    "titled_summary_title",
]

OUTCOMES = ("succeeded", "failed", "abandoned")
PROJECT_MAX = 80
NAMESPACE_MARK = ":"
_OUTCOME_RE = re.compile(r"[a-z][a-z0-9_-]{0,29}")


def check_attempt_id(value: object) -> str:
    """*value* as an attempt id, or InvalidIdError."""
    if not isinstance(value, str) or ATTEMPT_ID_RE.fullmatch(value.strip()) is None:
        shown = value if isinstance(value, str) and len(value) <= 60 else repr(type(value).__name__)
        raise InvalidIdError(f"not an attempt id: {shown!r} (ids look like att_0h3k9x2c7m)")
    return value.strip()


def check_project(value: object, name: str = "project") -> str:
    """A project (or campaign) name as its slug: ``"SAT solver"`` becomes ``sat-solver``.

    A name may sit in a caller's namespace, ``"alice:Secret work"`` (``alice:secret-work``):
    only the caller whose handle that is starts work there, and only such a project may be
    private, so that trying a name tells nobody which private projects exist."""
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{name} must be a string")
    if len(value) > 8 * PROJECT_MAX:  # not slugged at all: see slug_within
        raise InvalidArgumentError(f"{name} is {len(value):,} characters; the limit is {PROJECT_MAX} as a slug")
    space, colon, rest = value.partition(NAMESPACE_MARK)
    if colon:
        space, rest = slugify(space), slugify(rest.replace(NAMESPACE_MARK, " "))
        if not space or not rest:
            raise InvalidArgumentError(
                f"{name} {value!r} needs a name on both sides of its ':' (a namespace, then the name)"
            )
        slug = f"{space}{NAMESPACE_MARK}{rest}"
    else:
        slug = slugify(value)
    if not slug:
        raise InvalidArgumentError(f"{name} {value!r} has no letters or digits to name it by")
    if len(slug) > PROJECT_MAX:
        raise InvalidArgumentError(f"{name} is {len(slug)} characters as a slug; the limit is {PROJECT_MAX}")
    return slug


def project_namespace(slug: str) -> str | None:
    """The namespace of a project slug from :func:`check_project` (``alice`` for
    ``alice:secret``), or None for a shared name."""
    space, colon, _ = slug.partition(NAMESPACE_MARK)
    return space if colon else None


def check_outcome(value: object) -> str:
    """succeeded, failed, abandoned, or another short word (lower case, ≤ 30 characters)."""
    if not isinstance(value, str) or _OUTCOME_RE.fullmatch(value.strip().lower()) is None:
        raise InvalidArgumentError(f"outcome must be one of {', '.join(OUTCOMES)} or another short word, got {value!r}")
    return value.strip().lower()


@dataclass(slots=True)
class Attempt:
    """One run on a project: who, when, how it ended, and how many notes it wrote."""

    id: str
    project: str
    campaign: str | None
    author: str | None
    model: str | None
    started_at: str
    ended_at: str | None
    outcome: str | None
    summary_note_id: str | None
    notes: int = 0

    @property
    def running(self) -> bool:
        return self.ended_at is None

    def credits(self, author: str | None, model: str | None) -> tuple[str | None, str | None]:
        """Who wrote a note on this attempt, and with what model: as given, else the attempt's."""
        return author or self.author, model or self.model

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["running"] = self.running
        return out


ATTEMPT_COLUMNS = "id, project, campaign, author, model, started_at, ended_at, outcome, summary_note"


def attempt_from_row(row: Sequence[Any], notes: int) -> Attempt:
    """An attempt from its ATTEMPT_COLUMNS *row* and its count of notes."""
    return Attempt(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], notes=notes)


def require_running(attempt: Attempt | None, attempt_id: str) -> Attempt:
    """*attempt* when it runs: NotFoundError when there is none, FrozenError when it ended
    (an ended attempt takes no more notes, and its notes no more changes)."""
    if attempt is None:
        raise NotFoundError(f"no attempt {attempt_id}")
    if not attempt.running:
        raise FrozenError(
            f"attempt {attempt.id} ended ({attempt.outcome}) at {attempt.ended_at}; it takes no more notes"
        )
    return attempt


def require_unfrozen(note_id: str, attempt: Attempt | None) -> None:
    """FrozenError when the note was written on *attempt* and it has ended."""
    if attempt is not None and not attempt.running:
        raise FrozenError(
            f"{note_id} is frozen: its attempt {attempt.id} ended ({attempt.outcome}) at {attempt.ended_at}"
        )


def titled_summary_title(project: str, outcome: str) -> str:
    """The title an untitled summary note is given."""
    return f"Summary: {project}, {outcome}"


def titled_summary(text: str, project: str, outcome: str) -> str:
    """An attempt's summary note as it is stored: untitled prose gets the title
    ``Summary: <project>, <outcome>``, so that it says what it is on every card."""
    if not written_title(parse_note(text)):
        return compose_note(text, title=titled_summary_title(project, outcome))
    return text
