"""A store's embedder, as ``embedder=`` names it, made on first use (one home for both stores).

``embedder=`` takes ``'default'`` (the bundled model), ``None`` (no semantic search), an
embedder, or a function making one (for a model loaded in the background). The model is made
only when a search or the embedding queue needs it, once, however many threads ask.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, cast

from ..errors import InvalidArgumentError, UnavailableError
from .embedders import USE_MODEL_ID, Embedder

__all__ = ["EmbedderSlot", "EmbedderSpec"]

EmbedderSpec = Embedder | Callable[[], Embedder] | str | None


def _is_embedder(value: object) -> bool:
    return hasattr(value, "model_id") and hasattr(value, "embed_query")


class EmbedderSlot:
    """The embedder *spec* names; InvalidArgumentError at once if it names none."""

    def __init__(self, spec: Any) -> None:
        named = spec is None or spec == "default" or _is_embedder(spec)
        if not named and (isinstance(spec, str) or not callable(spec)):
            raise InvalidArgumentError(
                "embedder must be 'default', None, an object with model_id, dim and embed_*, or a function making one"
            )
        self.spec: EmbedderSpec = spec
        self._made: Embedder | None = None
        self._lock = threading.Lock()

    @property
    def made(self) -> Embedder | None:
        """The embedder if it has been made already, else None (nothing is loaded to say so)."""
        return self._made

    def get(self) -> Embedder:
        """The embedder, made now if it was not yet; UnavailableError for a store without one."""
        with self._lock:
            made = self._made
            if made is None:
                spec = self.spec
                if spec is None:
                    raise UnavailableError("this store was opened without an embedder (embedder=None)")
                if isinstance(spec, str):
                    from .embedders import default_embedder

                    made = default_embedder()
                elif _is_embedder(spec):
                    made = cast(Embedder, spec)
                else:
                    made = cast(Callable[[], Embedder], spec)()  # a factory
                self._made = made
            return made

    def model_id(self) -> str | None:
        """The model's id when it is known without loading a model (None: not known)."""
        if self._made is not None:
            return self._made.model_id
        if self.spec == "default":
            return USE_MODEL_ID
        return getattr(self.spec, "model_id", None)
