"""The wrapper every public store method runs in."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..storage.index import CorruptIndexError, translated

__all__ = ["guarded"]


def guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run a public method with sqlite3 errors translated; a damaged index, or one
    replaced by another process's reindex, is reopened or rebuilt, then the call retried."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        for attempt in (0, 1):
            try:
                with translated():
                    if self._index.replaced():
                        self._reopen_index(rebuild=False)
                    return method(self, *args, **kwargs)
            except CorruptIndexError:
                if attempt:
                    raise
                self._reopen_index(rebuild=True)
        raise AssertionError("unreachable")

    return wrapper
