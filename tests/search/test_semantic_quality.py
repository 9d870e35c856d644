"""What makes semantic search hold on unseen notes: keyword feedback on the query vector,
and a similarity floor."""

from __future__ import annotations

import numpy as np
import pytest

import notewell
from notewell.search import passages as passage_module
from notewell.search.embedders import HashEmbedder
from notewell.search.passages import passages, with_feedback

DIGEST = """---
title: Week 12 digest
kind: digest
---
Where things stand:

- Flaky login test fixed by pinning the clock in the fixture
- Deploy pipeline now caches the wheel builds between runs
- Memory leak in the thumbnail worker traced to an unclosed image handle
* ok
1. Vendor contract renewal waits for the legal review

```
- a line of a log, not an item
```
"""


def test_a_digest_keeps_one_opening_passage():
    # List items as passages of their own were measured and dropped (README): a digest is embedded
    # as any note is, and its bullets are found through the opening passage.
    body = notewell.parse_note(DIGEST).body
    assert len(passages("Week 12 digest", body)) == 1


def test_feedback_moves_the_query_towards_the_keyword_hits():
    q = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    hits = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)
    moved = with_feedback(q, hits)
    assert np.linalg.norm(moved) == pytest.approx(1.0)
    assert moved[1] == pytest.approx(moved[2]) and 0 < moved[1] < moved[0]
    assert with_feedback(q, np.zeros((0, 3), np.float32)) is q  # no hits: the query as it is


def test_semantic_search_takes_feedback_from_keyword_hits(store_dir, monkeypatch):
    s = notewell.open(store_dir, embedder=HashEmbedder())
    # The query shares one word with each note; the keyword hit with its rare word decides.
    target = s.add_note("# Zookeeper session expiry\n\nquorum lost when the ensemble split")
    other = s.add_note("# Ensemble methods\n\nbagging boosting stacking ensemble ensemble")
    s.embed_pending()
    monkeypatch.setattr(passage_module, "FEEDBACK_NOTES", 1)  # the one note holding every word
    monkeypatch.setattr(passage_module, "FEEDBACK_WEIGHT", 0.0)
    without = [c.id for c in s.search_notes("ensemble ensemble zookeeper", mode="semantic")]
    monkeypatch.setattr(passage_module, "FEEDBACK_WEIGHT", 2.0)
    with_it = [c.id for c in s.search_notes("ensemble ensemble zookeeper", mode="semantic")]
    assert without[0] == other.id and with_it[0] == target.id  # "zookeeper" finds the target by keyword
    s.close()


class _Floored(HashEmbedder):
    similarity_floor = 0.3


def test_semantic_search_answers_nothing_below_the_floor(store_dir):
    s = notewell.open(store_dir, embedder=_Floored())
    near = s.add_note("# Cache stampede\n\nEvery worker refills the cache at once when the key expires.")
    s.add_note("# Restart policy\n\nLuby restarts beat geometric ones on the medium fixtures.")
    s.embed_pending()
    cards = s.search_notes("cache stampede when the key expires", mode="semantic")
    assert [c.id for c in cards] == [near.id] and cards[0].score >= 0.3
    assert s.search_notes("banana bread recipe", mode="semantic") == []  # nothing close
    both = s.search_notes("Luby", mode="both")  # the keyword list stays whatever the floor says
    assert [c.mode for c in both][:1] == ["keyword"]
    s.close()


@pytest.mark.slow
def test_a_query_waits_for_one_batch_of_a_long_embedding_not_for_all_of_it():
    import threading
    import time

    from notewell.search.embedders import default_embedder

    model = default_embedder()
    model.embed_query("warm up")
    texts = [f"passage {i} about the retry storm and the pool timeout, " * 12 for i in range(400)]
    started = threading.Event()
    finished: list[float] = []

    def long_embedding() -> None:
        started.set()
        model.embed_documents(texts)
        finished.append(time.perf_counter())

    worker = threading.Thread(target=long_embedding)
    worker.start()
    started.wait()
    time.sleep(0.2)
    model.embed_query("when did the flaky test first fail")
    answered = time.perf_counter()
    worker.join()
    assert answered < finished[0]  # the query did not wait for the 400 passages
