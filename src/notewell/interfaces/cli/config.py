"""``notewell config``: every ``NOTEWELL_*`` setting in effect, and where each came from."""

from __future__ import annotations

import argparse
import json
import sys

from ...model.shown import shown
from ...settings import SETTINGS, effective_settings
from .command import Command

__all__ = ["COMMANDS"]


def cmd_config(args: argparse.Namespace) -> None:
    rows = effective_settings()
    if args.json:
        sys.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
        return
    width = max(len(s.name) for s in SETTINGS) + 2
    for row in rows:
        value = "(unset)" if row["value"] is None else shown(str(row["value"]))
        source = "" if row["source"] == "default" else "  [environment]"
        print(f"{row['name']:<{width}}{value}{source}")


COMMANDS = (Command("config", "start", "the NOTEWELL_* settings in effect, and where each came from", cmd_config),)
