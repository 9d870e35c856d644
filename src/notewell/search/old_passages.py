"""Meaning in older revisions: the passage vectors of superseded revisions, searched after
the current text (both stores).

When a note is edited, the vectors of the text it had are kept, tagged with that revision,
and a revision never embedded (edited twice before the embedder came round, or brought in
by a rebuild or an import) is embedded later from its kept text. A search by meaning asks
them only to fill the places the current texts left: a note found this way comes after
every note found by its current text, and its card names the revision that matched.

The vectors of one model sit in one float32 matrix per store, loaded again whenever the
store's version of them (a count and a high-water mark the store reads cheaply) changes:
superseded texts change far less often than notes are searched.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from .embedders import numpy

if TYPE_CHECKING:
    import numpy as np

__all__ = ["OldPassage", "OldPassages", "OldHit"]

# note id, revision, the passage's start and stop in that revision's body, the vector's bytes
OldPassage = tuple[str, int, int, int, bytes]
# note id, revision, cosine, (start, stop)
OldHit = tuple[str, int, float, tuple[int, int]]


class OldPassages:
    """One store's matrix of older revisions' passage vectors, for one model at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: object = None
        self._notes: list[str] = []
        self._revisions: list[int] = []
        self._spans: list[tuple[int, int]] = []
        self._matrix: np.ndarray | None = None

    def _current(self, key: object, dim: int, load: Callable[[], Iterable[OldPassage]]) -> tuple:
        with self._lock:
            if key != self._key:
                np = numpy()
                notes: list[str] = []
                revisions: list[int] = []
                spans: list[tuple[int, int]] = []
                blobs: list[bytes] = []
                for nid, revision, start, stop, blob in load():
                    if len(blob) != 4 * dim:
                        continue  # another dimension's vector: never scored against this model's query
                    notes.append(nid)
                    revisions.append(revision)
                    spans.append((start, stop))
                    blobs.append(blob)
                matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(-1, dim)
                self._notes, self._revisions, self._spans, self._matrix = notes, revisions, spans, matrix
                self._key = key
            return self._notes, self._revisions, self._spans, self._matrix

    def best(
        self,
        key: object,
        dim: int,
        load: Callable[[], Iterable[OldPassage]],
        wanted: np.ndarray,
        *,
        limit: int,
        allowed: set[str] | None,
        exclude: set[str],
        floor: float | None,
    ) -> list[OldHit]:
        """The *limit* notes (not in *exclude*; in *allowed* unless it is None) whose older
        passages are nearest *wanted*, best first, one hit per note (its best passage and the
        revision it is in; the newer revision among equals), none under *floor*. *key* names
        the stored vectors' version: a new key loads them again through *load*."""
        np = numpy()
        notes, revisions, spans, matrix = self._current(key, dim, load)
        if matrix is None or not len(notes) or limit <= 0:
            return []
        scores = matrix @ np.asarray(wanted, dtype=np.float32)
        order = np.lexsort((-np.asarray(revisions), -scores))
        hits: list[OldHit] = []
        seen: set[str] = set()
        for i in order:
            score = float(scores[i])
            if floor is not None and score < floor:
                break
            nid = notes[i]
            if nid in seen or nid in exclude or (allowed is not None and nid not in allowed):
                continue
            seen.add(nid)
            hits.append((nid, revisions[i], score, spans[i]))
            if len(hits) >= limit:
                break
        return hits
