"""Quick version of stress/concurrent_writers.py (issue 9): writer processes and a reader on one store."""

from __future__ import annotations

import sys

import pytest

from tests.stress import load_harness


def _harness():
    return load_harness("concurrent_writers")


def test_the_harness_tells_a_whole_note_from_a_torn_one():
    import random

    h = _harness()
    text = h.make_text(1, 2, 3, random.Random(0))
    assert h.whole(text) is None
    assert h.whole(text[: len(text) // 2]) is not None
    assert h.whole(text.replace("version 3", "version 4")) is not None


@pytest.mark.slow
def test_concurrent_writers_and_a_reader_lose_nothing(tmp_path, capsys):
    h = _harness()
    fig = h.run(tmp_path / "notes", writers=3, ops=150, readers=1, seed=11, timeout=240)
    h.print_figures(fig)
    print(capsys.readouterr().out)  # shown with -s or on failure
    assert fig["errors"] == []
    assert fig["database_is_locked"] == 0 and fig["torn_reads"] == 0 and fig["mismatches"] == 0
    assert fig["acked"] == 3 * 150
    assert fig["live_notes"] > 0 and fig["deleted_notes"] > 0
    assert fig["reader_searches"] > 0 and fig["reader_gets"] > 0


ROLLBACK_WRITER = """
import sys, time, notewell
s = notewell.open(sys.argv[1], watch=False, embedder=None)
nid = sys.argv[2]
errors, n, end = 0, 0, time.time() + float(sys.argv[3])
while time.time() < end:
    n += 1
    try:
        s.edit_note(nid, f"# note\\nversion {n} " + "x" * (n % 50) + "\\n")
    except notewell.StorageError:
        errors += 1
print(n, errors)
"""

ROLLBACK_READER = """
import sys, time, notewell
s = notewell.open(sys.argv[1], watch=False, embedder=None)
end = time.time() + float(sys.argv[2])
while time.time() < end:
    s.list_notes(limit=5)
"""


@pytest.mark.slow
def test_a_reader_never_rolls_back_a_writers_note(tmp_path):
    import json
    import subprocess

    import notewell

    h = _harness()
    root = tmp_path / "s"
    s = notewell.open(root, embedder=None)
    s.add_notes([f"# filler {i}" for i in range(300)])
    nid = s.add_note("# note\nversion 0\n").id
    s.close()
    env = h._env()
    reader = subprocess.Popen([sys.executable, "-c", ROLLBACK_READER, str(root), "5"], env=env)
    writer = subprocess.run(
        [sys.executable, "-c", ROLLBACK_WRITER, str(root), nid, "5"], env=env, capture_output=True, text=True
    )
    reader.wait(timeout=60)
    edits, errors = map(int, writer.stdout.split())
    journal = [json.loads(line) for line in (root / ".notewell-history" / "journal.jsonl").read_text().splitlines()]
    spurious = [r for r in journal if r["op"] == "change" and r["id"] == nid]
    assert edits > 0 and errors == 0, f"{errors} of {edits} edits failed"
    assert spurious == [], f"{len(spurious)} outside-change records for a note only notewell wrote"
