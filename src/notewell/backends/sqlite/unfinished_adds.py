"""Adds a writer journaled and never named: finished by the next full check.

A new note's file is staged under a hidden temp name, its journal record written, and only
then is the file given its name (:func:`notewell.backends.sqlite.note_writes.place_batch`). A writer killed between
the record and the name leaves both: a record that says the note is live, and the temp file
holding exactly its bytes. Left so, the id counts as used and no file holds it: a conversation
importer, which derives ids from its source, could never write that note again. The next full
check gives such a temp file its name, inside the write lock (so that no live writer is between
its own record and its own name), when the journal's live record for that path has the temp
file's hash and no note holds the record's id: the note then comes in whole, with the author,
attempt and kind its record gives.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import stat
from collections.abc import Callable, Collection
from datetime import datetime

from .files import NoteFolder
from .index import Index

__all__ = ["finish_unplaced_adds"]

_STAGED = re.compile(r"\.(.+\.md)\.[0-9a-f]{8}\.tmp")


def _targets(leftovers: list[str], present: Collection[str]) -> list[tuple[str, str]]:
    """(temp file, the note path it was staged for) for each staged file whose name is free."""
    out = []
    for rel in leftovers:
        folder, name = posixpath.split(rel)
        m = _STAGED.fullmatch(name)
        if m is None:
            continue
        target = posixpath.join(folder, m[1]) if folder else m[1]
        if target not in present:
            out.append((rel, target))
    return out


def _sha256(path: str, limit: int) -> str | None:
    """The file's hash, None when it is not a regular file or holds more than *limit* bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        return hashlib.sha256(f.read(limit + 1)).hexdigest()


def _staged_before(path: str, at: object) -> bool:
    """True when the file was written before the journal record made at *at*: a writer stages
    its file, then writes the record. A temp file made after it is a live writer's (one adding
    the same text under an id freed again), which only that writer may name."""
    try:
        when = datetime.fromisoformat(str(at).replace("Z", "+00:00")).timestamp()
        return os.stat(path).st_mtime <= when + 0.05  # the file system's clock is coarser than the record's
    except (OSError, ValueError):
        return False


def finish_unplaced_adds(
    folder: NoteFolder,
    index: Index,
    catch_up: Callable[[], None],
    leftovers: list[str],
    present: Collection[str],
    limit: int,
    *,
    wait: bool = True,
) -> list[str]:
    """Name the staged files of journaled adds that were never named (see the module's
    docstring); *present*: the note paths the scan found, *limit*: the largest note. Returns
    the paths named. *wait*: as for :meth:`Index.write` (False: LockHeld when another writer holds it)."""
    candidates = _targets(leftovers, present)
    if not candidates:
        return []
    named: list[str] = []
    with index.write(wait=wait):
        catch_up()  # the killed writer's records, when this index has not read them yet
        for tmp, target in candidates:
            # meta: (id, path, author, model, created_at, updated_at, revision, sha256)
            meta = index.meta_for_path(target)
            if meta is None or index.row_for_id(meta.id) is not None:
                continue
            staged = folder.abspath(tmp)
            if not _staged_before(staged, meta.updated_at) or _sha256(staged, limit) != meta.sha256:
                continue
            try:
                folder.place(staged, target)
            except OSError:
                continue  # taken meanwhile, or gone: the scan that follows sees what is there
            named.append(target)
        if named:
            folder.sync_dirs(named)
    return named
