"""The in-memory passage matrix both stores search semantically, written once.

Every passage vector of one model sits in one float32 matrix, row i a passage of
``notes[i]``, kept current from the index's vector log and ranked exactly with numpy. A
store subclasses :class:`PassageMatrix` and supplies only its SQL (the notes the log says
changed, every passage of the model, some notes' passages as they are now) and its own
extras: the embedded store's :class:`notewell.backends.sqlite.semantic.VectorMatrix` adds sidecar files, an
approximate index and searches taking turns with a change; PostgreSQL's
:class:`notewell.backends.postgres.semantic.PgVectorMatrix` a lock and one REPEATABLE READ snapshot.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from .embedders import numpy

if TYPE_CHECKING:
    import numpy as np

__all__ = ["COMPACT_MIN", "RELOAD_MIN", "Passage", "PassageMatrix", "best_notes", "rows_by_note"]

COMPACT_MIN = 1000  # dead rows (and at least a quarter of all) from which the matrix is compacted
RELOAD_MIN = 2000  # changed notes (and at least a quarter of the live rows) from which a full load is cheaper

Passage = tuple[str, int, int, bytes]  # note id, the passage's start and stop in the body, the vector's bytes
Source = TypeVar("Source")  # what a store's SQL reads through (its connection, the model...)


def rows_by_note(notes: list[str | None]) -> tuple[dict[str, list[int]], int]:
    """Each note's rows in a matrix whose row i holds a passage of *notes[i]* (None: a dead
    row, left by an edit or a delete until the matrix is compacted), and the dead rows' count."""
    rows: dict[str, list[int]] = {}
    for i, nid in enumerate(notes):
        if nid is not None:
            rows.setdefault(nid, []).append(i)
    return rows, len(notes) - sum(map(len, rows.values()))


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


