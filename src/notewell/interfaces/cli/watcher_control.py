"""``notewell watch --status`` and ``notewell watch --stop``: the store's watcher seen from outside,
whether a person started it or a command left it behind (which says so when it does)."""

from __future__ import annotations

import argparse
import os
import signal
import time
from typing import Any

from ...errors import BusyError, ForbiddenError
from ...model.timestamps import age_words, iso_from_ns
from .output import emit_json
from .store_options import open_folder_from_args

__all__ = ["STOP_WAIT", "stop_watcher", "watcher_status"]

STOP_WAIT = 30.0  # seconds: a watcher finishes the refresh in hand, a few seconds on a mass change


def _iso(seconds: float) -> str:
    return iso_from_ns(int(seconds * 1e9))


def _stops(info: dict[str, Any]) -> float | None:
    """When a watcher started on demand stops if nothing asks it before (None: until stopped)."""
    idle, asked = info.get("idle_exit"), info.get("asked") or info.get("started")
    return float(asked) + float(idle) if idle is not None and asked is not None else None


def _described(root: str, info: dict[str, Any] | None, helper: dict[str, Any] | None) -> dict[str, Any]:
    """The watcher as --status --json gives it."""
    if info is None:
        return {"store": root, "running": False}
    idle, stops = info.get("idle_exit"), _stops(info)
    return {
        "store": root,
        "running": True,
        "pid": int(info["pid"]),
        "started_at": _iso(float(info["started"])) if info.get("started") is not None else None,
        "idle_exit": idle,  # seconds without a question it stops after; None: until stopped
        "stops_at": None if stops is None else _iso(stops),  # when it stops if nothing asks it before
        "searches": helper.get("searches") if helper else None,  # semantic searches it answered
        "model": helper.get("model") if helper else None,
    }


def watcher_status(args: argparse.Namespace) -> None:
    """Say whether a watcher runs on the store: its pid, since when and until when."""
    from ...services.search_helper import helper_status

    with open_folder_from_args(args, create=False, watch=False) as store:
        info = store.watcher()
        root = store.root
    helper = helper_status(root) if info is not None else None
    said = _described(str(root), info, helper)
    if args.json:
        emit_json(said)
        return
    if not said["running"]:
        print(f"no watcher on {root}")
        return
    since = age_words(said["started_at"]) or "a while"
    line = f"watcher on {root}: pid {said['pid']}, started {since}"
    stops = _stops(info) if info is not None else None
    if stops is None:
        line += "; runs until stopped"
    else:
        idle, left = round(float(said["idle_exit"]) / 60), max(0, round((stops - time.time()) / 60))
        line += f"; exits after {idle} minutes without a question (in {left} if none comes)"
    if helper:
        line += f"; answers semantic searches (model {said['model']}, {said['searches']} answered)"
    print(line + "; `notewell watch --stop` stops it")


def stop_watcher(args: argparse.Namespace) -> None:
    """Stop the store's watcher (SIGTERM, as Ctrl-C does) and wait until it has let go."""
    with open_folder_from_args(args, create=False, watch=False) as store:
        info = store.watcher()
        root = store.root
        if info is None:
            _said(args, {"store": str(root), "stopped": False}, f"no watcher on {root}: nothing to stop")
            return
        pid = int(info["pid"])
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass  # gone since: what was asked is done
        except PermissionError:
            raise ForbiddenError(f"the watcher of {root} (pid {pid}) is another user's: stop it as that user") from None
        deadline = time.monotonic() + STOP_WAIT
        # Gone once it has taken its record out (a watcher killed outright stops beating: 5 s).
        while store.watcher() is not None:
            if time.monotonic() > deadline:
                raise BusyError(f"the watcher of {root} (pid {pid}) did not stop within {STOP_WAIT:.0f} s")
            time.sleep(0.05)
    _said(args, {"store": str(root), "stopped": True, "pid": pid}, f"stopped the watcher of {root} (pid {pid})")


def _said(args: argparse.Namespace, data: dict[str, Any], line: str) -> None:
    if args.json:
        emit_json(data)
    else:
        print(line)
