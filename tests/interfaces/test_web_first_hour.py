"""The web page as a newcomer meets it, in Debian's chromium: every page kind reads cleanly (no
null, undefined or [object Object]; screenshots kept), snippets without Markdown syntax, notes
outside projects reachable, writing and editing with the revision check, and the pictures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
pytest.importorskip("playwright")
pytest.importorskip("uvicorn")
CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (scripts/install-browser)", allow_module_level=True)

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from tests.interfaces.server_fixture import Server  # noqa: E402
from tests.interfaces.test_web import ARGS  # noqa: E402

# Screenshots of every page kind, kept as test artefacts (CI can keep the folder).
SHOTS = Path(os.environ.get("NOTEWELL_ARTIFACTS", "test-artifacts")) / "screenshots"
BAD_TEXT = ("null", "undefined", "[object Object]", "NaN")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("web1") / "notes")
    store = server.store
    run = store.start_attempt("demo", author="alice", model="m-1", campaign="camp")
    notes = {
        "plain": store.add_note("# Plain note\n\nA note with nothing else: no extras, revisions or links.\n"),
        "table": store.add_note(
            "---\ntitle: Timing table\nkind: dead_end\ntags: [perf]\n---\n"
            "```python\ndef get_profile():\n    pass\n```\n\n"
            "| 步骤 | 耗时 |\n|---|---|\n| warm | 40 |\n\nprofile warm timing\n",
            attempt=run.id,
        ),
        "zh": store.add_note(
            "---\ntitle: 缓存预热计划\nkind: conclusion\n---\n缓存预热把延迟降到四十毫秒。\n", attempt=run.id
        ),
    }
    notes["builder"] = store.add_note(
        f"---\ntitle: 基于缓存的结论\nkind: action\nbuilds_on: [{notes['zh'].id}]\n---\nbuilds on the plan\n",
        attempt=run.id,
    )
    store.get_note(notes["zh"].id, working_attempt_id=run.id)  # a read on the attempt
    ended = store.start_attempt("demo", author="alice")
    notes["frozen"] = store.add_note("# Frozen note\n\nwritten before the end", attempt=ended.id)
    store.end_attempt(ended.id, outcome="failed")
    store.edit_note(notes["plain"].id, "# Plain note\n\nA note, edited once.\n")
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield server, notes, {"running": run, "ended": ended}, browser
        browser.close()
    server.close()


def _page(browser, token=None, base=""):
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors  # type: ignore[attr-defined]
    if token:  # signed in as the page does it: the token swapped for a session cookie
        page.request.post(f"{base}/api/session", data={"token": token}, headers={"Origin": base})
    return page


def _clean(page, kind: str) -> None:
    """The page's visible text has no leaked JavaScript value; its screenshot is kept."""
    page.wait_for_load_state("networkidle")
    text = page.inner_text("main")
    for bad in BAD_TEXT:
        assert bad not in text.split() and bad not in text.replace("\n", " ").split(" "), (kind, bad, text[:400])
    assert "[object Object]" not in text, kind
    assert page.errors == [], (kind, page.errors)  # type: ignore[attr-defined]
    page.screenshot(path=str(SHOTS / f"{kind}.png"), full_page=True)


def test_every_page_kind_reads_cleanly_and_is_photographed(site):
    server, notes, runs, browser = site
    page = _page(browser)
    views = {
        "home": "/",
        "all-notes": "/?view=notes",
        "project": "/?project=demo",
        "attempt": f"/?attempt={runs['running'].id}",
        "search": "/?q=cache&scope=all&mode=keyword",
        "search-both": "/?q=cache&scope=all&mode=both",
        "note-plain": f"/?note={notes['table'].id}",
        "note-linked": f"/?note={notes['zh'].id}",
        "note-revision": f"/?note={notes['plain'].id}&revision=1",
        "note-frozen": f"/?note={notes['frozen'].id}",
        "tags": "/?view=tags",
        "tag": "/?view=tags&tag=perf",
    }
    for kind, path in views.items():
        page.goto(server.url + path)
        expect(page.locator("main > h1")).to_be_visible()
        _clean(page, kind)
    assert len(list(SHOTS.glob("*.png"))) >= len(views)
    page.context.close()


def test_a_note_without_extras_revisions_or_links_prints_no_null(site):
    server, notes, _runs, browser = site
    page = _page(browser)
    page.goto(f"{server.url}/?note={notes['table'].id}")
    expect(page.get_by_role("heading", name="Timing table")).to_be_visible()
    text = page.inner_text("main")
    assert "null" not in text and "nullnull" not in text
    page.context.close()


def test_snippets_show_no_markdown_syntax(site):
    server, _notes, _runs, browser = site
    page = _page(browser)
    page.goto(server.url + "/?q=warm&scope=all&mode=keyword")
    card = page.locator(".card", has=page.get_by_role("link", name="Timing table"))
    snippet = card.locator(".snippet").inner_text()
    assert "```" not in snippet and "|---|" not in snippet and "|" not in snippet, snippet
    expect(card.locator("mark", has_text="warm").first).to_be_visible()  # the matched words stay marked
    page.context.close()


