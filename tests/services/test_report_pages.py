"""A report written out (services/report_pages.py): hostile titles, authors and kinds come out as
text in Markdown (read by markdown-it, a CommonMark parser) and in the HTML page (read by the
standard library's parser), every link goes to the page's view of a note, and writing is linear."""

from __future__ import annotations

import re
import time
from dataclasses import astuple
from html.parser import HTMLParser

import pytest

import notewell
from notewell.services.report_pages import check_base_url, render_html, render_markdown, render_report
from notewell.services.reports import Report, ReportLine, SupersededLine, build_report

HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "</style><script>document.cookie</script>",
    "[click](javascript:alert(1)) ![x](http://evil/x.png)",
    "**bold** _em_ `code` | pipe ~~strike~~ \\ back",
    "&lt;script&gt; &amp; &#60;b&#62;",
    "<!-- a comment -->",
    "<https://evil.example/autolink>",
    "\x1b[31mred\x1b[0m and \u202eright-to-left\u2028next",
    "# not a heading",
    "a " * 99 + "<",  # as long as a title gets (200 characters)
]
_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "main", "h1", "h2", "p", "ul", "li"}
_TAGS |= {"a", "span", "div", "code", "strong"}
_HREF = re.compile(r"(?:https://notes\.example\.com/x)?/\?(?:note=nte|attempt=att)_[0-9a-z]{10}")


def _report(titles: list[str], *, author: str = "<b>mallory</b>", project: str | None = None) -> Report:
    lines = [
        ReportLine(f"nte_{i:010d}", title, f"2026-12-0{1 + i % 9}T10:00:00.000000Z", "<i>kind</i>", "p", author, None)
        for i, title in enumerate(titles)
    ]
    report = Report(project, "2026-11-30T00:00:00.000000Z", "2026-12-07T00:00:00.000000Z", True)
    report.done, report.decisions = lines, lines[:2]
    report.open = [ReportLine("att_0000000001", titles[0], lines[0].date, "attempt x", "p", author, "nte_0000000002")]
    # each note superseded by the next two (a correction's title is written like any other)
    fixes = (lines * 3)[1:]
    report.superseded = [
        SupersededLine(*astuple(ln), superseded_by=tuple(fixes[i : i + 2])) for i, ln in enumerate(lines)
    ]
    report.written, report.other_kinds = len(lines), [("<script>", 2)]
    return report


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.links: list[tuple[str, str]] = []
        self.style = ""
        self._open: list[str] = []
        self._link: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs
        if tag == "a":
            self._link = [dict(attrs)["href"] or ""]
        if tag not in ("meta",):
            self._open.append(tag)

    def handle_endtag(self, tag):
        if tag == "a" and self._link is not None:
            self.links.append((self._link[0], "".join(self._link[1:])))
            self._link = None
        if self._open and self._open[-1] == tag:
            self._open.pop()

    def handle_data(self, data):
        if self._open and self._open[-1] == "style":
            self.style += data
        if self._link is not None:
            self._link.append(data)

    def handle_comment(self, data):
        raise AssertionError(f"a comment in the page: {data!r}")


def _shown(title: str) -> str:
    """A title as a report shows it: on one line, control characters made spaces."""
    return "".join(" " if ord(c) < 32 or c in "\u202e\u2028\x7f" else c for c in title).strip()


def test_hostile_titles_are_text_in_the_html_page():
    page = render_html(_report(HOSTILE), summary="<script>x</script> & a summary", model="<m>")
    parsed = _Page()
    parsed.feed(page)
    parsed.close()
    assert set(parsed.tags) <= _TAGS and parsed.tags.count("style") == 1 and parsed.tags.count("script") == 0
    assert not [name for name, _ in parsed.attrs if name.startswith("on") or name in ("src", "srcdoc")]
    assert "</style" not in parsed.style and "script" not in parsed.style
    assert parsed.links and all(_HREF.fullmatch(href) for href, _ in parsed.links)
    titles = [text for href, text in parsed.links if not text.startswith(("nte_", "att_"))]
    assert titles[: len(HOSTILE)] == [_shown(t) for t in HOSTILE]  # each title's text, escaped once, whole
    assert "<script>x</script> & a summary" in page.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    assert 'http-equiv="Content-Security-Policy" content="default-src \'none\'' in page
    linked = render_html(_report(HOSTILE), base_url="https://notes.example.com/x/")
    assert '<a href="https://notes.example.com/x/?note=nte_0000000000">' in linked


