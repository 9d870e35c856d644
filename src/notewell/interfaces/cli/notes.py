"""The note commands: ``add``, ``get``, ``edit``, ``rm``, ``list`` and ``history``."""

from __future__ import annotations

import argparse
import os

from ...errors import ConflictError, InvalidArgumentError, InvalidNoteError
from ...model.header import compose_note, parse_note
from ...model.header_edit import with_supersedes
from ...model.open_work import STALE_AGE
from ...settings import setting
from .command import Command
from .filter_options import add_filter_arguments, filters_from_args
from .note_input import AUTHOR_HELP, MODEL_HELP, decode, line_ended, read_input
from .output import emit_json, notice, print_cards, print_note, score_text
from .store_options import open_api, owner

__all__ = ["COMMANDS"]


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", metavar="FILE", help="a file, or - for standard input")
    p.add_argument("--text", help="the note text (or the body, with --title/--kind/--tag)")
    p.add_argument("--title", help="the note's title (written into its header)")
    p.add_argument("--kind", help="what kind of note: finding, decision, blocker, dead_end, action...")
    p.add_argument("--tag", action="append", help="a tag for the header (repeatable)")
    p.add_argument(
        "--builds-on", dest="builds_on", action="append", metavar="ID", help="a note this one builds on (repeatable)"
    )
    p.add_argument(
        "--supersedes",
        action="append",
        metavar="ID",
        help="an earlier note this one corrects (repeatable): it is marked and ranked after this one",
    )
    p.add_argument("--summary", help="a one-line summary for the header")
    p.add_argument("--author", default=setting("NOTEWELL_AUTHOR"), help=AUTHOR_HELP)
    p.add_argument("--model", default=setting("NOTEWELL_MODEL"), help=MODEL_HELP)
    p.add_argument(
        "--attempt",
        default=setting("NOTEWELL_ATTEMPT"),
        metavar="ID",
        help="write the note on this running attempt, so it joins the attempt's project (default: $NOTEWELL_ATTEMPT;"
        " `notewell attempt start PROJECT` starts one)",
    )


def cmd_add(args: argparse.Namespace) -> None:
    if args.text is not None:
        text = line_ended(args.text)
    else:
        text = decode(read_input(args.file))
    if args.title or args.kind or args.tag or args.builds_on or args.supersedes or args.summary:
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
                supersedes=args.supersedes or (),
            )
        except ValueError as exc:
            raise InvalidNoteError(str(exc)) from None
    with open_api(args, create=True) as api:
        note = api.add_note(owner(), text, author=args.author, model=args.model, attempt_id=args.attempt or None)
    if args.json:
        emit_json(note)
    else:
        print(note["id"])
        similar = [  # on stderr: stdout stays the id alone, for scripts
            f"similar: {other['id']}  {other['title']}  ({other['by']} {score_text(other['similarity'])},"
            f" {other['age']}) - update it with `notewell edit {other['id']}` if this repeats it"
            for other in note.get("similar", [])
        ]
        if similar:
            notice("\n".join(similar))


def _get_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="a note id (or a path inside the store)")
    p.add_argument("--revision", type=int, metavar="N", help="an earlier revision (see notewell history ID)")
    p.add_argument("--raw", action="store_true", help="print the stored text exactly")
    p.add_argument(
        "--working-attempt", metavar="ID", help="record the read on this running attempt (who read what, when)"
    )


def cmd_get(args: argparse.Namespace) -> None:
    with open_api(args) as api:
        note_id = api.resolve(owner(), args.id)
        note = api.get_note(owner(), note_id, revision=args.revision, working_attempt_id=args.working_attempt)
    print_note(note, args.json, args.raw)


def _edit_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the note: an id, or a path inside the store")
    p.add_argument(
        "file", nargs="?", metavar="FILE", help="the whole new text (header included) from a file, or - for stdin"
    )
    p.add_argument("--text", metavar="BODY", help="the new body; the header (title, kind, tags...) stays as it is")
    p.add_argument("--full-text", metavar="TEXT", help="the whole new text, header included")
    p.add_argument(
        "--supersedes",
        action="append",
        metavar="ID",
        help="add an earlier note this one corrects to its header (repeatable; alone: nothing else changes)",
    )
    p.add_argument("--author", default=setting("NOTEWELL_AUTHOR"), help=AUTHOR_HELP)


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
            return decode(fh.read())
    finally:
        os.unlink(path)


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
    if args.supersedes:
        if given:
            raise InvalidArgumentError("give --supersedes alone: it adds to the note's header and changes nothing else")
        _edit_supersedes(args)
        return
    if args.file == "":
        raise InvalidArgumentError(
            "the FILE argument is empty: give a file name, - for standard input, --text BODY, or nothing"
            " to open $EDITOR"
        )
    with open_api(args) as api:
        note_id = api.resolve(owner(), args.id)
        before = api.get_note(owner(), note_id)
        keep_header = args.text is not None
        if keep_header:
            text = line_ended(args.text)
        elif args.full_text is not None:
            text = args.full_text
        elif args.file is not None:
            text = decode(read_input(args.file))
        else:
            text = _edit_in_editor(before["text"])
        # Written from the revision read here: an edit another writer made meanwhile is a conflict.
        try:
            note = api.edit_note(
                owner(), note_id, text, author=args.author, keep_header=keep_header, base_revision=before["revision"]
            )
        except ConflictError as exc:
            if args.text is None and args.full_text is None and args.file is None:
                # Typed in the editor: kept in a file, so that merging it loses nothing.
                kept = _keep_edit(note_id, text)
                raise ConflictError(f"{exc.message}; your text is kept in {kept}") from None
            raise
    if args.json:
        emit_json(note)
    elif note["revision"] == before["revision"]:
        print(f"{note['id']} unchanged: the new text is the one it has (still revision {note['revision']})")
    else:
        print(f"{note['id']} now at revision {note['revision']}")


