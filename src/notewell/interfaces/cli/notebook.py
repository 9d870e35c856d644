"""``notewell notebook ...``: the working-context notebook from the command line."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ...errors import InvalidArgumentError, InvalidNoteError
from ...settings import setting
from .command import Command

__all__ = ["COMMANDS"]


def _task(args: argparse.Namespace) -> str:
    """--task, else $NOTEWELL_NOTEBOOK, else the only notebook under the root."""
    from ...agents.notebook import chosen_task

    return chosen_task(args.task, args.root, naming="--task")


def _init_task(args: argparse.Namespace) -> str:
    """init's TASK; --task, hidden, is still taken alone, as every other action takes it."""
    if args.name and args.task and args.name != args.task:
        raise InvalidArgumentError(f"give the task once, as TASK: {args.name!r} or {args.task!r}?")
    task = args.name or args.task
    if not task:
        raise InvalidArgumentError("name the task: notewell notebook init TASK --goal ...")
    return str(task)


def _print(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, ensure_ascii=False) if args.json else text)


def cmd_notebook(args: argparse.Namespace) -> None:
    from ...agents.notebook import Notebook  # only this command needs it

    action = args.action
    if action == "bench":
        _bench(args)
        return
    if action == "init":
        book = Notebook.init(_init_task(args), goal=args.goal or "", budget=args.budget, root=args.root)
        _print(args, {"task": book.task, "path": str(book.path)}, f"notebook ready: {book.path}")
        return
    book = Notebook(_task(args), root=args.root)
    if action == "log":
        source = args.file
        if source in (None, "-"):
            data = sys.stdin.buffer.read()
        else:
            try:
                with open(source, "rb") as fh:
                    data = fh.read()
            except OSError as exc:
                raise InvalidArgumentError(f"cannot read {source}: {exc.strerror}") from None
        event, pointer = book.log(data, args.label or "")
        _print(args, {**event.to_dict(), "pointer": pointer}, pointer)
    elif action == "recall":
        print(book.recall(args.event, grep=args.grep, offset=args.offset, limit=args.limit))
    elif action == "accept":
        result = book.accept()
        for w in result.warnings:
            print(f"warning: {w}", file=sys.stderr)
        if not result.accepted:
            for e in result.errors:
                print(f"error: {e}", file=sys.stderr)
            raise InvalidNoteError(
                f"{len(result.errors)} error(s); nothing changed, revision {result.revision} stays in force"
                " (fix them, or notewell notebook restore)"
            )
        _print(args, {"revision": result.revision}, f"accepted as revision {result.revision}")
    elif action == "restore":
        number = book.restore()
        _print(args, {"revision": number}, f"notebook.md is revision {number} again")
    elif action == "show":
        print(book.show(), end="")
    elif action == "status":
        status = book.status()
        lines = [
            f"{status['task']}: revision {status['revision']}, about {status['tokens']} of {status['budget']} tokens"
            f" ({status['used_percent']}%)",
            "items: " + ", ".join(f"{k} {v}" for k, v in status["sections"].items()),
            f"unaccepted edits: {'yes' if status['unaccepted_edits'] else 'no'}",
            f"raw events: {status['raw_events']}; not cited yet: {', '.join(status['uncited_events']) or 'none'}",
            # A done tracker item is not deleted but moved to Dropped (a deletion is refused): say so.
            "to trim: "
            + (
                "; ".join(
                    what.format(", ".join(ids))
                    for what, ids in (
                        ("delete the accepted Dropped lines {}", status["trimmable"]["dropped"]),
                        ("move the done tracker items {} to ## Dropped", status["trimmable"]["done"]),
                    )
                    if ids
                )
                or "nothing yet"
            ),
        ]
        lines += [f"TAMPERED: {t}" for t in status["tampered"]]
        _print(args, status, "\n".join(lines))
    elif action == "diff":
        print(book.diff(args.a, args.b))
    elif action == "history":
        rows = book.history()
        _print(args, rows, "\n".join(f"r{h['revision']}  {h['items']} items  ~{h['tokens']} tokens" for h in rows))
    elif action == "promote":
        from .store_options import open_from_args

        with open_from_args(args, create=True, watch=False) as store:
            made = book.promote(store, args.ids, author=args.author)
        _print(
            args,
            made,
            "\n".join(f"{m['id']} -> {m['note_id']}{'' if m['new'] else ' (promoted before)'}" for m in made),
        )
    elif action == "nudge":
        message = book.nudge()
        if message:
            print(message)