def test_hostile_titles_are_text_in_markdown():
    markdown_it = pytest.importorskip("markdown_it")
    md = render_markdown(_report(HOSTILE), summary="<script>x</script> [a](javascript:x)", model="m")
    tokens = markdown_it.MarkdownIt("commonmark").parse(md)
    inline = [child for token in tokens if token.children for child in token.children]
    assert not [t for t in tokens + inline if t.type in ("html_block", "html_inline", "link_open", "image")]
    headings = [t for t in tokens if t.type == "heading_open"]
    assert [t.tag for t in headings] == ["h1"] + ["h2"] * 6  # no title made a heading
    assert md.count(" · superseded by **") == len(HOSTILE)  # each superseded line names its corrections
    text = "".join(child.content for child in inline if child.type in ("text", "code_inline"))
    for title in HOSTILE:
        assert _shown(title).replace("  ", " ") in text.replace("  ", " "), title
    assert "\x1b" not in md and "\u202e" not in md


@pytest.mark.parametrize(
    "url", ["", "javascript:alert(1)", 'http://x" onmouseover="a', "http://x/<b>", "ftp://x", "//x", "http://"]
)
def test_a_base_url_is_an_address_or_refused(url):
    with pytest.raises(notewell.InvalidArgumentError):
        check_base_url(url)


def test_a_base_url_and_the_formats():
    assert check_base_url("http://127.0.0.1:8765/") == "http://127.0.0.1:8765"
    assert check_base_url(None) == ""
    with pytest.raises(notewell.InvalidArgumentError, match="format must be one of md, html"):
        render_report(_report(["x"]), "pdf")


@pytest.mark.slow  # eleven notes written: 0.4 s
def test_hostile_notes_through_a_store(tmp_path):
    with notewell.open(tmp_path / "notes") as store:
        for title in HOSTILE:
            # a title with a line break cannot be written: its first line is the title
            store.add_note(f"---\nkind: finding\n---\n# {title}\n\nbody <script>\n", author="a<b>")
        report = build_report(store, since="1d")
    parsed = _Page()
    parsed.feed(render_html(report))
    assert set(parsed.tags) <= _TAGS and "script" not in parsed.tags
    assert len([h for h, _ in parsed.links if h.startswith("/?note=")]) == 2 * len(report.done)


@pytest.mark.slow
def test_writing_a_report_is_linear_in_its_lines():
    worst = "<&*_`[" * 33  # every character escaped, 198 of them: a title's most
    timings = []
    for n in (2_000, 8_000):
        report = _report([worst] * n, author="<" * 100)
        start = time.thread_time()
        render_markdown(report), render_html(report)
        timings.append(time.thread_time() - start)
    assert timings[1] < 6 * timings[0] + 0.05, timings  # four times the lines: about four times the time


@pytest.mark.slow
def test_a_note_superseded_many_times_is_written_in_linear_time():
    worst = "<&*_`[" * 33
    timings = []
    for n in (2_000, 8_000):
        fixes = tuple(
            ReportLine(f"nte_{i:010d}", worst, "2026-12-02T10:00:00.000000Z", None, "p", "a", None) for i in range(n)
        )
        report = _report(["x"])
        report.superseded = [SupersededLine(*astuple(report.done[0]), superseded_by=fixes)]
        start = time.thread_time()
        md, page = render_markdown(report), render_html(report)
        timings.append(time.thread_time() - start)
        assert md.count("nte_") > n and page.count('href="/?note=nte_') > 2 * n
    assert timings[1] < 6 * timings[0] + 0.05, timings
