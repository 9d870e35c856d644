"""The hello-agents NoteTool interface, on a notewell store.

``NoteTool(workspace="./notes").run({"action": ...})`` takes the parameter names the
chapter documents and returns its documented shapes (data, not formatted strings).
What it does better: ranked search, ids that never collide, atomic writes, and an
index that cannot drift from the files. A workspace the original tool wrote
(``note_*.md`` files with id/title/type/tags/created_at/updated_at headers, tags as
JSON arrays) opens as it is: its ids, types, tags and times are kept.

The notes it writes are in the chapter's format too (``<id>.md``, a header of id, title,
type, tags, created_at and updated_at that PyYAML and the original's own reader both
read), and it keeps the workspace's ``notes_index.json`` current in the original
package's format, so the original NoteTool (hello-agents) can share the workspace.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from ...errors import InvalidQueryError, NotewellError
from ...model.header import header_layout, parse_note
from ...model.header_edit import with_line
from ...model.ids import is_note_id, new_note_id
from ...model.note import Note
from ...services.opening import Store

__all__ = ["NoteTool"]

_ACTIONS = ("create", "read", "update", "delete", "list", "search", "summary")
_FOREIGN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")
_EXTRA_FIELD = re.compile(r"(id|created_at|updated_at)\s*:\s*(.*?)\s*")
INDEX_FILE = "notes_index.json"
# A value YAML reads as the same string without quotes (and the original tool, which does not
# unquote, reads as written): it opens with a letter, every character is printable, it holds no
# ": " or " #" and no YAML indicator that matters, and it is no word YAML reads as something else.
_YAML_WORDS = frozenset("true false yes no on off y n null ~".split())
_NOT_PLAIN = re.compile(r": | #|[:\s]$|[\[\]{}\"'`|>*&!%@]")
TITLE_MAX = 200  # what notewell's header keeps as a title (LIMITS["title"])


def chapter_value(value: str) -> str:
    """*value* as a header value the chapter's PyYAML reader, the original tool and notewell's
    parser all read back as *value*: bare when it can be, else JSON-quoted (a YAML string)."""
    bare = (
        value[:1].isalpha()
        and value.isprintable()
        and _NOT_PLAIN.search(value) is None
        and value.casefold() not in _YAML_WORDS
    )
    if bare:
        return value
    # JSON's quoting is a YAML double-quoted string; YAML's reader refuses DEL, NEL and the line
    # separators JSON leaves raw, so every unprintable character is escaped.
    return "".join(ch if ch.isprintable() else json.dumps(ch)[1:-1] for ch in json.dumps(value, ensure_ascii=False))


def chapter_text(nid: str, title: str, note_type: str, tags: list[str], created: str, updated: str, body: str) -> str:
    """A note as the original tool writes one: the chapter's header fields in its order, then
    ``# title`` above the content (which the original's reader, and this one, take off again:
    so a content that opens with the same heading keeps it)."""
    return (
        f"---\nid: {nid}\ntitle: {chapter_value(title)}\ntype: {chapter_value(note_type)}\n"
        f"tags: {json.dumps(tags, ensure_ascii=False)}\ncreated_at: {created}\nupdated_at: {updated}\n---\n\n"
        f"# {title}\n\n{body}"
    )


def _extra_fields(note: Note) -> dict[str, str]:
    """id, created_at and updated_at as the original tool wrote them into the header."""
    out: dict[str, str] = {}
    for line in note.extra:
        m = _EXTRA_FIELD.fullmatch(line)
        if m and m.group(1) not in out:
            out[m.group(1)] = m.group(2).strip("\"'")
    return out


def _content(note: Note) -> str:
    """The content: for a file the original tool wrote, the body without the ``# title``
    line it put above the content; otherwise the body as written."""
    if "id" not in _extra_fields(note):
        return note.body
    body = note.body.lstrip("\r\n")
    first, _, rest = body.partition("\n")
    # The original writes back the title as it read it: quoted, if notewell quoted it.
    if first.rstrip("\r") in (f"# {note.title}", f"# {json.dumps(note.title, ensure_ascii=False)}"):
        body = rest.lstrip("\r\n")
    return body.rstrip("\r\n")


class NoteTool:
    """hello-agents' NoteTool (create, read, update, delete, list, search, summary) on notewell."""

    name = "note"
    description = "Structured notes for agents: create, read, update, delete, list, search, summary."

    def __init__(
        self,
        workspace: str = "./notes",
        auto_backup: bool = True,
        max_notes: int = 1000,
        expandable: bool = False,
    ) -> None:
        self.workspace = Path(workspace)
        self._given = str(workspace)  # file_path as the chapter prints it: ./notes/<id>.md
        self.max_notes = max_notes
        self.store = Store(workspace)  # a folder: the tool writes files there
        self._entries: dict[str, tuple[str, dict[str, Any] | None]] = {}  # id -> (updated_at, entry)
        self.sync_index()

    def close(self) -> None:
        self.store.close()

    def run(self, parameters: dict[str, Any]) -> Any:
        """Do one action; bad input or an unknown note raises ValueError with a clear message."""
        if not isinstance(parameters, dict):
            raise ValueError("NoteTool.run takes a dict of parameters with an 'action'")
        action = parameters.get("action")
        if action not in _ACTIONS:
            raise ValueError(f"unsupported action {action!r}; use one of: {', '.join(_ACTIONS)}")
        try:
            return getattr(self, f"_{action}")(parameters)
        except NotewellError as exc:
            raise ValueError(f"{exc.code}: {exc.message}") from exc
        finally:
            # After every call, written or not: the original tool rewrites the whole file from
            # what it loaded, so a note added here meanwhile comes back at the next call.
            self.sync_index()

    # -- the original's notes_index.json ----------------------------------------

    def index_entries(self) -> list[dict[str, Any]]:
        """The workspace's notes the original tool can read (a header with its id, title,
        type, created_at and updated_at, in ``<id>.md``), oldest first, as its index lists them."""
        cards: list[Any] = []
        while batch := self.store.list_notes(limit=1000, offset=len(cards)):
            cards += batch
        seen: dict[str, tuple[str, dict[str, Any] | None]] = {}
        for card in cards:
            kept = self._entries.get(card.id)
            if kept is None or kept[0] != card.updated_at:
                kept = (card.updated_at, self._index_entry(self.store.get_note(card.id)))
            seen[card.id] = kept
        self._entries = seen
        entries = [entry for _, entry in seen.values() if entry is not None]
        return sorted(entries, key=lambda e: (e["created_at"], e["id"]))

    def _index_entry(self, note: Note) -> dict[str, Any] | None:
        own = _extra_fields(note)
        stem = note.path.rsplit("/", 1)[-1].removesuffix(".md")
        if own.get("id") != stem or "/" in note.path or not {"created_at", "updated_at"} <= own.keys():
            return None  # the original reads <id>.md in the workspace itself and needs these fields
        meta = self._metadata(note)
        entry = {k: meta[k] for k in ("id", "title", "type", "tags", "created_at")}
        return {**entry, "updated_at": meta["updated_at"], "file_path": self._file_path(note)}

    def sync_index(self) -> None:
        """Write ``notes_index.json`` in the original package's format if it differs from the
        notes (atomically: a reader sees the old file or the new one)."""
        path = self.workspace / INDEX_FILE
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = {}
        notes = self.index_entries()
        meta = old.get("metadata") if isinstance(old, dict) else None
        created = meta.get("created_at") if isinstance(meta, dict) else None
        new = {
            "notes": notes,
            "metadata": {"created_at": created or datetime.now().isoformat(), "total_notes": len(notes)},
        }
        if new == old:
            return
        for left in self.workspace.glob(".notes_index.*.tmp"):  # a write a crash cut short
            left.unlink(missing_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".notes_index.", suffix=".tmp", dir=self.workspace)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(new, fh, ensure_ascii=False, indent=2)
                fh.flush()
                os.fsync(fh.fileno())  # the new file whole on disk before it takes the name
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def _file_path(self, note: Note) -> str:
        return os.path.join(self._given, note.path)

    # -- ids ------------------------------------------------------------------

    def _note_id(self, params: dict[str, Any]) -> str:
        ref = params.get("note_id")
        if not isinstance(ref, str) or not ref.strip():
            raise ValueError("note_id is required")
        ref = ref.strip()
        if is_note_id(ref):
            return ref
        if _FOREIGN_ID.fullmatch(ref) is None or ".." in ref:
            raise ValueError(f"not a note id: {ref!r}")
        try:
            return self.store.resolve(f"{ref}.md")  # a note the original tool wrote: its file is <id>.md
        except NotewellError:
            raise ValueError(f"note not found: {ref}") from None

    def _get(self, params: dict[str, Any]) -> Note:
        nid = self._note_id(params)
        try:
            return self.store.get_note(nid)
        except NotewellError:
            raise ValueError(f"note not found: {params.get('note_id')}") from None

    def _metadata(self, note: Note) -> dict[str, Any]:
        own = _extra_fields(note)
        stem = note.path.rsplit("/", 1)[-1].removesuffix(".md")
        tags = list(note.tags)
        if "id" in own:
            # The original kept tags as written ("C++", "a b"); notewell indexes their slugs.
            layout = header_layout(note.text)
            entry = layout.first("tags") if layout is not None else None
            if entry is not None and entry.values:
                tags = list(dict.fromkeys(v.value for v in entry.values))
        return {
            "id": own.get("id") or (note.id if is_note_id(stem) else stem),
            "title": note.title,
            "type": note.kind or "general",
            "tags": tags,
            "created_at": own.get("created_at") or note.created_at,
            "updated_at": own.get("updated_at") or note.updated_at,
        }

    @staticmethod
    def _limit(params: dict[str, Any], default: int = 10) -> int:
        limit = params.get("limit", default)
        if isinstance(limit, str) and limit.strip().isdigit():
            limit = int(limit)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a positive whole number, got {limit!r}")
        return min(limit, 1000)

    @staticmethod
    def _tags(value: Any) -> list[str]:
        if isinstance(value, str):
            return [t.strip() for t in value.split(",") if t.strip()]
        if isinstance(value, list | tuple):
            return [str(t) for t in value if str(t).strip()]
        return []

    # -- actions --------------------------------------------------------------

    def _create(self, params: dict[str, Any]) -> str:
        title, content = params.get("title"), params.get("content")
        if not isinstance(title, str) or not title.strip() or not isinstance(content, str) or not content.strip():
            raise ValueError("create needs a title and content")
        if self.store.summary(recent=1)["total_notes"] >= self.max_notes:
            raise ValueError(f"the workspace holds its maximum of {self.max_notes} notes")
        note_type = str(params.get("note_type") or "general")
        if any(ch in title + note_type for ch in "\r\n"):
            raise ValueError("a title and a note_type are one line of text each")
        if len(title.strip()) > TITLE_MAX:
            raise ValueError(f"a title is at most {TITLE_MAX} characters, got {len(title.strip())}")
        nid, now = new_note_id(), datetime.now().isoformat()
        text = chapter_text(nid, title.strip(), note_type, self._tags(params.get("tags")), now, now, content)
        return self.store.add_note(text, note_id=nid).id

    def _read(self, params: dict[str, Any]) -> dict[str, Any]:
        note = self._get(params)
        return {"metadata": self._metadata(note), "content": _content(note)}

    def _update(self, params: dict[str, Any]) -> str:
        """Change the given fields, as the chapter does: an empty title or type is left alone;
        ``tags=[]`` clears the tags and ``content=""`` empties the content (given is given)."""
        note = self._get(params)
        text = note.text
        title, content, note_type, tags = (params.get(k) for k in ("title", "content", "note_type", "tags"))
        if title:
            if not isinstance(title, str) or "\n" in title or "\r" in title:
                raise ValueError("a title must be one line of text")
            if len(title) > TITLE_MAX:
                raise ValueError(f"a title is at most {TITLE_MAX} characters, got {len(title)}")
            text = with_line(text, "title", f"title: {chapter_value(title)}")
        if note_type:
            layout = header_layout(text)
            key = "type" if layout is not None and layout.first("type") is not None else "kind"
            text = with_line(text, key, f"{key}: {chapter_value(str(note_type))}")
        if tags is not None:
            text = with_line(text, "tags", f"tags: {json.dumps(self._tags(tags), ensure_ascii=False)}")
        old_content = _content(note)
        # A file the original tool wrote has a "# title" line above the content: keep that layout.
        headed = "id" in _extra_fields(note) and old_content != note.body.strip("\r\n")
        if content is not None or (title and headed):
            if content is not None and not isinstance(content, str):
                raise ValueError("content must be text")
            body = content if content is not None else old_content
            if headed:
                body = f"\n# {title or note.title}\n\n{body}\n"
            parsed = parse_note(text)
            text = text[: len(text) - len(parsed.body)] + body
        if "updated_at" in _extra_fields(note):
            text = with_line(text, "updated_at", f"updated_at: {datetime.now().isoformat()}")
        if text != note.text:
            note = self.store.edit_note(note.id, text)
        return f"✅ 笔记已更新: {note.title}"

    def _delete(self, params: dict[str, Any]) -> str:
        note = self._get(params)
        self.store.delete_note(note.id)
        return f"✅ 笔记已删除: {note.title}"

    def _entry(self, note: Note) -> dict[str, Any]:
        meta = self._metadata(note)
        return {**meta, "note_id": meta["id"], "content": _content(note)}

    def _filters(self, params: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if params.get("note_type"):
            out["kind"] = str(params["note_type"])
        tags = self._tags(params.get("tags"))
        if tags:
            out["tags"] = tags
        return out

    def _list(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        cards = self.store.list_notes(limit=self._limit(params, 20), **self._filters(params))
        out = []
        for card in cards:
            note = self.store.get_note(card.id)
            out.append({**self._entry(note), "file_path": self._file_path(note)})
        return out

    def _search(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        query = params.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ValueError("search needs a query")
        try:
            cards = self.store.search_notes(query, limit=self._limit(params), **self._filters(params))
        except InvalidQueryError:
            return []  # nothing to search for in it ("!!!"): nothing found, as the original answers
        out = []
        for card in cards:
            entry = self._entry(self.store.get_note(card.id))
            out.append({k: entry[k] for k in ("note_id", "title", "type", "tags", "content", "updated_at")})
        return out

    def _summary(self, params: dict[str, Any]) -> dict[str, Any]:
        info = self.store.summary(recent=5)
        distribution: dict[str, int] = {}
        for row in info["by_kind"]:
            key = row["kind"] or "general"
            distribution[key] = distribution.get(key, 0) + row["count"]
        recent = [self._metadata(self.store.get_note(c["id"])) for c in info["recent_notes"]]
        return {"total_notes": info["total_notes"], "type_distribution": distribution, "recent_notes": recent}

    def __repr__(self) -> str:
        return f"NoteTool(workspace={json.dumps(str(self.workspace))})"
