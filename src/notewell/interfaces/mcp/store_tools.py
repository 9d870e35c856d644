"""The store's MCP tools (notes, tags, projects, attempts), in the order they are served.

Each calls :class:`~notewell.services.server_api.ServerAPI`, so its arguments and results are
those of the Python and HTTP APIs. A description's lines after the first keep the eight
spaces of indent they had as docstrings: agents have always been sent them so.
"""

from __future__ import annotations

from typing import Any, Literal

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


STORE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "search_notes",
        "read",
        """Find notes: short cards (title, kind, tags, snippet, score, the mode that found each), not bodies.

        Use keyword for exact words, identifiers and error messages; semantic when you know what you mean
        but not the words; both to get the exact list and the semantic list side by side in one call.
        Scope with project, campaign or attempt_id (omit all three: all public work). Read a card's note
        with get_note. A card with matched_revision was found only in that older revision of the note
        (it comes after every current match): read it with get_note(id, revision=...).""",
        (
            Arg("query", str, "search words; empty with a project or attempt_id: its recent notes"),
            Arg(
                "mode",
                Literal["keyword", "semantic", "both", "hybrid"],
                "keyword (exact), semantic (meaning), both (two lists), hybrid",
                "keyword",
            ),
            limit(10),
            Arg("wait", bool, "embed notes not embedded yet before a semantic search", False),
            *FILTER_ARGS,
        ),
        lambda api, c, query, mode, limit, wait, **filters: api.search_notes(
            c, query, mode=mode, limit=limit, wait=wait, **filters
        ),
        needs_model=lambda arguments: arguments["mode"] != "keyword",
    ),
    ToolSpec(
        "get_note",
        "read",
        """Read one note whole: its text as written (header included), its title, kind, tags and other
        fields, extra header lines, the attempt it was written on, and the notes that build on it
        (backlinks). Fields with no value are left out.""",
        (
            NOTE_ID,
            Arg("working_attempt_id", str | None, "your running attempt: the read is recorded on it", None),
            Arg("revision", int | None, "an earlier revision's number", None, ge=1),
        ),
        lambda api, c, id, working_attempt_id, revision: note_read(
            api.get_note(c, id, working_attempt_id=working_attempt_id, revision=revision)
        ),
    ),
    ToolSpec(
        "add_note",
        "write",
        """Write one finding as a note. Write at the moments that matter: an approach chosen and why, a
        blocker, a surprise, a change of plan, the end of a phase. Open with a header such as
        '---\\ntitle: ...\\nkind: finding\\ntags: [a, b]\\nbuilds_on: [nte_...]\\n---'. Say what was done
        elsewhere (sources read, scripts run, where their output is) so the next agent can find it.
        Answers with the note's id, title and revision (full: the whole note), and `similar`: existing
        notes that say much the same (by words or meaning, similarity 0-1). Look at them: if one holds this
        finding already, update it with edit_note (and delete the new one) rather than keep two.""",
        (
            Arg("text", str, "Markdown, optionally opening with a --- header ---"),
            Arg("attempt_id", str | None, "your running attempt, to write the note on it", None),
            Arg("model", str | None, "the model writing it", None),
            FULL,
        ),
        lambda api, c, text, attempt_id, model, full: _written(
            api.add_note(c, text, attempt_id=attempt_id, model=model), full
        ),
    ),
    ToolSpec(
        "edit_note",
        "change",
        """Replace a note's text (the previous text stays as an earlier revision). Only while its attempt
        runs, and only the attempt's author (or the store's owner). Answers with id, title and revision.""",
        (
            NOTE_ID,
            Arg("text", str, "the new whole text (with keep_header: the new body)"),
            Arg("keep_header", bool, "keep the header as it is; text is the body", False),
            Arg(
                "base_revision", int | None, "the revision you read: refused (conflict) if it changed since", None, ge=1
            ),
            FULL,
        ),
        lambda api, c, id, text, keep_header, base_revision, full: _written(
            api.edit_note(c, id, text, keep_header=keep_header, base_revision=base_revision), full
        ),
    ),
    ToolSpec(
        "delete_note",
        "change",
        """Delete a note (its last text stays in the history). Prefer editing or superseding a note.""",
        (NOTE_ID,),
        lambda api, c, id: api.delete_note(c, id),
    ),
    ToolSpec(
        "list_notes",
        "read",
        """Notes as cards, most recently updated first (for browsing; use search_notes to find).""",
        (limit(20), Arg("offset", int, default=0, ge=0), *FILTER_ARGS),
        lambda api, c, limit, offset, **filters: api.list_notes(c, limit=limit, offset=offset, **filters),
    ),
    ToolSpec(
        "notes_summary",
        "read",
        """How many notes of each kind, and the most recent ones.""",
        (),
        _summary,
    ),
    ToolSpec(
        "brief",
        "read",
        """The one thing to read first on a project: its newest digest, the recent notes, and the notes
        the digest does not cover yet.""",
        (Arg("project", str, "a project's name"),),
        lambda api, c, project: api.brief(c, project),
    ),
    ToolSpec(
        "links",
        "read",
        """What a note builds on and what builds on it, depth steps out.""",
        (NOTE_ID, Arg("depth", int, "steps out", 1, ge=1, le=10)),
        lambda api, c, id, depth: api.links(c, id, depth=depth),
    ),
    ToolSpec(
        "add_tag",
        "write",
        """Add tags to a note's header; every other line of the note stays as it is. Answers with the
        note's id, title, revision and tags.""",
        (NOTE_ID, Arg("tags", list[str], "tags to add", min_length=1), FULL),
        lambda api, c, id, tags, full: _written(api.add_tag(c, id, tags), full),
    ),
    ToolSpec(
        "list_tags",
        "read",
        """Every tag in use with its number of notes, most used first.""",
        (),
        lambda api, c: api.list_tags(c),
    ),
    ToolSpec(
        "start_attempt",
        "write",
        """Start a run of work on a project. Write your notes with its id (attempt_id) and end it with
        end_attempt; its notes can change until then.""",
        (
            Arg("project", str, "the project you work on (a short name; yourname:project in your own namespace)"),
            Arg("model", str | None, "the model doing the work", None),
            Arg("campaign", str | None, "optional", None),
            Arg("author", str | None, "your name (stdio only; over HTTP the token's name)", None),
        ),
        lambda api, c, project, model, campaign, author: api.start_attempt(
            c, project, model=model, campaign=campaign, author=author
        ),
    ),
    ToolSpec(
        "end_attempt",
        "write",
        """End your attempt with an outcome (and a summary note). Its notes are frozen from then on.""",
        (
            Arg("attempt_id", str, "your running attempt"),
            Arg("outcome", str, "succeeded, failed, abandoned, or another short word"),
            Arg("summary", str | None, "what the run found, kept as its summary note", None),
        ),
        lambda api, c, attempt_id, outcome, summary: api.end_attempt(c, attempt_id, outcome=outcome, summary=summary),
    ),
)
