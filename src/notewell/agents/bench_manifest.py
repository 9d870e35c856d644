"""A benchmark folder's manifest (the seed and the files' hashes, never the key), read once for
every benchmark: the notebook's (bench.json) and the handoff's (handoff.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError, NotFoundError

__all__ = ["read_manifest"]


def read_manifest(root: Path, name: str, fmt: str, make: str) -> dict[str, Any]:
    """The manifest *name* in the folder *root*, of format *fmt*; *make* is the command that
    makes such a folder, said when there is none. One-line errors for a missing or bad file."""
    path = root / name
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotFoundError(f"{root} has no {name} (make it with: {make})") from None
    except (OSError, ValueError) as exc:
        raise InvalidArgumentError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != fmt:
        raise InvalidArgumentError(f"{path} is not a {fmt} manifest")
    return manifest
