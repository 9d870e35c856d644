"""The service's background embedding, whatever the backend (here the memory fake): one thread
per store, started only with a model, embedding what comes, stopped when the store closes."""

from __future__ import annotations

import sys
import threading

import pytest

from notewell import UnavailableError
from notewell.services.service import NoteService
from tests.conftest import embedding_threads, wait_for
from tests.fakes import MemoryBackend

pytest.importorskip("numpy")

from notewell.search.embedders import HashEmbedder  # noqa: E402 - after numpy's check


def test_one_thread_per_store_embeds_what_comes_and_stops_when_the_store_closes():
    store = NoteService(MemoryBackend(embedder=HashEmbedder()))
    before = set(threading.enumerate())
    with store:
        assert store.start_embedding(idle=0.05)
        assert not store.start_embedding()  # one thread per store
        (thread,) = embedding_threads(before)
        notes = [store.add_note(f"# n{i}\n\nfig{i} tree") for i in range(5)]
        assert wait_for(lambda: store.pending_embeddings() == 0, 10)
        assert store.search_notes("fig3 tree", mode="semantic", limit=1)[0].id == notes[3].id
    assert not thread.is_alive()  # closing stopped it


def test_without_a_model_or_numpy_no_thread_starts(monkeypatch):
    before = set(threading.enumerate())
    with NoteService(MemoryBackend(embedder=None)) as store:
        with pytest.raises(UnavailableError, match="without an embedder"):
            store.start_embedding()
    with NoteService(MemoryBackend(embedder=HashEmbedder())) as store:
        monkeypatch.setitem(sys.modules, "numpy", None)
        with pytest.raises(UnavailableError, match="'semantic' extra"):
            store.start_embedding()
        assert store.pending_embeddings() == 0  # counting needs no numpy
    assert embedding_threads(before) == []
