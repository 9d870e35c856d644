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
import secrets
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ...model.note import Card
from ...search.embedders import Embedder, numpy
from ...search.filters import Filters
from ...search.passage_matrix import COMPACT_MIN, RELOAD_MIN, Passage, PassageMatrix
from ...search.passages import (
    above_floor,
    feedback_limit,
    feedback_notes,
    passage_snippet,
    query_vector,
    respan,
    stacked,
    with_feedback,
)
from .ann import AnnIndex, ann_available
from .filters_sql import filter_sql
from .index import Index
from .keyword import card_from_row, card_rows, keyword_ids

if TYPE_CHECKING:
    import numpy as np

__all__ = ["VectorMatrix", "allowed_notes", "opening_vectors", "semantic_search"]

SIDECAR_MIN = 5000  # passages from which a full load leaves a file to map next time
_ANN_BATCH = 65_536  # rows added to the approximate index at a time


@dataclass(frozen=True, slots=True)
class _Read:
    """What the matrix reads through: the index (in one read snapshot), the model, the log's epoch."""

    index: Index
    embedder: Embedder
    epoch: str


class VectorMatrix(PassageMatrix[_Read]):
    """Every passage vector of one model in one float32 matrix, kept up to date incrementally.

    The index logs whose vectors changed (``vector_log``); the matrix applies the log as
    :class:`notewell.search.passage_matrix.PassageMatrix` does. A full load (a new model, a rebuilt index,
    a log trimmed past this matrix, or too many changes) reads a memory-mapped sidecar when
    one of this log's epoch exists, then applies the log from there. From ``ann_min`` live
    passages an approximate index supplies the candidates a search scores exactly.

    Searches on several threads score against the matrix at once; a change (applying the
    log, a load, building the approximate index) waits until they are done, and searches
    that come meanwhile wait for it, since rows are changed in place.
    """

    def __init__(self, *, ann_min: int | None = None) -> None:
        super().__init__()
        self.ann_min = ann_min  # live passages from which to search an approximate index (None: never)
        self.epoch: str | None = None
        self.model: str | None = None
        self._since_sidecar = 0  # changes applied since the sidecar this matrix came from
        self._ann: AnnIndex | None = None
        self._turns = threading.Condition(threading.Lock())
        self._scoring = 0  # searches reading the matrix now
        self._changing = False  # a thread changes the matrix (no search reads it meanwhile)

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
        numpy()  # without the extra: 'unavailable', naming it, before any work
        if not self._up_to_date(index, embedder):
            with self._changing_it():
                self._refresh(index, embedder)
                self._approximate(index, embedder)
        with self._scoring_it():
            # Another thread may have brought the matrix past this read's snapshot: each change
            # since is a log row, so that many more notes make up for the ones the caller's
            # snapshot does not hold yet (semantic_search keeps the first *limit* it finds).
            (last,) = index.conn.execute("SELECT max(seq) FROM vector_log").fetchone()
            return self._rank(wanted, limit + max(0, self.seq - (last or 0)), allowed)

    def _candidates(self, wanted: np.ndarray, want: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Candidates from the approximate index once there are ann_min live passages, scored
        exactly: the scores are exact, recall may not be."""
        if self._ann is None or self.ann_min is None or self.live < self.ann_min:
            return None
        pool = self._ann.candidates(wanted, want)
        return pool, self._read_rows(pool) @ wanted

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
            other = (epoch, embedder.model_id) != (self.epoch, self.model)
            self._follow(_Read(index, embedder, epoch), first or 0, last or 0, other=other)
        finally:
            if opened:
                index.conn.execute("COMMIT")

    def _thresholds(self) -> tuple[int, int]:
        return COMPACT_MIN, RELOAD_MIN  # as this module has them now (the tests lower them)

    def _changed_notes(self, source: _Read, after: int, last: int) -> list[str]:
        sql = "SELECT DISTINCT note_id FROM vector_log WHERE seq > ? AND seq <= ?"
        return [nid for (nid,) in source.index.conn.execute(sql, (after, last))]

    @contextmanager
    def _all_passages(self, source: _Read) -> Iterator[tuple[int, int, Iterable[Passage]]]:
        key = (source.embedder.model_id, source.embedder.dim)
        conn = source.index.conn
        (count,) = conn.execute("SELECT count(*) FROM note_vectors WHERE model = ? AND dim = ?", key).fetchone()
        # Row by row into the one matrix: the blobs are never all held at once beside it.
        rows = conn.execute(
            "SELECT note_id, start, stop, vector FROM note_vectors WHERE model = ? AND dim = ? ORDER BY note_id, chunk",
            key,
        )
        yield count, key[1], rows

    def _fresh_passages(self, source: _Read, notes: list[str]) -> list[Passage]:
        fresh: list[Passage] = []
        for at in range(0, len(notes), 500):
            group = notes[at : at + 500]
            marks = ",".join("?" * len(group))
            fresh += source.index.conn.execute(
                f"SELECT note_id, start, stop, vector FROM note_vectors WHERE note_id IN ({marks})"
                " AND model = ? AND dim = ? ORDER BY note_id, chunk",
                (*group, source.embedder.model_id, source.embedder.dim),
            ).fetchall()
        return fresh

    def _load(self, source: _Read, last: int) -> None:
        index, embedder, epoch = source.index, source.embedder, source.epoch
        self.full_loads += 1
        # A sidecar older than what this matrix had applied would mean replaying even more.
        floor = self.seq if (epoch, embedder.model_id) == (self.epoch, self.model) else 0
        self.epoch, self.model, self.seq = epoch, embedder.model_id, last
        self._rows, self._dead, self._since_sidecar, self._ann = {}, 0, 0, None
        behind = self._load_sidecar(index, embedder, epoch, last, floor)
        if behind is not None:
            self._index_rows()
            self._catch_up(source, self._changed_notes(source, behind, last), last)
            return
        with self._all_passages(source) as (count, dim, passages):
            self._fill(count, dim, passages)
        if len(self.notes) >= SIDECAR_MIN:
            self._save_sidecar(index, embedder)

    def _catch_up(self, source: _Read, changed: list[str], last: int) -> None:
        first_new = len(self.notes)  # zeroing keeps the rows: the fresh ones are appended from here
        super()._catch_up(source, changed, last)  # the position first: a sidecar saved below is at it
        if not changed:
            return
        if self._ann is not None:  # (None when compacted: the rows were renumbered)
            # Dead rows stay in the graph (their vectors are zero and searches skip them):
            # removing keys one by one from usearch wears it out until remove() never returns.
            assert self._data is not None
            self._ann.add(numpy().arange(first_new, len(self.notes)), self._data[first_new : len(self.notes)])
        self._since_sidecar += len(changed)
        if self._since_sidecar >= SIDECAR_MIN and self.live >= SIDECAR_MIN:
            self._save_sidecar(source.index, source.embedder)

    def _compact(self) -> None:
        self._ann = None  # keyed by the old row numbers: built again when next needed
        super()._compact()

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


def allowed_notes(index: Index, filters: Filters) -> set[str] | None:
    """The notes the filters and scope let through (None: every note)."""
    where, params = filter_sql(filters)
    if not where:
        return None
    return {nid for (nid,) in index.conn.execute(f"SELECT n.id FROM note_index n WHERE {where}", params)}


def opening_vectors(index: Index, embedder: Embedder, ids: list[str]) -> np.ndarray:
    """The opening passages' vectors of notes *ids* (the feedback that moves a query vector)."""
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
    wanted = with_feedback(raw, opening_vectors(index, embedder, feedback_notes(feedback)))
    best = vectors.nearest(index, embedder, wanted, limit, allowed_notes(index, filters))
    best = above_floor(best, embedder)
    if not best:
        return []
    if wanted is not raw:
        best = respan(best, raw, _passage_vectors(index, embedder, [nid for nid, _s, _p in best]))
    ids = [nid for nid, _score, _span in best]
    rows = card_rows(index, "id", ids, "body")
    cards = []
    for nid, score, (start, stop) in best:
        row = rows.get(nid)
        if row is None:
            continue
        snippet = passage_snippet(row[16], start, stop)
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
