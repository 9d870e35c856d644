"""An approximate nearest-neighbour index (usearch HNSW) for very large vector matrices.

Optional (``pip install '.[ann]' in notewell's clone``) and off below a million vectors, where exact
search is fast enough. The graph navigates on int8 copies of the vectors; the
candidates it returns are then scored exactly against the float32 matrix, so scores are
the same as exact search and only recall can differ (measured by
``benchmarks/bench_ann.py``). Keys are the matrix's row numbers.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import UnavailableError
from ...search.embedders import numpy

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ANN_MIN", "AnnIndex", "ann_available"]

ANN_MIN = 1_000_000  # live passages from which the approximate index is used, when enabled
# Measured at 50,000 x 512 (benchmarks/bench_ann.py's vectors): int8 builds 2x faster than
# f16/f32 (6,900 vectors/s on 2 cores) and recalls as well once candidates are rescored;
# connectivity 32 recalls a little more at 4x the build time.
_CONNECTIVITY = 16
_EXPANSION_ADD = 64
_EXPANSION_SEARCH = 200
_PARALLEL_ADD = 10_000  # rows in one add from which it runs on every core


def ann_available() -> bool:
    """Whether usearch can be imported here."""
    try:
        import usearch.index  # noqa: F401
    except ImportError:
        return False
    return True


class AnnIndex:
    """HNSW over inner product (the vectors are unit length), keyed by matrix row."""

    def __init__(self, dim: int, *, expansion_search: int = _EXPANSION_SEARCH) -> None:
        try:
            from usearch.index import Index
        except ImportError:
            raise UnavailableError(
                "the approximate index needs the 'ann' extra: pip install '.[ann]' in notewell's clone"
            ) from None
        self.dim = dim
        self._index = Index(
            ndim=dim,
            metric="ip",
            dtype="i8",
            connectivity=_CONNECTIVITY,
            expansion_add=_EXPANSION_ADD,
            expansion_search=expansion_search,
        )
        # Searches on several threads at once share usearch's per-thread search state: one at a time.
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._index)

    def add(self, rows: np.ndarray, vectors: np.ndarray) -> None:
        """Add *vectors* under the row numbers *rows*."""
        if len(rows):
            np = numpy()
            with self._lock:
                # One thread below _PARALLEL_ADD rows: the graph a batch makes is then the same on
                # every run (threads insert in an order that varies, and so does what a search
                # reaches), and a small batch gains nothing from more.
                threads = 1 if len(rows) < _PARALLEL_ADD else os.cpu_count() or 1
                self._index.add(np.asarray(rows, dtype=np.uint64), vectors, threads=threads)

    def candidates(self, query: np.ndarray, count: int) -> np.ndarray:
        """Row numbers of about the *count* nearest vectors (approximate)."""
        np = numpy()
        with self._lock:
            found = self._index.search(query, min(count, max(1, len(self._index))))
        return np.asarray(found.keys, dtype=np.int64)

    def save(self, path: Path) -> None:
        with self._lock:
            self._index.save(str(path))

    @classmethod
    def load(cls, path: Path, dim: int) -> AnnIndex:
        """An index saved by :meth:`save` (read into memory, so it can take changes)."""
        ann = cls(dim)
        ann._index.load(str(path))
        if ann._index.ndim != dim:
            raise ValueError(f"{path} holds {ann._index.ndim}-d vectors, not {dim}-d")
        return ann
