"""Semantic search: passages of each note embedded off the write path, searched exactly.

What is embedded: the title with the opening of the body (its first 1,500 characters,
without the header), and for a longer note further overlapping passages, so that a
fact deep inside it is found too; a note comes back once, with its best passage as
the snippet. Vectors are float32 BLOBs in the index's own SQLite, searched with numpy
over one in-memory matrix that applies the logged changes since it was last used.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import re
import secrets
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidQueryError
from ..model.cjk import unsegment
from ..model.header import parse_note
from ..model.note import Card
from ..storage.index import Index
from .ann import AnnIndex, ann_available
from .embedders import Embedder, numpy
from .filters import Filters
from .keyword import card_from_row, card_rows, keyword_ids
from .request import check_limit

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "FEEDBACK_NOTES",
    "FEEDBACK_WEIGHT",
    "VectorMatrix",
    "above_floor",
    "best_notes",
    "feedback_limit",
    "feedback_notes",
    "passage_snippet",
    "passages",
    "query_vector",
    "respan",
    "rows_by_note",
    "semantic_search",
    "similarity_floor",
    "stacked",
    "with_feedback",
]

OPENING = 1500  # characters of the body embedded with the title
PASSAGE = 1000  # characters in each further passage of a long note
OVERLAP = 200
MAX_PASSAGES = 24
SIDECAR_MIN = 5000  # passages from which a full load leaves a file to map next time
COMPACT_MIN = 1000  # dead rows (and at least a quarter of all) from which the matrix is compacted
RELOAD_MIN = 2000  # changed notes (and at least a quarter of the live rows) from which a full load is cheaper
# Pseudo-relevance feedback: the opening passages of the FEEDBACK_NOTES best keyword hits,
# FEEDBACK_WEIGHT of their mean added to the query vector (chosen across the evaluation sets
# and LoCoMo: README).
FEEDBACK_NOTES = 3
FEEDBACK_WEIGHT = 0.5
_ANN_BATCH = 65_536  # rows added to the approximate index at a time
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


def rows_by_note(notes: list[str | None]) -> tuple[dict[str, list[int]], int]:
    """Each note's rows in a matrix whose row i holds a passage of *notes[i]* (None: a dead
    row, left by an edit or a delete until the matrix is compacted), and the dead rows' count."""
    rows: dict[str, list[int]] = {}
    for i, nid in enumerate(notes):
        if nid is not None:
            rows.setdefault(nid, []).append(i)
    return rows, len(notes) - sum(map(len, rows.values()))


