"""Loading the embedding model beside a long-running process instead of before it.

A server or helper starts answering at once and the model loads on a thread; open the
store with ``embedder=loader.store_embedder`` and a search that needs the model meanwhile
waits for it (it never fails for arriving early). Wait with :meth:`EmbedderLoader.wait`
before calling the store, so that the wait happens outside the store's lock.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any

from ..errors import UnavailableError
from ..search.embedders import Embedder

__all__ = ["EmbedderLoader"]

_WARM_TEXT = "warm up"


class EmbedderLoader:
    """Makes the embedder *spec* names ('default', an embedder, a function making one, or
    None) on a background thread, and for a local model embeds one text, since the bundled
    model reads its weights only on first use."""

    def __init__(self, spec: Embedder | Callable[[], Embedder] | str | None) -> None:
        self._spec = spec
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._embedder: Embedder | None = None
        self._error: Exception | None = None
        self._thread: threading.Thread | None = None
        self.state = "none" if spec is None else "waiting"  # then loading, ready or failed

    @property
    def store_embedder(self) -> Callable[[], Embedder] | None:
        """What to open the store with: a function returning the loaded embedder (None: none)."""
        return None if self._spec is None else self.get

    def start(self, then: Callable[[], None] | None = None, *, when: Callable[[], bool] | None = None) -> None:
        """Load on a daemon thread, once *when* (if given) says the process is up; then call
        *then* (whether or not the model loaded: it meets the failure through the store)."""
        if self._spec is None or self._thread is not None:
            return

        def run() -> None:
            while when is not None and not when() and not self._done.is_set():
                self._done.wait(0.01)
            self._load()
            if then is not None:
                then()

        self._thread = threading.Thread(target=run, name="notewell-model", daemon=True)
        self._thread.start()

    def wait(self) -> None:
        """Wait until a load that was started has finished (whether or not it worked)."""
        if self._thread is not None:
            self._done.wait()

    def get(self) -> Embedder:
        """The embedder, waiting for the background load (or loading here if none was
        started); raises what loading raised."""
        if not self._done.is_set():
            self._load()
        if self._error is not None:
            try:
                fresh = copy.copy(self._error).with_traceback(None)  # not one traceback grown by every raise
            except Exception:  # noqa: BLE001 - an exception that does not copy: raise the one kept
                fresh = self._error
            raise fresh
        if self._embedder is None:
            raise UnavailableError("the embedding model did not load")
        return self._embedder

    def _load(self) -> None:
        with self._lock:
            if self._done.is_set():
                return
            self.state = "loading"
            spec = self._spec
            try:
                if spec == "default":
                    from ..search.embedders import default_embedder

                    embedder: Any = default_embedder()
                elif callable(spec) and not hasattr(spec, "embed_query"):
                    embedder = spec()
                else:
                    embedder = spec  # ready-made (the hash stand-in, a remote server): used as it is
                if embedder is not spec:
                    embedder.embed_query(_WARM_TEXT)  # a local model reads its weights on first use
                self._embedder = embedder
                self.state = "ready"
            except Exception as exc:  # noqa: BLE001 - kept, and raised to every search that needs it
                self._error = exc
                self.state = "failed"
            finally:
                self._done.set()
