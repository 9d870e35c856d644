"""What an import of conversations did, as its caller (the CLI, a test, a script) reads it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ERRORS_SHOWN", "ImportReport"]

ERRORS_SHOWN = 20  # errors of one kind told one by one; past that, counted in one more


@dataclass
class ImportReport:
    """What an import did: files read, conversations found, notes written, and what failed."""

    source: str
    project: str
    files: int = 0
    conversations: int = 0  # found with at least one request
    new: int = 0  # conversations imported for the first time
    continued: int = 0  # imported before, grown since: a part added
    unchanged: int = 0
    changed_in_place: int = 0  # earlier turns differ (edited, another branch): kept as imported
    deleted_here: int = 0  # imported before and deleted from the store since: not brought back
    notes: int = 0  # notes written
    elsewhere: int = 0  # of them, on the project their conversation was first imported on, not *project*
    strays: int = 0  # turns other files hold of a session held here, that cannot be added to it: not imported
    errors: list[tuple[str, str]] = field(default_factory=list)  # (file or conversation, why)
    # Of the conversations written: secrets and personal data masked, by kind; <private> spans removed.
    redacted: Counter[str] = field(default_factory=Counter)
    private: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["errors"] = [{"where": w, "error": e} for w, e in self.errors]
        out["redacted"] = dict(sorted(self.redacted.items()))
        return out