def _bench(args: argparse.Namespace) -> None:
    from ...agents.notebook_bench import make_bench

    if args.bench_action == "make":
        bench = make_bench(
            args.dir,
            seed=args.seed,
            noise=args.noise,
            size=args.size,
            survive=args.survive,
            summary_chars=args.summary_chars,
        )
        compact = "".join(f", compacted after prompt {n}" for n in bench.compact_after) + (
            " and the last" if bench.compact_after else ""
        )
        _print(
            args,
            {
                "dir": args.dir,
                "seed": bench.seed,
                "size": bench.size,
                "survive": bench.survive,
                "files": len(bench.files),
                "prompts": len(bench.prompts),
                "questions": len(bench.questions),
            },
            f"benchmark (seed {bench.seed}, {bench.size}) in {args.dir}: {len(bench.files)} files under workspace/,"
            f" session.md ({len(bench.prompts)} prompts{compact}), quiz.md ({len(bench.questions)} questions);"
            f" {bench.survive} values must survive the compaction\n"
            f"run the session with and without the notebook, compact where session.md says, then:"
            f" notewell notebook bench grade {args.dir} ANSWERS --arm plain|notebook",
        )
        return
    if args.bench_action == "curve":
        _curve(args)
        return
    if args.bench_action in ("compact", "summary-check"):
        _runner_step(args)
        return
    _grade(args)


def _runner_step(args: argparse.Namespace) -> None:
    """The runner's steps at a compaction: remove what the arm may not keep; hold a summary to its budget."""
    from ...agents.notebook_bench import load_bench
    from ...agents.notebook_compact import compact, summary_check

    if args.bench_action == "compact":
        entry = compact(args.dir, args.arm)
        _print(
            args,
            entry,
            f"compaction {entry['n']} ({entry['arm']}): removed {len(entry['removed'])} files, restored"
            f" {len(entry['restored'])}" + (f"; TAMPERED: {', '.join(entry['tampered'])}" if entry["tampered"] else ""),
        )
        return
    limit = args.limit
    if limit is None:
        manifest, _ = load_bench(args.dir)
        limit = manifest.get("compaction_chars")
        if limit is None:
            raise InvalidArgumentError(f"{args.dir} is not a scale benchmark: give the budget with --limit N")
    rows = summary_check({name: _read(name) for name in args.summaries}, limit, cut=args.cut)
    for row in rows:
        if args.cut and row["over"]:
            with open(row["file"], "w", encoding="utf-8") as fh:
                fh.write(row.pop("text"))
        row.pop("text", None)
    over = [r for r in rows if r["over"]]
    verb = "cut to" if args.cut else "over"
    text = "\n".join(f"{r['file']}: {r['chars']} characters ({verb if r['over'] else 'within'} {limit})" for r in rows)
    _print(args, {"summaries": rows}, text)
    if over and not args.cut:
        raise InvalidArgumentError(f"{len(over)} summaries over {limit} characters: the run is void (or --cut them)")


def _curve(args: argparse.Namespace) -> None:
    from ...agents.notebook_curve import curve, curve_table, graded_runs

    runs = []
    for name in args.graded:
        runs += graded_runs(_read(name), name)
    rows = curve(runs)
    _print(args, {"curve": rows}, curve_table(rows))


