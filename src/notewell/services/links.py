"""The builds_on graph (what a note builds on, what builds on it) and project briefs."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import InvalidIdError, NotFoundError
from ..model.attempt import check_project
from ..model.ids import NOTE_ID_RE, is_attempt_id
from ..model.note import Card
from ..model.numbers import whole_number
from ..model.visibility import Viewer
from ..search.filters import Filters
from ..search.keyword import list_cards
from ..storage.index import Index
from .guard import StoreLock, guarded

__all__ = ["MAX_RECENT", "LinksMixin", "check_link_args", "link_tree", "make_brief"]

_MAX_DEPTH = 10
MAX_RECENT = 1000  # a brief's recent notes


class LinksMixin:
    """Links and briefs, for :class:`Store`."""

    _index: Index
    _lock: StoreLock

    if TYPE_CHECKING:

        def refresh(self, *, wait: bool = True) -> Any: ...

        def _read(self) -> AbstractContextManager[Index]: ...

        def _hidden_projects(self, viewer: Viewer | None) -> tuple[str, ...]: ...

        def _scoped(self, filters: Filters, viewer: Viewer | None) -> Filters: ...

        def get_project(self, project: str, *, viewer: Viewer | None = None) -> dict[str, Any]: ...

    @guarded
    def links(self, note_id: str, *, depth: int = 1, viewer: Viewer | None = None) -> dict[str, Any]:
        """What a note builds on and what builds on it, *depth* steps out (1–10). A note met
        again on a path is listed with ``"again": true`` and not followed, so loops end."""
        note_id, depth = check_link_args(note_id, depth)
        with self._read():
            hidden = set(self._hidden_projects(viewer))
            return link_tree(
                note_id,
                depth,
                lambda ref: self._node(ref, hidden),
                lambda ref, up: self._neighbours(ref, hidden, up=up),
            )

    def _node(self, ref: str, hidden: set[str]) -> dict[str, Any] | None:
        """A link end: a note, an attempt, or an id nothing answers to (None: hidden)."""
        if is_attempt_id(ref):
            got = self._index.conn.execute("SELECT project, author FROM attempts WHERE id = ?", (ref,)).fetchone()
            if got is None:
                return {"id": ref, "missing": True}
            if got[0] in hidden:
                return None
            return {"id": ref, "title": f"attempt on {got[0]} by {got[1]}", "kind": "attempt"}
        row = self._index.conn.execute(
            "SELECT n.id, n.title, n.kind, a.project FROM note_index n LEFT JOIN attempts a ON a.id = n.attempt_id"
            " WHERE n.id = ?",
            (ref,),
        ).fetchone()
        if row is None:
            return {"id": ref, "missing": True}
        if row[3] is not None and row[3] in hidden:
            return None
        return {"id": row[0], "title": row[1], "kind": row[2]}

    def _neighbours(self, note_id: str, hidden: set[str], *, up: bool) -> list[dict[str, Any]]:
        if up:
            row = self._index.conn.execute("SELECT builds_on FROM note_index WHERE id = ?", (note_id,)).fetchone()
            refs = json.loads(row[0]) if row else []
        else:
            refs = [
                r
                for (r,) in self._index.conn.execute(
                    "SELECT n.id FROM note_links l JOIN note_index n ON n.rowid = l.note WHERE l.target = ?"
                    " ORDER BY n.updated_at DESC",
                    (note_id,),
                )
            ]
        return [node for ref in refs if (node := self._node(ref, hidden)) is not None]

    @guarded
    def brief(self, project: str, *, recent: int = 10, viewer: Viewer | None = None) -> dict[str, Any]:
        """The one thing to read first on a project: its newest digest (a note of kind
        ``digest`` citing what it pulls together in builds_on), the recent stream, and the
        notes the digest does not cover yet."""
        name = check_project(project)
        whole_number("recent", recent, 1, MAX_RECENT)
        with self._read():
            info = self.get_project(name, viewer=viewer)
            scope = self._scoped(Filters(project=name), viewer)
            return make_brief(
                info,
                scope,
                recent,
                lambda limit, offset, f: list_cards(self._index, limit=limit, offset=offset, filters=f),
            )


Node = dict[str, Any]


def check_link_args(note_id: object, depth: object) -> tuple[str, int]:
    if not isinstance(note_id, str) or NOTE_ID_RE.fullmatch(note_id.strip()) is None:
        raise InvalidIdError(f"not a note id: {note_id!r} (ids look like nte_0h3k9x2c7m)")
    return note_id.strip(), whole_number("depth", depth, 1, _MAX_DEPTH)


def link_tree(
    note_id: str,
    depth: int,
    node: Callable[[str], Node | None],
    neighbours: Callable[[str, bool], list[Node]],
) -> Node:
    """The link tree of a note, given how to look up one link end (*node*: None when hidden)
    and a note's neighbours (up: what it builds on; else what builds on it)."""
    root = node(note_id)
    if root is None or root.get("missing"):
        raise NotFoundError(f"no note {note_id}")
    # Each note is followed once per direction; a later meeting is marked "again".
    root["builds_on"] = _walk(note_id, depth, neighbours, {note_id}, up=True)
    root["built_on_by"] = _walk(note_id, depth, neighbours, {note_id}, up=False)
    return root


def _walk(
    note_id: str, depth: int, neighbours: Callable[[str, bool], list[Node]], seen: set[str], *, up: bool
) -> list[Node]:
    """Breadth first, so a note is expanded where it is nearest the root."""
    key = "builds_on" if up else "built_on_by"
    top: list[Node] = []
    frontier: list[tuple[str, list[Node]]] = [(note_id, top)]
    for level in range(depth):
        following: list[tuple[str, list[Node]]] = []
        for ref, into in frontier:
            for node in neighbours(ref, up):
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
    return top


def make_brief(
    info: dict[str, Any], scope: Filters, recent: int, cards: Callable[[int, int, Filters], list[Card]]
) -> dict[str, Any]:
    """A project's brief from *cards(limit, offset, filters)* (its notes, newest first)."""
    digests = cards(1, 0, replace(scope, kind="digest"))
    digest = digests[0] if digests else None
    stream = [c for c in cards(recent + 1, 0, scope) if digest is None or c.id != digest.id]
    covered = set(digest.builds_on) if digest else set()
    uncovered: list[Card] = []
    offset = 0
    while len(uncovered) < 1000:
        page = cards(500, offset, scope)
        uncovered += [c for c in page if c.kind != "digest" and c.id not in covered]
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
