"""The contentless keyword tables against the rows they are made from (backends/sqlite/fts_rows.py)."""

from __future__ import annotations

import os
import random
import time

import pytest

import notewell
from notewell.backends.sqlite.fts_rows import delete_fts, keyword_index_problems

WORDS = "raft quorum lease 素数 笔记 über café naïve merge segment journal fsync".split()


def _text(rng: random.Random, marker: str) -> str:
    words = " ".join(rng.choices(WORDS, k=rng.randint(3, 30)))
    header = ""
    if rng.random() < 0.5:
        tags = ", ".join(rng.sample(["cache", "后端", "perf", "io"], rng.randint(1, 2)))
        header = f"---\ntitle: {rng.choice(WORDS)} {marker}\ntags: [{tags}]\nkind: finding\n---\n"
        return f"{header}{words} {marker}\u200b zero-width kept\n"
    return f"# {rng.choice(WORDS)} {marker}\n\n{words} {marker}\n"


@pytest.mark.slow
def test_every_write_path_leaves_the_word_lists_exactly_those_of_the_rows(tmp_path):
    rng = random.Random(7)
    root = tmp_path / "s"
    store = notewell.open(root, watch=False)
    attempt = store.start_attempt("fts-rows", author="tester")
    live: dict[str, str] = {}  # id -> its marker word
    for step in range(160):
        marker = f"mark{step}x"
        roll = rng.random()
        if roll < 0.35 or not live:
            if rng.random() < 0.3:
                note = store.add_note(_text(rng, marker), attempt=attempt.id)
                live[note.id] = marker
            else:
                for note in store.add_notes([_text(rng, marker + f"n{i}") for i in range(3)]):
                    live[note.id] = note.title.split()[-1]
        elif roll < 0.6:
            nid = rng.choice(sorted(live))
            store.edit_note(nid, _text(rng, marker))
            live[nid] = marker
        elif roll < 0.75:
            nid = rng.choice(sorted(live))
            store.delete_note(nid)
            del live[nid]
        elif roll < 0.9:  # an editor changes the file outside notewell
            nid = rng.choice(sorted(live))
            path = root / store.get_note(nid).path
            path.write_text(_text(rng, marker), encoding="utf-8")
            later = time.time_ns() + step * 10**9  # a new mtime even within the clock tick of the last write
            os.utime(path, ns=(later, later))
            store.refresh()
            live[nid] = marker
        else:
            store.reindex()
    problems = keyword_index_problems(store.backend.index.conn)
    assert problems == []
    for nid, marker in live.items():
        assert nid in {c.id for c in store.search_notes(marker, limit=50)}, marker
    gone = {c.id for c in store.search_notes("raft OR quorum OR 素数 OR café", limit=1000)}
    assert gone <= set(live)
    store.close()


def test_the_check_sees_a_word_of_no_row_and_a_word_missing(tmp_path):
    store = notewell.open(tmp_path / "s", watch=False)
    a, b = store.add_notes(["# alpha\n\nbeta gamma", "# delta\n\n素数 epsilon"])
    conn = store.backend.index.conn
    assert keyword_index_problems(conn) == []
    rowid = conn.execute("SELECT rowid FROM note_index WHERE id = ?", (a.id,)).fetchone()[0]
    with store.backend.index.write():
        delete_fts(conn, rowid)  # a's words gone while its rows stay
        conn.execute("INSERT INTO notes_fts(rowid, title, body, meta) VALUES (999, 'zeta', 'zeta', '')")
    problem, titles = keyword_index_problems(conn)
    assert problem.startswith("notes_fts: 2 entries of no row") and "'zeta', 999" in problem
    assert "4 missing" in problem  # the title, and the body: the whole text ('# alpha beta gamma')
    assert titles == f"titles_fts: 0 entries of no row []; 1 missing [('alpha', {rowid}, 'title', 0)]"
    store.close()
