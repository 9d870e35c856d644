"""Meaning in older revisions: the passage vectors of superseded revisions, searched after
the current text (both stores).

When a note is edited, the vectors of the text it had are kept, tagged with that revision,
and a revision never embedded (edited twice before the embedder came round, or brought in
by a rebuild or an import) is embedded later from its kept text. Each store keeps a note's
distinct passage once, tagged with the newest older revision holding it, and none its current
text holds (``backends.sqlite.old_vectors`` says why): a note re-imported as it grows does
not store revisions x passages. A search by meaning asks them only to fill the places the
current texts left: a note found this way comes after every note found by its current text,
and its card names the revision that matched.

The vectors of one model sit in one float32 matrix per store, loaded again whenever the
store's version of them (a counter the store keeps as it changes them) moves: superseded
texts change far less often than notes are searched. A search scores only the rows of the
notes it may return and sorts only the best few (a partial sort, widened when duplicates of
one note or the excluded ones use them up).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from .embedders import Embedder, numpy
from .passages import similarity_floor

if TYPE_CHECKING:
    import numpy as np

__all__ = ["SPARE", "OldHit", "OldPassage", "OldPassages"]

SPARE = 4  # hits beyond the limit asked for, standing in for notes deleted meanwhile

# note id, revision, the passage's start and stop in that revision's body, the vector's bytes
OldPassage = tuple[str, int, int, int, bytes]
# note id, revision, cosine, (start, stop)
OldHit = tuple[str, int, float, tuple[int, int]]


class _Loaded:
    """One load of the vectors: the matrix and, row by row, the note (as a code), revision and span."""

    def __init__(self, dim: int, rows: Iterable[OldPassage]) -> None:
        np = numpy()
        codes: dict[str, int] = {}
        notes: list[int] = []
        revisions: list[int] = []
        spans: list[tuple[int, int]] = []
        blobs: list[bytes] = []
        for nid, revision, start, stop, blob in rows:
            if len(blob) != 4 * dim:
                continue  # another dimension's vector: never scored against this model's query
            notes.append(codes.setdefault(nid, len(codes)))
            revisions.append(revision)
            spans.append((start, stop))
            blobs.append(bytes(blob))
        self.codes = codes
        self.ids = list(codes)
        self.notes = np.asarray(notes, dtype=np.int64)
        self.revisions = np.asarray(revisions, dtype=np.int64)
        self.spans = spans
        self.matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(-1, dim)


class OldPassages:
    """One store's matrix of older revisions' passage vectors, for one model at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: object = None
        self._loaded: _Loaded | None = None

    def _current(self, key: object, dim: int, load: Callable[[], Iterable[OldPassage]]) -> _Loaded:
        with self._lock:
            if key != self._key or self._loaded is None:
                self._loaded = _Loaded(dim, load())
                self._key = key
            return self._loaded

    def best(
        self,
        embedder: Embedder,
        key: object,
        load: Callable[[], Iterable[OldPassage]],
        wanted: np.ndarray,
        *,
        limit: int,
        allowed: set[str] | None,
        exclude: set[str],
    ) -> list[OldHit]:
        """The notes (not in *exclude*; in *allowed* unless it is None) whose older passages of
        *embedder*'s model are nearest *wanted*, best first, one hit per note (its best passage
        and the revision it is in; the newer revision among equals), none under the model's
        similarity floor: *limit* and SPARE more, for notes deleted since the vectors were read
        (the caller cuts to *limit* once it has their cards). *key* names the stored vectors'
        version: a new key loads them again through *load*."""
        np = numpy()
        got = self._current(key, embedder.dim, load)
        floor = similarity_floor(embedder)
        limit += SPARE
        if not len(got.notes) or limit <= 0:
            return []
        keep = np.ones(len(got.notes), dtype=bool)
        if allowed is not None:
            keep &= np.isin(got.notes, [got.codes[n] for n in allowed if n in got.codes])
        if exclude:
            keep &= ~np.isin(got.notes, [got.codes[n] for n in exclude if n in got.codes])
        rows = np.flatnonzero(keep)
        if not len(rows):
            return []
        scores = got.matrix[rows] @ np.asarray(wanted, dtype=np.float32)
        if floor is not None:
            above = scores >= floor
            rows, scores = rows[above], scores[above]
        take = min(len(rows), 4 * limit + 16)
        while True:
            top = np.argpartition(-scores, take - 1)[:take] if take < len(rows) else np.arange(len(rows))
            # Best first; among equals the newer revision.
            order = top[np.lexsort((-got.revisions[rows[top]], -scores[top]))]
            hits: list[OldHit] = []
            seen: set[int] = set()
            for i in order:
                row = int(rows[i])
                code = int(got.notes[row])
                if code in seen:
                    continue
                seen.add(code)
                hits.append((got.ids[code], int(got.revisions[row]), float(scores[i]), got.spans[row]))
                if len(hits) >= limit:
                    return hits
            if take >= len(rows):
                return hits
            take = min(len(rows), take * 4)  # one note's many passages used the places up: widen
