"""Who is asking: the rule for which notes a caller may see.

Notes and attempts are public unless their project is private. A private project
is seen by its owner and by administrators. A caller with no identity (``None``:
the local CLI or Python API, the store's owner) sees everything; the HTTP and MCP
interfaces will pass a :class:`Viewer` per token.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import InvalidArgumentError
from .slug import slugify

__all__ = ["Viewer", "handle_namespace", "hidden_projects", "may_see"]


@dataclass(frozen=True, slots=True)
class Viewer:
    """A caller: a handle (an agent's or a person's name) and whether they administer the store."""

    handle: str | None = None
    admin: bool = False


def handle_namespace(handle: str | None) -> str | None:
    """The namespace a handle (a token's name, a project's owner) stands for: its slug, so that
    ``Alice`` and ``alice`` are one caller (the token books refuse a second name with the same
    one). None for no handle."""
    return (slugify(handle) or None) if handle else None


def may_see(viewer: Viewer | None, *, private: bool, owner: str | None) -> bool:
    """True when *viewer* may see work in a project that is *private* (or not) and owned by *owner*."""
    if viewer is None or viewer.admin or not private:
        return True
    mine = handle_namespace(viewer.handle)
    return mine is not None and mine == handle_namespace(owner)


def hidden_projects(
    viewer: Viewer | None, private_projects: Callable[[], Iterable[tuple[str, str | None]]]
) -> tuple[str, ...]:
    """The names of the private projects *viewer* may not see; *private_projects* gives every
    private project's (name, owner), asked only when the viewer is not one who sees all."""
    if viewer is not None and not isinstance(viewer, Viewer):
        raise InvalidArgumentError(f"viewer must be a notewell.Viewer, not {type(viewer).__name__}")
    if viewer is None or viewer.admin:
        return ()
    return tuple(name for name, owner in private_projects() if not may_see(viewer, private=True, owner=owner))
