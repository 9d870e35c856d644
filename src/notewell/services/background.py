"""The background embedding thread both stores keep: one at most, stopped on request."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["BackgroundEmbedding"]


class BackgroundEmbedding:
    """Start and stop a store's embedding thread; the store supplies the work."""

    _embedding: threading.Thread | None = None
    _embedding_stop: threading.Event

    def _launch_embedding(self, work: Callable[[threading.Event], None], name: str) -> bool:
        """Run *work* (given the event that asks it to stop) on a daemon thread; False when
        one runs already."""
        if self._embedding is not None and self._embedding.is_alive():
            return False
        stop = threading.Event()
        self._embedding_stop = stop
        self._embedding = threading.Thread(target=work, args=(stop,), name=name, daemon=True)
        self._embedding.start()
        return True

    def stop_embedding(self) -> None:
        """Stop the background embedding thread (it finishes the batch in hand)."""
        if self._embedding is not None:
            self._embedding_stop.set()
            self._embedding.join(timeout=60)
            if not self._embedding.is_alive():
                self._embedding = None
