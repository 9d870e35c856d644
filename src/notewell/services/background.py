"""The background embedding thread a note service keeps: one at most, stopped on request."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["EmbeddingThread"]


# Starting and stopping are rare: one lock for every service's thread is enough to keep two
# threads from starting two embedding threads for one store.
_turn = threading.Lock()


class EmbeddingThread:
    """Starts and stops one store's embedding thread; the store supplies the work."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def running(self) -> bool:
        """Whether the thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def launch(self, work: Callable[[threading.Event], None], name: str) -> bool:
        """Run *work* (given the event that asks it to stop) on a daemon thread; False when
        one runs already."""
        with _turn:
            if self.running():
                return False
            stop = threading.Event()
            self._stop = stop
            self._thread = threading.Thread(target=work, args=(stop,), name=name, daemon=True)
            self._thread.start()
            return True

    def stop(self) -> None:
        """Stop the thread (it finishes the batch in hand)."""
        with _turn:
            thread = self._thread
            if thread is None:
                return
            self._stop.set()
        thread.join(timeout=60)  # not holding the lock: another store's start need not wait
        with _turn:
            if self._thread is thread and not thread.is_alive():
                self._thread = None
