from __future__ import annotations

import pytest

import notewell

# The card contract of issue 2: every search and list hit has exactly these fields.
CARD_KEYS = frozenset(
    {"id", "title", "kind", "tags", "builds_on", "model", "author", "created_at", "updated_at", "snippet", "score"}
)


@pytest.fixture
def store_dir(tmp_path):
    return tmp_path / "notes"


@pytest.fixture
def store(store_dir):
    s = notewell.open(store_dir)
    yield s
    s.close()
