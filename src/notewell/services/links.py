"""The builds_on graph (what a note builds on, what builds on it), the supersedes chain
(what a note corrects, what corrects it) and project briefs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from ..errors import InvalidIdError, NotFoundError
from ..model.ids import NOTE_ID_RE, is_attempt_id
from ..model.note import Card
from ..model.numbers import whole_number
from ..search.filters import Filters

__all__ = [
    "MAX_CHAIN",
    "MAX_LINKS",
    "MAX_RECENT",
    "Node",
    "check_link_args",
    "link_tree",
    "make_brief",
    "supersede_chain",
]

_MAX_DEPTH = 10
MAX_RECENT = 1000  # a brief's recent notes
# Link ends in one tree: a note whose header names 50,000 notes made a tree of 50,000 ends
# (0.9 s, and 2 MB to send); past this the tree stops growing and says so ("truncated").
MAX_LINKS = 1000
# The supersedes chain is followed this far each way, whatever the depth asked (a chain of
# corrections is read to its newest end), and holds at most this many ends each way.
CHAIN_DEPTH = 10
MAX_CHAIN = 100


Node = dict[str, Any]


def check_link_args(note_id: object, depth: object) -> tuple[str, int]:
    if not isinstance(note_id, str) or NOTE_ID_RE.fullmatch(note_id.strip()) is None:
        raise InvalidIdError(f"not a note id: {note_id!r} (ids look like nte_0h3k9x2c7m)")
    return note_id.strip(), whole_number("depth", depth, 1, _MAX_DEPTH)


def link_tree(
    note_id: str,
    depth: int,
    node: Callable[[str], Node | None],
    neighbours: Callable[[str, bool], Iterable[Node]],
) -> Node:
    """The link tree of a note, given how to look up one link end (*node*: None when hidden)
    and a note's neighbours (up: what it builds on; else what builds on it), which are looked
    up only as far as the tree takes them: at most MAX_LINKS ends in all, half each way, and
    ``"truncated": true`` on the root when some were left out."""
    root = node(note_id)
    if root is None or root.get("missing"):
        raise NotFoundError(f"no note {note_id}")
    # Each note is followed once per direction; a later meeting is marked "again".
    keys = ("builds_on", "built_on_by")
    up, full_up = _walk(note_id, depth, neighbours, {note_id}, up=True, budget=MAX_LINKS // 2, keys=keys)
    down, full_down = _walk(
        note_id, depth, neighbours, {note_id}, up=False, budget=MAX_LINKS - MAX_LINKS // 2, keys=keys
    )
    root["builds_on"], root["built_on_by"] = up, down
    if not (full_up and full_down):
        root["truncated"] = True
    return root


def supersede_chain(root: Node, neighbours: Callable[[str, bool], Iterable[Node]]) -> Node:
    """*root* (a link tree's) with ``supersedes`` (what it corrects, and what those correct...)
    and ``superseded_by`` (the later notes correcting it, and theirs...), CHAIN_DEPTH steps and
    MAX_CHAIN ends each way at most (``"truncated": true`` when cut)."""
    keys = ("supersedes", "superseded_by")
    note_id = root["id"]
    up, full_up = _walk(note_id, CHAIN_DEPTH, neighbours, {note_id}, up=True, budget=MAX_CHAIN, keys=keys)
    down, full_down = _walk(note_id, CHAIN_DEPTH, neighbours, {note_id}, up=False, budget=MAX_CHAIN, keys=keys)
    root["supersedes"], root["superseded_by"] = up, down
    if not (full_up and full_down):
        root["truncated"] = True
    return root


def _walk(
    note_id: str,
    depth: int,
    neighbours: Callable[[str, bool], Iterable[Node]],
    seen: set[str],
    *,
    up: bool,
    budget: int,
    keys: tuple[str, str],
) -> tuple[list[Node], bool]:
    """Breadth first, so a note is expanded where it is nearest the root; at most *budget*
    ends. Returns the tree and whether it is whole."""
    key = keys[0] if up else keys[1]
    top: list[Node] = []
    frontier: list[tuple[str, list[Node]]] = [(note_id, top)]
    for level in range(depth):
        following: list[tuple[str, list[Node]]] = []
        for ref, into in frontier:
            for node in neighbours(ref, up):
                if budget <= 0:
                    return top, False
                budget -= 1
                into.append(node)
                if node["id"] in seen:
                    node["again"] = True
                    continue
                seen.add(node["id"])
                expandable = not node.get("missing") and not is_attempt_id(node["id"])
                if expandable and level + 1 < depth:
                    node[key] = []
                    following.append((node["id"], node[key]))
        frontier = following
    return top, True


def make_brief(
    info: dict[str, Any], scope: Filters, recent: int, cards: Callable[[int, int, Filters], list[Card]]
) -> dict[str, Any]:
    """A project's brief from *cards(limit, offset, filters)* (its notes, newest first, with
    superseded_by marked): a superseded note is left out (its correction is what to read)."""
    digests = [c for c in cards(10, 0, replace(scope, kind="digest")) if not c.superseded_by]
    digest = digests[0] if digests else None
    covered = set(digest.builds_on) if digest else set()
    stream: list[Card] = []
    uncovered: list[Card] = []
    offset = 0
    while len(uncovered) < 1000 or len(stream) < recent:
        page = cards(500, offset, scope)
        current = [c for c in page if not c.superseded_by]
        stream += [c for c in current if digest is None or c.id != digest.id][: max(0, recent - len(stream))]
        uncovered += [c for c in current if c.kind != "digest" and c.id not in covered]
        if len(page) < 500:
            break
        offset += 500
    return {
        "project": info,
        "digest": digest.to_dict() if digest else None,
        "recent": [c.to_dict() for c in stream[:recent]],
        "uncovered": [c.to_dict() for c in uncovered[:recent]],
        "uncovered_count": len(uncovered),
    }
