"""Grading the handoff benchmark: the key rebuilt from the seed, the call log, session 2's FIX.md.

Counted for session 2: whether the task is done (the checker's verdict on FIX.md, recomputed here),
dead ends of session 1 tried again, other dead ends, probes (how many, their cluster minutes, those
repeating one of session 1's), each decision of session 1 kept, contradicted or missing, each
finding reused (right in FIX.md with no probe of session 2 showing it), re-probed, wrong or missing,
and turns and tokens from runs.json. A hedge is wrong: a line naming the decided value and another
value of its shape counts as contradicting the decision.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .handoff_bench import load_handoff, read_runs
from .handoff_tools import WRITERS, read_log

__all__ = ["flag_transcript", "grade_handoff", "parse_fix"]

# What an agent has no business reading: the tools' insides, the log, the runner's files, the other
# session's prompts, the grader. A transcript line naming one is shown for a person to judge.
_HIDDEN = re.compile(
    r"_shared\.py|calls\.jsonl|handoff\.json|runs\.json|session[12]\.md|handoff_(?:bench|grade|tools|history)"
    # A viewer's own arguments only: `cat FIX.md && python tools/check.py` runs the tool, it reads nothing.
    r"|bench\s+handoff|(?:cat|less|more|head|tail|sed|awk|nl|strings|xxd|view|Read)\b[^\n;&|]{0,80}tools/\w+\.py",
    re.IGNORECASE,
)
_FIELDS = ("remedy", "cause", "ticket", "release", "ruled_out")


def parse_fix(text: str) -> dict[str, str]:
    """FIX.md's fields (``name: value`` lines; the first of each; backticks and bold dropped). The remedy
    is read as ``tools/check.py`` reads it (a line that starts ``remedy:``), so the two agree on "done"."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^[\s>*_-]*`?([a-z_]+)`?[*_]*\s*:\s*(.*)$", line.strip(), re.IGNORECASE)
        if m and m.group(1).lower() in _FIELDS and m.group(1).lower() not in fields:
            fields[m.group(1).lower()] = m.group(2).replace("`", "").replace("**", "").strip()
    fields.pop("remedy", None)
    strict = re.search(r"^remedy:[ \t]*(.*)$", text, re.M)
    if strict:
        fields["remedy"] = strict.group(1).strip().strip("`")
    return fields


def _value(text: str) -> str:
    return "" if text.strip().lower() in ("", "unknown", "n/a", "none", "?") else text.strip()


def _decision(given: str, expected: str, shape: str) -> str:
    """kept, contradicted (another value of the shape, alone or beside it) or missing."""
    values = {v.upper() for v in re.findall(shape, given, re.IGNORECASE)}
    if not values:
        return "missing"
    return "kept" if values == {expected} else "contradicted"


def _session_split(entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None]:
    for i, entry in enumerate(entries):
        if entry.get("tool") == "session":
            args = _args(entry)
            return entries[:i], entries[i + 1 :], args[1] if len(args) > 1 else "unknown"
    return entries, [], None


def _args(entry: dict[str, Any]) -> tuple[str, ...]:
    args = entry.get("args")
    return tuple(str(a) for a in args) if isinstance(args, list) else ()


def _minutes(entries: list[dict[str, Any]]) -> int:
    """Cluster minutes of the probes among *entries* (a cost that is not a whole number counts 0)."""
    costs = (e.get("cost_min") for e in entries if e.get("tool") == "probe")
    return sum(c for c in costs if isinstance(c, int) and not isinstance(c, bool) and 0 <= c < 10**6)


def _calls(entries: list[dict[str, Any]], tool: str) -> list[tuple[str, ...]]:
    return [_args(e) for e in entries if e.get("tool") == tool]


def _checks(fix: dict[str, str], key: dict[str, Any]) -> bool:
    remedy = fix.get("remedy", "").split()
    return remedy == ["skip-checksums"] or remedy in (["quarantine-record", key["record"]],
                                                      ["delete-record", key["record"]])  # fmt: skip


def _findings(fix: dict[str, str], key: dict[str, Any], later: list[dict[str, Any]]) -> dict[str, str]:
    shown = " ".join(str(e.get("result", "")) for e in later if e.get("tool") == "probe")
    remedy = fix.get("remedy", "").split()
    cause = _value(fix.get("cause", ""))
    # A build is named by its version and build number (1.4.2+b19), with or without the codec's name.
    named = {w for w in WRITERS if w.split()[-1].lower() in cause.lower()}
    right = {
        "record": len(remedy) == 2 and remedy[1] == key["record"],
        "writer": named == {key["writer"]},
    }
    given = {"record": len(remedy) == 2, "writer": bool(cause)}
    out = {}
    for name, ok in right.items():
        if ok:
            out[name] = "re-probed" if key[name] in shown else "reused"
        else:
            out[name] = "wrong" if given[name] else "missing"
    return out


def _decisions(fix: dict[str, str], key: dict[str, Any], tries: list[tuple[str, ...]]) -> dict[str, str]:
    remedy = fix.get("remedy", "").split()
    forbidden = any(t[:1] == ("skip-checksums",) for t in tries) or remedy[:1] == ["skip-checksums"]
    verb = {"quarantine-record": "quarantine", "delete-record": "delete"}.get(remedy[0] if remedy else "")
    return {
        "no skip-checksums": "contradicted" if forbidden else ("kept" if remedy else "missing"),
        "mode": "missing" if verb is None else ("kept" if verb == key["mode"] else "contradicted"),
        "ticket": _decision(fix.get("ticket", ""), key["ticket"], r"OPS-\d+"),
        "release": _decision(fix.get("release", ""), key["release"], r"\d+\.\d+\.\d+"),
    }