def _read(name: str) -> str:
    try:
        with open(name, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgumentError(f"cannot read {name}: {getattr(exc, 'strerror', None) or exc}") from None


def _grade(args: argparse.Namespace) -> None:
    from ...agents.notebook_bench import grade_answers, parse_answers

    results = []
    from ...agents.notebook_compact import compaction_record

    record = compaction_record(args.dir)
    for problem in record["problems"]:
        print(f"warning: {args.dir}: {problem} (the run is void)", file=sys.stderr)
    for name in args.answers:
        result = grade_answers(args.dir, parse_answers(_read(name)))
        result["compactions"] = record
        result["answers_file"] = name
        if args.arm:
            result["arm"] = args.arm
        results.append(result)
        for unknown in result["unknown_ids"]:
            print(f"warning: {name}: {unknown} is not a question of this quiz", file=sys.stderr)
    if results and results[0]["files_changed"]:
        changed = ", ".join(results[0]["files_changed"])
        print(f"warning: these files differ from what seed {results[0]['seed']} makes: {changed}", file=sys.stderr)
    mean = round(sum(r["percent"] for r in results) / len(results), 1)
    lines = []
    for r in results:
        lines.append(f"{r['answers_file']}: {r['score']}/{r['total']} ({r['percent']}%)")
        for q in r["questions"]:
            mark = "right" if q["correct"] else "WRONG"
            why = f"; names the decoy {', '.join(q['decoys'])}" if q["decoys"] else ""
            lines.append(f"  {q['id']} {mark:5} [{q['kind']}] expected {' + '.join(q['expected'])}{why}")
        lines += _groups_table(r)
    if len(results) > 1:
        lines.append(f"mean over {len(results)} runs: {mean}%")
    _print(args, {"runs": results, "mean_percent": mean}, "\n".join(lines))


def _groups_table(result: dict[str, Any]) -> list[str]:
    """Right/total per must-survive group and per kind: the small table under a run's questions."""
    lines = [f"  {'group / kind':<20} right/total   (must survive: {result['survive']})"]
    for label, tally in (("", result["by_group"]), ("kind ", result["by_kind"])):
        for name, c in tally.items():
            lines.append(f"  {label + name:<20} {c['right']:>5}/{c['total']:<5} {100 * c['right'] / c['total']:5.1f}%")
    return lines


def _options(*, task: bool = False, root: bool = False) -> argparse.ArgumentParser:
    """The options actions share: --task (not init's: it takes TASK), --root (not bench's), --json."""
    options = argparse.ArgumentParser(add_help=False)
    if task:
        options.add_argument("--task", help="which notebook (default: $NOTEWELL_NOTEBOOK, or the only one)")
    if root:
        options.add_argument("--root", help="where notebooks live (default: $AGENT_CONTEXT_ROOT or ./.agent-context)")
    options.add_argument("--json", action="store_true", help="print JSON")
    return options


def _notebook_arguments(p: argparse.ArgumentParser) -> None:
    """The notebook's own commands, under ``notewell notebook``."""
    from ...model.notebook_doc import format_help
    from ...model.notebook_rules import DEFAULT_BUDGET

    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = format_help()
    common, rooted, as_json = _options(task=True, root=True), _options(root=True), _options()
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True, help="what to do with the notebook")

    def action(name: str, help_text: str, parent: argparse.ArgumentParser = common) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_text, description=help_text, parents=[parent])

    # The task once: TASK here, --task everywhere else (taken here too, hidden, as agents type it).
    a = action("init", "open a notebook for a task, with its goal", rooted)
    a.add_argument("name", nargs="?", metavar="TASK", help="a name for the task the notebook is for")
    a.add_argument("--task", help=argparse.SUPPRESS)
    a.add_argument("--goal", required=True, help="the outcome, in one or two lines")
    a.add_argument(
        "--budget", type=int, help=f"token budget (default: $NOTEWELL_NOTEBOOK_BUDGET, else {DEFAULT_BUDGET})"
    )
    a = action("log", "store raw output once, untouched; prints its event id and a pointer")
    a.add_argument("file", nargs="?", metavar="FILE", help="a file, or - for standard input (the default)")
    a.add_argument("--label", required=True, help="what the output is")
    a = action("recall", "print a bounded part of a raw event")
    a.add_argument("event", metavar="EVENT", help="an event id, like E0003")
    a.add_argument("--grep", help="only the lines with this word")
    a.add_argument("--offset", type=int, default=0, help="start at this character")
    a.add_argument("--limit", type=int, default=2000, help="at most this many characters")
    a = action("accept", "validate notebook.md and checkpoint it as the next accepted revision")
    a.formatter_class = argparse.RawDescriptionHelpFormatter
    a.epilog = format_help()
    action("restore", "put the last accepted revision back as notebook.md")
    action("show", "print the accepted revision (read it back)")
    action("status", "budget used, items per section, unaccepted edits, raw events not cited")
    a = action("diff", "what changed between accepted revisions (default: the working copy, or the last two)")
    a.add_argument(
        "a", nargs="?", type=int, metavar="A", help="the earlier accepted revision (default: the one before B)"
    )
    a.add_argument("b", nargs="?", type=int, metavar="B", help="the later accepted revision (default: the newest)")
    action("history", "the accepted revisions")
    action("nudge", "a reminder only when one is newly due; silent otherwise (for a prompt hook)")
    a = action("promote", "turn accepted facts, ruled-out items and notes into durable notes in the store")
    a.add_argument("ids", nargs="+", metavar="ID", help="F003 R001 N002 ...")
    a.add_argument("--store", help="the notes folder (default: $NOTEWELL_STORE or ./notes)")
    a.add_argument(
        "--author", default=setting("NOTEWELL_AUTHOR"), help="who writes the note (default: $NOTEWELL_AUTHOR)"
    )
    a = action("bench", "does the notebook help? make the benchmark, or grade a run's answers", as_json)
    bench = a.add_subparsers(
        dest="bench_action",
        metavar="make|compact|summary-check|grade|curve",
        required=True,
        help="make the prompts, the runner's steps at a compaction, grade answers, draw the curve",
    )
    _bench_arguments(bench, as_json)


