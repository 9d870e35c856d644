"""The web page's SVG pictures: they parse, they count right, they are safe to insert, they stay small."""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET

import pytest

from notewell.interfaces.http.web.pictures import (
    MARKS_MAX,
    NODES_MAX,
    ROWS_MAX,
    attempt_svg,
    clip_text,
    graph_svg,
    timeline_svg,
    wrap_text,
)

ALLOWED = {"svg", "g", "rect", "line", "text", "title", "a", "path", "circle", "polygon", "tspan", "defs", "marker"}
HOSTILE = ["<script>alert(1)</script>", '" onload="x', "]]>", "&amp;", "javascript:alert(1)", "' onclick='y"]


def tree(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def count(svg: str, tag: str) -> int:
    return sum(1 for element in tree(svg).iter() if local(element.tag) == tag)


def texts(svg: str) -> list[str]:
    return ["".join(element.itertext()) for element in tree(svg).iter() if local(element.tag) == "text"]


def assert_safe(svg: str) -> None:
    root = tree(svg)
    assert local(root.tag) == "svg" and root.get("role") == "img" and root.get("aria-label")
    for element in root.iter():
        assert local(element.tag) in ALLOWED, element.tag
        for name, value in element.attrib.items():
            assert not local(name).lower().startswith("on"), name
            assert local(name) != "style"
            if local(name) == "href":
                assert value.startswith(("?note=", "?attempt=")), value
                assert ":" not in value and "<" not in value and '"' not in value
            elif local(name) != "aria-label":  # the one attribute that carries (escaped) user text
                assert "javascript:" not in value and "<" not in value
    # the raw markup, too: hostile text is only ever present escaped, so it cannot open a tag or attribute
    assert "<script" not in svg and 'onload="' not in svg and "onclick='" not in svg


def attempt(ident: str, start: str, end: str | None, outcome: str | None = "succeeded", **extra: object) -> dict:
    return {
        "id": ident,
        "author": "ann",
        "model": "m1",
        "started_at": start,
        "ended_at": end,
        "outcome": outcome,
    } | extra


def note(ident: str, title: str, **extra: object) -> dict:
    return {"id": ident, "title": title} | extra


# timeline


def test_timeline_rows_bars_links_and_tooltips() -> None:
    attempts = [
        attempt("a1", "2026-12-01T10:00:00.123456Z", "2026-12-01T11:00:00Z", "succeeded"),
        attempt("a2", "2026-12-02T10:00:00Z", "2026-12-02T12:00:00Z", "failed"),
        attempt("a3", "2026-12-03T10:00:00Z", "2026-12-03T10:05:00Z", "abandoned"),
    ]
    svg = timeline_svg(attempts)
    assert_safe(svg)
    links = [element.get("href") for element in tree(svg).iter() if local(element.tag) == "a"]
    assert links == ["?attempt=a3", "?attempt=a2", "?attempt=a1"]  # newest on top
    assert count(svg, "rect") == 3 and count(svg, "title") == 3
    fills = [element.get("fill") for element in tree(svg).iter() if local(element.tag) == "rect"]
    assert fills == ["#9e9e9e", "#c62828", "#2e7d32"]
    assert any("succeeded" in text for text in texts(svg))
    root = tree(svg)
    assert root.get("width") == "640" and root.get("viewBox").startswith("0 0 640 ")


def test_timeline_running_attempt_draws_to_now() -> None:
    attempts = [attempt("r", "2026-12-01T10:00:00Z", None, None), attempt("d", "2026-12-01T09:00:00Z", None, None)]
    svg = timeline_svg(attempts, now="2026-12-01T12:00:00Z")
    assert_safe(svg)
    rects = [element for element in tree(svg).iter() if local(element.tag) == "rect"]
    assert [rect.get("fill") for rect in rects] == ["#1565c0", "#1565c0"]
    assert float(rects[0].get("x")) + float(rects[0].get("width")) == pytest.approx(628.0)
    assert all("running" in text for text in texts(svg)[:2])
    assert "12:00" in texts(svg) and "2026-12-01 UTC" in texts(svg)  # the last tick is now; the date once


def test_timeline_one_attempt_at_one_instant_gets_a_visible_bar() -> None:
    svg = timeline_svg([attempt("x", "2026-12-01T10:00:00Z", "2026-12-01T10:00:00Z", "whatever")])
    rect = next(element for element in tree(svg).iter() if local(element.tag) == "rect")
    assert float(rect.get("width")) >= 3
    assert rect.get("fill") == "#8d6e63"  # an outcome with no colour of its own


def test_timeline_empty_and_unparseable() -> None:
    assert timeline_svg([]) == ""
    assert timeline_svg([attempt("bad", "yesterday", None)]) == ""
    svg = timeline_svg(
        [
            attempt("ok", "2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z"),
            attempt("bad-start", "not a time", None),
            attempt("bad-end", "2026-12-01T10:00:00Z", "soon"),
            attempt("no-start", None, None),  # type: ignore[arg-type]
        ],
        now="garbage",
    )
    assert count(svg, "rect") == 1
    assert any("3 with unreadable times" in text for text in texts(svg))


def test_timeline_caps_rows_and_says_how_many_more() -> None:
    attempts = [attempt(f"a{i:04d}", "2026-01-01T00:00:00Z", None) for i in range(ROWS_MAX + 7)]
    attempts += [attempt("newest", "2026-02-01T00:00:00Z", "2026-02-01T01:00:00Z")]
    svg = timeline_svg(attempts)
    assert count(svg, "a") == ROWS_MAX
    assert any(text.startswith("+8 more") for text in texts(svg))
    assert tree(svg).find("{*}a").get("href") == "?attempt=newest"


def test_timeline_hostile_text() -> None:
    attempts = [
        attempt(text, "2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z", text, author=text, model=text) for text in HOSTILE
    ]
    svg = timeline_svg(attempts)
    assert_safe(svg)
    titles = ["".join(element.itertext()) for element in tree(svg).iter() if local(element.tag) == "title"]
    assert any("<script>alert(1)</script>" in title for title in titles)  # kept, as text
    hrefs = {element.get("href") for element in tree(svg).iter() if local(element.tag) == "a"}
    assert "?attempt=javascript%3Aalert%281%29" in hrefs


# graph


def test_graph_nodes_links_and_arrows() -> None:
    svg = graph_svg(
        note("mid", "The note"),
        [note("l1", "Left one", kind="idea"), note("l2", "Left two")],
        [note("r1", "Right one")],
    )
    assert_safe(svg)
    assert count(svg, "rect") == 4 and count(svg, "polygon") == 3
    hrefs = [element.get("href") for element in tree(svg).iter() if local(element.tag) == "a"]
    assert hrefs == ["?note=l1", "?note=l2", "?note=r1"]  # the middle node is not linked
    assert "The note" in texts(svg)
    tips = ["".join(element.itertext()) for element in tree(svg).iter() if local(element.tag) == "title"]
    assert "Left one\nidea\nl1" in tips


def test_graph_empty_is_nothing() -> None:
    assert graph_svg(note("mid", "The note"), [], []) == ""
    assert count(graph_svg(note("mid", "The note"), [], [note("r", "R")]), "rect") == 2


def test_graph_caps_each_side() -> None:
    left = [note(f"l{i}", f"left {i}") for i in range(NODES_MAX + 3)]
    right = [note(f"r{i}", f"right {i}") for i in range(NODES_MAX + 1)]
    svg = graph_svg(note("mid", "mid"), left, right)
    assert count(svg, "a") == 2 * NODES_MAX
    assert "+3 more" in texts(svg) and "+1 more" in texts(svg)


def test_graph_hostile_text() -> None:
    nodes = [note(text, text, kind=text) for text in HOSTILE]
    svg = graph_svg(note(HOSTILE[0], HOSTILE[1]), nodes, nodes)
    assert_safe(svg)
    assert '" onload="x' in texts(svg) and "]]>" in texts(svg) and "&amp;" in texts(svg)


def test_graph_titles_wrap_instead_of_being_cut() -> None:
    long = "检索增强生成的笔记关于向量数据库和全文搜索的比较"
    english = "Checkout hangs when the inventory lock is held past the request timeout"
    svg = graph_svg(note("mid", "短标题"), [note("l", long)], [note("r", english), note("x", "English " * 20)])
    shown = texts(svg)
    assert "短标题" in shown
    start = shown.index("检索增强生成的笔记关于向量数")  # 28 columns a line, two a character
    assert "".join(shown[start : start + 2]) == long
    start = shown.index("Checkout hangs when the")
    assert " ".join(shown[start : start + 3]) == english  # at word breaks, on three lines
    longest = [text for text in shown if text.startswith("English")]
    assert len(longest) == 3 and longest[-1].endswith("…")  # past three lines: cut, said so
    tips = ["".join(element.itertext()) for element in tree(svg).iter() if local(element.tag) == "title"]
    assert any(tip.startswith(long) for tip in tips)


def test_wrap_text_breaks_at_spaces_and_counts_cjk_double() -> None:
    assert wrap_text("short", 10, 2) == ["short"] and wrap_text(None, 10, 2) == []
    assert wrap_text("one two three four", 9, 2) == ["one two", "three fo…"]
    assert wrap_text("中文中文中文", 8, 2) == ["中文中文", "中文"]
    assert wrap_text("x" * 10_000, 10, 2) == ["x" * 10, "x" * 9 + "…"]


def test_clip_text_counts_cjk_double() -> None:
    assert clip_text("abcdef", 6) == "abcdef"
    assert clip_text("abcdefg", 6) == "abcde…"
    assert clip_text("中文中文", 8) == "中文中文"
    assert clip_text("中文中文中", 8) == "中文中…"
    assert clip_text("ab中文", 5) == "ab中…"
    assert clip_text("  two\nlines  ", 20) == "two lines"
    assert clip_text("x" * 10_000, 10) == "x" * 9 + "…"
    assert clip_text(None, 10) == ""


# attempt


def test_attempt_marks_above_and_below() -> None:
    svg = attempt_svg(
        attempt("a", "2026-12-01T10:00:00Z", "2026-12-01T12:00:00Z", "failed"),
        [
            note("n1", "写的笔记", created_at="2026-12-01T10:30:00Z"),
            note("n2", "two", created_at="2026-12-01T11:00:00Z"),
        ],
        [
            {"note": "r1", "at": "2026-12-01T10:10:00Z", "title": "read one"},
            {"note": "r2", "at": "2026-12-01T10:20:00Z"},
        ],
    )
    assert_safe(svg)
    circles = [element for element in tree(svg).iter() if local(element.tag) == "circle"]
    assert len(circles) == 4
    above = [c for c in circles if float(c.get("cy")) < 80]
    assert len(above) == 2
    hrefs = [element.get("href") for element in tree(svg).iter() if local(element.tag) == "a"]
    assert hrefs == ["?note=n1", "?note=n2", "?note=r1", "?note=r2"]
    assert "failed" in texts(svg) and "写的笔记" in texts(svg)


def test_attempt_running_ends_at_now_or_last_event() -> None:
    running = attempt("a", "2026-12-01T10:00:00Z", None, None)
    notes = [note("n1", "t", created_at="2026-12-01T11:00:00Z")]
    svg = attempt_svg(running, notes, [])
    assert "running" in texts(svg)
    circle = next(element for element in tree(svg).iter() if local(element.tag) == "circle")
    assert float(circle.get("cx")) == pytest.approx(540.0)  # the last event is the end
    svg = attempt_svg(running, notes, [], now="2026-12-01T12:00:00Z")
    circle = next(element for element in tree(svg).iter() if local(element.tag) == "circle")
    assert float(circle.get("cx")) == pytest.approx(278.0)  # halfway to now
    assert "2026-12-01 12:00 UTC" in texts(svg)


def test_attempt_nothing_parses_is_nothing() -> None:
    bad = attempt("a", "never", None)
    assert attempt_svg(bad, [], []) == ""
    assert attempt_svg(bad, [note("n", "t", created_at="nope")], [{"note": "r", "at": None}]) == ""
    # a mark whose time parses is enough, and marks whose time does not are left out
    svg = attempt_svg(bad, [note("n", "t", created_at="2026-12-01T10:00:00Z"), note("m", "t", created_at="?")], [])
    assert count(svg, "circle") == 1


def test_attempt_caps_marks() -> None:
    notes = [note(f"n{i}", "t", created_at=f"2026-12-01T10:{i % 60:02d}:00Z") for i in range(MARKS_MAX + 5)]
    reads = [{"note": f"r{i}", "at": "2026-12-01T10:00:00Z"} for i in range(MARKS_MAX + 2)]
    svg = attempt_svg(attempt("a", "2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z"), notes, reads)
    assert count(svg, "circle") == 2 * MARKS_MAX
    assert "+5 more written, +2 more read" in texts(svg)
    assert count(svg, "text") < 10  # too many marks to label: the tooltips carry them


def test_attempt_hostile_text() -> None:
    notes = [note(text, text, created_at="2026-12-01T10:30:00Z") for text in HOSTILE]
    reads = [{"note": text, "title": text, "at": "2026-12-01T10:40:00Z"} for text in HOSTILE]
    hostile = attempt(HOSTILE[0], "2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z", HOSTILE[1])
    svg = attempt_svg(hostile, notes, reads)
    assert_safe(svg)
    assert "<script>alert(1)</script>" in tree(svg).get("aria-label")


def test_control_characters_are_dropped_so_the_text_parses() -> None:
    svg = graph_svg(note("a\x00b", "bell\x07 and \ud800 surrogate"), [note("x\x1b", "esc\x1b")], [])
    assert_safe(svg)
    assert "?note=x%1B" in svg


# cost


def test_big_inputs_render_fast_and_stay_small() -> None:
    many = 5_000
    attempts = [
        attempt(f"a{i}", f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00Z", None if i % 7 else "2026-12-31T00:00:00Z")
        for i in range(many)
    ]
    nodes = [note(f"n{i}", "很长的标题" * 200) for i in range(many)]
    notes = [note(f"n{i}", "title " * 500, created_at=f"2026-12-01T10:{i % 60:02d}:00Z") for i in range(many)]
    reads = [{"note": f"r{i}", "at": f"2026-12-01T11:{i % 60:02d}:00Z", "title": "x" * 5_000} for i in range(many)]
    outcome = attempt("a", "2026-12-01T10:00:00Z", "2026-12-01T12:00:00Z")
    for render in (
        lambda: timeline_svg(attempts),
        lambda: graph_svg(nodes[0], nodes, nodes),
        lambda: attempt_svg(outcome, notes, reads),
    ):
        began = time.perf_counter()
        svg = render()
        assert time.perf_counter() - began < 1.0
        assert_safe(svg)
        assert len(svg) < 80_000
    # past the caps the output no longer grows with the input
    assert len(timeline_svg(attempts[:100])) == pytest.approx(len(timeline_svg(attempts)), rel=0.1)
    capped = len(graph_svg(nodes[0], nodes[:50], nodes[:50]))
    assert capped == pytest.approx(len(graph_svg(nodes[0], nodes, nodes)), rel=0.01)
    assert len(attempt_svg(outcome, notes[:100], reads[:100])) == pytest.approx(
        len(attempt_svg(outcome, notes, reads)), rel=0.1
    )


def _ticks(svg: str) -> list[str]:
    """The time axis's tick labels: the texts anchored under the bars' column."""
    return [
        "".join(element.itertext())
        for element in tree(svg).iter()
        if local(element.tag) == "text" and element.get("text-anchor") and float(element.get("x")) >= 230
    ]


@pytest.mark.parametrize(
    ("end", "form", "dates"),
    [
        ("2026-12-06T01:10:40Z", r"\d\d:\d\d:\d\d", "2026-12-06 UTC"),  # the axis: a minute and a half
        ("2026-12-06T05:30:00Z", r"\d\d:\d\d", "2026-12-06 UTC"),
        ("2026-12-07T00:30:00Z", r"\d\d:\d\d", "2026-12-06 – 12-07 UTC"),  # past midnight: both dates said
        ("2026-12-08T20:00:00Z", r"\d\d-\d\d \d\d:\d\d", "2026-12-06 – 12-08 UTC"),
        ("2027-02-01T00:00:00Z", r"\d{4}-\d\d-\d\d", "UTC"),
    ],
)
def test_every_tick_of_the_time_axis_is_written_alike(end: str, form: str, dates: str) -> None:
    attempts = [attempt("a", "2026-12-06T01:09:10Z", "2026-12-06T01:09:40Z"), attempt("b", "2026-12-06T01:09:50Z", end)]
    svg = timeline_svg(attempts)
    ticks = _ticks(svg)
    assert len(ticks) == 4 and all(re.fullmatch(form, tick) for tick in ticks), ticks
    assert texts(svg).count(dates) == 1  # the dates the ticks leave out, said once
