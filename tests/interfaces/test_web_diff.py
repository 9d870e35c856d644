"""The line diff the page shows between two revisions: right, bounded in time, lines as text."""

from __future__ import annotations

import random
import time

from notewell.interfaces.http.web.diff import PAIRS_MAX, SHOWN_MAX, line_diff


def sides(diff: dict) -> tuple[list[str], list[str]]:
    lines = [line for hunk in diff["hunks"] for line in hunk["lines"]]
    return [x["text"] for x in lines if x["op"] != "+"], [x["text"] for x in lines if x["op"] != "-"]


def test_a_small_edit_is_one_hunk_with_context_and_line_numbers():
    old = "\n".join(f"line {i}" for i in range(1, 21))
    new = old.replace("line 10", "line ten")
    diff = line_diff(old, new)
    assert (diff["added"], diff["removed"], diff["coarse"], diff["truncated"]) == (1, 1, False, False)
    (hunk,) = diff["hunks"]
    assert [(x["op"], x["old"], x["new"], x["text"]) for x in hunk["lines"]] == [
        ("=", 7, 7, "line 7"),
        ("=", 8, 8, "line 8"),
        ("=", 9, 9, "line 9"),
        ("-", 10, None, "line 10"),
        ("+", None, 10, "line ten"),
        ("=", 11, 11, "line 11"),
        ("=", 12, 12, "line 12"),
        ("=", 13, 13, "line 13"),
    ]
    assert line_diff(old, old)["hunks"] == []


def test_both_texts_are_read_back_from_the_diff():
    rng = random.Random(7)
    for _ in range(400):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 40))]
        b = [rng.choice("abcde") for _ in range(rng.randint(0, 40))]
        diff = line_diff("\n".join(a), "\n".join(b), context=10_000)
        assert sides(diff) == ((a, b) if a != b else ([], []))
        assert diff["added"] == sum(x["op"] == "+" for h in diff["hunks"] for x in h["lines"])


def test_markup_stays_text():
    diff = line_diff("<b>old</b>", "<script>alert(1)</script>")
    assert sides(diff) == (["<b>old</b>"], ["<script>alert(1)</script>"])


def test_hostile_revisions_cost_little():
    """20,000 lines a side drawn from 199 distinct ones: difflib alone took 137 s."""
    old = "\n".join(str(i % 199) for i in range(20_000))
    new = "\n".join(str((i * 7) % 199) for i in range(20_000))
    start = time.perf_counter()
    diff = line_diff(old, new)
    assert time.perf_counter() - start < 2.0
    assert diff["coarse"] and diff["truncated"] and diff["added"] == 19_999 == diff["removed"]
    assert sum(len(h["lines"]) for h in diff["hunks"]) == SHOWN_MAX
    # Under the bound, a long changed part is still compared line by line.
    side = int(PAIRS_MAX**0.5)
    small = line_diff("\n".join(f"a{i}" for i in range(side)), "\n".join(f"a{i}" for i in range(1, side + 1)))
    assert not small["coarse"] and (small["added"], small["removed"]) == (1, 1)


def test_an_edit_in_a_long_note_is_found_exactly():
    old = [f"paragraph {i}" for i in range(60_000)]
    new = old[:30_000] + ["inserted"] + old[30_000:]
    start = time.perf_counter()
    diff = line_diff("\n".join(old), "\n".join(new))
    assert time.perf_counter() - start < 2.0
    assert (diff["added"], diff["removed"], diff["coarse"]) == (1, 0, False)
    assert [x["text"] for x in diff["hunks"][0]["lines"] if x["op"] == "+"] == ["inserted"]


def test_a_short_side_of_repeated_lines_against_a_long_one_costs_little():
    """5,025 lines of two values against 199 equal ones (10 KB and 400 B): difflib, indexing the
    short side, where it drops no repeated line, took 5 s; the long side is indexed now."""
    long = "\n".join("xy"[i % 2] for i in range(5025))
    short = "\n".join(["x"] * 199)
    for old, new in ((long, short), (short, long)):
        start = time.thread_time()
        diff = line_diff(old, new, context=10_000)
        assert time.thread_time() - start < 0.5
        # Not the shortest diff (difflib sets the repeated line aside, as it does for any side of
        # 200 lines), but a true one, compared line by line.
        assert not diff["coarse"] and diff["removed"] - diff["added"] == old.count("\n") - new.count("\n")
        assert diff["added"] + diff["removed"] < 5025 + 199  # some lines matched
