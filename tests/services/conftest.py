"""Fixtures for the service tests that run on both stores."""

from __future__ import annotations

import pytest

import notewell


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request, tmp_path):
    """A store on a folder with its SQLite index, then one on a fresh PostgreSQL database
    (skipped, saying why, when no PostgreSQL server can be started)."""
    if request.param == "sqlite":
        s = notewell.open(tmp_path / "notes")
    else:
        s = notewell.open(request.getfixturevalue("pg_store_url"))
    yield s
    s.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def sbackend(request, tmp_path):
    """Both stores with the deterministic hash embedder, for semantic search."""
    pytest.importorskip("numpy")
    from notewell.search.embedders import HashEmbedder

    where = tmp_path / "notes" if request.param == "sqlite" else request.getfixturevalue("pg_store_url")
    s = notewell.open(where, embedder=HashEmbedder())
    yield s
    s.close()
