"""Semantic search: passages of each note embedded off the write path, searched exactly.

What is embedded: the title with the opening of the body (its first 1,500 characters,
without the header), and for a longer note further overlapping passages, so that a
fact deep inside it is found too; a note comes back once, with its best passage as
the snippet. Vectors are float32 BLOBs in the index's own SQLite, searched with numpy
over one in-memory matrix that is reloaded when the vectors change.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidQueryError
from ..model.cjk import unsegment
from ..model.header import parse_note
from ..model.note import Card
from ..storage.index import Index
from .embedders import Embedder, numpy
from .filters import Filters
from .keyword import card_from_row, card_rows, check_limit

if TYPE_CHECKING:
    import numpy as np

__all__ = ["VectorMatrix", "embed_pending", "passages", "pending_count", "semantic_search"]

OPENING = 1500  # characters of the body embedded with the title
PASSAGE = 1000  # characters in each further passage of a long note
OVERLAP = 200
MAX_PASSAGES = 24
SIDECAR_MIN = 5000  # passages from which a full load leaves a file to map next time
_BATCH = 64
_SNIPPET = 240
_PARAGRAPH = re.compile(r"(?:[^\n]|\n(?![ \t]*\n))+")


def passages(title: str, body: str) -> list[tuple[int, int, str]]:
    """(start, stop, text) of what to embed: the title with the body's opening, then the
    rest by paragraphs (packed up to PASSAGE characters; a longer one in overlapping
    windows), so that a short finding after a long log is a passage of its own. start
    and stop index the body."""
    body = body.strip("\n")
    out = [(0, min(len(body), OPENING), f"{title}\n{body[:OPENING]}")]
    pieces: list[tuple[int, int]] = []
    for m in _PARAGRAPH.finditer(body):
        start, stop = max(m.start(), OPENING - OVERLAP), m.end()
        if stop <= OPENING:
            continue
        while stop - start > PASSAGE:
            pieces.append((start, start + PASSAGE))
            start += PASSAGE - OVERLAP
        pieces.append((start, stop))
    for start, stop in pieces:
        if len(out) > 1 and stop - out[-1][0] <= PASSAGE and out[-1][1] - out[-1][0] < PASSAGE - OVERLAP:
            start = out[-1][0]
            out.pop()
        out.append((start, stop, body[start:stop]))
        if len(out) >= MAX_PASSAGES:
            break
    return out


def pending_count(index: Index, model_id: str) -> int:
    """Notes waiting to be embedded, plus notes with vectors of another model."""
    (queued,) = index.conn.execute("SELECT count(*) FROM embed_queue").fetchone()
    (other,) = index.conn.execute(
        "SELECT count(DISTINCT note_id) FROM note_vectors WHERE model != ? AND note_id NOT IN"
        " (SELECT note_id FROM embed_queue)",
        (model_id,),
    ).fetchone()
    return queued + other


def embed_pending(
    index: Index,
    embedder: Embedder,
    read_text: Callable[[str], str | None],
    *,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed queued notes (and notes embedded by another model); returns how many.

    Each note's vectors replace the old ones in one transaction, so a crash leaves the
    old vectors or the new, and the note stays queued until its new ones are in.
    """
    np = numpy()
    with index.write():
        # Vectors of another model are never mixed with this one's: their notes are queued again.
        index.conn.execute(
            "INSERT OR IGNORE INTO embed_queue(note_id, queued_at)"
            " SELECT DISTINCT note_id, '' FROM note_vectors WHERE model != ?",
            (embedder.model_id,),
        )
    queued = dict(index.conn.execute("SELECT note_id, queued_at FROM embed_queue ORDER BY queued_at, note_id"))
    todo = list(queued)
    if limit is not None:
        todo = todo[:limit]
    done = 0
    for at in range(0, len(todo), _BATCH):
        group = todo[at : at + _BATCH]
        work: list[tuple[str, str, list[tuple[int, int, str]]]] = []
        for nid in group:
            row = index.conn.execute("SELECT sha256, title FROM note_index WHERE id = ?", (nid,)).fetchone()
            have = index.conn.execute(
                "SELECT sha256, model FROM note_vectors WHERE note_id = ? AND chunk = 0", (nid,)
            ).fetchone()
            if row is None or (have is not None and have == (row[0], embedder.model_id)):
                work.append((nid, "", []))  # gone, or already embedded from this very text
                continue
            text = read_text(nid)
            if text is None:
                work.append((nid, "", []))
                continue
            work.append((nid, row[0], passages(row[1], parse_note(text).body)))
        texts = [p[2] for _nid, _sha, parts in work for p in parts]
        vectors = embedder.embed_documents(texts) if texts else np.zeros((0, embedder.dim), np.float32)
        with index.write():
            position = 0
            written = False
            for nid, sha, parts in work:
                current = index.conn.execute("SELECT sha256 FROM note_index WHERE id = ?", (nid,)).fetchone()
                if parts and (current is None or current[0] != sha):
                    position += len(parts)
                    continue  # changed while embedding: it was queued again, its turn comes
                if parts:
                    written = True
                    index.conn.execute("DELETE FROM note_vectors WHERE note_id = ?", (nid,))
                    index.conn.executemany(
                        "INSERT INTO note_vectors(note_id, chunk, model, dim, sha256, start, stop, vector)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [
                            (nid, k, embedder.model_id, embedder.dim, sha, a, b, vectors[position + k].tobytes())
                            for k, (a, b, _t) in enumerate(parts)
                        ],
                    )
                    position += len(parts)
                # Only the queue entry that was read: an edit meanwhile queued the note again.
                index.conn.execute(
                    "DELETE FROM embed_queue WHERE note_id = ? AND queued_at = ?", (nid, queued.get(nid, ""))
                )
            if written:
                index.bump_vectors()
        done += len(group)
        if progress is not None:
            progress(done, len(todo))
    return done


