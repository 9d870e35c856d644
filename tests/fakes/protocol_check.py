"""Checked by ``mypy --strict`` (tests/test_types.py), never run: each backend, the real two
and the memory fake, is a :class:`~notewell.backends.backend.Backend`, and the fake's parts
are the Protocols they stand for."""

from __future__ import annotations

from notewell.backends.backend import Backend
from notewell.backends.postgres.backend import PostgresBackend
from notewell.backends.records import Snapshot, WriteTurn
from notewell.backends.sqlite.backend import SqliteBackend
from notewell.model.access_tokens import Tokens
from notewell.search.plan import Engines

from .memory_backend import MemoryBackend, MemoryTokens
from .memory_records import MemorySnapshot, MemoryWriteTurn
from .memory_search import MemoryEngines


def sqlite_is_a_backend(backend: SqliteBackend) -> Backend:
    return backend


def postgres_is_a_backend(backend: PostgresBackend) -> Backend:
    return backend


def memory_is_a_backend(backend: MemoryBackend) -> Backend:
    return backend


def memory_parts(
    records: MemorySnapshot, changes: MemoryWriteTurn, engines: MemoryEngines, tokens: MemoryTokens
) -> tuple[Snapshot, WriteTurn, Engines, Tokens]:
    return records, changes, engines, tokens
