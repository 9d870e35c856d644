"""The ``notewell`` command: every command calls the store API and prints the same
shapes with ``--json``; errors are one line on stderr and a non-zero exit."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ...errors import ERROR_KINDS, ConflictError, InvalidArgumentError, InvalidNoteError, NotewellError
from ...model.header import compose_note, parse_note
from ...model.note import Card
from ...model.shown import shown
from ...search.filters import FILTERS
from ...settings import setting
from ..runtimes.hooks import add_hook_arguments, cmd_hook
from .arguments import add_core_arguments, commands_epilog
from .assistant import add_assistant_arguments, cmd_assistant
from .config import cmd_config
from .db import add_db_arguments, add_transfer_arguments, chosen_database, cmd_db, cmd_export
from .import_command import add_import_arguments, cmd_import
from .install import add_install_arguments, cmd_install, cmd_uninstall
from .next_steps import next_steps
from .notebook import add_notebook_arguments, cmd_notebook
from .progress import ProgressBar
from .server import add_server_arguments, add_server_commands
from .store_options import DEFAULT_STORE, open_folder_from_args, open_from_args

if TYPE_CHECKING:
    from ...services.agent_api import AgentAPI, Caller
    from ...services.opening import Store

__all__ = ["EXIT_CODES", "helper_config", "main"]

# Exit codes come from the one error table; anything else that escapes is a bug (exit 70).
EXIT_CODES = {kind.code: kind.exit_code for kind in ERROR_KINDS}


# -- output -------------------------------------------------------------------


def _emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _card_lines(card: dict[str, Any]) -> list[str]:
    chips = []
    if card["kind"]:
        chips.append(f"[{card['kind']}]")
    chips.extend(f"#{t}" for t in card["tags"])
    meta = [m for m in (card["author"], card["model"]) if m]
    if card["attempt_id"]:
        ended = f", {card['attempt_outcome']}" if card["attempt_outcome"] else ", running"
        kind = " summary" if card["note_kind"] == "summary" else ""
        meta.append(f"{card['project']}/{card['attempt_id']}{ended}{kind}")
    meta.append(f"updated {card['updated_at'][:16].replace('T', ' ')}")
    if card["score"] is not None:
        meta.append(f"score {card['score']:.3g}")
    if card.get("matched_revision") is not None:
        meta.append(f"matched in revision {card['matched_revision']}")
    if card["builds_on"]:
        meta.append("builds on " + ", ".join(card["builds_on"]))
    lines = [f"{card['id']}  {card['title']}" + ("  " + " ".join(chips) if chips else "")]
    lines.append("    " + " · ".join(meta))
    if card["snippet"]:
        lines.append("    " + card["snippet"])
    return lines


def _print_cards(cards: list[dict[str, Any]], as_json: bool, empty: str) -> None:
    if as_json:
        _emit_json(cards)
        return
    if not cards:
        print(empty)
        return
    for i, card in enumerate(cards):
        if i:
            print()
        print("\n".join(_card_lines(card)))


def _print_note(note: dict[str, Any], as_json: bool, raw: bool) -> None:
    if as_json:
        _emit_json(note)
        return
    if raw:
        sys.stdout.write(note["text"])
        return
    print(f"{note['id']}  {note['title']}")
    chips = [f"kind: {note['kind']}"] if note["kind"] else []
    if note["tags"]:
        chips.append("tags: " + ", ".join(note["tags"]))
    chips.extend(f"{k}: {note[k]}" for k in ("author", "model") if note[k])
    chips.append(f"revision {note['revision']}/{note['revisions']}")
    age = f" ({note['age']})" if note.get("age") else ""
    chips.append(f"updated {note['updated_at'][:19].replace('T', ' ')}{age}")
    print(" · ".join(chips))
    attempt = note.get("attempt")
    if attempt:
        state = f"ended {attempt['outcome'] or ''}, frozen".replace(" ,", ",") if attempt.get("ended_at") else "running"
        print(f"on attempt {attempt['id']} of {attempt['project']} ({state})")
    if note["summary"]:
        print(f"summary: {note['summary']}")
    if note["builds_on"]:
        print("builds on: " + ", ".join(note["builds_on"]))
    if note["backlinks"]:
        print("built on by: " + ", ".join(f"{b['id']} ({b['title']})" for b in note["backlinks"]))
    for line in note["extra"]:
        print(f"extra: {line}")
    print("─" * 40)
    body = note["body"]
    sys.stdout.write(body if body.endswith("\n") or not body else body + "\n")


# -- input --------------------------------------------------------------------


def _read_input(source: str | None) -> bytes:
    if source in (None, "-"):
        if source is None and sys.stdin.isatty():
            raise InvalidArgumentError("give a FILE, '-' to read standard input, or --text")
        return sys.stdin.buffer.read()
    try:
        with open(source, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise InvalidArgumentError(f"cannot read {source}: {exc.strerror}") from None


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidNoteError(f"note is not valid UTF-8 (byte {exc.start})") from None


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for spec in FILTERS:
        value = getattr(args, spec.name, None)
        if spec.shape != "choice" and value is not None and value != []:
            out[spec.name] = value
    if "tags" in out:
        out["tag_mode"] = "all" if args.all_tags else "any"
    return out


# -- commands -----------------------------------------------------------------


# Every command is a call of the one API the servers call (services.agent_api), as the store's
# local owner: the same checks and the same answers; only opening, rebuilding and watching a
# folder (init, reindex, watch, demo) work on the store itself.
@contextlib.contextmanager
def _api(args: argparse.Namespace, *, create: bool = False) -> Iterator[AgentAPI]:
    # Imported here: `notewell --version` and a search the helper answers need none of it.
    from ...services.agent_api import AgentAPI

    with open_from_args(args, create=create) as store:
        yield AgentAPI(store)


def _owner() -> Caller:
    """The local owner: the caller every command is."""
    from ...services.agent_api import Caller

    return Caller(local=True)


def cmd_init(args: argparse.Namespace) -> None:
    if args.path:
        args.store = args.path
    with open_from_args(args) as store:
        count = store.summary()["total_notes"]
        if args.json:
            _emit_json({"store": store.location, "total_notes": count})
        else:
            print(f"store ready at {store.location} ({count} notes)")


def cmd_add(args: argparse.Namespace) -> None:
    if args.text is not None:
        text = _line_ended(args.text)
    else:
        text = _decode(_read_input(args.file))
    if args.title or args.kind or args.tag or args.builds_on or args.summary:
        if parse_note(text).header is not None:
            raise InvalidArgumentError("the text already has a header: put title, kind and tags in it instead")
        try:
            text = compose_note(
                text,
                title=args.title,
                kind=args.kind,
                tags=args.tag or (),
                builds_on=args.builds_on or (),
                summary=args.summary,
            )
        except ValueError as exc:
            raise InvalidNoteError(str(exc)) from None
    with _api(args, create=True) as api:
        note = api.add_note(_owner(), text, author=args.author, model=args.model, attempt_id=args.attempt or None)
    if args.json:
        _emit_json(note)
    else:
        print(note["id"])
        for other in note.get("similar", []):  # on stderr: stdout stays the id alone, for scripts
            print(
                f"similar: {other['id']}  {other['title']}  ({other['by']} {other['similarity']:.2f}, {other['age']})"
                f" - update it with `notewell edit {other['id']}` if this repeats it",
                file=sys.stderr,
            )


def cmd_get(args: argparse.Namespace) -> None:
    with _api(args) as api:
        note_id = api.resolve(_owner(), args.id)
        note = api.get_note(_owner(), note_id, revision=args.revision, working_attempt_id=args.working_attempt)
    _print_note(note, args.json, args.raw)


def _edit_in_editor(current: str) -> str:
    import subprocess
    import tempfile

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        raise InvalidArgumentError("no FILE given and $EDITOR is not set")
    fd, path = tempfile.mkstemp(suffix=".md", prefix="notewell-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(current.encode("utf-8"))
        try:
            done = subprocess.run([*editor.split(), path], check=False)
        except OSError as exc:
            raise InvalidArgumentError(f"cannot start the editor {editor!r}: {exc.strerror}") from None
        if done.returncode != 0:
            raise InvalidArgumentError(f"the editor exited with status {done.returncode}; nothing changed")
        with open(path, "rb") as fh:
            return _decode(fh.read())
    finally:
        os.unlink(path)


def _line_ended(text: str) -> str:
    """A text typed on the command line, ending in a newline as a file's last line does."""
    return text if not text or text.endswith("\n") else text + "\n"