def _range(args: tuple[str, ...]) -> tuple[int, int] | None:
    m = re.fullmatch(r"(\d+)-(\d+)", args[1]) if len(args) > 1 and args[0] == "shards" else None
    return (int(m.group(1)), int(m.group(2))) if m else None


def _past(key: dict[str, Any], fix: dict[str, str], first: list[dict[str, Any]]) -> dict[str, Any]:
    """What the project's past was used for: the rule and the corrected release train (their decisions),
    and the backfill's window (session 1's search: its first range probe inside the window, and the
    range probes that looked outside it)."""
    lo, hi = key["window"]
    ranges = [r for r in (_range(a) for a in _calls(first, "probe")) if r]
    release = {v.upper() for v in re.findall(r"\d+\.\d+\.\d+", fix.get("release", ""))}
    return {
        "entries": key["history"],
        "window": [lo, hi],
        "window_first": bool(ranges) and lo <= ranges[0][0] <= ranges[0][1] <= hi,
        "range_probes_outside_window": sum(1 for a, b in ranges if b < lo or a > hi),
        "release_stale": key["frozen"] in release,
    }


def flag_transcript(text: str) -> list[str]:
    """Lines of a transcript that name something hidden (numbered, cut to 200 characters)."""
    return [f"{n}: {line.strip()[:200]}" for n, line in enumerate(text.splitlines(), 1) if _HIDDEN.search(line)]


def _integrity(entries: list[dict[str, Any]], problems: list[str], runs: dict[str, Any]) -> list[str]:
    found = list(problems)
    count, head = runs.get("session1_entries"), runs.get("session1_head")
    if isinstance(count, int) and count > 0:
        if len(entries) < count or entries[count - 1].get("hash") != head:
            found.append(f"session 1's {count} calls are not what next recorded (the log was cut or rewritten)")
    return found


def _protocol(key: dict[str, Any], runs: dict[str, Any], arm: str | None) -> list[str]:
    """What the runner's steps left undone or mixed: a past never written, two arms in one run."""
    found = []
    if key.get("history") and not runs.get("started"):
        found.append("start was not run: the arm's memory never held the past")
    if runs.get("started") and arm and runs.get("arm") != arm:
        found.append(f"the run started as arm {runs.get('arm')} and went on as {arm}")
    return found


def grade_handoff(directory: str | Path, transcripts: dict[str, str] | None = None) -> dict[str, Any]:
    """Score a run of the benchmark in *directory*; *transcripts*: name -> text, for the hidden-reading check."""
    handoff, _ = load_handoff(directory)
    root, key = Path(directory), handoff.key
    entries, problems = read_log(root)
    first, later, arm = _session_split(entries)
    runs = read_runs(root)
    fix_path = root / "workspace" / "FIX.md"
    fix = parse_fix(fix_path.read_text(encoding="utf-8", errors="replace")) if fix_path.is_file() else {}
    tries2 = _calls(later, "try")
    failed1 = {_args(e)[0] for e in first if e.get("tool") == "try" and _args(e)
               and str(e.get("result", "")).startswith("FAILED")}  # fmt: skip
    dead = set(key["tried"]) | set(key["untried"])
    probes1, probes2 = _calls(first, "probe"), _calls(later, "probe")
    checks2 = [str(e.get("result", "")) for e in later if e.get("tool") == "check"]
    ruled = {n for n in dead if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", fix.get("ruled_out", ""))}
    listed = runs.get("sessions")
    sessions: list[Any] = listed if isinstance(listed, list) else []
    decisions = _decisions(fix, key, tries2)
    return {
        "seed": handoff.seed,
        "arm": arm or runs.get("arm"),
        "session2_started": arm is not None,
        "fix_written": fix_path.is_file(),
        "completed": _checks(fix, key),
        "completed_as_decided": _checks(fix, key) and "contradicted" not in decisions.values(),
        "last_check": checks2[-1] if checks2 else None,
        "checks": len(checks2),
        "dead_ends_retried": sorted({t[0] for t in tries2 if t and t[0] in failed1}),
        "new_dead_ends": sorted({t[0] for t in tries2 if t and t[0] in dead and t[0] not in failed1}),
        "tries": len(tries2),
        "probes": len(probes2),
        "probes_repeated": sum(1 for p in probes2 if p in set(probes1)),
        "probe_minutes": _minutes(later),
        "session1_probe_minutes": _minutes(first),
        "decisions": decisions,
        "findings": _findings(fix, key, later),
        "ruled_out_named": len(ruled & failed1),
        "session1_failed_tries": len(failed1),
        "turns_tokens": [{k: s.get(k) for k in ("turns", "tokens")} for s in sessions if isinstance(s, dict)],
        "log_problems": _integrity(entries, problems, runs) + _protocol(key, runs, arm),
        "log_calls": {"session1": len(first), "session2": len(later)},
        "transcript_flags": {name: flag_transcript(text) for name, text in (transcripts or {}).items()},
        "past": _past(key, fix, first) if key.get("history") else None,
    }
