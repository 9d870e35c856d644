"""The store's MCP tools (notes, tags, projects, attempts), in the order they are served.

Each calls :class:`~notewell.services.server_api.ServerAPI`, so its arguments and results are
those of the Python and HTTP APIs. Every agent session is sent the definitions of the tools it
is offered, so descriptions say what a caller needs to call a tool right and no more: what
the schema says (types, bounds, defaults, choices) is not said again in words.
"""

from __future__ import annotations

from typing import Any, Literal

from ...model.open_work import STALE_AGE
from ...search.filters import DATE_FORMS
from .results import note_read, note_receipt
from .tool import FILTER_ARGS, FULL, NOTE_ID, Arg, ToolSpec, limit

__all__ = ["STORE_TOOLS"]


def _written(note: dict[str, Any], full: bool) -> dict[str, Any]:
    return note_read(note) if full else note_receipt(note)


def _summary(api: Any, c: Any) -> dict[str, Any]:
    found = api.notes_summary(c)
    # Notes without a kind are counted as "(no kind)": a row without its key says nothing.
    for row in found.get("by_kind", []):
        if row.get("kind") is None:
            row["kind"] = "(no kind)"
    return found


def _report(api: Any, c: Any, project: str | None, since: str, until: str | None, tz: str | None) -> dict[str, Any]:
    from ...services.report_pages import render_markdown

    made = api.report(c, project=project, since=since, until=until, tz=tz)
    return {"project": made.project, "since": made.since, "until": made.until, "report": render_markdown(made)}


