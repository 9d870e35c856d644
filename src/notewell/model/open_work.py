"""Open work: the blockers and actions nobody has settled yet.

A blocker or an action is open until it is tagged closed (done, resolved, closed), its attempt
succeeded, a later note supersedes it, or a later note (not a digest, which only cites) builds
on it. The session-start briefing puts the open ones first; ``notewell stale`` lists the ones
left open longer than an age.
"""

from __future__ import annotations

from collections.abc import Iterable

from .note import Card

__all__ = ["CLOSED_TAGS", "OPEN_KINDS", "STALE_AGE", "settled_by_itself"]

OPEN_KINDS = ("blocker", "action")
CLOSED_TAGS = ("done", "resolved", "closed")
STALE_AGE = "14d"  # notewell stale's default: not updated for two weeks


def settled_by_itself(card: Card, closed_tags: Iterable[str] = CLOSED_TAGS) -> bool:
    """Whether the card says it is settled: tagged closed, on an attempt that succeeded, or
    superseded (its ``superseded_by`` marked for the viewer)."""
    return bool(set(card.tags) & set(closed_tags)) or card.attempt_outcome == "succeeded" or bool(card.superseded_by)
