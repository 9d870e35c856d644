"""The background embedding thread both stores keep: one at most, stopped on request."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["BackgroundEmbedding"]


# Starting and stopping are rare: one lock for every store's thread is enough to keep two
# threads from starting two embedding threads for one store.
_turn = threading.Lock()


class BackgroundEmbedding:
    """Start and stop a store's embedding thread; the store supplies the work."""

    _embedding: threading.Thread | None = None
    _embedding_stop: threading.Event

    def _launch_embedding(self, work: Callable[[threading.Event], None], name: str) -> bool:
        """Run *work* (given the event that asks it to stop) on a daemon thread; False when
        one runs already."""
        with _turn:
            if self._embedding is not None and self._embedding.is_alive():
                return False
            stop = threading.Event()
            self._embedding_stop = stop
            self._embedding = threading.Thread(target=work, args=(stop,), name=name, daemon=True)
            self._embedding.start()
            return True

    def stop_embedding(self) -> None:
        """Stop the background embedding thread (it finishes the batch in hand)."""
        with _turn:
            thread = self._embedding
            if thread is None:
                return
            self._embedding_stop.set()
        thread.join(timeout=60)  # not holding the lock: another store's start need not wait
        with _turn:
            if self._embedding is thread and not thread.is_alive():
                self._embedding = None
