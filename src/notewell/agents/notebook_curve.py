"""The notebook benchmark's curve: each arm's accuracy against how many values must survive.

``curve(runs)`` takes graded runs (what ``bench grade --arm ARM --json`` prints, one object per answers
file) and gives one row per arm, size and must-survive count: the runs, the mean accuracy on the values
that must survive the compactions (with the lowest and highest run), on each group, and on all questions.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import InvalidArgumentError

__all__ = ["GROUPS", "curve", "curve_table", "graded_runs"]

GROUPS = ("conversation-only", "output-only", "re-readable")


def graded_runs(text: str, name: str) -> list[dict[str, Any]]:
    """The runs of one ``bench grade --json`` output (*name* is for the error messages)."""
    try:
        data = json.loads(text)
    except ValueError:
        raise InvalidArgumentError(f"{name} is not JSON: make it with notewell notebook bench grade --json") from None
    runs = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, list) or not runs:
        raise InvalidArgumentError(f"{name} holds no graded runs (the output of bench grade --json)")
    for run in runs:
        if not isinstance(run, dict) or not isinstance(run.get("by_group"), dict):
            raise InvalidArgumentError(f"{name}: a run without per-group scores (grade it again with this version)")
        if not isinstance(run.get("arm"), str) or not run["arm"]:
            raise InvalidArgumentError(f"{name}: a run without an arm; grade with --arm plain (or notebook, ...)")
        if not isinstance(run.get("survive"), int) or isinstance(run["survive"], bool):
            raise InvalidArgumentError(f"{name}: a run without its must-survive count")
    return runs


def _counts(counts: object) -> tuple[int, int]:
    """(right, total) of a group's tally; (0, 0) when the run has no such group."""
    if counts is None:
        return 0, 0
    right = counts.get("right") if isinstance(counts, dict) else None
    total = counts.get("total") if isinstance(counts, dict) else None
    if not isinstance(right, int) or not isinstance(total, int) or not 0 <= right <= total:
        raise InvalidArgumentError(f"a graded run's group tally is not right/total counts: {counts!r:.80}")
    return right, total


def _percent(counts: object) -> float | None:
    right, total = _counts(counts)
    return 100 * right / total if total else None


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


def curve(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (arm, size, survive), sorted by arm then survive: mean accuracies over its runs."""
    cells: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for run in runs:
        cells.setdefault((run["arm"], str(run.get("size", "")), run["survive"]), []).append(run)
    rows = []
    for (arm, size, survive), group in sorted(cells.items(), key=lambda c: (c[0][0], c[0][2], c[0][1])):
        must = []
        for run in group:
            kept = [_counts(run["by_group"].get(g)) for g in GROUPS[:2]]
            right, total = sum(c[0] for c in kept), sum(c[1] for c in kept)
            if total:
                must.append(100 * right / total)
        row: dict[str, Any] = {"arm": arm, "size": size, "survive": survive, "runs": len(group)}
        row["must_survive"] = _mean(must)
        row["must_survive_range"] = [round(min(must), 1), round(max(must), 1)] if must else None
        for g in GROUPS:
            row[g] = _mean([p for p in (_percent(r["by_group"].get(g)) for r in group) if p is not None])
        scores = [_counts({"right": r.get("score"), "total": r.get("total")}) for r in group]
        row["all"] = _mean([100 * right / total for right, total in scores if total])
        rows.append(row)
    return rows


def curve_table(rows: list[dict[str, Any]]) -> str:
    """The curve as a plain table, one line per arm and must-survive count."""

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}"

    lines = [
        f"{'arm':<12} {'size':<6} {'survive':>7} {'runs':>4}  {'must-survive % (min-max)':<25}"
        f" {'conv-only':>9} {'output-only':>11} {'re-read':>7} {'all':>6}"
    ]
    for r in rows:
        span = r["must_survive_range"]
        must = cell(r["must_survive"]) + (f" ({span[0]:.0f}-{span[1]:.0f})" if span and r["runs"] > 1 else "")
        lines.append(
            f"{r['arm']:<12} {r['size']:<6} {r['survive']:>7} {r['runs']:>4}  {must:<25}"
            f" {cell(r['conversation-only']):>9} {cell(r['output-only']):>11} {cell(r['re-readable']):>7}"
            f" {cell(r['all']):>6}"
        )
    return "\n".join(lines)
