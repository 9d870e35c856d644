"""The route table: every HTTP route, once, in the order Starlette matches them."""

from __future__ import annotations

from . import attempts, notes, overview, projects, reports, revisions, search, sign_in, site
from .operations import Operation

__all__ = ["ROUTES"]

# Search before notes: /api/notes/search is not a note id.
ROUTES: tuple[Operation, ...] = (
    *site.ROUTES,
    *sign_in.ROUTES,
    *search.ROUTES,
    *revisions.ROUTES,
    *notes.ROUTES,
    *attempts.ROUTES,
    *projects.ROUTES,
    *overview.ROUTES,
    *reports.ROUTES,
)
