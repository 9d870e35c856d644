"""Who is asking: the rule for which notes a caller may see.

Notes and attempts are public unless their project is private. A private project
is seen by its owner and by administrators. A caller with no identity (``None``:
the local CLI or Python API, the store's owner) sees everything; the HTTP and MCP
interfaces will pass a :class:`Viewer` per token.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Viewer", "may_see"]


@dataclass(frozen=True, slots=True)
class Viewer:
    """A caller: a handle (an agent's or a person's name) and whether they administer the store."""

    handle: str | None = None
    admin: bool = False


def may_see(viewer: Viewer | None, *, private: bool, owner: str | None) -> bool:
    """True when *viewer* may see work in a project that is *private* (or not) and owned by *owner*."""
    if viewer is None or viewer.admin or not private:
        return True
    return viewer.handle is not None and viewer.handle == owner
