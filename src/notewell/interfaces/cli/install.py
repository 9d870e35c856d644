"""The agent runtime commands: ``install`` and ``uninstall`` (notewell's MCP server and hooks in a
runtime's files) and ``hook`` (what those hooks print)."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
from collections.abc import Iterable
from pathlib import Path

from ...errors import InvalidArgumentError
from ...settings import setting
from ..mcp.groups import group_names
from ..runtimes.config_files import FileChange
from ..runtimes.hooks import add_hook_arguments, cmd_hook
from ..runtimes.install_record import NO_RECORD, forget, leftovers, remember, restoring
from ..runtimes.installer import INSTALLABLE, install_plan, next_steps_after_install
from .command import Command
from .db import chosen_database
from .server import add_tools_argument
from .store_options import DEFAULT_STORE, user_store

__all__ = ["COMMANDS"]


def _runtime_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runtime", choices=INSTALLABLE, metavar="RUNTIME", help=", ".join(INSTALLABLE))
    p.add_argument(
        "--scope",
        choices=("project", "user"),
        default="project",
        help="project: the files in --dir (default); user: the ones in your home folder",
    )
    p.add_argument("--dir", default=".", help="the project folder (default: this one)")
    p.add_argument("--dry-run", action="store_true", help="print the change as a diff; write nothing")
    p.add_argument("--no-mcp", action="store_true", help="leave the MCP server registration alone")
    p.add_argument("--no-hooks", action="store_true", help="leave the hooks alone")


def _install_arguments(p: argparse.ArgumentParser) -> None:
    _runtime_arguments(p)
    p.add_argument("--project", help="the project the hooks brief on and count notes of (default: all)")
    p.add_argument("--budget", type=int, help="tokens for the session-start briefing (default 1500)")
    p.add_argument("--after", type=float, metavar="MINUTES", help="minutes before the stop reminder (default 20)")
    add_tools_argument(p, "the MCP tools the runtime's server offers")


def _holds_a_secret(url: str) -> bool:
    """True when a database URL carries a password (in its user part or its query)."""
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(url)
        given = parts.password
    except ValueError:
        return True  # unreadable: not written anywhere
    return bool(given) or any("password" in key.lower() for key, _ in parse_qsl(parts.query))


def _store_args(args: argparse.Namespace) -> list[str]:
    url = chosen_database(args)
    if url is not None:
        if _holds_a_secret(url):
            raise InvalidArgumentError(
                "the database URL holds a password, which notewell install never writes into a runtime's"
                " files (a team may commit them): keep it in ~/.pgpass or $PGPASSWORD, which PostgreSQL's"
                " client reads, and give the URL without it; nothing changed"
            )
        return [f"--database={url}"]
    # Without one named: the project's ./notes, or for every session (user scope) the user's store.
    mine = user_store() if args.scope == "user" else Path(args.dir) / DEFAULT_STORE
    folder = args.store or setting("NOTEWELL_STORE") or str(mine)
    return [f"--store={Path(folder).resolve()}"]


def _server_args(args: argparse.Namespace) -> list[str]:
    """What the runtime's `notewell mcp` is given besides the store: the tool set chosen, as
    given (checked first, so that a runtime is never set up with a server that will not start)."""
    tools = getattr(args, "tools", None)
    if tools is None:
        return []
    if args.no_mcp:
        raise InvalidArgumentError("--tools chooses the MCP server's tools: with --no-mcp there is none to install")
    group_names(tools, local=True)
    return [f"--tools={tools}"]


def _run(args: argparse.Namespace, *, remove: bool) -> None:
    hook_args: list[str] = []
    server_args = [] if remove else _server_args(args)
    if not remove:
        for option, value in (("--project", args.project), ("--budget", args.budget), ("--after", args.after)):
            if value is not None:
                hook_args.append(f"{option}={value}")  # one word: a value like "-x" is not read as an option
    store_args = _store_args(args)
    changes = install_plan(
        args.runtime,
        by_hand=args.dry_run,
        scope=args.scope,
        folder=args.dir,
        store_args=store_args,
        hook_args=hook_args,
        server_args=server_args,
        mcp=not args.no_mcp,
        hooks=not args.no_hooks,
        remove=remove,
    )
    kept: dict[Path, tuple[Path | None, list[Path]]] = {}
    if remove:
        kept = {c.path: leftovers(c.path) for c in changes if c.changes}
        _put_back_as_it_was(changes)
    verb = "uninstall" if remove else "install"
    store = store_args[0].removeprefix("--store=") if store_args[0].startswith("--store=") else None
    if args.dry_run:
        for change in changes:
            if change.by_hand is not None:
                print(f"# {change.path} {change.what}; merge these entries into it:")
                print(change.by_hand, end="")
                continue
            print(f"# {change.path}: {change.what if change.changes else 'unchanged'}")
            if change.changes:
                print(change.diff(), end="")
        if not remove and store is not None and not Path(store).exists():
            print(f"# the store {store} would be made")
        print(f"(dry run: nothing written; notewell {verb} {args.runtime} without --dry-run writes it)")
        return
    for change in changes:
        change.check()  # every file first: a refusal leaves all of them as they were
    if not remove and store is not None:
        from ...services.opening import Store

        made = not Path(store).exists()
        with Store(store, watch=False, embedder=None):  # the hooks and the server open it
            pass
        print(f"store {store}" + (" (made now)" if made else ""))
    if remove and not any(c.changes for c in changes):
        print(f"nothing of notewell's in {args.runtime}'s files ({args.scope} scope): nothing changed")
        return
    for change in changes:
        if not change.changes:
            print(f"{change.path}: unchanged")
            continue
        before = change.path.read_bytes() if change.old is not None else None
        # The one backup is of the file as the person had it: none of a file holding notewell's
        # entries already (installed again), none of what uninstall takes out.
        backup = change.apply(keep=not remove and not change.had_ours)
        done = "removed" if change.new is None else "wrote"
        said = f"{done} {change.path} ({change.what})" + (f"; the old file is {backup}" if backup else "")
        if remove:
            said += _tidied(change, kept.get(change.path, (None, []))[0])
            forget(change.path)
        elif change.new is not None:
            remember(change.path, before, backup, change.path.read_bytes(), change.made)
        print(said)
    if remove:
        _remove_empty_folders(folder for _backup, made in kept.values() for folder in made)
    else:
        print(next_steps_after_install(args.runtime, args.scope, mcp=not args.no_mcp))
        if not args.no_mcp and importlib.util.find_spec("mcp") is None:
            print(
                "note: the MCP server needs the 'mcp' extra: pip install '.[mcp]' in notewell's clone"
                " (the hooks work without it)"
            )


def _tidied(change: FileChange, backup: Path | None) -> str:
    """Uninstall, after *change* is written: the backup install kept goes once the file holds
    its bytes again; else (changed since install) it stays, and the report says where."""
    if backup is None or not backup.exists():
        return ""
    if change.exact is not None:
        backup.unlink(missing_ok=True)  # the file was put back from it: nothing left to keep
        return ""
    return f"; the file as it was before install is kept in {backup}"


def _remove_empty_folders(folders: Iterable[Path]) -> None:
    """The folders install made (.cursor/, .gemini/...), deepest first, where nothing is left in them."""
    for folder in sorted(set(folders), key=lambda f: len(f.parts), reverse=True):
        with contextlib.suppress(OSError):  # not empty (or gone): it stays as it is
            folder.rmdir()


def _put_back_as_it_was(changes: list[FileChange]) -> None:
    """Uninstall: a file install made is removed, a file it changed gets its old bytes back,
    when nobody changed it since (install_record); else notewell's entries are taken out."""
    for change in changes:
        if not change.changes:
            continue
        kept = restoring(change.path)
        if kept is NO_RECORD:
            continue
        if kept is None:
            change.new = None
        elif isinstance(kept, bytes):
            change.new = kept.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
            change.exact = kept


def cmd_install(args: argparse.Namespace) -> None:
    _run(args, remove=False)


def cmd_uninstall(args: argparse.Namespace) -> None:
    _run(args, remove=True)


COMMANDS = (
    Command(
        "install",
        "agent runtimes",
        "register notewell's MCP server and session hooks in an agent runtime",
        cmd_install,
        _install_arguments,
    ),
    Command(
        "uninstall",
        "agent runtimes",
        "take notewell's MCP server and hooks out of an agent runtime's files",
        cmd_uninstall,
        _runtime_arguments,
    ),
    Command(
        "hook",
        "agent runtimes",
        "what an agent runtime's session hooks print: session-start, post-compact, stop, ...",
        cmd_hook,
        add_hook_arguments,
        error_exit=1,
        starts_watcher=False,
    ),
)
