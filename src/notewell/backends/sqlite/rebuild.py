"""Rebuilding the index in place of the old one, which is kept until the new one is done.

A rebuild (``reindex``, or the rebuild after a damaged index) moves the old database aside
instead of deleting it, builds the new one where it was, lets the caller take over what the
old one still serves (the vectors of unchanged passages), and only then deletes it. So the
old file sits beside the new one for the duration: a rebuild needs room for a second index.

A rebuild cut short by an exception puts the old index back (:meth:`Rebuild.abandon`); one
cut short by a crash is put back by the next open (:func:`recover`): a marker file names the
database set aside, and a lock held for the whole rebuild tells a dead rebuilder from a
running one. The index is derived from the folder, so the old one, put back, is only as
stale as any index after a crash: the next read brings it in line.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path

from ...errors import StorageError
from .files import fsync_dir

__all__ = ["Rebuild", "recover"]

DB = "index.db"
LOCK = "rebuild.lock"  # never deleted: a lock on a file that can be replaced locks nothing
MARKER = "rebuild.json"
_ASIDE = re.compile(r"previous-[0-9a-f]{8}\.db")
# The WAL before the database: a database whose WAL is gone is an older but whole index; a
# WAL left behind under the database's name would be read into the next database made there.
_SUFFIXES = ("-wal", "-shm", "")


class Rebuild:
    """One rebuild of the index in *index_dir*: :meth:`begin`, then :meth:`finish` or :meth:`abandon`."""

    def __init__(self, index_dir: Path) -> None:
        self.dir = index_dir
        self.aside: Path | None = None  # the old database while the rebuild runs
        self._lock: int | None = None

    def begin(self, only_if: Callable[[], bool] | None = None) -> Path | None:
        """Take the rebuild lock (after any other rebuild), put back what a crashed one left,
        and move the database aside; returns where it went (None when there was none, or when
        *only_if*, asked with the lock held, says there is nothing to rebuild any more)."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._lock = os.open(self.dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._lock, fcntl.LOCK_EX)
            _restore(self.dir)
            for stray in self.dir.glob("previous-*"):  # a delete that failed before: nothing names it
                stray.unlink(missing_ok=True)
            if not (self.dir / DB).exists() or (only_if is not None and not only_if()):
                return None
            aside = self.dir / f"previous-{secrets.token_hex(4)}.db"
            # Named before anything moves, so that a crash at any point leaves it findable.
            tmp = self.dir / f"{MARKER}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump({"aside": aside.name}, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.dir / MARKER)
            fsync_dir(self.dir)
            for suffix in _SUFFIXES:
                _move(self.dir / (DB + suffix), Path(str(aside) + suffix))
            fsync_dir(self.dir)
        except OSError as exc:
            self.abandon()
            raise StorageError(f"cannot set the index aside for the rebuild: {exc}") from exc
        self.aside = aside
        return aside

    def abandon(self) -> None:
        """Put the old database back in place of the unfinished new one."""
        try:
            _restore(self.dir)
        except OSError:
            pass  # the marker stays: the next open puts it back
        finally:
            self._release()

    def finish(self) -> None:
        """The new index is complete: delete the old one, and the vector sidecars of its epoch
        (never mapped by the new index; they can be as large as the vectors)."""
        try:
            # The marker goes first: once the old files start going, a crash must not let the
            # next open "restore" what is left of them (an old -wal beside the new database
            # would be read as the new one's). Leftovers are deleted by the next rebuild.
            (self.dir / MARKER).unlink(missing_ok=True)
            fsync_dir(self.dir)
            if self.aside is not None:
                for suffix in ("", "-wal", "-shm"):
                    Path(str(self.aside) + suffix).unlink(missing_ok=True)
            for sidecar in self.dir.glob("vectors-*"):
                with contextlib.suppress(OSError):
                    sidecar.unlink()
        except OSError:
            pass  # a leftover is deleted by the next rebuild
        finally:
            self._release()

    def _release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # releases the lock
            self._lock = None


def recover(index_dir: Path) -> bool:
    """Put back the index a crashed rebuild set aside (before the database is opened);
    True when it did. A rebuild still running (its lock is held) is left alone."""
    if not (index_dir / MARKER).exists():
        return False
    try:
        fd = os.open(index_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # its rebuilder runs (in this process too: flock is per open file)
        return _restore(index_dir)
    except OSError:
        return False
    finally:
        os.close(fd)


def _restore(index_dir: Path) -> bool:
    """Move the database the marker names back in place (with the lock held); each step can
    be repeated after a crash part way."""
    marker = index_dir / MARKER
    try:
        name = json.loads(marker.read_text(encoding="utf-8")).get("aside")
    except FileNotFoundError:
        return False
    except (ValueError, AttributeError):
        name = None
    restored = False
    if isinstance(name, str) and _ASIDE.fullmatch(name):
        aside = index_dir / name
        if aside.exists():
            for suffix in ("-wal", "-shm"):  # the new database's: never to be read with the old one
                (index_dir / (DB + suffix)).unlink(missing_ok=True)
            os.replace(aside, index_dir / DB)
            restored = True
        for suffix in ("-wal", "-shm"):
            if Path(str(aside) + suffix).exists():
                os.replace(Path(str(aside) + suffix), index_dir / (DB + suffix))
                restored = True
    marker.unlink(missing_ok=True)
    fsync_dir(index_dir)
    return restored


def _move(source: Path, target: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.rename(source, target)
