"""Fixtures for the service tests that run on every backend: SQLite, PostgreSQL and the
in-memory fake (tests/fakes), on which the policy runs without a database."""

from __future__ import annotations

import pytest

import notewell

_BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres), "memory"]


def _memory(embedder):
    from notewell.services.service import NoteService
    from tests.fakes import MemoryBackend

    return NoteService(MemoryBackend(embedder=embedder))


def on_memory(store) -> bool:
    """Whether *store* is the service on the in-memory fake."""
    from tests.fakes import MemoryBackend

    return isinstance(getattr(store, "backend", None), MemoryBackend)


@pytest.fixture(params=_BACKENDS)
def backend(request, tmp_path):
    """A store on a folder with its SQLite index, then one on a fresh PostgreSQL database
    (skipped, saying why, when no PostgreSQL server can be started), then the service on the
    in-memory backend (with the hash embedder: it has no bundled model to load)."""
    if request.param == "sqlite":
        s = notewell.open(tmp_path / "notes")
    elif request.param == "postgres":
        s = notewell.open(request.getfixturevalue("pg_store_url"))
    else:
        pytest.importorskip("numpy")
        from notewell.search.embedders import HashEmbedder

        s = _memory(HashEmbedder())
    yield s
    s.close()


@pytest.fixture(params=_BACKENDS)
def sbackend(request, tmp_path):
    """Every store with the deterministic hash embedder, for semantic search."""
    pytest.importorskip("numpy")
    from notewell.search.embedders import HashEmbedder

    if request.param == "memory":
        s = _memory(HashEmbedder())
    else:
        where = tmp_path / "notes" if request.param == "sqlite" else request.getfixturevalue("pg_store_url")
        s = notewell.open(where, embedder=HashEmbedder())
    yield s
    s.close()
