"""``notewell bench handoff ...``: the handoff benchmark (does the next agent find what the last one learned?)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from ...errors import InvalidArgumentError
from .command import Command

__all__ = ["COMMANDS"]


def _print(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, ensure_ascii=False) if args.json else text)


def _read(name: str) -> str:
    try:
        with open(name, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError as exc:
        raise InvalidArgumentError(f"cannot read {name}: {exc.strerror}") from None


def _grade_lines(r: dict[str, Any]) -> list[str]:
    lines = [
        f"seed {r['seed']}, arm {r['arm'] or 'unknown (next was not run)'}",
        f"task completed: {'yes' if r['completed'] else 'no'}"
        f" (as decided: {'yes' if r['completed_as_decided'] else 'no'}); last check: {r['last_check'] or 'none'}",
        f"dead ends of session 1 tried again: {len(r['dead_ends_retried'])}"
        + "".join(f" {name}" for name in r["dead_ends_retried"]),
        f"other dead ends tried: {len(r['new_dead_ends'])}; tries in all: {r['tries']}",
        f"probes: {r['probes']} ({r['probe_minutes']} min of cluster time; session 1 spent"
        f" {r['session1_probe_minutes']}), repeating session 1's: {r['probes_repeated']}",
        "decisions: " + ", ".join(f"{k} {v}" for k, v in r["decisions"].items()),
        "findings: " + ", ".join(f"{k} {v}" for k, v in r["findings"].items()),
        f"ruled out named in FIX.md: {r['ruled_out_named']} of session 1's {r['session1_failed_tries']} failed tries",
        "turns/tokens: "
        + ("; ".join(f"session {i} {s['turns']}/{s['tokens']}" for i, s in enumerate(r["turns_tokens"], 1)) or "none"),
    ]
    past = r.get("past")
    if past:
        lines.append(
            f"the past ({past['entries']} entries; mode and release are its decisions): session 1's first range"
            f" probe {'inside' if past['window_first'] else 'not inside'} the backfill's shards"
            f" {past['window'][0]}-{past['window'][1]}, {past['range_probes_outside_window']} range probe(s) outside"
            f" them; release {'stale (the frozen one)' if past['release_stale'] else 'not the stale one'}"
        )
    lines += [f"LOG: {p}" for p in r["log_problems"]]
    for name, flags in r["transcript_flags"].items():
        lines += [f"TRANSCRIPT {name}: {f}" for f in flags]
    return lines


def _briefing(root: Path) -> str:
    """The notewell arm's store as its session-start hook gives it, run in the workspace."""
    done = subprocess.run(
        [sys.executable, "-m", "notewell", "--store", str(root / "notes"), "hook", "session-start"],
        cwd=root / "workspace",
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise InvalidArgumentError(f"the session-start hook failed: {done.stderr.strip()[:300]}")
    return done.stdout.strip()


def _preamble(directory: str, arm: str, session: int) -> str:
    """The arm's text for *session*: the notewell arm's with the store's session-start briefing in it,
    with a past the memory file's loaded head in the memory-file arm's; also written to
    DIR/preamble-sessionN.txt."""
    from ...agents.handoff_bench import ARMS, ARMS_HISTORY, load_handoff
    from ...agents.handoff_history import loaded_head

    root = Path(directory).resolve()
    past = bool(load_handoff(root)[0].history)
    text = (ARMS_HISTORY if past else ARMS)[arm][session - 1]
    values: dict[str, str] = {}
    if "{briefing}" in text:
        values["briefing"] = _briefing(root)
    if "{head}" in text:
        memory = root / "workspace" / "MEMORY.md"
        head, loaded, total = loaded_head(
            memory.read_text(encoding="utf-8", errors="replace") if memory.is_file() else ""
        )
        values.update(head=head, loaded=str(loaded), total=str(total))
    # One pass, so that a note or a memory line holding "{head}" or "{total}" is left as it is.
    text = re.sub(r"\{(briefing|head|loaded|total)\}", lambda m: values.get(m.group(1), m.group(0)), text)
    if text:
        (root / f"preamble-session{session}.txt").write_text(text + "\n", encoding="utf-8")
    return text


def _start(args: argparse.Namespace) -> None:
    from ...agents.handoff_bench import start_session

    done = start_session(args.dir, args.arm)
    done["preamble"] = _preamble(args.dir, args.arm, 1)
    text = f"session 1 may begin (arm {done['arm']}): {done['written']} of the past's {done['history']} entries written"
    if done["preamble"]:
        where = f"{args.dir}/preamble-session1.txt"
        text += f"\n\nbefore session 1's first prompt, paste (also in {where}):\n\n{done['preamble']}"
    _print(args, done, text)


def cmd_bench(args: argparse.Namespace) -> None:
    from ...agents.handoff_bench import make_handoff, next_session
    from ...agents.handoff_grade import grade_handoff

    if args.action == "make":
        h = make_handoff(args.dir, seed=args.seed, history=args.history)
        data = {"dir": args.dir, "seed": h.seed, "history": len(h.history), "files": len(h.files),
                "prompts": [len(h.session1), len(h.session2)]}  # fmt: skip
        past = f"; a past of {len(h.history)} entries: start {args.dir} --arm ARM before session 1" if h.history else ""
        _print(
            args,
            data,
            f"handoff benchmark (seed {h.seed}) in {args.dir}: {len(h.files)} files under workspace/, session1.md"
            f" ({len(h.session1)} prompts), session2.md ({len(h.session2)}){past}\nrun session 1, then:"
            f" notewell bench handoff next {args.dir} --arm ARM; run session 2, then:"
            f" notewell bench handoff grade {args.dir}",
        )
    elif args.action == "start":
        _start(args)
    elif args.action == "next":
        done = next_session(args.dir, args.arm)
        done["preamble"] = _preamble(args.dir, args.arm, 2)
        text = (
            f"session 2 may begin (arm {done['arm']}): session 1 made {done['session1_calls']} tool calls;"
            f" removed {len(done['removed'])} file(s) it added ({', '.join(done['removed']) or 'none'}),"
            f" put back {len(done['restored'])} it changed ({', '.join(done['restored']) or 'none'})"
        )
        text += "".join(f"\nLOG: {p}" for p in done["log_problems"])
        if done["preamble"]:
            where = f"{args.dir}/preamble-session2.txt"
            text += f"\n\nbefore session 2's prompt, paste (also in {where}):\n\n{done['preamble']}"
        _print(args, done, text)
    else:
        transcripts = {name: _read(name) for name in args.transcript or []}
        result = grade_handoff(args.dir, transcripts)
        _print(args, result, "\n".join(_grade_lines(result)))


def _arguments(p: argparse.ArgumentParser) -> None:
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print JSON")
    sub = p.add_subparsers(dest="bench", metavar="BENCHMARK", required=True, help="which benchmark")
    h = sub.add_parser(
        "handoff",
        help="a task handed from one agent's session to a fresh one: what the second re-does",
        description="a task handed from one agent's session to a fresh one: what the second re-does",
    )
    steps = h.add_subparsers(dest="action", metavar="make|start|next|grade", required=True, help="the step")
    make = "write the workspace, session1.md and session2.md (deterministic by seed; the key is never written)"
    b = steps.add_parser("make", help=make, description=make, parents=[as_json])
    b.add_argument("dir", metavar="DIR", help="a new (or empty) folder")
    b.add_argument("--seed", type=int, default=1, help="the same seed makes the same benchmark (default 1)")
    b.add_argument(
        "--history",
        type=int,
        default=0,
        metavar="H",
        help="give the project a past of H entries of memory (0-1000; default 0: none), three bearing on the task",
    )
    step = (
        "before session 1 (with a past): write the past into the arm's memory (MEMORY.md, or notes in DIR/notes),"
        " print the arm's text for session 1"
    )
    b = steps.add_parser("start", help=step, description=step, parents=[as_json])
    b.add_argument("dir", metavar="DIR", help="the folder bench handoff make wrote")
    b.add_argument("--arm", required=True, choices=("none", "memory-file", "notewell"), help="the arm this run is")
    step = (
        "between the sessions: put the workspace back as made (MEMORY.md kept in the memory-file arm), mark"
        " session 2 in the call log, print the arm's text for session 2"
    )
    b = steps.add_parser("next", help=step, description=step, parents=[as_json])
    b.add_argument("dir", metavar="DIR", help="the folder bench handoff make wrote")
    b.add_argument(
        "--arm",
        required=True,
        choices=("none", "memory-file", "notewell"),
        help="none, memory-file or notewell: the arm this run is (kept in runs.json)",
    )
    step = "count what session 2 re-did, kept and finished, from the key rebuilt from the seed and the call log"
    b = steps.add_parser("grade", help=step, description=step, parents=[as_json])
    b.add_argument("dir", metavar="DIR", help="the folder bench handoff make wrote")
    b.add_argument(
        "--transcript", action="append", metavar="FILE", help="a session's transcript, checked for reading hidden files"
    )


COMMANDS = (
    Command(
        "bench",
        "agent",
        "benchmarks an agent is run on: handoff (does the next session find what the last one learned?)",
        cmd_bench,
        _arguments,
    ),
)
