from __future__ import annotations

import pytest

import notewell


@pytest.fixture
def store_dir(tmp_path):
    return tmp_path / "notes"


@pytest.fixture
def store(store_dir):
    s = notewell.open(store_dir)
    yield s
    s.close()
