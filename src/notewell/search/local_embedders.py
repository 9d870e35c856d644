"""Embedders that load a model from a local directory (optional extras).

``FastEmbedEmbedder`` runs a model2vec/potion directory (``model.safetensors`` +
``tokenizer.json``) or an ONNX sentence-embedding directory through fastembed
(``pip install '.[fastembed]' in notewell's clone``); ``SentenceTransformerEmbedder`` runs any
sentence-transformers directory (``pip install '.[sentence-transformers]' in notewell's clone``).
Both take a path, never a hub id, and switch the network off before the library loads:
nothing is downloaded at run time, and onnxruntime's telemetry stays off.

The model id carries the directory's name and a hash of its weights, so a changed model
is a different model and its notes are re-embedded.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgumentError, UnavailableError
from ..model.numbers import whole_number
from .embedders import _normalised, numpy

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FastEmbedEmbedder", "SentenceTransformerEmbedder", "local_model_dir", "token_batches"]

_WEIGHT_SUFFIXES = (".onnx", ".safetensors", ".bin")
# An ONNX transformer's activations grow with the texts in a call times the longest of them
# (fastembed pads to it), its attention with that length squared. all-MiniLM-L6-v2 (227 MB
# loaded), peak RSS at batch 64: 1,148 MB on 1,000-character passages, 2,031 MB on 512-token
# ones; within these bounds 312 and 446 MB, and no slower.
FASTEMBED_BATCH = 8
FASTEMBED_TOKENS = 2048


def _offline() -> None:
    """Environment that keeps the model libraries off the network (set before they import)."""
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # a CLI's stderr is for errors
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def _quiet_onnxruntime() -> None:
    try:
        import onnxruntime
    except ImportError:
        return
    disable = getattr(onnxruntime, "disable_telemetry_events", None)
    if disable is not None:
        disable()


def local_model_dir(path: str | os.PathLike[str]) -> Path:
    """*path* as an existing model directory, or InvalidArgumentError (hub ids are refused)."""
    p = Path(path).expanduser()
    if not p.is_dir():
        hint = " (a hub id is not accepted: download the model once and pass its directory)" if "/" in str(path) else ""
        raise InvalidArgumentError(f"the embedding model must be a local directory: {str(path)!r} is not one{hint}")
    return p.resolve()


def _weights_digest(directory: Path) -> str:
    """A short hash of the directory's weight files (name, size and content)."""
    digest = hashlib.sha256()
    files = sorted(f for f in directory.rglob("*") if f.is_file() and f.suffix in _WEIGHT_SUFFIXES)
    if not files:
        raise InvalidArgumentError(f"no model weights (.onnx, .safetensors or .bin) in {directory}")
    for f in files:
        digest.update(str(f.relative_to(directory)).encode() + b"\0")
        with f.open("rb") as fh:
            for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def _is_model2vec(directory: Path) -> bool:
    """A model2vec directory: tokenizer.json and a safetensors file whose tensor is 'embeddings'."""
    weights = directory / "model.safetensors"
    if not (weights.is_file() and (directory / "tokenizer.json").is_file()):
        return False
    try:
        with weights.open("rb") as fh:
            size = int.from_bytes(fh.read(8), "little")
            header = json.loads(fh.read(size)) if 0 < size < 1 << 24 else {}
    except (OSError, ValueError):
        return False
    return isinstance(header, dict) and "embeddings" in header


class _LockedModel(ABC):
    """Shared shape of the local embedders: one model, one caller at a time."""

    model_id: str
    dim: int

    def __init__(self) -> None:
        self._lock = threading.Lock()

    @abstractmethod
    def _embed(self, texts: list[str]) -> Any:
        """The library's own rows for *texts* (normalised by the caller)."""

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        np = numpy()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            rows = self._embed(texts)
        return _normalised(np.asarray(rows, dtype=np.float32).reshape(len(texts), -1))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def token_batches(lengths: Sequence[int], batch: int, tokens: int | None) -> list[list[int]]:
    """The positions of texts *lengths* tokens long, in calls of at most *batch* texts whose
    count times longest stays within *tokens* (a longer text goes alone): shortest first, so
    that texts of like length share a call and little is padding. *tokens* None: calls of
    *batch* texts in their order."""
    if tokens is None:
        return [list(range(at, min(at + batch, len(lengths)))) for at in range(0, len(lengths), batch)]
    calls: list[list[int]] = []
    call: list[int] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        # In length order the text added is the call's longest.
        if call and (len(call) == batch or (len(call) + 1) * lengths[i] > tokens):
            calls.append(call)
            call = []
        call.append(i)
    return calls + [call] if call else calls


