"""What makes semantic search hold on unseen notes: passages per list item, keyword
feedback on the query vector, and a similarity floor."""

from __future__ import annotations

import time

import numpy as np
import pytest

import notewell
from notewell.search import semantic
from notewell.search.embedders import HashEmbedder
from notewell.search.semantic import list_items, passages, with_feedback

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


@pytest.fixture
def items_as_passages(monkeypatch):
    monkeypatch.setattr(semantic, "BULLET_MIN", 3)


def test_list_items_are_no_passages_by_default():
    body = notewell.parse_note(DIGEST).body
    assert len(passages("Week 12 digest", body)) == 1


@pytest.mark.usefixtures("items_as_passages")
def test_each_list_item_of_a_digest_is_a_passage_of_its_own():
    body = notewell.parse_note(DIGEST).body
    parts = passages("Week 12 digest", body)
    assert parts[0][2].startswith("Week 12 digest\n")  # the opening comes first, as before
    items = [text for _a, _b, text in parts[1:]]
    assert items == [
        "Week 12 digest\nFlaky login test fixed by pinning the clock in the fixture",
        "Week 12 digest\nDeploy pipeline now caches the wheel builds between runs",
        "Week 12 digest\nMemory leak in the thumbnail worker traced to an unclosed image handle",
        "Week 12 digest\nVendor contract renewal waits for the legal review",
    ]  # "ok" is too short to stand alone; the fenced line is no item
    for start, stop, text in parts[1:]:
        assert text.endswith(body[start:stop])  # spans index the body, for the snippet


@pytest.mark.usefixtures("items_as_passages")
def test_a_note_with_few_items_keeps_its_passages():
    body = "Intro.\n\n- only one item in this note here\n- and a second item in this note\n"
    assert len(passages("T", body)) == 1


def test_an_item_takes_its_indented_continuation_lines():
    body = "- first item, which goes on\n  over a second line\n- second item of the list here\n- third one\n"
    assert [body[a:b] for a, b in list_items(body)] == [
        "first item, which goes on\n  over a second line",
        "second item of the list here",
        "third one",
    ]


@pytest.mark.parametrize(
    "body",
    [
        "- item text here ok\n" + " " * 200_000 + "\n",
        "- item\n" + "   \n" * 100_000,
        "- " + " \t" * 100_000,
        "```\n- a\n" * 50_000,
        "- x\n  " + "y " * 100_000,
    ],
)
@pytest.mark.usefixtures("items_as_passages")
def test_list_items_take_linear_time_on_hostile_bodies(body):
    # Generous bound: a quadratic pattern takes minutes on these, a linear one milliseconds.
    started = time.perf_counter()
    parts = passages("T", body)
    assert time.perf_counter() - started < 5
    assert len(parts) <= semantic.MAX_PASSAGES + semantic.MAX_BULLETS


@pytest.mark.usefixtures("items_as_passages")
def test_a_digest_bullet_is_found_and_shown(store_dir):
    s = notewell.open(store_dir, embedder=HashEmbedder())
    digest = s.add_note(DIGEST)
    for i in range(5):
        s.add_note(f"# Other note {i}\n\nThe deploy schedule moved to Thursday, build {i}.")
    s.embed_pending()
    card = s.search_notes("thumbnail worker memory leak image handle", mode="semantic", limit=3)[0]
    assert card.id == digest.id
    assert "thumbnail worker" in card.snippet and "Flaky login" not in card.snippet  # the item's passage
    s.close()


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
    monkeypatch.setattr(semantic, "FEEDBACK_NOTES", 1)  # the one note holding every word
    monkeypatch.setattr(semantic, "FEEDBACK_WEIGHT", 0.0)
    without = [c.id for c in s.search_notes("ensemble ensemble zookeeper", mode="semantic")]
    monkeypatch.setattr(semantic, "FEEDBACK_WEIGHT", 2.0)
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
