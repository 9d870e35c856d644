"""The web page's Markdown: rendered in bounded time, plain text past the caps, kept per text."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("markdown_it")

from notewell.interfaces.http.web import render  # noqa: E402


def _counting(monkeypatch):
    calls = []
    real = render._renderer()

    class Counting:
        def render(self, text):
            calls.append(len(text))
            return real.render(text)

    monkeypatch.setattr(render, "_renderer", lambda: Counting())
    monkeypatch.setattr(render, "_cache", type(render._cache)())
    monkeypatch.setattr(render, "_cached_bytes", 0)
    return calls


@pytest.mark.slow
@pytest.mark.parametrize(
    "shape",
    ["[", "![", "a\n=\n", "*a [b](c) ", "|a", "> a\n", "1. a\n", "*_", "[a]: b\n", "  - a\n"],
)
def test_a_body_made_of_syntax_past_the_cap_is_plain_text_and_never_parsed(monkeypatch, shape):
    # markdown-it costs 4-24 µs per character of syntax: 199,999 "[" took 5-8 s. Past SYNTAX_MAX
    # such characters the body is shown escaped, as text, and markdown-it never sees it.
    calls = _counting(monkeypatch)
    body = shape * (render.SYNTAX_MAX // render.syntax_count(shape) + 1)
    assert render.syntax_count(body) > render.SYNTAX_MAX
    out = render.render_markdown(body)
    assert out.startswith('<p class="plain">(shown as plain text:') and "Markdown syntax" in out
    assert calls == []
    small = body[: render.SYNTAX_MAX // 4]
    assert render.syntax_count(small) <= render.SYNTAX_MAX
    assert not render.render_markdown(small).startswith('<p class="plain">')
    assert calls == [len(small)]


def test_the_syntax_count_leaves_prose_in_any_script_alone():
    assert render.syntax_count("plain words, 中文笔记 and ünïcode\n") == 2  # the comma and the newline
    prose = "A paragraph of ordinary words that goes on for a while. " * 3000  # 171 KB
    assert render.syntax_count(prose) <= render.SYNTAX_MAX
    assert render.render_markdown(prose).startswith("<p>")


def test_a_body_is_rendered_once_and_an_edit_renders_again(monkeypatch):
    calls = _counting(monkeypatch)
    assert render.render_markdown("# Title\n\n*one*") == render.render_markdown("# Title\n\n*one*")
    assert calls == [14]
    assert "<em>two</em>" in render.render_markdown("# Title\n\n*two*")  # new text: never the old HTML
    assert calls == [14, 14]


def test_the_cache_keeps_a_bounded_amount_of_html(monkeypatch):
    _counting(monkeypatch)
    monkeypatch.setattr(render, "CACHE_BYTES", 10_000)
    for i in range(200):
        render.render_markdown(f"note {i} " + "word " * 100)
    assert 0 < render._cached_bytes <= 10_000
    assert render._cached_bytes == sum(len(v) for v in render._cache.values())


def test_renders_take_turns_and_share_the_result(monkeypatch):
    calls = _counting(monkeypatch)
    results = []
    threads = [threading.Thread(target=lambda: results.append(render.render_markdown("*same* text"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1 and len(results) == 8
    assert calls == [11]  # one render: the others waited their turn and found it kept


def test_tables_that_would_fill_too_many_cells_are_plain_text(monkeypatch):
    # markdown-it fills each row out to the header's width: 22 tables of 181 columns by 363
    # one-cell rows (32 KB, under the syntax cap) made 14.6 MB of HTML in 21 s.
    calls = _counting(monkeypatch)
    table = "|" + "a|" * 180 + "\n|" + "-|" * 180 + "\n" + "x\n" * 363 + "\n"
    body = table * 22
    assert render.syntax_count(body) <= render.SYNTAX_MAX and render.table_cells(body) > render.CELLS_MAX
    assert "tables of" in render.render_markdown(body) and calls == []
    small = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"
    assert render.table_cells(small) == 12  # an upper bound: the outer pipes count as columns
    assert "<table>" in render.render_markdown(small)


def test_link_references_copied_too_often_are_plain_text(monkeypatch):
    # One definition is copied into each link that uses it: a 90,000-letter URL and title used by
    # 10,000 "[a]" made 849 MB of HTML.
    calls = _counting(monkeypatch)
    body = "[a]: http://x/" + "u" * 45_000 + ' "' + "t" * 45_000 + '"\n\n' + "[a] " * 6_000
    assert render.syntax_count(body) <= render.SYNTAX_MAX and render.reference_copies(body) > render.COPIES_MAX
    assert "link references" in render.render_markdown(body) and calls == []
    fine = "[docs]: https://example.com/docs\n\nSee [docs] and [docs].\n"
    assert 0 < render.reference_copies(fine) <= render.COPIES_MAX
    assert '<a href="https://example.com/docs">docs</a>' in render.render_markdown(fine)


def test_a_server_renders_in_a_worker_process_and_gets_the_same_html(monkeypatch):
    # On a thread of the server, markdown-it (pure Python) held the interpreter from every other
    # request: beside one client rendering heavy pages, others' search p95 went 22 -> 808 ms.
    import os

    monkeypatch.setattr(render, "_cache", type(render._cache)())
    monkeypatch.setattr(render, "_cached_bytes", 0)
    text = "# Title\n\n*some* `code` and a [link](https://example.com)\n"
    pids = render._worker().submit(os.getpid).result()
    assert pids != os.getpid()  # a process of its own
    assert render.render_markdown(text, isolated=True) == render._render(text)


def test_a_worker_that_died_is_replaced_and_the_page_still_renders(monkeypatch):
    from concurrent.futures.process import BrokenProcessPool

    monkeypatch.setattr(render, "_cache", type(render._cache)())
    monkeypatch.setattr(render, "_cached_bytes", 0)

    class Broken:
        def submit(self, *args):
            raise BrokenProcessPool("killed")

        def shutdown(self, **kwargs):
            pass

    monkeypatch.setattr(render, "_pool", Broken())
    # Not rendered in the server instead: the text may be what killed the worker.
    assert "could not be rendered" in render.render_markdown("*x*", isolated=True)
    assert render._pool is None  # a new worker next time


@pytest.mark.parametrize("prefix", ["> ", ">", "> > ", "- ", "  ", "1. "])
def test_tables_inside_quotes_and_lists_count_their_cells_too(monkeypatch, prefix):
    # A table in a blockquote was not counted: 30 of 120 columns by 150 rows took 7.5 s (5.5 MB).
    calls = _counting(monkeypatch)
    table = prefix + "|".join("a" * 120) + "\n" + prefix + "|".join("-" * 120) + "\n" + (prefix + "x\n") * 150 + "\n"
    body = table * 30
    assert render.table_cells(body) > render.CELLS_MAX
    if render.syntax_count(body) <= render.SYNTAX_MAX:
        assert "tables of" in render.render_markdown(body)
    assert calls == []


@pytest.mark.slow
def test_a_render_past_its_time_is_plain_text_and_its_worker_replaced(monkeypatch):
    monkeypatch.setattr(render, "_cache", type(render._cache)())
    monkeypatch.setattr(render, "_cached_bytes", 0)
    monkeypatch.setattr(render, "RENDER_SECONDS", 0.01)
    heavy = "page " + "![" * 9_700  # about 0.4 s of markdown-it, under every cap
    first = render._worker()
    assert "could not be rendered in time" in render.render_markdown(heavy, isolated=True)
    assert render._pool is None
    monkeypatch.setattr(render, "RENDER_SECONDS", 60.0)
    assert render.render_markdown("*fine*", isolated=True) == "<p><em>fine</em></p>\n"
    assert render._pool is not first  # a new worker took over


def test_the_cache_keeps_each_notes_revision_apart(monkeypatch):
    # Keyed by the text alone, a fast page told bob that some note he may not see holds his text.
    calls = _counting(monkeypatch)
    render.render_markdown("*same*", note="nte_0000000001@1")
    render.render_markdown("*same*", note="nte_0000000002@1")
    render.render_markdown("*same*", note="nte_0000000001@1")
    assert calls == [6, 6]