def _edit_supersedes(args: argparse.Namespace) -> None:
    with open_api(args) as api:
        note_id = api.resolve(owner(), args.id)
        before = api.get_note(owner(), note_id)
        text, added = with_supersedes(before["text"], args.supersedes)
        note = before
        if added:
            note = api.edit_note(owner(), note_id, text, author=args.author, base_revision=before["revision"])
    if args.json:
        emit_json(note)
    elif added:
        print(f"{note['id']} now at revision {note['revision']}: supersedes {', '.join(added)}")
    else:
        print(f"{note['id']} unchanged: it supersedes those already (still revision {note['revision']})")


def _rm_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the note: an id, or a path inside the store")


def cmd_rm(args: argparse.Namespace) -> None:
    with open_api(args) as api:
        result = api.delete_note(owner(), api.resolve(owner(), args.id))
    if args.json:
        emit_json(result)
    else:
        print(f"deleted {result['id']} ({result['title']}); its text stays in the history folder")


def _list_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--limit", type=int, default=20, metavar="N", help="notes to print (default 20)")
    p.add_argument("--offset", type=int, default=0, metavar="N", help="skip this many first (default 0)")
    add_filter_arguments(p)


def cmd_list(args: argparse.Namespace) -> None:
    with open_api(args) as api:
        cards = api.list_notes(owner(), limit=args.limit, offset=args.offset, **filters_from_args(args))["cards"]
    print_cards(cards, args.json, "no notes")


def _history_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the note (deleted ones too): an id, or a path inside the store")


def cmd_history(args: argparse.Namespace) -> None:
    with open_api(args) as api:
        answer = api.history(owner(), api.resolve(owner(), args.id))
    if args.json:
        emit_json(answer)  # {"revisions": [...]}, the Python API's shape
        return
    revisions = answer["revisions"]
    for r in revisions:
        at = (r["at"] or "")[:19].replace("T", " ")
        if r["op"] == "delete":
            print(f"    {at}  deleted (r{r['revision']} stays readable: notewell get ID --revision {r['revision']})")
            continue
        flags = " (current)" if r["current"] else ("" if r["kept"] else " (text not kept)")
        who = f" by {r['author']}" if r["author"] else ""
        print(f"r{r['revision']}  {at}  {r['op']}{who}  {r['size']} bytes{flags}")


def _stale_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--older-than",
        default=STALE_AGE,
        metavar="AGE",
        help=f"not updated for this long: 14d, 2w, 3m, or a date (default {STALE_AGE})",
    )
    p.add_argument("--project", help="only this project's")
    p.add_argument("--limit", type=int, default=20, metavar="N", help="notes to print (default 20)")


def cmd_stale(args: argparse.Namespace) -> None:
    with open_api(args) as api:
        found = api.stale(owner(), older_than=args.older_than, project=args.project, limit=args.limit)
    if args.json:
        emit_json(found)
        return
    print_cards(found["cards"], False, f"no open blocker or action left untouched for {args.older_than}")


COMMANDS = (
    Command(
        "add", "notes", "add a note from a FILE, stdin, or --text (with --title/--kind/--tag)", cmd_add, _add_arguments
    ),
    Command("get", "notes", "show a note (--raw: the text exactly as stored)", cmd_get, _get_arguments),
    Command(
        "edit",
        "notes",
        "replace a note's body (--text) or its whole text (FILE, stdin, --full-text, $EDITOR)",
        cmd_edit,
        _edit_arguments,
    ),
    Command("rm", "notes", "delete a note (its text stays in the history folder)", cmd_rm, _rm_arguments),
    Command("list", "notes", "list notes, most recently updated first", cmd_list, _list_arguments),
    Command("history", "notes", "the revisions of a note", cmd_history, _history_arguments),
    Command(
        "stale",
        "notes",
        "open blockers and actions not updated for --older-than (14d) that no later note builds on or supersedes",
        cmd_stale,
        _stale_arguments,
    ),
)
