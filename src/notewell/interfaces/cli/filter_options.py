"""The search filters as options (``--tag``, ``--project``...), shared by ``search`` and ``list``:
made from the one table of filters the API and the servers take too."""

from __future__ import annotations

import argparse
from typing import Any

from ...search.filters import FILTERS

__all__ = ["add_filter_arguments", "filters_from_args"]


def add_filter_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("filters")
    for spec in FILTERS:
        if spec.shape == "choice":  # tag_mode: any unless this flag asks for all
            g.add_argument(spec.cli_option, dest="all_tags", action="store_true", help="require every --tag, not any")
        elif spec.shape == "texts":
            g.add_argument(spec.cli_option, dest=spec.name, action="append", help=f"{spec.help} (repeatable)")
        else:
            g.add_argument(spec.cli_option, dest=spec.name, metavar=spec.metavar, help=spec.help)


def filters_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The filters given, as the API's keyword arguments."""
    out: dict[str, Any] = {}
    for spec in FILTERS:
        value = getattr(args, spec.name, None)
        if spec.shape != "choice" and value is not None and value != []:
            out[spec.name] = value
    if "tags" in out:
        out["tag_mode"] = "all" if args.all_tags else "any"
    return out