STORE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "search_notes",
        "read",
        "Find notes: cards (id, title, kind, tags, snippet, score), not bodies; read one with get_note. "
        "mode: keyword for exact words, identifiers and error messages; semantic for meaning; hybrid fuses "
        "the two; both gives the two lists. An empty query with project or attempt_id: its recent notes. "
        "A card with matched_revision matched only that older revision: get_note(id, revision=...). "
        f"Filters narrow the cards (none: all the work you may see); dates: {DATE_FORMS}.",
        (
            Arg("query", str, "search words"),
            Arg("mode", Literal["keyword", "semantic", "both", "hybrid"], None, "keyword"),
            limit(10),
            Arg("wait", bool, "embed notes not embedded yet first (semantic modes)", False),
            *FILTER_ARGS,
        ),
        lambda api, c, query, mode, limit, wait, **filters: api.search_notes(
            c, query, mode=mode, limit=limit, wait=wait, **filters
        ),
        needs_model=lambda arguments: arguments["mode"] != "keyword",
        group="core",
        title="Search notes",
        idempotent=True,
    ),
    ToolSpec(
        "get_note",
        "read",
        "Read one note whole: its text (header included), its fields, the attempt it is on, and the "
        "notes that build on it (backlinks). superseded_by: later notes correcting it; read those.",
        (
            NOTE_ID,
            Arg("working_attempt_id", str | None, "your running attempt: the read is recorded on it", None),
            Arg("revision", int | None, "an earlier revision", None, ge=1),
        ),
        lambda api, c, id, working_attempt_id, revision: note_read(
            api.get_note(c, id, working_attempt_id=working_attempt_id, revision=revision)
        ),
        group="core",
        title="Read a note",
        idempotent=True,
    ),
    ToolSpec(
        "add_note",
        "write",
        "Write one finding as a note, when it happens: an approach chosen and why, a blocker, a surprise, "
        "a change of plan, the end of a phase. Open with a header: "
        "'---\\ntitle: ...\\nkind: finding\\ntags: [a, b]\\nbuilds_on: [nte_...]\\n---'. When it corrects an "
        "earlier note, add supersedes: [nte_...] (that note then ranks after it). Say what was done "
        "elsewhere (sources read, scripts run, where their output is). Answers id, title, revision and "
        "`similar`: notes that say much the same (similarity 0-1); if one holds this finding already, "
        "update it with edit_note and delete the new one.",
        (
            Arg("text", str, "Markdown, optionally opening with the header"),
            Arg("attempt_id", str | None, "your running attempt, to write the note on it", None),
            Arg("model", str | None, "the model writing it", None),
            FULL,
        ),
        lambda api, c, text, attempt_id, model, full: _written(
            api.add_note(c, text, attempt_id=attempt_id, model=model), full
        ),
        group="core",
        title="Add a note",
        idempotent=False,
    ),
    ToolSpec(
        "edit_note",
        "change",
        "Replace a note's text (the old text stays as a revision). A note on an attempt changes only "
        "while the attempt runs, and only by its author (or the owner); to correct a frozen note, add a "
        "note with supersedes: [its id] in the header. Answers id, title, revision.",
        (
            NOTE_ID,
            Arg("text", str, "the whole new text (with keep_header: the body)"),
            Arg("keep_header", bool, "keep the header; text is the body", False),
            Arg("base_revision", int | None, "the revision you read: refused (conflict) if changed since", None, ge=1),
            FULL,
        ),
        lambda api, c, id, text, keep_header, base_revision, full: _written(
            api.edit_note(c, id, text, keep_header=keep_header, base_revision=base_revision), full
        ),
        group="core",
        title="Edit a note",
        idempotent=True,
    ),
    ToolSpec(
        "delete_note",
        "change",
        "Delete a note (its text stays in the history). Prefer editing it.",
        (NOTE_ID,),
        lambda api, c, id: api.delete_note(c, id),
        group="core",
        title="Delete a note",
        idempotent=True,
    ),
    ToolSpec(
        "list_notes",
        "read",
        "Notes as cards, most recently updated first: to browse (search_notes finds). Filters and dates "
        "as in search_notes.",
        (limit(20), Arg("offset", int, default=0, ge=0), *FILTER_ARGS),
        lambda api, c, limit, offset, **filters: api.list_notes(c, limit=limit, offset=offset, **filters),
        group="core",
        title="List notes",
        idempotent=True,
    ),
    ToolSpec(
        "brief",
        "read",
        "What to read first on a project: its newest digest, its recent notes, and the notes the digest "
        "does not cover yet.",
        (Arg("project", str, "a project's name"),),
        lambda api, c, project: api.brief(c, project),
        group="core",
        title="Brief on a project",
        idempotent=True,
    ),
    ToolSpec(
        "links",
        "read",
        "What a note builds on and what builds on it, depth steps out; and what it supersedes and what "
        "supersedes it, to the chain's ends.",
        (NOTE_ID, Arg("depth", int, None, 1, ge=1, le=10)),
        lambda api, c, id, depth: api.links(c, id, depth=depth),
        group="core",
        title="A note's links",
        idempotent=True,
    ),
    ToolSpec(
        "notes_summary",
        "read",
        "How many notes of each kind, and the most recent ones.",
        (),
        _summary,
        group="catalog",
        title="Count notes by kind",
        idempotent=True,
    ),
    ToolSpec(
        "add_tag",
        "write",
        "Add tags to a note's header (every other line stays). Answers id, title, revision, tags.",
        (NOTE_ID, Arg("tags", list[str], "tags to add", min_length=1), FULL),
        lambda api, c, id, tags, full: _written(api.add_tag(c, id, tags), full),
        group="catalog",
        title="Tag a note",
        idempotent=True,
    ),
    ToolSpec(
        "list_tags",
        "read",
        "Every tag in use with its number of notes, most used first.",
        (),
        lambda api, c: api.list_tags(c),
        group="catalog",
        title="List tags",
        idempotent=True,
    ),
    ToolSpec(
        "start_attempt",
        "write",
        "Start a run of work on a project. Write your notes on it (add_note's attempt_id) and end it "
        "with end_attempt; its notes can change until then.",
        (
            Arg("project", str, "a short name (yourname:project in your own namespace)"),
            Arg("model", str | None, "the model doing the work", None),
            Arg("campaign", str | None, "optional", None),
            Arg("author", str | None, "your name (stdio only; over HTTP the token's name)", None),
        ),
        lambda api, c, project, model, campaign, author: api.start_attempt(
            c, project, model=model, campaign=campaign, author=author
        ),
        group="attempts",
        title="Start an attempt",
        idempotent=False,
    ),
    ToolSpec(
        "end_attempt",
        "write",
        "End your attempt with an outcome (and a summary note). Its notes are frozen from then on.",
        (
            Arg("id", str, "the attempt's id (att_...)"),
            Arg("outcome", str, "succeeded, failed, abandoned, or another short word"),
            Arg("summary", str | None, "what the run found, kept as its summary note", None),
        ),
        lambda api, c, id, outcome, summary: api.end_attempt(c, id, outcome=outcome, summary=summary),
        group="attempts",
        title="End an attempt",
        idempotent=False,
        renamed=(("attempt_id", "id"),),
    ),
    ToolSpec(
        "report",
        "read",
        "A progress report in Markdown from the notes written in a window of time: what was done, the "
        "open blockers and actions, decisions, what was tried and ruled out, what later notes superseded, each "
        "line citing its note. "
        f"since and until: {DATE_FORMS}; a relative since counts back from until.",
        (
            Arg("project", str | None, "a project's name (default: every project you may see)", None),
            Arg("since", str, None, "7d"),
            Arg("until", str | None, "default now", None),
            Arg("tz", str | None, "time zone of the dates (Europe/Berlin, +02:00)", None),
        ),
        _report,
        group="attempts",
        title="Progress report",
        idempotent=True,
    ),
    ToolSpec(
        "stale",
        "read",
        "Open blockers and actions left hanging: not updated for older_than and no later note builds on or "
        "supersedes them. Settle one by writing a note with builds_on or supersedes naming it.",
        (
            Arg("older_than", str, f"not updated since: {DATE_FORMS}", STALE_AGE),
            Arg("project", str | None, "only this project's", None),
            limit(20),
        ),
        lambda api, c, older_than, project, limit: api.stale(c, older_than=older_than, project=project, limit=limit),
        group="catalog",
        title="Stale work",
        idempotent=True,
    ),
)
