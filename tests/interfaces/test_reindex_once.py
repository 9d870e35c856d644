"""`notewell reindex` on a folder with no index builds the index once (opening it builds it; a
rebuild after would make it again); with an index present it rebuilds as before."""

from __future__ import annotations

import shutil

import pytest

from notewell import Store
from notewell.services.opening import Store as StoreClass
from tests.interfaces.cli_harness import call


@pytest.mark.slow
def test_a_folder_without_an_index_is_indexed_once(tmp_path, monkeypatch):
    root = tmp_path / "notes"
    with Store(root, watch=False, embedder=None) as s:
        s.add_notes([f"# note {i}\n\nbody {i}" for i in range(30)])
    shutil.rmtree(root / ".notewell")  # the documented reset
    rebuilds = []
    real = StoreClass.reindex

    def counting(self, *args, **kwargs):
        rebuilds.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(StoreClass, "reindex", counting)
    done = call(["--store", str(root), "reindex"], unset=("NOTEWELL_STORE",), text=True)
    assert done.returncode == 0, done.stderr
    assert "indexed 30 notes" in done.stdout and rebuilds == []  # opening it built the index
    again = call(["--store", str(root), "reindex"], unset=("NOTEWELL_STORE",), text=True)
    assert again.returncode == 0 and "indexed 30 notes" in again.stdout and rebuilds == [1]
    with Store(root, watch=False, embedder=None) as s:
        assert len(s.list_notes(limit=100)) == 30 and not s.built_on_open
