"""The watcher: ``notewell watch``, and the one a command starts on demand after it had to check
a large folder itself. A watcher keeps the index current and answers the other commands'
semantic searches (the search helper) with the model it has loaded."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import InvalidArgumentError, NotewellError
from ...settings import setting
from .command import Command
from .output import notice
from .store_options import open_folder_from_args

if TYPE_CHECKING:
    from ...services.opening import Store

__all__ = [
    "AUTOWATCH_IDLE",
    "AUTOWATCH_MIN_FILES",
    "COMMANDS",
    "autowatch_threshold",
    "helper_config",
    "maybe_start_watcher",
    "start_helper",
]

AUTOWATCH_MIN_FILES = 20_000  # the default threshold (NOTEWELL_AUTOWATCH sets another)
AUTOWATCH_IDLE = 1800.0  # seconds without a question before a watcher started on demand stops


def helper_config() -> str:
    """A hash of what shapes a search's cards besides the store: notewell's version and the
    settings that choose the embedder, the approximate index and the size limit. A helper
    started with other settings declines, and the command searches itself."""
    from ...version import __version__

    values = [setting(name) or "" for name in _HELPER_SETTINGS]
    kind, sep, path = values[0].partition(":")
    if sep and kind in ("fastembed", "sentence-transformers") and path:
        # the same relative directory names another model from another working directory
        values[0] = f"{kind}:{os.path.abspath(path)}"
    raw = json.dumps([__version__, *values])
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


_HELPER_SETTINGS = (
    "NOTEWELL_EMBEDDER",
    "NOTEWELL_EMBED_URL",
    "NOTEWELL_EMBED_MODEL",
    "NOTEWELL_EMBED_KEY",
    "NOTEWELL_ANN",
    "NOTEWELL_MAX_BYTES",
)


def _watch_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--embed", action="store_true", help="also embed new and changed notes for semantic search, as they come"
    )
    p.add_argument(
        "--idle-exit",
        type=float,
        metavar="SECONDS",
        help="stop after this long without a question from another command (and do not start if a watcher runs)",
    )
    instead = p.add_mutually_exclusive_group()
    instead.add_argument(
        "--status",
        action="store_true",
        help="say whether a watcher runs on the store (its pid, since when, until when)",
    )
    instead.add_argument("--stop", action="store_true", help="stop the watcher running on the store, and wait for it")


def cmd_watch(args: argparse.Namespace) -> None:
    if args.status or args.stop:
        if args.embed or args.idle_exit is not None:
            raise InvalidArgumentError("--status and --stop take no --embed or --idle-exit")
        from .watcher_control import stop_watcher, watcher_status

        (stop_watcher if args.stop else watcher_status)(args)
        return
    _watch(args)


def _watch(args: argparse.Namespace) -> None:
    import signal
    import threading

    from ...adapters.embedder_choice import embedder_from_environment
    from ...services.embedder_loading import EmbedderLoader
    from ...services.search_helper import SearchHelper

    stop = threading.Event()
    loader = EmbedderLoader(embedder_from_environment())

    def report(e: NotewellError) -> None:
        print(f"notewell watch: {e.code}: {e.message}", file=sys.stderr, flush=True)

    with open_folder_from_args(args, create=False, watch=True, loader=loader) as store:
        # Only a watcher that is really starting takes over the signals (a refused one leaves
        # the process as it found it).
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        if args.idle_exit is not None and (other := store.watcher_pid()) is not None:
            print(f"{store.root} is already watched (pid {other})", flush=True)
            return
        # The watcher also answers other commands' semantic searches, with the model it loads
        # in the background now; one started on demand leaves that to one already serving.
        helper = SearchHelper(store, config=helper_config(), loader=loader, on_question=store.note_question)
        if not helper.serve() and args.idle_exit is not None:
            print(f"{store.root} is already watched (another watcher serves its searches)", flush=True)
            return
        try:
            loader.start(then=lambda: _warm_watcher(store, embed=args.embed, report=report))
            print(
                f"watching {store.root} (pid {os.getpid()}); one-shot commands now skip the folder scan"
                " and send semantic searches here",
                flush=True,
            )
            store.watch_forever(stop, on_error=report, idle_exit=args.idle_exit, on_beat=helper.check)
        finally:
            helper.close()


def _warm_watcher(store: Store, *, embed: bool, report: Callable[[NotewellError], None]) -> None:
    """Once the model has loaded (or failed to): embed in the background if asked, and run one
    search so that the vectors are in memory before the first caller's."""
    try:
        if embed:
            store.start_embedding()
        store.search_notes("warm up", mode="semantic", limit=1)
    except NotewellError as exc:
        if embed:
            report(exc)  # no model: keyword search and the cookie handshake go on


