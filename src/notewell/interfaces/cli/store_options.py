"""Opening the store a command names: from its options and the environment.

Every command and server start goes through :func:`open_from_args`, so --store, --user-store,
--database, $NOTEWELL_STORE, $NOTEWELL_DATABASE and $NOTEWELL_MAX_BYTES mean the same everywhere;
the note commands then call the store through :func:`open_api`, as its local owner.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import InvalidArgumentError
from ...model.note import DEFAULT_MAX_BYTES
from ...settings import setting
from .db import chosen_database

if TYPE_CHECKING:
    from ...model.progress import Progress
    from ...services.contract import NoteStore
    from ...services.embedder_loading import EmbedderLoader
    from ...services.opening import Store
    from ...services.server_api import Caller, ServerAPI

__all__ = [
    "DEFAULT_STORE",
    "folder_named",
    "max_bytes_from_environment",
    "open_api",
    "open_folder_from_args",
    "open_from_args",
    "owner",
    "take_user_store",
    "user_store",
]

DEFAULT_STORE = "notes"


def user_store() -> Path:
    """The person's own store, the same from every folder: ~/notes (what ``--user-store`` and
    ``install --scope user`` choose when neither --store nor $NOTEWELL_STORE names one)."""
    return Path.home() / DEFAULT_STORE


def take_user_store(args: argparse.Namespace) -> None:
    """Apply ``--user-store`` to *args*: without $NOTEWELL_STORE or a database named, the folder is
    :func:`user_store`. A plugin installed once for every folder runs its commands with it, so no
    command makes ``./notes`` in whatever repository the runtime was started in."""
    if not getattr(args, "user_store", False):
        return
    if getattr(args, "store", None):
        raise InvalidArgumentError("give --store (a folder) or --user-store (your own store), not both")
    if getattr(args, "database", None) or setting("NOTEWELL_STORE") or setting("NOTEWELL_DATABASE"):
        return  # named by the environment: the user's choice of their store
    mine = user_store()
    if _someone_elses(mine):
        raise InvalidArgumentError(
            f"{mine} holds files but no notewell store: set NOTEWELL_STORE to the folder your notes should go"
            f" to, or run `notewell init {mine}` to make this one a store"
        )
    args.store = str(mine)


def _someone_elses(folder: Path) -> bool:
    """Whether *folder* is a folder of the person's own (visible files, no index) rather than a
    store or nothing: a default is never taken over, its files briefed to every agent."""
    from ...backends.sqlite.index import INDEX_DIR

    try:
        if not folder.is_dir() or (folder / INDEX_DIR).exists():
            return False
        with os.scandir(folder) as entries:
            return any(not entry.name.startswith(".") for entry in entries)  # the first one answers
    except OSError:
        return False  # unreadable: opening it says why


def folder_named(args: argparse.Namespace) -> str:
    """The notes folder the arguments name: --store, else $NOTEWELL_STORE, else ./notes."""
    return getattr(args, "store", None) or setting("NOTEWELL_STORE") or DEFAULT_STORE


def max_bytes_from_environment() -> int:
    """The note size limit: $NOTEWELL_MAX_BYTES, else the default."""
    env_max = setting("NOTEWELL_MAX_BYTES")
    if not env_max:
        return DEFAULT_MAX_BYTES
    try:
        return int(env_max)
    except ValueError:
        raise InvalidArgumentError(f"NOTEWELL_MAX_BYTES must be a whole number, got {env_max!r}") from None


def open_from_args(
    args: argparse.Namespace,
    *,
    create: bool = True,
    watch: bool = False,
    pool_size: int = 1,
    loader: EmbedderLoader | None = None,
) -> NoteStore:
    """The store a command works on: the PostgreSQL database it names (--database, or
    $NOTEWELL_DATABASE), else the notes folder (--store, $NOTEWELL_STORE, ./notes; see
    :func:`take_user_store` for --user-store).
    With *loader* (a long-running process), the model comes from it, loaded in the background."""
    url = chosen_database(args)
    if url is None:
        return open_folder_from_args(args, create=create, watch=watch, loader=loader)
    # Imported here: a search the helper answers never loads the store's modules.
    from ...services.opening import open_store

    # A database has no folder to watch and no approximate index: only the options it takes.
    store = open_store(
        url, max_bytes=max_bytes_from_environment(), pool_size=pool_size, create=create, embedder=_embedder(loader)
    )
    return store


def open_folder_from_args(
    args: argparse.Namespace,
    *,
    create: bool = True,
    watch: bool = False,
    loader: EmbedderLoader | None = None,
    progress: Progress | None = None,
) -> Store:
    """The notes folder a command works on; a database named by options or environment is
    refused (for the folder-only commands: reindex, watch)."""
    if chosen_database(args) is not None:
        raise InvalidArgumentError(f"notewell {args.command} works on a notes folder, not a database")
    from ...adapters.embedder_choice import ann_from_environment
    from ...services.opening import Store

    # A one-shot command reads once, so an inotify watcher of its own would only cost time.
    store = Store(
        folder_named(args),
        max_bytes=max_bytes_from_environment(),
        watch=watch,
        create=create,
        embedder=_embedder(loader),
        ann=ann_from_environment(),
        progress=progress,
        # With a watcher to start afterwards (main()), which checks every file, a large folder's
        # first read looks only at the folders that changed.
        quick_check_from=getattr(args, "autowatch", None),
    )
    args.folder = store  # main() may start a watcher on it afterwards
    return store


def _embedder(loader: EmbedderLoader | None) -> Any:
    """The ``embedder=`` to open with: the loader's (loaded in the background), or the one the
    environment names."""
    from ...adapters.embedder_choice import embedder_from_environment

    return loader.store_embedder if loader is not None else embedder_from_environment()


# Every note command is a call of the one API the servers call (services.server_api), as the
# store's local owner: the same checks and the same answers; only opening, rebuilding and
# watching a folder (init, reindex, watch, demo) work on the store itself.
@contextlib.contextmanager
def open_api(args: argparse.Namespace, *, create: bool = False) -> Iterator[ServerAPI]:
    """The store the arguments name, behind the API the servers call."""
    # Imported here: `notewell --version` and a search the helper answers need none of it.
    from ...services.server_api import ServerAPI

    with open_from_args(args, create=create) as store:
        yield ServerAPI(store)


def owner() -> Caller:
    """The local owner: the caller every command is."""
    from ...services.server_api import Caller

    return Caller(local=True)