class FastEmbedEmbedder(_LockedModel):
    """A local model directory run by fastembed: static (model2vec) or ONNX with mean pooling.

    Each call to the model holds at most *batch* texts and at most *batch_tokens* tokens once
    padded to its longest text; *batch_tokens* None: FASTEMBED_TOKENS for an ONNX model, no
    bound for a static one (it keeps nothing per token but the ids, and counting them first
    would tokenize every text twice). The vectors do not depend on either."""

    def __init__(
        self, path: str | os.PathLike[str], *, batch: int = FASTEMBED_BATCH, batch_tokens: int | None = None
    ) -> None:
        super().__init__()
        for name, value in (("batch", batch), ("batch_tokens", 1 if batch_tokens is None else batch_tokens)):
            whole_number(name, value)
        directory = local_model_dir(path)
        _offline()
        try:
            from fastembed import TextEmbedding
        except ImportError:
            raise UnavailableError(
                "this embedder needs the 'fastembed' extra: pip install '.[fastembed]' in notewell's clone"
            ) from None
        _quiet_onnxruntime()
        self.batch = batch
        onnx = sorted(directory.rglob("*.onnx"))
        static = _is_model2vec(directory)
        if not onnx and not static:
            raise InvalidArgumentError(
                f"{directory} holds neither an ONNX model nor a model2vec model (model.safetensors + tokenizer.json);"
                " a PyTorch/safetensors transformer needs the sentence-transformers embedder"
            )
        self.batch_tokens = batch_tokens if batch_tokens is not None or static else FASTEMBED_TOKENS
        try:
            # A model2vec folder may ship an ONNX export too; its own static form is the one to run.
            if static:
                self._model = self._static_model(directory)
            else:
                self._model = self._onnx_model(TextEmbedding, directory, onnx[0])
            self.dim = int(self.embed_documents(["dimension probe"]).shape[1])
        except Exception as exc:  # onnxruntime's errors share no base class with Python's
            reason = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise UnavailableError(f"fastembed cannot load {directory}: {reason}") from None
        self.model_id = f"fastembed:{directory.name}@{_weights_digest(directory)}"

    @staticmethod
    def _static_model(directory: Path) -> Any:
        from fastembed.text.static_embedding import StaticTextEmbedding

        # The name only picks fastembed's loader; the files come from the directory.
        return StaticTextEmbedding("minishlab/potion-base-8M", specific_model_path=str(directory))

    @staticmethod
    def _onnx_model(text_embedding: Any, directory: Path, onnx: Path) -> Any:
        from fastembed.common.model_description import ModelSource, PoolingType

        config = directory / "config.json"
        dim = 0
        if config.is_file():
            try:
                dim = int(json.loads(config.read_text(encoding="utf-8")).get("hidden_size") or 0)
            except (ValueError, TypeError, AttributeError):
                dim = 0
        name = f"notewell-local/{hashlib.sha256(str(onnx).encode()).hexdigest()[:16]}"
        known = {m["model"].lower() for m in text_embedding.list_supported_models()}
        if name.lower() not in known:
            text_embedding.add_custom_model(
                model=name,
                pooling=PoolingType.MEAN,
                normalization=True,
                sources=ModelSource(hf=name),
                dim=dim or 384,  # fastembed wants a number; the real one is measured below
                model_file=str(onnx.relative_to(directory)),
            )
        return text_embedding(model_name=name, specific_model_path=str(directory))

    def _embed(self, texts: list[str]) -> Any:
        # Counted as the model's own tokenizer counts them (truncated, special tokens included).
        lengths = [self._model.token_count(t) for t in texts] if self.batch_tokens is not None else [0] * len(texts)
        rows: list[Any] = [None] * len(texts)
        for call in token_batches(lengths, self.batch, self.batch_tokens):
            vectors = self._model.embed([texts[i] for i in call], batch_size=len(call))
            for i, row in zip(call, vectors, strict=True):
                rows[i] = row
        return rows


class SentenceTransformerEmbedder(_LockedModel):
    """A local sentence-transformers model directory (CPU)."""

    def __init__(self, path: str | os.PathLike[str], *, batch: int = 32, device: str = "cpu") -> None:
        super().__init__()
        directory = local_model_dir(path)
        _offline()
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise UnavailableError(
                "this embedder needs the 'sentence-transformers' extra:"
                " pip install '.[sentence-transformers]' in notewell's clone"
            ) from None
        try:
            self._model = SentenceTransformer(str(directory), device=device, local_files_only=True)
            self.batch = batch
            self.dim = int(self.embed_documents(["dimension probe"]).shape[1])
        except Exception as exc:  # torch and transformers raise many kinds
            reason = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise UnavailableError(f"sentence-transformers cannot load {directory}: {reason}") from None
        self.model_id = f"sentence-transformers:{directory.name}@{_weights_digest(directory)}"

    def _embed(self, texts: list[str]) -> Any:
        return self._model.encode(texts, batch_size=self.batch, convert_to_numpy=True, show_progress_bar=False)