class VectorMatrix:
    """Every passage vector of one model in one float32 matrix, kept up to date incrementally.

    The index logs whose vectors changed (``vector_log``); a matrix remembers the last log
    entry it applied, and on the next search replaces only those notes' rows: their old rows
    become dead (zeroed, skipped) and their new ones are appended to spare capacity. Dead
    rows are compacted away when they reach a quarter. A full load (a new model, a rebuilt
    index, a log trimmed past this matrix, or too many changes) reads a memory-mapped sidecar
    when one of this log's epoch exists, then applies the log from there.

    Searches on several threads score against the matrix at once; a change (applying the
    log, a load, building the approximate index) waits until they are done, and searches
    that come meanwhile wait for it, since rows are changed in place.
    """

    def __init__(self, *, ann_min: int | None = None) -> None:
        self.ann_min = ann_min  # live passages from which to search an approximate index (None: never)
        self.epoch: str | None = None
        self.seq = 0  # the last vector_log entry applied
        self.model: str | None = None
        self.notes: list[str | None] = []  # None: a dead row
        self.spans: list[tuple[int, int]] = []
        self.full_loads = 0
        self._data: np.ndarray | None = None
        self._rows: dict[str, list[int]] = {}
        self._dead = 0
        self._since_sidecar = 0  # changes applied since the sidecar this matrix came from
        self._ann: AnnIndex | None = None
        self._turns = threading.Condition(threading.Lock())
        self._scoring = 0  # searches reading the matrix now
        self._changing = False  # a thread changes the matrix (no search reads it meanwhile)

    @property
    def matrix(self) -> np.ndarray | None:
        """The rows in use (a view; dead rows are zero)."""
        return None if self._data is None else self._data[: len(self.notes)]

    @property
    def live(self) -> int:
        return len(self.notes) - self._dead

    def current(self, index: Index, embedder: Embedder) -> VectorMatrix:
        """The matrix brought up to date with the index."""
        with self._changing_it():
            self._refresh(index, embedder)
        return self

    @contextmanager
    def _changing_it(self) -> Iterator[None]:
        with self._turns:
            while self._changing:
                self._turns.wait()
            self._changing = True  # from here no new search starts scoring
            while self._scoring:
                self._turns.wait()
        try:
            yield
        finally:
            with self._turns:
                self._changing = False
                self._turns.notify_all()

    @contextmanager
    def _scoring_it(self) -> Iterator[None]:
        with self._turns:
            while self._changing:
                self._turns.wait()
            self._scoring += 1
        try:
            yield
        finally:
            with self._turns:
                self._scoring -= 1
                self._turns.notify_all()

    def _up_to_date(self, index: Index, embedder: Embedder) -> bool:
        """Whether the matrix holds what the index (as this thread's read sees it) holds,
        and the approximate index is as it should be: then a search changes nothing."""
        (last,) = index.conn.execute("SELECT max(seq) FROM vector_log").fetchone()
        if (index.vectors_epoch(), embedder.model_id) != (self.epoch, self.model) or (last or 0) > self.seq:
            return False
        wanted = self.ann_min is not None and self.live >= self.ann_min
        return (self._ann is not None) == wanted or (wanted and not ann_available())

    def nearest(
        self, index: Index, embedder: Embedder, wanted: np.ndarray, limit: int, allowed: set[str] | None
    ) -> list[tuple[str, float, tuple[int, int]]]:
        """The *limit* best notes (among *allowed*): (id, best passage's cosine, its span)."""
        np = numpy()
        if not self._up_to_date(index, embedder):
            with self._changing_it():
                self._refresh(index, embedder)
                self._approximate(index, embedder)
        with self._scoring_it():
            matrix = self.matrix
            if matrix is None or not self.live:
                return []
            # Another thread may have brought the matrix past this read's snapshot: each change
            # since is a log row, so that many more notes make up for the ones the caller's
            # snapshot does not hold yet (semantic_search keeps the first *limit* it finds).
            (last,) = index.conn.execute("SELECT max(seq) FROM vector_log").fetchone()
            limit += max(0, self.seq - (last or 0))
            ann = self._ann if self.ann_min is not None and self.live >= self.ann_min else None
            want = max(256, 32 * limit)
            if ann is not None:
                # Candidates from the graph, scored exactly: the scores are exact, recall may not be.
                pool = ann.candidates(wanted, want)
                pool_scores = self._read_rows(pool) @ wanted
                scores = None
            else:
                scores = matrix @ wanted
                # The best few hundred passages usually hold the best notes.
                pool = np.argpartition(-scores, want - 1)[:want] if want < len(scores) else np.arange(len(scores))
                pool_scores = scores[pool]
            ranked = np.argsort(-pool_scores)
            best = best_notes(self.notes, pool[ranked], pool_scores[ranked], limit, allowed)
            if len(best) < limit and len(pool) < len(matrix):
                # Filters (or many passages per note) left too few: rank every passage.
                if scores is None:
                    scores = matrix @ wanted
                order = np.argsort(-scores)
                best = best_notes(self.notes, order, scores[order], limit, allowed)
            return [(nid, score, self.spans[i]) for nid, (score, i) in best.items()]

    def _read_rows(self, rows: np.ndarray) -> np.ndarray:
        """The matrix's *rows*. From a mapped sidecar they are read with pread: a mapped page
        stays in the process's resident memory (the kernel maps up to 2 MB around each row read)
        while the rows the approximate index asks for differ with every query."""
        np = numpy()
        data = self._data
        assert data is not None
        path = getattr(data, "filename", None)
        if not isinstance(data, np.memmap) or path is None:
            return data[rows]
        try:
            with open(path, "rb", buffering=0) as fh:  # ~10 µs: cheaper than keeping a descriptor's lifetime
                out = np.empty((len(rows), data.shape[1]), dtype=np.float32)
                width = out.shape[1] * 4
                for k, row in enumerate(rows.tolist()):
                    if os.preadv(fh.fileno(), [out[k]], row * width) != width:
                        return data[rows]
                return out
        except OSError:
            return data[rows]  # the file was replaced by a newer sidecar: the mapping still reads it

    def _approximate(self, index: Index, embedder: Embedder) -> AnnIndex | None:
        """The approximate index, once enabled and the matrix is large enough (built here the
        first time, then kept up to date and saved beside the sidecar)."""
        if self.ann_min is None or self.live < self.ann_min or not ann_available():
            self._ann = None
            return None
        if self._ann is None:
            np = numpy()
            assert self._data is not None
            rows = np.flatnonzero(np.fromiter((n is not None for n in self.notes), dtype=bool, count=len(self.notes)))
            ann = AnnIndex(embedder.dim)
            # A slice of rows at a time: the matrix is not copied whole beside itself.
            for at in range(0, len(rows), _ANN_BATCH):
                part = rows[at : at + _ANN_BATCH]
                ann.add(part, self._data[part])
            self._ann = ann
            self._save_sidecar(index, embedder)
            _release(self._data)
        return self._ann

    def _refresh(self, index: Index, embedder: Embedder) -> None:
        # One read snapshot: the log position and the rows it describes go together.
        opened = not index.conn.in_transaction
        if opened:
            index.conn.execute("BEGIN")
        try:
            epoch = index.vectors_epoch()
            first, last = index.conn.execute("SELECT min(seq), max(seq) FROM vector_log").fetchone()
            first, last = first or 0, last or 0
            if epoch != self.epoch or embedder.model_id != self.model:
                self._load(index, embedder, epoch, last)
            elif last > self.seq:
                if first > self.seq + 1:
                    self._load(index, embedder, epoch, last)  # the log was trimmed past us
                else:
                    changed = [
                        nid
                        for (nid,) in index.conn.execute(
                            "SELECT DISTINCT note_id FROM vector_log WHERE seq > ? AND seq <= ?", (self.seq, last)
                        )
                    ]
                    if len(changed) > max(RELOAD_MIN, self.live // 4):
                        self._load(index, embedder, epoch, last)
                    else:
                        self.seq = last  # before applying: a sidecar saved on the way is at this position
                        self._apply(index, embedder, changed)
        finally:
            if opened:
                index.conn.execute("COMMIT")

    def _load(self, index: Index, embedder: Embedder, epoch: str, last: int) -> None:
        self.full_loads += 1
        # A sidecar older than what this matrix had applied would mean replaying even more.
        floor = self.seq if (epoch, embedder.model_id) == (self.epoch, self.model) else 0
        self.epoch, self.model, self.seq = epoch, embedder.model_id, last
        self._rows, self._dead, self._since_sidecar, self._ann = {}, 0, 0, None
        behind = self._load_sidecar(index, embedder, epoch, last, floor)
        if behind is not None:
            changed = [
                nid
                for (nid,) in index.conn.execute(
                    "SELECT DISTINCT note_id FROM vector_log WHERE seq > ? AND seq <= ?", (behind, last)
                )
            ]
            self._index_rows()
            self._apply(index, embedder, changed)
            return
        np = numpy()
        key = (embedder.model_id, embedder.dim)
        (count,) = index.conn.execute("SELECT count(*) FROM note_vectors WHERE model = ? AND dim = ?", key).fetchone()
        data = np.empty((count, embedder.dim), dtype=np.float32)
        notes: list[str | None] = []
        spans: list[tuple[int, int]] = []
        # Row by row into the one matrix: the blobs are never all held at once beside it.
        cursor = index.conn.execute(
            "SELECT note_id, start, stop, vector FROM note_vectors WHERE model = ? AND dim = ? ORDER BY note_id, chunk",
            key,
        )
        for i, (nid, start, stop, blob) in enumerate(cursor):
            if i >= count:
                break
            data[i] = np.frombuffer(blob, dtype=np.float32)
            notes.append(nid)
            spans.append((start, stop))
        self.notes, self.spans, self._data = notes, spans, data
        self._index_rows()
        if len(notes) >= SIDECAR_MIN:
            self._save_sidecar(index, embedder)

    def _index_rows(self) -> None:
        self._rows, self._dead = rows_by_note(self.notes)

    def _apply(self, index: Index, embedder: Embedder, changed: list[str]) -> None:
        """Replace the rows of the *changed* notes with what the table holds now."""
        if not changed:
            return
        np = numpy()
        fresh: list[tuple[str, int, int, bytes]] = []
        for at in range(0, len(changed), 500):
            group = changed[at : at + 500]
            marks = ",".join("?" * len(group))
            fresh += index.conn.execute(
                f"SELECT note_id, start, stop, vector FROM note_vectors WHERE note_id IN ({marks})"
                " AND model = ? AND dim = ? ORDER BY note_id, chunk",
                (*group, embedder.model_id, embedder.dim),
            ).fetchall()
        data = self._writable(len(fresh), embedder.dim)
        dead: list[int] = []
        for nid in changed:
            for i in self._rows.pop(nid, ()):
                data[i] = 0.0  # a dead row scores 0 and is skipped
                self.notes[i] = None
                dead.append(i)
        self._dead += len(dead)
        first_new = len(self.notes)
        for nid, start, stop, blob in fresh:
            i = len(self.notes)
            data[i] = np.frombuffer(blob, dtype=np.float32)
            self.notes.append(nid)
            self.spans.append((start, stop))
            self._rows.setdefault(nid, []).append(i)
        if self._ann is not None:
            # Dead rows stay in the graph (their vectors are zero and searches skip them):
            # removing keys one by one from usearch wears it out until remove() never returns.
            self._ann.add(np.arange(first_new, len(self.notes)), data[first_new : len(self.notes)])
        self._since_sidecar += len(changed)
        if self._dead > max(COMPACT_MIN, len(self.notes) // 4):
            self._compact()  # renumbers the rows: an approximate index is built again when next needed
        if self._since_sidecar >= SIDECAR_MIN and self.live >= SIDECAR_MIN:
            self._save_sidecar(index, embedder)

    def _writable(self, extra: int, dim: int) -> np.ndarray:
        """The data array, in memory (not a read-only map) with room for *extra* more rows."""
        np = numpy()
        used = len(self.notes)
        data = self._data
        assert data is not None or used == 0
        if data is None or not data.flags.writeable or used + extra > len(data):
            # Room for more without keeping much spare: memory stays near the vectors' own size.
            grown = np.empty((used + extra + max(64, min(used // 16, 8192)), dim), dtype=np.float32)
            if used:
                assert data is not None
                grown[:used] = data[:used]
            self._data = data = grown
        return data

    def _compact(self) -> None:
        np = numpy()
        self._ann = None  # keyed by the old row numbers
        assert self._data is not None
        keep = [i for i, nid in enumerate(self.notes) if nid is not None]
        self._data = np.ascontiguousarray(self._data[keep]) if keep else self._data[:0].copy()
        self.notes = [self.notes[i] for i in keep]
        self.spans = [self.spans[i] for i in keep]
        self._dead = 0
        self._index_rows()

    @staticmethod
    def _sidecar(index: Index, embedder: Embedder) -> tuple[str, Path]:
        """The files' common name for this model, and the meta file (which names the data file)."""
        name = "vectors-" + hashlib.sha1(f"{embedder.model_id}/{embedder.dim}".encode()).hexdigest()[:12]
        return name, index.dir / f"{name}.json"

    def _load_sidecar(self, index: Index, embedder: Embedder, epoch: str, last: int, floor: int) -> int | None:
        """Map the matrix a full load left, if it belongs to this log and the log still
        reaches back to it; returns the log position it is at (None: not usable)."""
        _name, meta_path = self._sidecar(index, embedder)
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            seq = int(meta["seq"])
            if meta.get("epoch") != epoch or meta.get("dim") != embedder.dim or not floor <= seq <= last:
                return None
            if seq < last:
                (first,) = index.conn.execute("SELECT min(seq) FROM vector_log").fetchone()
                if first is None or first > seq + 1:
                    return None
            data = index.dir / str(meta["data"])
            np = numpy()
            if data.stat().st_size != len(meta["notes"]) * embedder.dim * 4 or not meta["notes"]:
                return None
            matrix = np.memmap(data, dtype=np.float32, mode="r", shape=(len(meta["notes"]), embedder.dim))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        self.notes, self.spans, self._data = meta["notes"], [tuple(s) for s in meta["spans"]], matrix
        if meta.get("ann") and self.ann_min is not None and ann_available():
            try:
                self._ann = AnnIndex.load(index.dir / str(meta["ann"]), embedder.dim)
            except (OSError, ValueError, RuntimeError):
                self._ann = None  # built again when a search needs it
            else:
                _advise(matrix, "MADV_RANDOM")
        return seq

    def _save_sidecar(self, index: Index, embedder: Embedder) -> None:
        if self._dead and self._ann is None:
            self._compact()
        name, meta_path = self._sidecar(index, embedder)
        # Every save writes files of its own name (epoch, position and a random part), so a
        # meta file is never paired with data another save wrote, even when two processes
        # save the same state at once.
        stem = f"{name}-{self.epoch}-{self.seq}-{secrets.token_hex(4)}"
        data = index.dir / f"{stem}.f32"
        graph = index.dir / f"{stem}.usearch"
        try:
            matrix = self.matrix
            assert matrix is not None
            tmp = index.dir / f"{stem}.f32.tmp"
            matrix.tofile(tmp)
            os.replace(tmp, data)
            if self._ann is not None:
                tmp = index.dir / f"{stem}.usearch.tmp"
                self._ann.save(tmp)
                os.replace(tmp, graph)
            meta = {
                "epoch": self.epoch,
                "seq": self.seq,
                "dim": embedder.dim,
                "data": data.name,
                "notes": self.notes,
                "spans": self.spans,
                "ann": graph.name if self._ann is not None else None,
            }
            tmp = index.dir / f"{stem}.json.tmp"
            tmp.write_text(json.dumps(meta), encoding="utf-8")
            os.replace(tmp, meta_path)  # written last: a sidecar without it is never read
            for old in index.dir.glob(f"{name}-*"):
                if old not in (data, graph) and old.suffix in (".f32", ".usearch"):
                    old.unlink(missing_ok=True)  # a process that maps it keeps its pages until it lets go
            self._since_sidecar = 0
        except OSError:
            pass  # a cache: without it the next process reads SQLite again


def query_vector(embedder: Embedder, query: str, limit: int) -> np.ndarray:
    """The checked *query*'s vector (InvalidQueryError, or 'unavailable' without numpy)."""
    check_limit(limit)
    if not isinstance(query, str) or not query.strip():
        raise InvalidQueryError("query is empty: give search words")
    numpy()  # without the extra: 'unavailable', naming it, before any work
    return embedder.embed_query(query)  # first: a remote model tells its dimension with its first answer


def passage_snippet(body: str, start: int, stop: int) -> str:
    """A semantic card's snippet: the best passage of *body*, cut to _SNIPPET characters."""
    passage = " ".join(unsegment(body.strip("\n")[start:stop]).split())
    snippet = passage[:_SNIPPET] + ("…" if len(passage) > _SNIPPET else "")
    return "…" + snippet if start > 0 else snippet


def best_notes(
    notes: list[str | None], rows: np.ndarray, scores: np.ndarray, limit: int, allowed: set[str] | None
) -> dict[str, tuple[float, int]]:
    """The first *limit* notes (allowed, live: *notes* holds each row's note id, None when
    dead) of *rows*, best first, each with its best passage's score and row."""
    best: dict[str, tuple[float, int]] = {}
    for at in range(0, len(rows), 4096):  # a slice at a time: the rest is rarely needed
        for i, score in zip(rows[at : at + 4096].tolist(), scores[at : at + 4096].tolist(), strict=True):
            nid = notes[i]
            if nid is None or nid in best or (allowed is not None and nid not in allowed):
                continue
            best[nid] = (score, i)
            if len(best) >= limit:
                return best
    return best


def _allowed(index: Index, filters: Filters) -> set[str] | None:
    """The notes the filters and scope let through (None: every note)."""
    where, params = filters.sql()
    if not where:
        return None
    return {nid for (nid,) in index.conn.execute(f"SELECT n.id FROM note_index n WHERE {where}", params)}


def with_feedback(wanted: np.ndarray, openings: np.ndarray) -> np.ndarray:
    """The query vector moved towards the opening passages of the best keyword hits
    (pseudo-relevance feedback): a paraphrase's vector alone often sits far from the note
    it means, while the note's own words, found by keyword search, sit close. Normalised."""
    np = numpy()
    if FEEDBACK_WEIGHT <= 0 or not len(openings):
        return wanted
    moved = wanted + FEEDBACK_WEIGHT * np.asarray(openings, dtype=np.float32).mean(axis=0)
    norm = float(np.linalg.norm(moved))
    return (moved / norm).astype(np.float32) if norm else wanted


def feedback_limit() -> int:
    """How many keyword hits feedback takes (0: feedback is off, no keyword pass needed)."""
    return FEEDBACK_NOTES if FEEDBACK_WEIGHT > 0 else 0


def feedback_notes(ids: Sequence[str]) -> list[str]:
    """The keyword hits (best first) whose opening passages move the query vector."""
    return list(ids)[: feedback_limit()]


def stacked(blobs: list[bytes], dim: int) -> np.ndarray:
    """float32 vectors stored as bytes, one row each."""
    np = numpy()
    return np.array([np.frombuffer(b, dtype=np.float32) for b in blobs], dtype=np.float32).reshape(-1, dim)


def similarity_floor(embedder: Embedder) -> float | None:
    """The cosine below which the embedder's results mean nothing close (None: no floor)."""
    floor = getattr(embedder, "similarity_floor", None)
    return float(floor) if isinstance(floor, int | float) else None


def _openings(index: Index, embedder: Embedder, ids: list[str]) -> np.ndarray:
    if not ids:
        return stacked([], embedder.dim)
    marks = ",".join("?" * len(ids))
    rows = index.conn.execute(
        f"SELECT vector FROM note_vectors WHERE note_id IN ({marks}) AND chunk = 0 AND model = ? AND dim = ?",
        (*ids, embedder.model_id, embedder.dim),
    )
    return stacked([b for (b,) in rows], embedder.dim)


def _passage_vectors(index: Index, embedder: Embedder, ids: list[str]) -> list[tuple[str, int, int, bytes]]:
    marks = ",".join("?" * len(ids))
    return index.conn.execute(
        f"SELECT note_id, start, stop, vector FROM note_vectors WHERE note_id IN ({marks}) AND model = ? AND dim = ?",
        (*ids, embedder.model_id, embedder.dim),
    ).fetchall()


def respan(
    best: list[tuple[str, float, tuple[int, int]]], raw: np.ndarray, vectors: list[tuple[str, int, int, bytes]]
) -> list[tuple[str, float, tuple[int, int]]]:
    """*best* with each note's snippet passage chosen by the query's own vector *raw*: the
    feedback that ranked the notes leans towards their openings, while the snippet should
    show the passage that answers the query. *vectors*: (note, start, stop, vector bytes)."""
    np = numpy()
    spans: dict[str, tuple[float, tuple[int, int]]] = {}
    for nid, start, stop, blob in vectors:
        score = float(np.frombuffer(blob, dtype=np.float32) @ raw)
        if nid not in spans or score > spans[nid][0]:
            spans[nid] = (score, (start, stop))
    return [(nid, score, spans[nid][1] if nid in spans else span) for nid, score, span in best]


def above_floor(
    best: list[tuple[str, float, tuple[int, int]]], embedder: Embedder
) -> list[tuple[str, float, tuple[int, int]]]:
    """*best* without the notes scored below the embedder's similarity floor (the score that
    ranked them, feedback included: measured, it parts relevant notes from off-topic queries'
    better than the query's own cosine does)."""
    floor = similarity_floor(embedder)
    return best if floor is None else [b for b in best if b[1] >= floor]


def semantic_search(
    index: Index,
    embedder: Embedder,
    vectors: VectorMatrix,
    query: str,
    *,
    limit: int = 10,
    filters: Filters | None = None,
    feedback: list[str] | None = None,
) -> list[Card]:
    """The *limit* notes whose passages are nearest *query* in meaning, as cards whose
    snippet is the best passage and whose score is its cosine similarity (none below the
    embedder's similarity floor). The query vector takes feedback from the best keyword
    hits (*feedback*, their ids; None: found here with the same filters)."""
    raw = query_vector(embedder, query, limit)
    filters = filters or Filters()
    if feedback is None:
        wanted_hits = feedback_limit()
        feedback = keyword_ids(index, query, limit=wanted_hits, filters=filters) if wanted_hits else []
    wanted = with_feedback(raw, _openings(index, embedder, feedback_notes(feedback)))
    best = vectors.nearest(index, embedder, wanted, limit, _allowed(index, filters))
    best = above_floor(best, embedder)
    if not best:
        return []
    if wanted is not raw:
        best = respan(best, raw, _passage_vectors(index, embedder, [nid for nid, _s, _p in best]))
    ids = [nid for nid, _score, _span in best]
    rows = card_rows(index, "id", ids, "text")
    cards = []
    for nid, score, (start, stop) in best:
        row = rows.get(nid)
        if row is None:
            continue
        snippet = passage_snippet(parse_note(row[16]).body, start, stop)
        cards.append(replace(card_from_row(row, snippet, round(score, 6)), mode="semantic"))
    return cards[:limit]


def _release(data: np.ndarray | None) -> None:
    """Let the kernel take back the pages of a mapped matrix that a full pass (building the
    approximate index) brought in, and read only the rows asked for from then on: searches
    keep just the rows they rescore resident. (A matrix in memory keeps them all.)"""
    _advise(data, "MADV_DONTNEED")
    _advise(data, "MADV_RANDOM")


def _advise(data: np.ndarray | None, advice: str) -> None:
    """madvise() on a mapped matrix (nothing for one in memory, or where the platform lacks it).
    MADV_RANDOM: a rescored row costs one page read, not the read-ahead around it."""
    mapping = getattr(data, "_mmap", None)
    if mapping is not None and hasattr(mapping, "madvise") and hasattr(mmap, advice):
        mapping.madvise(getattr(mmap, advice))