class PassageMatrix(ABC, Generic[Source]):
    """Every passage vector of one model in one float32 matrix, kept up to date incrementally.

    A matrix remembers the last log entry it applied (``seq``). Catching up replaces only the
    changed notes' rows: their old rows become dead (zeroed: they score 0, and are skipped) and
    their new ones are appended into spare capacity; dead rows are compacted away once they are
    more than a quarter of all (and COMPACT_MIN). The matrix is loaded whole instead when it
    holds something else (another model, another log), when the log was trimmed past it, or
    when more notes changed than RELOAD_MIN and a quarter of the live rows.

    Not safe to change from several threads at once: a store takes care of that.
    """

    _vector_type: ClassVar[str] = "=f4"  # how the stored bytes encode a vector

    def __init__(self) -> None:
        self.seq = 0  # the last vector_log entry applied
        self.notes: list[str | None] = []  # None: a dead row
        self.spans: list[tuple[int, int]] = []
        self.full_loads = 0
        self._data: np.ndarray | None = None  # rows beyond len(notes): spare capacity
        self._rows: dict[str, list[int]] = {}
        self._dead = 0

    @property
    def matrix(self) -> np.ndarray | None:
        """The rows in use (a view; dead rows are zero)."""
        return None if self._data is None else self._data[: len(self.notes)]

    @property
    def live(self) -> int:
        return len(self.notes) - self._dead

    # What a store supplies: its SQL.

    @abstractmethod
    def _changed_notes(self, source: Source, after: int, last: int) -> list[str]:
        """The notes whose vectors the log says changed after entry *after*, up to *last*."""

    @abstractmethod
    def _all_passages(self, source: Source) -> AbstractContextManager[tuple[int, int, Iterable[Passage]]]:
        """While open: how many passages the model has, their dimension, and the passages
        (ordered by note and chunk), streamed."""

    @abstractmethod
    def _fresh_passages(self, source: Source, notes: list[str]) -> list[Passage]:
        """The passages the *notes* have now (ordered by note and chunk)."""

    def _candidates(self, wanted: np.ndarray, want: int) -> tuple[np.ndarray, np.ndarray] | None:
        """About *want* rows likely to score best, with their exact scores (None: score every row)."""
        return None

    def _thresholds(self) -> tuple[int, int]:
        """(COMPACT_MIN, RELOAD_MIN), read at each use."""
        return COMPACT_MIN, RELOAD_MIN

    # The policy.

    def _follow(self, source: Source, first: int, last: int, *, other: bool) -> None:
        """Bring the rows to log entry *last*, the log holding the entries from *first* (both 0:
        an empty log). *other*: the matrix holds something else, and is loaded whole."""
        if other or (last > self.seq and first > self.seq + 1):  # or the log was trimmed past it
            self._load(source, last)
        elif last > self.seq:
            changed = self._changed_notes(source, self.seq, last)
            if len(changed) > max(self._thresholds()[1], self.live // 4):
                self._load(source, last)
            else:
                self._catch_up(source, changed, last)

    def _load(self, source: Source, last: int) -> None:
        """Every row read again; the matrix is then at log entry *last*."""
        self.full_loads += 1
        with self._all_passages(source) as (count, dim, passages):
            self._fill(count, dim, passages)
        self.seq = last

    def _fill(self, count: int, dim: int, passages: Iterable[Passage]) -> None:
        """The rows replaced by *passages* (at most *count*, counted in the same snapshot)."""
        np = numpy()
        data = np.empty((count, dim), dtype=np.float32)
        vector = np.dtype(self._vector_type)
        notes: list[str | None] = []
        spans: list[tuple[int, int]] = []
        # Row by row into the one matrix: the vectors are never all held at once beside it.
        for i, (nid, start, stop, blob) in enumerate(passages):
            if i >= count:
                break
            data[i] = np.frombuffer(blob, dtype=vector)
            notes.append(nid)
            spans.append((start, stop))
        self.notes, self.spans, self._data = notes, spans, data
        self._index_rows()

    def _index_rows(self) -> None:
        self._rows, self._dead = rows_by_note(self.notes)

    def _catch_up(self, source: Source, changed: list[str], last: int) -> None:
        """The rows of the *changed* notes replaced by what the store holds at log entry *last*."""
        fresh = self._fresh_passages(source, changed) if changed else []
        self.seq = last
        if changed:
            self._apply(changed, fresh)

    def _apply(self, changed: list[str], fresh: list[Passage]) -> None:
        """The *changed* notes' rows dead, and their *fresh* passages appended."""
        np = numpy()
        data = self._writable(len(fresh))
        for nid in changed:
            for i in self._rows.pop(nid, ()):
                data[i] = 0.0  # a dead row scores 0 and is skipped
                self.notes[i] = None
                self._dead += 1
        vector = np.dtype(self._vector_type)
        for nid, start, stop, blob in fresh:
            i = len(self.notes)
            data[i] = np.frombuffer(blob, dtype=vector)
            self.notes.append(nid)
            self.spans.append((start, stop))
            self._rows.setdefault(nid, []).append(i)
        if self._dead > max(self._thresholds()[0], len(self.notes) // 4):
            self._compact()

    def _writable(self, extra: int) -> np.ndarray:
        """The data array, in memory (not a read-only map) with room for *extra* more rows."""
        np = numpy()
        data = self._data
        assert data is not None  # a matrix is loaded whole before it takes changes
        used = len(self.notes)
        if not data.flags.writeable or used + extra > len(data):
            # Room for more without keeping much spare: memory stays near the vectors' own size.
            grown = np.empty((used + extra + max(64, min(used // 16, 8192)), data.shape[1]), dtype=np.float32)
            grown[:used] = data[:used]
            self._data = data = grown
        return data

    def _compact(self) -> None:
        """The dead rows dropped (the live ones renumbered)."""
        np = numpy()
        assert self._data is not None
        keep = [i for i, nid in enumerate(self.notes) if nid is not None]
        self._data = np.ascontiguousarray(self._data[keep]) if keep else self._data[:0].copy()
        self.notes = [self.notes[i] for i in keep]
        self.spans = [self.spans[i] for i in keep]
        self._index_rows()

    def _rank(
        self, wanted: np.ndarray, limit: int, allowed: set[str] | None
    ) -> list[tuple[str, float, tuple[int, int]]]:
        """The *limit* best notes (among *allowed*): (id, best passage's cosine, its span)."""
        np = numpy()
        matrix = self.matrix
        if matrix is None or not self.live:
            return []
        want = max(256, 32 * limit)
        pool_scored = self._candidates(wanted, want)
        if pool_scored is None:
            scores = matrix @ wanted
            # The best few hundred passages usually hold the best notes.
            pool = np.argpartition(-scores, want - 1)[:want] if want < len(scores) else np.arange(len(scores))
            pool_scores = scores[pool]
        else:
            (pool, pool_scores), scores = pool_scored, None
        ranked = np.argsort(-pool_scores)
        best = best_notes(self.notes, pool[ranked], pool_scores[ranked], limit, allowed)
        if len(best) < limit and len(pool) < len(matrix):
            # Filters (or many passages per note) left too few: rank every passage.
            if scores is None:
                scores = matrix @ wanted
            order = np.argsort(-scores)
            best = best_notes(self.notes, order, scores[order], limit, allowed)
        return [(nid, score, self.spans[i]) for nid, (score, i) in best.items()]
