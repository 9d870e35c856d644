"""The ``notewell`` command: parse, run the command the registry names, and make whatever goes
wrong one line on stderr and an exit code. Every command prints the same shapes with ``--json``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

from ...errors import ERROR_KINDS, NotewellError
from ...model.shown import shown
from .parser import build_parser
from .registry import COMMANDS, command_named
from .store_options import take_user_store
from .watcher import autowatch_threshold, maybe_start_watcher

__all__ = ["EXIT_CODES", "main"]

# Exit codes come from the one error table; anything else that escapes is a bug (exit 70).
EXIT_CODES = {kind.code: kind.exit_code for kind in ERROR_KINDS}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    given = sys.argv[1:] if argv is None else list(argv)
    for special in COMMANDS:
        if special.error_exit is not None and special.name in given:
            parser.error_code = special.error_exit  # a hook's mistakes never read as "block"
    args, extras = parser.parse_known_args(argv)
    if extras:
        parser.reject_unknown(args, extras)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    command = command_named(args.command)
    args.store = getattr(args, "store", None)
    args.database = getattr(args, "database", None)
    args.json = getattr(args, "json", False)
    try:
        take_user_store(args)
        threshold = autowatch_threshold()
        args.autowatch = threshold
        command.run(args)
        folder = getattr(args, "folder", None)  # a database store has no folder to watch
        if folder is not None and threshold is not None and command.starts_watcher and not getattr(args, "spawned", 0):
            maybe_start_watcher(folder, threshold)
    except NotewellError as exc:
        if args.json:  # one line of JSON, the shape HTTP will use
            print(json.dumps({"error": exc.to_dict()}, ensure_ascii=False), file=sys.stderr)
        else:
            print(f"notewell: {exc.code}: {shown(exc.message)}", file=sys.stderr)  # one line, whatever it quotes
        return command.error_exit if command.error_exit is not None else EXIT_CODES.get(exc.code, 1)
    except KeyboardInterrupt:
        print("notewell: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and closed early: not an error worth a traceback.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        print(f"notewell: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 70
    return 0