def test_labels_kinds_and_links_a_newcomer_meets(site):
    server, notes, runs, browser = site
    page = _page(browser)
    page.goto(server.url + "/")
    # Notes outside any project are on the start page, and there is a way to see all.
    expect(page.get_by_role("link", name="Plain note")).to_be_visible()
    expect(page.get_by_role("heading", name="Projects")).to_have_count(1)
    # The kind filter holds the kinds the store has.
    kinds = page.get_by_label("kind").locator("option").all_inner_texts()
    assert {"dead_end", "conclusion", "action"} <= set(kinds)
    page.get_by_role("link", name="All notes →").click()
    expect(page.get_by_role("heading", name="All notes")).to_be_visible()
    page.goto(server.url + "/?project=demo")
    expect(page.get_by_role("heading", name="demo", level=1)).to_be_visible()
    recent = page.locator("h2:has-text('Recent notes') ~ .card").first
    assert "keyword" not in recent.inner_text()  # nothing was searched
    assert "1 notes" not in page.inner_text("main") and "1 attempts" not in page.inner_text("main")
    page.get_by_role("link", name=runs["running"].id, exact=True).click()
    expect(page.get_by_role("heading", name=f"Attempt {runs['running'].id}")).to_be_visible()
    expect(page.get_by_text("Notes read (1)")).to_be_visible()
    page.goto(server.url + "/?view=tags&tag=perf")
    assert "no summary" not in page.inner_text("main")
    page.context.close()


def test_pictures_of_a_project_an_attempt_and_a_note(site):
    server, notes, runs, browser = site
    page = _page(browser)
    page.goto(server.url + "/?project=demo")
    timeline = page.locator("figure.picture > svg")
    expect(timeline).to_be_visible()
    assert timeline.locator("a").count() >= 2  # each attempt a link
    page.goto(f"{server.url}/?attempt={runs['running'].id}")
    expect(page.locator("figure.picture > svg")).to_be_visible()
    page.goto(f"{server.url}/?note={notes['zh'].id}")
    graph = page.locator("figure.picture > svg")
    expect(graph).to_be_visible()
    assert "基于缓存的结论" in graph.text_content() or "基于缓存" in graph.text_content()  # Chinese, readable
    box = graph.bounding_box()
    assert box and box["width"] > 100 and box["height"] > 40
    page.context.close()


def test_writing_a_note_from_the_page_and_by_dropping_files(site):
    server, _notes, _runs, browser = site
    page = _page(browser, token=server.tokens["alice"], base=server.url)
    page.goto(server.url + "/")
    page.get_by_label("new note").fill("---\ntitle: Written on the page\nkind: finding\n---\nfrom the form\n")
    page.get_by_role("button", name="Add note").click()
    recent = page.get_by_role("region", name="recent notes")
    expect(recent.get_by_role("link", name="Written on the page")).to_be_visible()  # the list, drawn again
    assert [c.title for c in server.store.search_notes("from the form")] == ["Written on the page"]
    # Two files dropped on the form: each saved and indexed, a non-Markdown one refused by name.
    page.evaluate(
        """() => {
          const dt = new DataTransfer();
          dt.items.add(new File(["# Dropped one\\n\\nfirst dropped file"], "one.md", { type: "text/markdown" }));
          dt.items.add(new File(["# Dropped two\\n\\nsecond dropped file"], "two.md", { type: "text/markdown" }));
          dt.items.add(new File(["binary"], "photo.png", { type: "image/png" }));
          const drop = new DragEvent("drop", { dataTransfer: dt, bubbles: true });
          document.querySelector("form.write").dispatchEvent(drop);
        }"""
    )
    expect(recent.get_by_role("link", name="Dropped two")).to_be_visible()
    expect(page.get_by_text("photo.png: not a Markdown file (.md)")).to_be_visible()
    assert {c.title for c in server.store.search_notes("dropped file")} == {"Dropped one", "Dropped two"}
    page.context.close()


def test_an_edit_never_overwrites_an_agents_edit_unseen(site):
    server, _notes, _runs, browser = site
    note = server.store.add_note("# Shared plan\n\nfirst text\n", author="alice")
    page = _page(browser, token=server.tokens["alice"], base=server.url)
    page.goto(f"{server.url}/?note={note.id}")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("note text").fill("# Shared plan\n\nmy edit\n")
    server.store.edit_note(note.id, "# Shared plan\n\nthe agent's edit\n", author="agent")  # meanwhile
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("The note changed while you edited it")).to_be_visible()
    expect(page.locator("pre.theirs")).to_contain_text("the agent's edit")
    assert page.get_by_label("your text").input_value() == "# Shared plan\n\nmy edit\n"
    assert server.store.get_note(note.id).text == "# Shared plan\n\nthe agent's edit\n"  # nothing overwritten
    page.get_by_label("your text").fill("# Shared plan\n\nmy edit, merged with the agent's edit\n")
    page.get_by_role("button", name="Save mine over revision 2").click()
    expect(page.get_by_text("revision 3 of 3")).to_be_visible()
    assert server.store.get_note(note.id).text == "# Shared plan\n\nmy edit, merged with the agent's edit\n"
    page.context.close()


def test_a_frozen_note_says_why_it_cannot_be_edited(site):
    server, notes, runs, browser = site
    page = _page(browser, token=server.tokens["alice"], base=server.url)
    page.goto(f"{server.url}/?note={notes['frozen'].id}")
    expect(page.get_by_text(f"Frozen: its attempt {runs['ended'].id} ended (failed)")).to_be_visible()
    expect(page.get_by_role("button", name="Edit")).to_have_count(0)
    page.context.close()
