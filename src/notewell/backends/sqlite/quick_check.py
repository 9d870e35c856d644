"""A first look at the folder that trusts its folders' mtimes instead of stat-ing every file.

A full check stats every note (0.5 s for 100,000 of them before any Python work). Creating,
deleting or renaming a file changes its folder's mtime; so a look that lists only the folders
whose mtime moved since the last look, and stats only the names it does not know, sees every file
that came, went or was renamed; what the journal says notewell wrote (here or on a machine the
folder was pulled from) the caller reads again. What it cannot see is a file changed in place (or
saved over) since the last full check: one is still owed, and runs after it (``notewell watch``,
started on demand, or the caller's refresh()). A tool that sets a folder's mtime back (restoring
with ``rsync -a``) can hide a change from it until then.

A folder of more than LIST_LIMIT notes that changed is not listed either (at 1,000,000 notes in one
folder the listing and its comparison take 2-5 s): what the journal names in it is read again, and the
rest (a file dropped in or taken out by hand) is left to the full check owed, as an edit in place is.

Folders whose mtime is too recent to trust (a second change within the file system's clock
tick leaves it unchanged) are listed every time, until a later look finds them settled.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass

from .files import NoteFolder

__all__ = ["LIST_LIMIT", "FolderLook", "SETTLED_NS", "dir_times_json", "parse_dir_times", "quick_look", "trusted_times"]

# Older than this, a folder's mtime is trusted: beyond any file system's clock tick (FAT's is 2 s).
SETTLED_NS = 2_000_000_000
# The most notes a quick look lists in one folder: listing and comparing cost about 2.3 us a name.
LIST_LIMIT = 200_000


@dataclass(slots=True)
class FolderLook:
    """What a quick look found: the files to reconcile and the state of the new ones."""

    fs: dict[str, tuple[int, int]]  # (mtime_ns, size) of the files not indexed yet
    paths: set[str]  # the paths to reconcile: those, and indexed ones gone from their folder
    dirs: set[str]  # every folder
    times: dict[str, int | None]  # every folder's mtime, to trust next time (None: list it again)

    def read_again(self, folder: NoteFolder, paths: set[str]) -> None:
        """Add *paths* (what journal lines not yet applied name) to what is reconciled, those in
        the folders the walk reached: not through a link, not in a dot-folder."""
        for path in paths - self.fs.keys():
            parent, _, name = path.rpartition("/")
            if parent not in self.dirs or name.startswith(".") or "\x00" in path:
                continue  # the full check's to see
            self.paths.add(path)
            if (state := folder.state(path)) is not None:
                self.fs[path] = (state[0], state[1])


def trusted_times(times: dict[str, int | None], looked_ns: int) -> dict[str, int | None]:
    """*times* (taken at *looked_ns*, each before its folder was listed) with the unsettled ones None."""
    return {
        rel: (mtime if mtime is not None and mtime < looked_ns - SETTLED_NS else None) for rel, mtime in times.items()
    }


def dir_times_json(times: dict[str, int | None]) -> str:
    return json.dumps(times, ensure_ascii=False, separators=(",", ":"))


def parse_dir_times(raw: str | None) -> dict[str, int | None] | None:
    """The folders' mtimes as :func:`dir_times_json` kept them; None for anything a look does
    not leave (a hand edit, a folder outside the store): a full check then, and a fresh record."""
    try:
        recorded = json.loads(raw or "null")
    except ValueError:
        return None
    if not isinstance(recorded, dict) or not all(
        isinstance(k, str) and _folder_name(k) and (v is None or type(v) is int) for k, v in recorded.items()
    ):
        return None
    return recorded


def _folder_name(rel: str) -> bool:
    """Whether *rel* names a folder inside the store ('' is the root)."""
    return rel == "" or not (rel.startswith("/") or any(part in ("", ".", "..") for part in rel.split("/")))


def quick_look(
    folder: NoteFolder,
    recorded: dict[str, int | None],
    indexed_in: Callable[[str], set[str]],
    watch: Callable[[str], bool] | None = None,
    count_in: Callable[..., int] | None = None,
) -> FolderLook | None:
    """Walk the folders from *recorded* (their mtimes at the last look), listing only those that
    changed and any new one; *indexed_in(rel)* gives the paths of a folder's indexed notes, and
    *count_in(rel, up_to=n)* how many they are, up to n (a folder of more than LIST_LIMIT is not listed).
    *watch(rel)*, for a watched store, sets a folder's watch before it is looked at (so nothing
    changed after the look is missed). None when a recorded folder is gone or is no folder any
    more, or a watch cannot be set (a full check then)."""
    looked_ns = time.time_ns()
    children: dict[str, list[str]] = {}
    for rel in recorded:
        if rel:
            children.setdefault(rel.rpartition("/")[0], []).append(rel)
    fs: dict[str, tuple[int, int]] = {}
    paths: set[str] = set()
    dirs: set[str] = set()
    folder.dir_times = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        dirs.add(rel)
        try:
            st = os.lstat(os.path.join(folder.root, rel) if rel else folder.root)
        except OSError:
            return None
        if rel and not stat.S_ISDIR(st.st_mode):
            return None  # a folder replaced by a link or a file: only a full check tells what it holds
        if watch is not None and not watch(rel):
            return None
        before = recorded.get(rel)
        if before is not None and st.st_mtime_ns == before:
            folder.dir_times[rel] = before
            stack.extend(children.get(rel, ()))
            continue
        if count_in is not None and count_in(rel, up_to=LIST_LIMIT + 1) > LIST_LIMIT:
            folder.dir_times[rel] = None  # not listed: never trusted until a full check lists it
            stack.extend(children.get(rel, ()))
            continue
        known = indexed_in(rel)
        listed = folder.list_new(rel, known)
        if listed is None:
            return None
        new, subdirs, present = listed
        fs.update(new)
        paths.update(new)
        paths.update(known - present)  # gone from the folder (deleted, or moved: the sync tells)
        stack.extend(subdirs)
    if any(rel not in dirs for rel in recorded):
        return None  # a folder gone: its notes with it, which only a full check sees
    return FolderLook(fs, paths, dirs, trusted_times(folder.dir_times, looked_ns))