def autowatch_threshold() -> int | None:
    """The folder size (files) past which a command leaves a watcher behind, or None: off."""
    raw = (setting("NOTEWELL_AUTOWATCH") or "").strip().lower()
    if raw in ("", "on", "1", "yes", "true"):
        return AUTOWATCH_MIN_FILES
    if raw in ("off", "0", "no", "false"):
        return None
    try:
        return max(1, int(raw))
    except ValueError:
        raise InvalidArgumentError(f"NOTEWELL_AUTOWATCH must be on, off or a number of files, got {raw!r}") from None


def start_helper(store: Store) -> bool:
    """After a search that needs the model found no helper: start a watcher (which is one)
    unless one runs already, for the searches after this one."""
    return store.watcher_pid() is None and _spawn_watcher(store.root, serves="semantic searches")


def maybe_start_watcher(store: Store, threshold: int = AUTOWATCH_MIN_FILES) -> bool:
    """Start ``notewell watch`` in the background after a one-shot command had to check a
    large folder itself, so the next commands ask it instead (git's fsmonitor daemon, on
    demand). It stops after AUTOWATCH_IDLE seconds without a question; NOTEWELL_AUTOWATCH
    turns this off (``off``) or sets the folder size that warrants it."""
    if store.full_check_owed:
        # The first read looked only at the folders that changed: the watcher checks every file
        # (in the background; one started beside a running one exits); where none can start,
        # this process does, after its answer (the command closed its store: opened again).
        if _spawn_watcher(store.root):
            return True
        from ...services.opening import Store

        # Best effort: the command has answered, and its exit code stands whatever happens here.
        with contextlib.suppress(NotewellError, KeyboardInterrupt):
            with Store(store.root, watch=False, embedder=None, max_bytes=store.max_bytes) as again:
                again.refresh()
        return False
    if store.last_check != "scan" or store.last_scan_size < threshold:
        return False
    return _spawn_watcher(store.root)


def _spawn_watcher(root: Path, *, serves: str = "commands") -> bool:
    """Start ``notewell watch --idle-exit AUTOWATCH_IDLE`` on *root* in the background (it
    exits at once when another watcher runs), and say so in one line: what it is for (the
    next *serves*), how long it lives and how to stop it. False where it cannot run."""
    if not sys.platform.startswith("linux"):
        return False  # the watcher needs inotify
    import subprocess

    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "notewell", "watch", "--store", str(root), "--idle-exit", str(AUTOWATCH_IDLE)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return False  # a convenience: the command itself has already succeeded
    minutes = round(AUTOWATCH_IDLE / 60)
    notice(
        f"notewell: started a background watcher (pid {child.pid}) on {root}: it keeps the index current and"
        f" the model loaded for the next {serves}, and exits after {minutes} minutes without one;"
        f" stop it now with `notewell watch --stop --store {shlex.quote(str(root))}`"
        " (NOTEWELL_AUTOWATCH=off: never start one)"
    )
    return True


COMMANDS = (
    Command(
        "watch",
        "search",
        "keep the index current from inotify so other commands skip the folder scan",
        cmd_watch,
        _watch_arguments,
        starts_watcher=False,
    ),
)
