"""A benchmark folder, the same for every benchmark (the notebook's and the handoff's): its
workspace written into a new folder, and its manifest (the seed and the files' hashes, never the
key) read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError, NotFoundError

__all__ = ["read_manifest", "write_workspace"]


def write_workspace(root: Path, files: dict[str, str]) -> None:
    """Write *files* (workspace-relative path -> text) under ``root/workspace``; *root* must be
    new or empty, so that nothing of an earlier run is left beside them."""
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise InvalidArgumentError(f"{root} is not an empty folder; the benchmark goes into a new one")
    for rel, text in files.items():
        path = root / "workspace" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


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
