"""The notebook benchmark's runner steps at each compaction: the summary's budget and what an arm may keep.

Agent runs beat the scale size two ways this closes: summaries of 150 "words" that were 1.3-1.8 KB of
comma-joined values (``summary_check`` counts characters), and copies of logs saved before they were
rotated (``compact`` puts ``workspace/`` back as ``make`` wrote it, but for what the tools change by
design, and removes every other file but the notebook arm's ``.agent-context/``). Each compaction is
appended to ``compactions.jsonl`` beside ``workspace/``; ``compaction_record`` is what the grader checks.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError
from ..model.numbers import whole_number
from .notebook_bench import Bench, load_bench

__all__ = ["ARMS", "LOG_NAME", "compact", "compaction_record", "summary_check"]

LOG_NAME = "compactions.jsonl"
ARMS = ("plain", "notebook")
_KEPT = ("bench.json", "session.md", "quiz.md", LOG_NAME)  # the runner's files, not the agent's
_ALLOWANCE = {"plain": (), "notebook": (".agent-context",)}
_RUNS = 100  # how many runs of a probe a state file may be from make's


def summary_check(texts: dict[str, str], limit: int, *, cut: bool = False) -> list[dict[str, Any]]:
    """Each summary's length in characters against *limit*; with *cut*, its text cut at the limit."""
    whole_number("the limit (characters)", limit, 1)
    rows = []
    for name, text in texts.items():
        row: dict[str, Any] = {"file": name, "chars": len(text), "limit": limit, "over": len(text) > limit}
        if cut:
            row["text"] = text[:limit]
        rows.append(row)
    return rows


def _literal(source: str, name: str) -> Any:
    """The literal a tool's source assigns to *name* (ORDER, NEW), or None."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def _states(bench: Bench, rel: str) -> list[str]:
    """What a file the tools change may hold after their runs, in order (make's first)."""
    first = bench.files[rel]
    if rel.endswith("-leader.txt"):  # a probe's secret, replaced by its hash at each run
        states, secret = [first], first.strip()
        for _ in range(_RUNS):
            secret = hashlib.sha256(("next:" + secret).encode("ascii")).hexdigest()
            states.append(secret + "\n")
        return states
    if rel == "tools/lease.txt":
        order = _literal(bench.files["tools/probe.py"], "ORDER") or []
        return [first] + [f"{o}\n" for o in order if f"{o}\n" != first]
    name = rel.rsplit("/", 1)[1]
    rotated = [
        _literal(src, "NEW") for tool, src in bench.files.items() if tool.startswith("tools/rotate") and name in src
    ]
    return [first, *(r for r in rotated if isinstance(r, str))]


def _read_log(root: Path) -> list[dict[str, Any]]:
    path = root / LOG_NAME
    if not path.is_file():
        return []
    entries = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            entry = {"broken": line[:200]}
        entries.append(entry if isinstance(entry, dict) else {"broken": str(entry)[:200]})
    return entries


def compact(directory: str | Path, arm: str) -> dict[str, Any]:
    """One compaction of a run of *arm*: restore ``workspace/``, remove what the arm may not keep, log it."""
    if arm not in ARMS:
        raise InvalidArgumentError(f"arm is plain or notebook, got {arm!r}")
    root = Path(directory)
    _, bench = load_bench(root)
    made = {f"workspace/{rel}": rel for rel in bench.files}
    changing = {f"workspace/{rel}" for rel in bench.mutable}
    allowed = _ALLOWANCE[arm]
    removed, restored, tampered = [], [], []
    for top, dirs, names in os.walk(root, topdown=True, followlinks=False):
        here = Path(top)
        for name in sorted(names) + [d for d in dirs if (here / d).is_symlink()]:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if rel in _KEPT or rel in made or rel.split("/", 1)[0] in allowed:
                continue
            path.unlink()
            removed.append(rel)
        dirs[:] = [d for d in dirs if not (here / d).is_symlink()]
    for rel, inner in made.items():
        path = root / rel
        now = path.read_text(encoding="utf-8", errors="replace") if path.is_file() and not path.is_symlink() else None
        if rel in changing:
            states = _states(bench, inner)
            if now in states:
                continue
            tampered.append(rel)
            text = states[1] if len(states) > 1 else states[0]  # never make's: it would bring the value back
        elif now == bench.files[inner]:
            continue
        else:
            restored.append(rel)
            text = bench.files[inner]
        if path.is_symlink():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    _prune(root, allowed)
    entry = {
        "n": len(_read_log(root)) + 1,
        "arm": arm,
        "removed": removed,
        "restored": restored,
        "tampered": tampered,
    }
    with (root / LOG_NAME).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, sort_keys=True) + "\n")
    return entry


def _prune(root: Path, allowed: tuple[str, ...]) -> None:
    """Folders left empty by the removals go too (workspace/'s own folders are made again if needed)."""
    for top, _dirs, _names in sorted(os.walk(root), key=lambda t: -len(t[0])):
        path = Path(top)
        rel = path.relative_to(root).as_posix()
        if path != root and rel.split("/", 1)[0] not in allowed and not any(path.iterdir()):
            path.rmdir()


def compaction_record(directory: str | Path) -> dict[str, Any]:
    """What the runner logged: compactions done against the protocol's count, the arms, what was tampered with."""
    root = Path(directory)
    manifest, _ = load_bench(root)
    entries = _read_log(root)
    expected = len(manifest.get("compact_after") or [None])  # short and long: once, after the last prompt
    tampered = sorted({t for e in entries for t in e.get("tampered") or []})
    arms = sorted({str(e.get("arm")) for e in entries})
    problems = []
    if len(entries) != expected:
        problems.append(f"{len(entries)} compactions logged, the protocol has {expected}")
    if len(arms) > 1:
        problems.append(f"compactions of more than one arm: {', '.join(arms)}")
    if tampered:
        problems.append(f"files the tools change held something the tools never write: {', '.join(tampered)}")
    if any("broken" in e for e in entries):
        problems.append(f"{LOG_NAME} has lines that are not entries")
    return {"done": len(entries), "expected": expected, "arms": arms, "tampered": tampered, "problems": problems}