class VectorMatrix:
    """Every passage vector of one model in one float32 matrix, reloaded when they change."""

    def __init__(self) -> None:
        self.generation: str | None = None
        self.model: str | None = None
        self.notes: list[str] = []
        self.spans: list[tuple[int, int]] = []
        self.matrix: np.ndarray | None = None
        self._lock = threading.Lock()

    def current(self, index: Index, embedder: Embedder) -> VectorMatrix:
        with self._lock:
            # One read snapshot: the generation and the rows it labels go together.
            opened = not index.conn.in_transaction
            if opened:
                index.conn.execute("BEGIN")
            try:
                generation = index.get_state("vectors_generation", "0")
                if generation != self.generation or embedder.model_id != self.model:
                    self._load(index, embedder, generation)
                    self.generation, self.model = generation, embedder.model_id
            finally:
                if opened:
                    index.conn.execute("COMMIT")
        return self

    def _load(self, index: Index, embedder: Embedder, generation: str | None) -> None:
        if self._load_sidecar(index, embedder, generation):
            return
        np = numpy()
        key = (embedder.model_id, embedder.dim)
        (count,) = index.conn.execute("SELECT count(*) FROM note_vectors WHERE model = ? AND dim = ?", key).fetchone()
        matrix = np.empty((count, embedder.dim), dtype=np.float32)
        notes: list[str] = []
        spans: list[tuple[int, int]] = []
        # Row by row into the one matrix: the blobs are never all held at once beside it.
        cursor = index.conn.execute(
            "SELECT note_id, start, stop, vector FROM note_vectors WHERE model = ? AND dim = ? ORDER BY note_id, chunk",
            key,
        )
        for i, (nid, start, stop, blob) in enumerate(cursor):
            if i >= count:
                break  # written meanwhile: the next generation picks it up
            matrix[i] = np.frombuffer(blob, dtype=np.float32)
            notes.append(nid)
            spans.append((start, stop))
        self.notes, self.spans, self.matrix = notes, spans, matrix[: len(notes)]
        if len(notes) >= SIDECAR_MIN:
            self._save_sidecar(index, embedder, generation)

    @staticmethod
    def _sidecar(index: Index, embedder: Embedder) -> tuple[str, Path]:
        """The files' common name for this model, and the meta file (which names the data file)."""
        name = "vectors-" + hashlib.sha1(f"{embedder.model_id}/{embedder.dim}".encode()).hexdigest()[:12]
        return name, index.dir / f"{name}.json"

    def _load_sidecar(self, index: Index, embedder: Embedder, generation: str | None) -> bool:
        """The matrix from the file the last full load left, if it is of this generation:
        a one-shot process then maps it instead of reading every vector from SQLite."""
        _name, meta_path = self._sidecar(index, embedder)
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if meta.get("generation") != generation or meta.get("dim") != embedder.dim:
                return False
            data = index.dir / str(meta["data"])
            np = numpy()
            if data.stat().st_size != len(meta["notes"]) * embedder.dim * 4 or not meta["notes"]:
                return False
            matrix = np.memmap(data, dtype=np.float32, mode="r", shape=(len(meta["notes"]), embedder.dim))
        except (OSError, ValueError, KeyError, TypeError):
            return False
        self.notes, self.spans, self.matrix = meta["notes"], [tuple(s) for s in meta["spans"]], matrix
        return True

    def _save_sidecar(self, index: Index, embedder: Embedder, generation: str | None) -> None:
        name, meta_path = self._sidecar(index, embedder)
        # The data file is named after its generation, so a meta file can never be paired
        # with another generation's data.
        data = index.dir / f"{name}-{generation}.f32"
        try:
            assert self.matrix is not None
            tmp = data.with_suffix(f".{os.getpid()}.tmp")
            self.matrix.tofile(tmp)
            os.replace(tmp, data)
            meta = {
                "generation": generation,
                "dim": embedder.dim,
                "data": data.name,
                "notes": self.notes,
                "spans": self.spans,
            }
            tmp = meta_path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(meta), encoding="utf-8")
            os.replace(tmp, meta_path)  # written last: a sidecar without it is never read
            for old in index.dir.glob(f"{name}-*.f32"):
                if old != data:
                    old.unlink()  # a process that maps it keeps its pages until it lets go
        except OSError:
            pass  # a cache: without it the next process reads SQLite again


