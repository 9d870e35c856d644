"""Relative date filters and ages, the same on both stores and through the CLI."""

from __future__ import annotations

import json

import pytest

import notewell
from tests.interfaces.cli_harness import run


def test_relative_filters_on_both_stores(backend):
    note = backend.add_note("# Fresh\n\njust written")
    assert [c.id for c in backend.search_notes("written", updated_after="1h")] == [note.id]
    assert [c.id for c in backend.list_notes(created_after="today", tz="UTC")] == [note.id]
    assert backend.search_notes("written", updated_before="yesterday", tz="Europe/Berlin") == []
    assert backend.list_notes(updated_before="2w") == []
    with pytest.raises(notewell.InvalidArgumentError, match="^updated_after: 'soon' is not a date"):
        backend.list_notes(updated_after="soon")
    with pytest.raises(notewell.InvalidArgumentError, match="^tz: "):
        backend.list_notes(tz="Nowhere/Else")


def test_cards_and_notes_say_their_age(backend):
    note = backend.add_note("# Aged\n\nnew")
    card = backend.search_notes("aged")[0].to_dict()
    assert card["age"] == "written just now" and card["updated_at"]
    backend.edit_note(note.id, "# Aged\n\nnewer")
    assert backend.get_note(note.id).to_dict()["age"] == "updated just now"


@pytest.mark.slow
def test_the_cli_takes_relative_dates_and_a_zone(tmp_path):
    store = tmp_path / "s"
    nid = run(["add", "--title", "T", "--text", "relative"], store).stdout.decode().strip()
    listed = json.loads(run(["list", "--updated-after", "7d", "--tz", "Asia/Shanghai", "--json"], store).stdout)[
        "cards"
    ]
    assert [c["id"] for c in listed] == [nid] and listed[0]["age"].endswith("just now")
    bad = run(["list", "--updated-after", "last week"], store, check=False)
    assert bad.returncode == 2 and b"is not a date (use 2026-11-29" in bad.stderr
