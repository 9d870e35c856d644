from __future__ import annotations

import pytest

import notewell

# The card contract (issue 2, plus the attempt fields of issue 3): every search and list hit has exactly these.
CARD_KEYS = frozenset(
    {"id", "title", "kind", "tags", "builds_on", "model", "author", "created_at", "updated_at", "snippet", "score"}
    | {"attempt_id", "project", "campaign", "note_kind", "attempt_outcome", "attempt_ended_at"}
    | {"mode"}
)


@pytest.fixture
def store_dir(tmp_path):
    return tmp_path / "notes"


@pytest.fixture
def store(store_dir):
    s = notewell.open(store_dir)
    yield s
    s.close()