def _allowed(index: Index, filters: Filters) -> set[str] | None:
    """The notes the filters and scope let through (None: every note)."""
    where, params = filters.sql()
    if not where:
        return None
    return {nid for (nid,) in index.conn.execute(f"SELECT n.id FROM note_index n WHERE {where}", params)}


def semantic_search(
    index: Index,
    embedder: Embedder,
    vectors: VectorMatrix,
    query: str,
    *,
    limit: int = 10,
    filters: Filters | None = None,
) -> list[Card]:
    """The *limit* notes whose passages are nearest *query* in meaning, as cards whose
    snippet is the best passage and whose score is its cosine similarity."""
    check_limit(limit)
    if not isinstance(query, str) or not query.strip():
        raise InvalidQueryError("query is empty: give search words")
    np = numpy()
    wanted = embedder.embed_query(query)  # first: a remote model tells its dimension with its first answer
    found = vectors.current(index, embedder)
    if found.matrix is None or not len(found.notes):
        return []
    scores = found.matrix @ wanted
    allowed = _allowed(index, filters or Filters())
    best: dict[str, tuple[float, int]] = {}
    # The best few hundred passages usually hold the best notes; rank them all only when
    # filters (or many passages per note) leave too few.
    want = min(len(scores), max(256, 32 * limit))
    for pool in ((np.argpartition(-scores, want - 1)[:want] if want < len(scores) else None), None):
        order = np.argsort(-scores) if pool is None else pool[np.argsort(-scores[pool])]
        best.clear()
        for i in order:
            nid = found.notes[i]
            if nid in best or (allowed is not None and nid not in allowed):
                continue
            best[nid] = (float(scores[i]), int(i))
            if len(best) >= limit:
                break
        if len(best) >= limit or pool is None:
            break
    if not best:
        return []
    ids = list(best)
    rows = card_rows(index, "id", ids, "text")
    cards = []
    for nid in ids:
        row = rows.get(nid)
        if row is None:
            continue
        score, i = best[nid]
        start, stop = found.spans[i]
        body = parse_note(row[16]).body.strip("\n")
        passage = " ".join(unsegment(body[start:stop]).split())
        snippet = passage[:_SNIPPET] + ("…" if len(passage) > _SNIPPET else "")
        if start > 0:
            snippet = "…" + snippet
        cards.append(replace(card_from_row(row, snippet, round(score, 6)), mode="semantic"))
    return cards