def _bench_arguments(bench: Any, as_json: argparse.ArgumentParser) -> None:
    """``notewell notebook bench``'s actions: make, compact, summary-check, grade, curve."""
    b = bench.add_parser(
        "make", help="write noisy files with planted facts, a six-prompt session and a quiz", parents=[as_json]
    )
    b.add_argument("dir", metavar="DIR", help="a new (or empty) folder")
    b.add_argument("--seed", type=int, default=1, help="the same seed makes the same benchmark (default 1)")
    b.add_argument("--noise", type=int, default=4000, help="lines in the deploy log (default 4000)")
    b.add_argument(
        "--size",
        choices=("short", "long", "scale"),
        default="short",
        help="short: 6 prompts, 11 questions; long: 30 prompts, 41 questions, with decisions, corrections and"
        " output that does not come back; scale: --survive such values, three compactions",
    )
    b.add_argument(
        "--survive",
        type=int,
        metavar="N",
        help="--size scale only: how many values must survive the compactions, 5 to 80 (default 20)",
    )
    b.add_argument(
        "--summary-chars",
        type=int,
        metavar="N",
        help="--size scale only: the compaction budget in characters, 200 to 20000 (default 900)",
    )
    b = bench.add_parser(
        "compact",
        help="at each compaction: put workspace/ back as make wrote it, remove every file the arm may not keep",
        parents=[as_json],
    )
    b.add_argument("dir", metavar="DIR", help="the folder bench make wrote")
    b.add_argument("--arm", required=True, choices=("plain", "notebook"), help="notebook keeps .agent-context/")
    b = bench.add_parser(
        "summary-check", help="hold each summary to the compaction budget, in characters", parents=[as_json]
    )
    b.add_argument("dir", metavar="DIR", help="the folder bench make wrote (its bench.json has the budget)")
    b.add_argument("summaries", nargs="+", metavar="SUMMARY", help="files holding the summaries handed on")
    b.add_argument("--limit", type=int, metavar="N", help="the budget in characters (default: the benchmark's)")
    b.add_argument("--cut", action="store_true", help="cut an over-long summary at the limit instead of failing")
    b = bench.add_parser("grade", help="score answers against the planted facts", parents=[as_json])
    b.add_argument("dir", metavar="DIR", help="the folder bench make wrote")
    b.add_argument(
        "answers", nargs="+", metavar="ANSWERS", help="answer files (Q01: ... lines, or JSON); several = runs"
    )
    b.add_argument("--arm", help="which arm the runs are (plain, notebook, ...): bench curve groups by it")
    b = bench.add_parser(
        "curve", help="accuracy of each arm against the values that must survive, from graded runs", parents=[as_json]
    )
    b.add_argument("graded", nargs="+", metavar="GRADED", help="files of bench grade --arm ARM --json output")


COMMANDS = (
    Command(
        "notebook",
        "notebook",
        "a validated working-context notebook for one long task",
        cmd_notebook,
        _notebook_arguments,
    ),
)