def _keep_edit(note_id: str, text: str) -> str:
    import tempfile

    fd, path = tempfile.mkstemp(suffix=".md", prefix=f"notewell-{note_id}-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(text.encode("utf-8"))
    return path


def cmd_edit(args: argparse.Namespace) -> None:
    given = [x for x in (args.text, args.full_text, args.file) if x is not None]
    if len(given) > 1:
        raise InvalidArgumentError("give the new text one way: --text (the body), --full-text, or a FILE")
    if args.file == "":
        raise InvalidArgumentError(
            "the FILE argument is empty: give a file name, - for standard input, --text BODY, or nothing"
            " to open $EDITOR"
        )
    with _api(args) as api:
        note_id = api.resolve(_owner(), args.id)
        before = api.get_note(_owner(), note_id)
        keep_header = args.text is not None
        if keep_header:
            text = _line_ended(args.text)
        elif args.full_text is not None:
            text = args.full_text
        elif args.file is not None:
            text = _decode(_read_input(args.file))
        else:
            text = _edit_in_editor(before["text"])
        # Written from the revision read here: an edit another writer made meanwhile is a conflict.
        try:
            note = api.edit_note(
                _owner(), note_id, text, author=args.author, keep_header=keep_header, base_revision=before["revision"]
            )
        except ConflictError as exc:
            if args.text is None and args.full_text is None and args.file is None:
                # Typed in the editor: kept in a file, so that merging it loses nothing.
                kept = _keep_edit(note_id, text)
                raise ConflictError(f"{exc.message}; your text is kept in {kept}") from None
            raise
    if args.json:
        _emit_json(note)
    elif note["revision"] == before["revision"]:
        print(f"{note['id']} unchanged: the new text is the one it has (still revision {note['revision']})")
    else:
        print(f"{note['id']} now at revision {note['revision']}")


def cmd_rm(args: argparse.Namespace) -> None:
    with _api(args) as api:
        result = api.delete_note(_owner(), api.resolve(_owner(), args.id))
    if args.json:
        _emit_json(result)
    else:
        print(f"deleted {result['id']} ({result['title']}); its text stays in the history folder")


_MODEL_MODES = ("semantic", "both", "hybrid")  # the modes that need the model


def helper_config() -> str:
    """A hash of what shapes a search's cards besides the store: notewell's version and the
    settings that choose the embedder, the approximate index and the size limit. A helper
    started with other settings declines, and the command searches itself."""
    from ...version import __version__

    values = [setting(name) or "" for name in _HELPER_SETTINGS]
    kind, sep, path = values[0].partition(":")
    if sep and kind in ("fastembed", "sentence-transformers") and path:
        # the same relative directory names another model from another working directory
        values[0] = f"{kind}:{os.path.abspath(path)}"
    raw = json.dumps([__version__, *values])
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


_HELPER_SETTINGS = (
    "NOTEWELL_EMBEDDER",
    "NOTEWELL_EMBED_URL",
    "NOTEWELL_EMBED_MODEL",
    "NOTEWELL_EMBED_KEY",
    "NOTEWELL_ANN",
    "NOTEWELL_MAX_BYTES",
)


def _search_by_helper(args: argparse.Namespace, query: str) -> tuple[list[Card], int] | None:
    """A search that needs the model, answered by the folder's running watcher (which has it
    loaded), or None when none answers. Nothing here loads numpy or the model."""
    if chosen_database(args) is not None:
        return None  # a database store searches in-process: it has no folder for a socket
    from ...services.search_helper import search_by_helper

    root = Path(args.store or setting("NOTEWELL_STORE") or DEFAULT_STORE).expanduser().resolve()
    if not root.is_dir():
        return None
    filters = _filters(args)
    return search_by_helper(
        root, config=helper_config(), query=query, mode=args.mode, limit=args.limit, wait=args.wait, filters=filters
    )


def cmd_search(args: argparse.Namespace) -> None:
    query = " ".join(args.query)
    found = _search_by_helper(args, query) if args.mode in _MODEL_MODES else None
    if found is not None:
        cards, pending = [c.to_dict() for c in found[0]], found[1]
    else:
        with _api(args) as api:
            answer = api.search_notes(
                _owner(), query, limit=args.limit, mode=args.mode, wait=args.wait, **_filters(args)
            )
            cards, pending = answer["cards"], answer.get("not_embedded") or 0
            if args.mode in _MODEL_MODES and getattr(args, "autowatch", None) is not None:
                # No helper answered: start one for the next searches (this one is answered here).
                args.spawned = getattr(args, "folder", None) is not None and _start_helper(args.folder)
    if pending:
        print(f"notewell: {pending} note(s) not embedded yet: run `notewell embed` (or --wait)", file=sys.stderr)
    if args.mode == "both" and not args.json:
        for mode in ("keyword", "semantic"):
            print(f"== {mode}")
            _print_cards([c for c in cards if c["mode"] == mode], False, "no notes match")
        return
    _print_cards(cards, args.json, "no notes match")


def cmd_embed(args: argparse.Namespace) -> None:
    bar = ProgressBar("embedding", force=args.progress)
    with _api(args) as api:
        result = api.embed_pending(_owner(), limit=args.limit, progress=bar)
    bar.close()
    if args.json:
        _emit_json(result)
    else:
        older = f" and {result['revisions']} older revision(s)" if result.get("revisions") else ""
        print(f"embedded {result['embedded']} note(s){older}; {result['pending']} waiting")


def cmd_list(args: argparse.Namespace) -> None:
    with _api(args) as api:
        cards = api.list_notes(_owner(), limit=args.limit, offset=args.offset, **_filters(args))["cards"]
    _print_cards(cards, args.json, "no notes")


def cmd_summary(args: argparse.Namespace) -> None:
    with _api(args) as api:
        data = api.notes_summary(_owner(), recent=args.recent)
    if args.json:
        _emit_json(data)
        return
    print(f"{data['total_notes']} notes")
    for row in data["by_kind"]:
        print(f"  {row['kind'] or '(no kind)'}: {row['count']}")
    if data["recent_notes"]:
        print("recent:")
        for card in data["recent_notes"]:
            print(f"  {card['id']}  {card['updated_at'][:16].replace('T', ' ')}  {card['title']}")
    for problem in data["problems"]:
        print(f"unreadable: {problem['path']}: {problem['error']}", file=sys.stderr)


def cmd_tags(args: argparse.Namespace) -> None:
    with _api(args) as api:
        answer = api.list_tags(_owner(), notes=args.notes)
    tags, notes = answer["tags"], answer.get("notes")
    if args.json:
        _emit_json({"tags": tags, "notes": notes} if notes is not None else tags)
        return
    if not tags:
        print("no tags")
    for row in tags:
        print(f"{row['count']:6d}  {row['tag']}")
    for note in notes or []:
        print(f"\n{note['id']}  {note['title']}")
        print("    " + (" ".join(f"#{t}" for t in note["tags"]) or "(no tags)"))
        if note["summary"]:
            print("    " + note["summary"])


def cmd_tag(args: argparse.Namespace) -> None:
    with _api(args) as api:
        note = api.add_tag(_owner(), api.resolve(_owner(), args.id), list(args.tags), author=args.author)
    if args.json:
        _emit_json(note)
    else:
        print(f"{note['id']}: " + " ".join(f"#{t}" for t in note["tags"]))


def cmd_set_summary(args: argparse.Namespace) -> None:
    summary = args.text if args.text is not None else _decode(_read_input(args.file))
    with _api(args) as api:
        note = api.set_summary(_owner(), api.resolve(_owner(), args.id), summary, author=args.author)
    if args.json:
        _emit_json(note)
    else:
        print(f"{note['id']}: {note['summary']}")


def cmd_history(args: argparse.Namespace) -> None:
    with _api(args) as api:
        revisions = api.history(_owner(), api.resolve(_owner(), args.id))["revisions"]
    if args.json:
        _emit_json(revisions)
        return
    for r in revisions:
        at = (r["at"] or "")[:19].replace("T", " ")
        if r["op"] == "delete":
            print(f"    {at}  deleted (r{r['revision']} stays readable: notewell get ID --revision {r['revision']})")
            continue
        flags = " (current)" if r["current"] else ("" if r["kept"] else " (text not kept)")
        who = f" by {r['author']}" if r["author"] else ""
        print(f"r{r['revision']}  {at}  {r['op']}{who}  {r['size']} bytes{flags}")


def cmd_reindex(args: argparse.Namespace) -> None:
    bar = ProgressBar("indexing", force=args.progress)
    with open_folder_from_args(args, create=False, progress=bar) as store:
        # A folder with no index (or another version's) was indexed by opening it: once is enough.
        report = store.last_sync if store.built_on_open else store.reindex(progress=bar)
        total = store.summary()["total_notes"]
    bar.close()
    data = {"total_notes": total, **report.to_dict()}
    if args.json:
        _emit_json(data)
        return
    print(f"indexed {total} notes")
    if report.vectors_kept is not None:
        print(f"kept the vectors of {report.vectors_kept:,} notes; {report.to_embed:,} wait for `notewell embed`")
    for problem in report.problems:
        print(f"unreadable: {problem['path']}: {problem['error']}", file=sys.stderr)


def cmd_header(args: argparse.Namespace) -> None:
    parsed = parse_note(_decode(_read_input(args.file or "-")))
    if args.json:
        _emit_json(parsed.to_dict())
        return
    if parsed.header is None:
        print("no header")
    else:
        for key, value in parsed.header.items():
            print(f"{key}: {', '.join(value) if isinstance(value, list) else value}")
    for line in parsed.extra:
        print(f"extra: {line}")


def _attempt_lines(attempt: dict[str, Any]) -> list[str]:
    state = "running" if attempt["running"] else f"ended {attempt['ended_at']}: {attempt['outcome']}"
    where = attempt["project"] + (f" (campaign {attempt['campaign']})" if attempt["campaign"] else "")
    who = (attempt["author"] or "?") + (f" / {attempt['model']}" if attempt["model"] else "")
    started = f"  started {attempt['started_at']}, {state}; {attempt['notes']} note(s)"
    return [f"{attempt['id']}  {where}  by {who}", started]


def cmd_attempt(args: argparse.Namespace) -> None:
    action = args.attempt_command
    if action is None:
        raise InvalidArgumentError("say what to do: notewell attempt start|end|show|list")
    with _api(args, create=action == "start") as api:
        if action == "start":
            author = args.author or setting("NOTEWELL_AUTHOR") or _user_name()
            attempt = api.start_attempt(_owner(), args.project, author=author, model=args.model, campaign=args.campaign)
            if args.json:
                _emit_json(attempt)
            else:
                print(attempt["id"])
                print(f"(export NOTEWELL_ATTEMPT={attempt['id']} so that `notewell add` writes on it)", file=sys.stderr)
            return
        if action == "end":
            summary = args.summary
            if args.summary_file is not None:
                summary = _decode(_read_input(args.summary_file))
            attempt = api.end_attempt(_owner(), args.id, outcome=args.outcome, summary=summary)
            if args.json:
                _emit_json(attempt)
            else:
                print("\n".join(_attempt_lines(attempt)))
            return
        if action == "show":
            attempt = api.get_attempt(_owner(), args.id)
            cards = api.list_notes(_owner(), attempt_id=attempt["id"], limit=1000)["cards"]
            reads = api.attempt_reads(_owner(), attempt["id"])["reads"]
            if args.json:
                _emit_json({**attempt, "notes": cards, "reads": reads})
                return
            print("\n".join(_attempt_lines(attempt)))
            for card in cards:
                print(f"  {card['id']}  {card['title']}" + ("  [summary]" if card["note_kind"] == "summary" else ""))
            for read in reads:
                print(f"  read {read['note_id']}  {read['title'] or '(gone)'}  at {read['at']}")
            return
        running = {"running": True, "ended": False}.get(args.state) if args.state else None
        attempts = api.list_attempts(_owner(), args.project, running=running, limit=args.limit)["attempts"]
        if args.json:
            _emit_json(attempts)
        elif not attempts:
            print("no attempts")
        else:
            for attempt in attempts:
                print("\n".join(_attempt_lines(attempt)))


def cmd_project(args: argparse.Namespace) -> None:
    action = args.project_command
    if action is None:
        raise InvalidArgumentError("say what to do: notewell project set|show")
    with _api(args, create=action == "set") as api:
        if action == "set":
            project = api.set_project(
                _owner(), args.name, private=args.private, owner=args.owner, campaign=args.campaign
            )
        else:
            project = api.get_project(_owner(), args.name)
    if args.json:
        _emit_json(project)
        return
    seen = f"private (owner {project['owner'] or 'none'})" if project["private"] else "public"
    campaign = f", campaign {project['campaign']}" if project["campaign"] else ""
    print(f"{project['name']}: {seen}{campaign}; {project['attempts']} attempt(s), {project['notes']} note(s)")


def _link_lines(node: dict[str, Any], key: str, indent: int) -> list[str]:
    lines = []
    for child in node.get(key, []):
        label = child.get("title") or "(no such note)"
        mark = " (again)" if child.get("again") else ""
        lines.append("  " * indent + f"{child['id']}  {label}{mark}")
        lines.extend(_link_lines(child, key, indent + 1))
    return lines


def cmd_links(args: argparse.Namespace) -> None:
    with _api(args) as api:
        graph = api.links(_owner(), api.resolve(_owner(), args.id), depth=args.depth)
    if args.json:
        _emit_json(graph)
        return
    print(f"{graph['id']}  {graph['title']}")
    for key, label in (("builds_on", "builds on:"), ("built_on_by", "built on by:")):
        lines = _link_lines(graph, key, 2)
        print(f"  {label}" + ("" if lines else " nothing"))
        for line in lines:
            print(line)
    if graph.get("truncated"):
        from ...services.links import MAX_LINKS

        print(f"  (cut at {MAX_LINKS:,} links in all)")


def cmd_brief(args: argparse.Namespace) -> None:
    with _api(args) as api:
        brief = api.brief(_owner(), args.project, recent=args.recent)
    if args.json:
        _emit_json(brief)
        return
    project = brief["project"]
    print(f"{project['name']}: {project['attempts']} attempt(s), {project['notes']} note(s)")
    sections = (
        ("read first: the newest digest", [brief["digest"]] if brief["digest"] else []),
        ("recent", brief["recent"]),
        (f"not in the digest yet ({brief['uncovered_count']})", brief["uncovered"]),
    )
    for title, cards in sections:
        print(f"\n== {title}")
        if not cards:
            print("(none)")
        for card in cards:
            print(f"{card['id']}  {card['title']}  ({card['updated_at'][:16].replace('T', ' ')})")


def _user_name() -> str | None:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None


def cmd_watch(args: argparse.Namespace) -> None:
    import signal
    import threading

    from ...adapters.embedder_choice import embedder_from_environment
    from ...services.embedder_loading import EmbedderLoader
    from ...services.search_helper import SearchHelper

    stop = threading.Event()
    loader = EmbedderLoader(embedder_from_environment())

    def report(e: NotewellError) -> None:
        print(f"notewell watch: {e.code}: {e.message}", file=sys.stderr, flush=True)

    with open_folder_from_args(args, create=False, watch=True, loader=loader) as store:
        # Only a watcher that is really starting takes over the signals (a refused one leaves
        # the process as it found it).
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        if args.idle_exit is not None and (other := store.watcher_pid()) is not None:
            print(f"{store.root} is already watched (pid {other})", flush=True)
            return
        # The watcher also answers other commands' semantic searches, with the model it loads
        # in the background now; one started on demand leaves that to one already serving.
        helper = SearchHelper(store, config=helper_config(), loader=loader, on_question=store.note_question)
        if not helper.serve() and args.idle_exit is not None:
            print(f"{store.root} is already watched (another watcher serves its searches)", flush=True)
            return
        try:
            loader.start(then=lambda: _warm_watcher(store, embed=args.embed, report=report))
            print(
                f"watching {store.root} (pid {os.getpid()}); one-shot commands now skip the folder scan"
                " and send semantic searches here",
                flush=True,
            )
            store.watch_forever(stop, on_error=report, idle_exit=args.idle_exit, on_beat=helper.check)
        finally:
            helper.close()


def _warm_watcher(store: Store, *, embed: bool, report: Callable[[NotewellError], None]) -> None:
    """Once the model has loaded (or failed to): embed in the background if asked, and run one
    search so that the vectors are in memory before the first caller's."""
    try:
        if embed:
            store.start_embedding()
        store.search_notes("warm up", mode="semantic", limit=1)
    except NotewellError as exc:
        if embed:
            report(exc)  # no model: keyword search and the cookie handshake go on


AUTOWATCH_MIN_FILES = 20_000
AUTOWATCH_IDLE = 1800.0


def _autowatch_threshold() -> int | None:
    raw = (setting("NOTEWELL_AUTOWATCH") or "").strip().lower()
    if raw in ("", "on", "1", "yes", "true"):
        return AUTOWATCH_MIN_FILES
    if raw in ("off", "0", "no", "false"):
        return None
    try:
        return max(1, int(raw))
    except ValueError:
        raise InvalidArgumentError(f"NOTEWELL_AUTOWATCH must be on, off or a number of files, got {raw!r}") from None


def _start_helper(store: Store) -> bool:
    """After a search that needs the model found no helper: start a watcher (which is one)
    unless one runs already, for the searches after this one."""
    return store.watcher_pid() is None and _spawn_watcher(store.root)


def maybe_start_watcher(store: Store, threshold: int = AUTOWATCH_MIN_FILES) -> bool:
    """Start ``notewell watch`` in the background after a one-shot command had to check a
    large folder itself, so the next commands ask it instead (git's fsmonitor daemon, on
    demand). It stops after AUTOWATCH_IDLE seconds without a question; NOTEWELL_AUTOWATCH
    turns this off (``off``) or sets the folder size that warrants it."""
    if store.full_check_owed:
        # The first read looked only at the folders that changed: the watcher checks every file
        # (in the background; one started beside a running one exits); where none can start,
        # this process does, after its answer (the command closed its store: opened again).
        if _spawn_watcher(store.root):
            return True
        from ...services.opening import Store

        # Best effort: the command has answered, and its exit code stands whatever happens here.
        with contextlib.suppress(NotewellError, KeyboardInterrupt):
            with Store(store.root, watch=False, embedder=None, max_bytes=store.max_bytes) as again:
                again.refresh()
        return False
    if store.last_check != "scan" or store.last_scan_size < threshold:
        return False
    return _spawn_watcher(store.root)


def _spawn_watcher(root: Path) -> bool:
    """Start ``notewell watch --idle-exit AUTOWATCH_IDLE`` on *root* in the background (it
    exits at once when another watcher runs); False where it cannot run."""
    if not sys.platform.startswith("linux"):
        return False  # the watcher needs inotify
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-m", "notewell", "watch", "--store", str(root), "--idle-exit", str(AUTOWATCH_IDLE)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return False  # a convenience: the command itself has already succeeded
    return True


_DEMO_NOTES = [
    (
        "---\ntitle: Clause learning stalls above 40k variables\nkind: dead_end\ntags: [sat, cdcl, scaling]\n"
        "model: demo-model\n---\n\nTried the CDCL branch with phase saving on the large fixture. Above 40k "
        "variables the learned-clause database grows faster than restarts can prune it.\n"
    ),
    (
        "---\ntitle: Restart policy chosen\nkind: decision\ntags: [sat, restarts]\n---\n\nChose Luby restarts "
        "(unit 512) over geometric: fewer timeouts on the medium fixtures. Script: bench/restarts.py.\n"
    ),
    (
        "---\ntitle: 缓存击穿的解决办法\nkind: conclusion\ntags: [缓存, 后端]\n---\n\n热点键过期时所有请求同时回源。"
        "给过期时间加随机抖动，并用互斥锁只让一个请求重建缓存。\n"
    ),
    (
        "# Dependency conflict in the business layer\n\nThree modules pin incompatible versions of the HTTP "
        "client. Blocked until the vendor releases 2.4.\n"
    ),
]


def cmd_demo(args: argparse.Namespace) -> None:
    if not args.store and not setting("NOTEWELL_STORE") and not chosen_database(args):
        args.store = "notewell-demo"
    from ...services.agent_api import AgentAPI

    with open_from_args(args) as store:
        if not store.list_notes(limit=1):
            added = store.add_notes([t for t in _DEMO_NOTES], author="demo")
            first = added[0].id
            store.add_note(
                f"---\ntitle: Digest: SAT solver scaling\nkind: digest\nbuilds_on: [{first}, {added[1].id}]\n---\n\n"
                "Restarts help on medium fixtures; clause learning stalls above 40k variables.\n",
                author="demo",
            )
        print(f"store: {store.location}\n")
        for query in ("clause learning", "缓存", "why is the solver slow on large fixtures?"):
            cards = AgentAPI(store).search_notes(_owner(), query, limit=3)["cards"]
            if args.json:
                _emit_json({"query": query, "cards": cards})
                continue
            print(f"$ notewell search {query!r}")
            _print_cards(cards, False, "no notes match")
            print()
        if not args.json:
            where = f" --store {shlex.quote(args.store)}" if args.store else ""
            print("next:")
            for line in next_steps(where):
                print("  " + line)


# -- parser -------------------------------------------------------------------


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a mistake said in one line (as every other error is) instead of the usage block."""

    error_code = 2  # 1 for a runtime's hook: to a runtime, 2 means "block"

    def error(self, message: str) -> NoReturn:
        self.exit(self.error_code, f"notewell: invalid_argument: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--store", default=argparse.SUPPRESS, help="the notes folder (default: $NOTEWELL_STORE or ./notes)"
    )
    common.add_argument(
        "--database",
        default=argparse.SUPPRESS,
        metavar="URL",
        help="a store in PostgreSQL, postgresql://… (default: $NOTEWELL_DATABASE; not with --store)",
    )
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON (the same shapes as the Python API)"
    )
    parser = OneLineParser(
        prog="notewell",
        description="Notes that the next agent can find.",
        parents=[common],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from ...version import __version__

    parser.add_argument("--version", action="version", version=f"notewell {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help="one of the commands below")
    commands: dict[str, tuple[Callable[[argparse.Namespace], None], str]] = {
        "init": (cmd_init, "create a store (or check an existing one)"),
        "add": (cmd_add, "add a note from a FILE, stdin, or --text (with --title/--kind/--tag)"),
        "get": (cmd_get, "show a note (--raw: the text exactly as stored)"),
        "edit": (cmd_edit, "replace a note's body (--text) or its whole text (FILE, stdin, --full-text, $EDITOR)"),
        "rm": (cmd_rm, "delete a note (its text stays in the history folder)"),
        "search": (cmd_search, "search the notes (keyword, semantic, both or hybrid); prints cards"),
        "list": (cmd_list, "list notes, most recently updated first"),
        "summary": (cmd_summary, "counts by kind and the most recent notes"),
        "tags": (cmd_tags, "every tag with its count (--notes: each note's tags and summary)"),
        "tag": (cmd_tag, "add tags to a note's header, changing nothing else in it"),
        "set-summary": (cmd_set_summary, "write a one-line summary into a note's header"),
        "history": (cmd_history, "the revisions of a note"),
        "reindex": (cmd_reindex, "rebuild the index from the notes folder"),
        "embed": (cmd_embed, "embed the notes semantic search does not know yet (progress bar)"),
        "header": (cmd_header, "parse a note's header: header, extra and body"),
        "attempt": (cmd_attempt, "start, end, show or list attempts (runs on a project)"),
        "project": (cmd_project, "set or show a project's settings (private, owner, campaign)"),
        "links": (cmd_links, "what a note builds on and what builds on it"),
        "brief": (cmd_brief, "a project's newest digest, recent notes, and what the digest does not cover"),
        "watch": (cmd_watch, "keep the index current from inotify so other commands skip the folder scan"),
        "demo": (cmd_demo, "make a demo store, add sample notes, search them"),
    }
    add_server_commands(commands)
    commands["db"] = (cmd_db, "the PostgreSQL schema: upgrade (apply migrations) or status")
    commands["export"] = (cmd_export, "write a PostgreSQL store into a folder (notes, journal, revisions)")
    commands["import"] = (
        cmd_import,
        "bring in conversations (claude-code, chatgpt, claude), or load a notes folder into --database",
    )
    commands["config"] = (cmd_config, "the NOTEWELL_* settings in effect, and where each came from")
    commands["notebook"] = (cmd_notebook, "a validated working-context notebook for one long task")
    commands["assistant"] = (cmd_assistant, "a project assistant over the notes (an OpenAI-compatible model)")
    commands["install"] = (cmd_install, "register notewell's MCP server and session hooks in an agent runtime")
    commands["uninstall"] = (cmd_uninstall, "take notewell's MCP server and hooks out of an agent runtime's files")
    commands["hook"] = (cmd_hook, "what an agent runtime's session hooks print: session-start, post-compact, stop, ...")
    ps: dict[str, argparse.ArgumentParser] = {}
    # Listed by group in the epilog rather than in argparse's one flat list (no help= here).
    parser.epilog = commands_epilog({name: help_text for name, (_f, help_text) in commands.items()})
    for name, (func, help_text) in commands.items():
        p = sub.add_parser(name, description=help_text, parents=[common])
        p.set_defaults(func=func)
        ps[name] = p
    add_server_arguments(ps)
    add_db_arguments(ps["db"])
    add_transfer_arguments(ps["export"])
    add_import_arguments(ps["import"])
    add_notebook_arguments(ps["notebook"])
    add_assistant_arguments(ps["assistant"])
    add_hook_arguments(ps["hook"])
    ps["hook"].error_code = 1  # type: ignore[attr-defined]
    add_install_arguments(ps["install"], ps["uninstall"])
    add_core_arguments(ps, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    if "hook" in (sys.argv[1:] if argv is None else list(argv)):
        parser.error_code = 1  # type: ignore[attr-defined] - a hook's mistakes never read as "block"
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    args.store = getattr(args, "store", None)
    args.database = getattr(args, "database", None)
    args.json = getattr(args, "json", False)
    try:
        threshold = _autowatch_threshold()
        args.autowatch = threshold
        args.func(args)
        folder = getattr(args, "folder", None)  # a database store has no folder to watch
        # Not after a hook: a runtime's session hook is no place to leave a 30-minute process behind.
        leaves_a_watcher = args.command not in ("watch", "hook") and not getattr(args, "spawned", 0)
        if folder is not None and threshold is not None and leaves_a_watcher:
            maybe_start_watcher(folder, threshold)
    except NotewellError as exc:
        if args.json:  # one line of JSON, the shape HTTP will use
            print(json.dumps({"error": exc.to_dict()}, ensure_ascii=False), file=sys.stderr)
        else:
            print(f"notewell: {exc.code}: {shown(exc.message)}", file=sys.stderr)  # one line, whatever it quotes
        return 1 if args.command == "hook" else EXIT_CODES.get(exc.code, 1)
    except KeyboardInterrupt:
        print("notewell: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and closed early: not an error worth a traceback.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        print(f"notewell: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 70
    return 0
