"""What changed between two revisions of a note: a line diff, as data for the page.

The answer holds the lines of text as strings, never markup: the page puts each one in with
``textContent``, so a note's ``<script>`` reads as text in a diff as everywhere else.

The work is bounded. The lines both texts start and end with are set aside first (an edit
usually changes one place); the part between is compared line by line with difflib only when
its two sides' lengths multiplied stay under :data:`PAIRS_MAX` (and neither is over
:data:`SIDE_MAX`). difflib costs up to that product (20,000 lines a side drawn from 199
distinct ones took 137 s), times how often a line repeats when the side it indexes is under 200
lines: that side is always the longer one (:func:`_matched`). A longer changed part is shown
whole, as removed and then added (``"coarse": true``). At most :data:`SHOWN_MAX` lines are
listed (``"truncated": true``); the counts of lines added and removed are of the whole diff.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Any

__all__ = ["CONTEXT", "PAIRS_MAX", "SHOWN_MAX", "SIDE_MAX", "line_diff"]

PAIRS_MAX = 1_000_000  # lines of one side times lines of the other, in the changed part
SIDE_MAX = 50_000  # lines of one side of the changed part
SHOWN_MAX = 5_000  # lines listed in the answer
CONTEXT = 3  # unchanged lines shown around a change


def _ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines *a* and *b* start with alike, and then end with alike (not overlapping)."""
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


_Op = tuple[str, int, int, int, int]


def _opcodes(a: list[str], b: list[str]) -> tuple[list[_Op], bool]:
    """difflib's opcodes for *a* to *b*, its costly part bounded; and whether it was bounded."""
    head, tail = _ends(a, b)
    a_mid, b_mid = a[head : len(a) - tail], b[head : len(b) - tail]
    coarse = len(a_mid) * len(b_mid) > PAIRS_MAX or max(len(a_mid), len(b_mid)) > SIDE_MAX
    if coarse:
        middle: list[_Op] = [("replace", 0, len(a_mid), 0, len(b_mid))] if a_mid or b_mid else []
    else:
        middle = _matched(a_mid, b_mid)
    ops = [("equal", 0, head, 0, head)] if head else []
    ops += [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle]
    if tail:
        ops.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return ops or [("equal", 0, 0, 0, 0)], coarse


_FLIPPED = {"insert": "delete", "delete": "insert"}


def _matched(a: list[str], b: list[str]) -> list[_Op]:
    """difflib's opcodes for *a* to *b*, the longer side given as its second: difflib drops a
    line repeated past 1% of that side from matching only when it has 200 lines or more, and
    without that, a short side of a few repeated lines against a long one cost (lines x lines)
    x repeats (5,025 lines against 199: 5 s)."""
    if len(a) <= len(b):
        return list(difflib.SequenceMatcher(None, a, b).get_opcodes())
    flipped = difflib.SequenceMatcher(None, b, a).get_opcodes()
    return [(_FLIPPED.get(tag, tag), i1, i2, j1, j2) for tag, j1, j2, i1, i2 in flipped]


def _grouped(ops: list[_Op], context: int) -> list[list[_Op]]:
    """The opcodes in hunks, *context* equal lines around each change (as difflib groups them)."""
    ops = list(ops)
    tag, i1, i2, j1, j2 = ops[0]
    if tag == "equal":
        ops[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
    tag, i1, i2, j1, j2 = ops[-1]
    if tag == "equal":
        ops[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
    groups: list[list[_Op]] = []
    group: list[_Op] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    groups.append(group)
    return [g for g in groups if any(op[0] != "equal" for op in g)]


def _lines(a: list[str], b: list[str], group: list[_Op]) -> Iterator[dict[str, Any]]:
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            yield from ({"op": "=", "old": i + 1, "new": j1 + i - i1 + 1, "text": a[i]} for i in range(i1, i2))
            continue
        yield from ({"op": "-", "old": i + 1, "new": None, "text": a[i]} for i in range(i1, i2))
        yield from ({"op": "+", "old": None, "new": j + 1, "text": b[j]} for j in range(j1, j2))


def line_diff(old: str, new: str, *, context: int = CONTEXT) -> dict[str, Any]:
    """The hunks that turn *old* into *new*: each line ``{"op": "=", "+" or "-", "old": N | None,
    "new": N | None, "text": ...}`` (line numbers from 1), and how many lines were added and removed."""
    a, b = old.splitlines(), new.splitlines()
    ops, coarse = _opcodes(a, b)
    hunks: list[dict[str, Any]] = []
    shown, truncated = 0, False
    for group in _grouped(ops, context):
        lines = []
        for line in _lines(a, b, group):
            if shown == SHOWN_MAX:
                truncated = True
                break
            lines.append(line)
            shown += 1
        if lines:
            hunks.append({"old_start": group[0][1] + 1, "new_start": group[0][3] + 1, "lines": lines})
        if truncated:
            break
    removed = sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag != "equal")
    added = sum(j2 - j1 for tag, _, _, j1, j2 in ops if tag != "equal")
    return {"hunks": hunks, "added": added, "removed": removed, "coarse": coarse, "truncated": truncated}
