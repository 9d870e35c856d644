"""Quick version of stress/outside_edits.py (issue 9): outside edits and a git checkout under a running server."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")


from tests.stress import load_harness


def _harness():
    return load_harness("outside_edits")


def test_the_id_model_follows_the_readme(tmp_path):
    """A new file's id comes from its path; an edit keeps it; a rename keeps it; a rename and an
    edit between two reads is a new note."""
    import random

    from notewell.model.ids import derived_note_id

    h = _harness()
    m = h.Model(root=tmp_path, run=1, rng=random.Random(1))
    a, b = m.op_new(""), m.op_new("")
    m.mark_synced()
    assert m.expected_ids() == {a: derived_note_id(a), b: derived_note_id(b)}
    m.files[a] += "edited\n"
    moved = m.fresh_path("")
    m.files[moved] = m.files.pop(b)
    ids = m.expected_ids()
    assert ids[a] == derived_note_id(a) and ids[moved] == derived_note_id(b)
    m.mark_synced()
    again = m.fresh_path("")
    m.files[again] = m.files.pop(moved) + "and edited\n"
    assert m.expected_ids()[again] == derived_note_id(again)


@pytest.mark.slow
def test_a_storm_of_outside_edits_then_a_git_checkout(tmp_path, capsys):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    h = _harness()
    fig = h.run(tmp_path, ops=150, seed=5, initial=30, git_changes=30, timeout=30)
    h.print_figures(fig)
    print(capsys.readouterr().out)  # shown with -s or on failure
    assert fig["mismatches"] == []
    assert fig["server_errors"] == []
    assert sum(fig["op_counts"].values()) == 150
    assert fig["op_counts"]["rename"] and fig["op_counts"]["delete"] and fig["op_counts"]["save_as_editor"]
    assert fig["git"]["notes in A"] != fig["git"]["notes in B"]
