"""The web page in a real browser: Debian's chromium driven by Playwright, against a real server."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.browser
pytest.importorskip("playwright")
pytest.importorskip("uvicorn")
CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (scripts/install-browser)", allow_module_level=True)

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from tests.interfaces.server_fixture import Server  # noqa: E402

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("web") / "notes")
    store = server.store
    store.set_project("alice:secret", private=True, owner="alice")
    demo = store.start_attempt("demo", author="alice", model="m-1", campaign="camp")
    other = store.start_attempt("other", author="bob", campaign="camp")
    hidden = store.start_attempt("alice:secret", author="alice")
    notes = {
        "plan": store.add_note(
            "---\ntitle: Cache plan\nkind: decision\ntags: [cache, redis]\nmodel: m-1\nstatus: draft\n---\n"
            "We **warm the cache** first.\n\n| step | ms |\n|---|---|\n| warm | 40 |\n\n```py\nwarm()\n```\n",
            attempt=demo.id,
        ),
        "other": store.add_note("# Cache in other\n\ncache findings from another project", attempt=other.id),
        "zh": store.add_note("# 缓存预热\n\n缓存预热把延迟降到四十毫秒。", attempt=demo.id),
        "xss": store.add_note(
            '# Hostile note\n\n<script>window.__pwned = 1</script>\n\n<img src=x onerror="window.__pwned = 2">\n\n'
            "[click](javascript:window.__pwned=3) cache",
            attempt=demo.id,
        ),
        "hidden": store.add_note("# Launch codes\n\ncache secret zebra", attempt=hidden.id),
    }
    store.set_summary(notes["plan"].id, "warm the cache before the first request")
    store.edit_note(notes["zh"].id, "# 缓存预热\n\n缓存预热把延迟降到四十毫秒。第二版。")
    store.embed_pending()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield server, notes, browser
        browser.close()
    server.close()


def _page(browser):
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    return context.new_page()


def test_projects_project_tab_and_search_scopes(site):
    server, notes, browser = site
    page = _page(browser)
    page.goto(server.url + "/")
    expect(page.get_by_role("heading", name="Campaign camp")).to_be_visible()
    expect(page.get_by_role("link", name="alice:secret")).to_have_count(0)  # private, no token
    page.locator("section.group").get_by_role("link", name="demo", exact=True).click()
    expect(page.get_by_role("heading", name="demo", level=1)).to_be_visible()
    expect(page.get_by_text("alice · m-1").first).to_be_visible()  # an attempt, with author and model
    # This project (the default scope), keyword.
    page.get_by_label("search").fill("cache")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_role("link", name="Cache plan")).to_be_visible()
    expect(page.get_by_role("link", name="Cache in other")).to_have_count(0)
    assert "q=cache" in page.url and "scope=project" in page.url
    expect(page.locator("mark", has_text="cache").first).to_be_visible()
    # This campaign: the other project's note too, naming its project.
    page.get_by_label("scope").select_option("campaign")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_role("link", name="Cache in other")).to_be_visible()
    expect(page.get_by_role("link", name="other", exact=True)).to_be_visible()
    # Both: the exact list and the semantic list side by side, unfused.
    page.get_by_label("mode").select_option("both")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("[data-mode=keyword] .card").first).to_be_visible()
    expect(page.locator("[data-mode=semantic] .card").first).to_be_visible()
    expect(page.locator("[data-mode=semantic] mark")).to_have_count(0)  # no highlights claimed for meaning
    assert "mode=both" in page.url
    if os.environ.get("NOTEWELL_SCREENSHOT"):  # a picture of this search: NOTEWELL_SCREENSHOT=PATH.png
        page.screenshot(path=os.environ["NOTEWELL_SCREENSHOT"], full_page=True)
    # Back walks the URL states.
    page.go_back()
    expect(page.get_by_label("mode")).to_have_value("keyword")
    assert "scope=campaign" in page.url and "mode=keyword" in page.url
    page.reload()
    expect(page.get_by_role("link", name="Cache in other")).to_be_visible()
    page.context.close()


def test_a_note_page_renders_chips_extras_and_markdown(site):
    server, notes, browser = site
    page = _page(browser)
    page.goto(f"{server.url}/?note={notes['plan'].id}")
    expect(page.get_by_role("heading", name="Cache plan")).to_be_visible()
    expect(page.locator(".chip.kind")).to_have_text("decision")
    expect(page.locator(".chip", has_text="#redis")).to_be_visible()
    expect(page.locator(".extras")).to_have_text("status: draft")
    expect(page.locator(".body table td").first).to_have_text("warm")
    expect(page.locator(".body pre code")).to_have_text("warm()\n")
    expect(page.locator(".body strong")).to_have_text("warm the cache")
    page.context.close()


def test_chinese_text_is_found_and_shown(site):
    server, notes, browser = site
    page = _page(browser)
    page.goto(server.url + "/?q=%E7%BC%93%E5%AD%98&scope=all&mode=keyword")
    expect(page.get_by_role("link", name="缓存预热")).to_be_visible()
    page.get_by_role("link", name="缓存预热").click()
    expect(page.locator(".body")).to_contain_text("缓存预热把延迟降到四十毫秒。")
    page.context.close()


def test_hostile_note_text_never_runs(site):
    server, notes, browser = site
    page = _page(browser)
    page.goto(f"{server.url}/?note={notes['xss'].id}")
    expect(page.locator(".body")).to_contain_text("<script>window.__pwned = 1</script>")
    expect(page.locator(".body")).to_contain_text('<img src=x onerror="window.__pwned = 2">')
    assert page.locator(".body img").count() == 0 and page.locator(".body script").count() == 0
    assert page.locator(".body a[href^='javascript']").count() == 0
    page.goto(server.url + "/?q=cache&scope=all&mode=keyword")
    expect(page.get_by_role("link", name="Hostile note")).to_be_visible()
    assert page.evaluate("window.__pwned") is None
    page.context.close()


def test_a_private_note_shows_only_with_the_right_token(site):
    server, notes, browser = site
    page = _page(browser)
    page.goto(server.url + "/?q=zebra&scope=all&mode=keyword")
    expect(page.get_by_text("No notes found.")).to_be_visible()
    page.get_by_label("token").fill(server.tokens["alice"])
    page.get_by_role("button", name="Use token").click()
    expect(page.get_by_role("link", name="Launch codes")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    page.get_by_label("token").fill(server.tokens["bob"])
    page.get_by_role("button", name="Use token").click()
    expect(page.locator("#who")).to_have_text("bob")
    expect(page.get_by_text("No notes found.")).to_be_visible()
    page.context.close()


def test_kind_and_tag_filters_narrow_the_list(site):
    server, notes, browser = site
    page = _page(browser)
    page.goto(server.url + "/?q=cache&scope=all&mode=keyword")
    expect(page.get_by_role("link", name="Hostile note")).to_be_visible()
    page.get_by_label("kind").select_option("decision")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_role("link", name="Cache plan")).to_be_visible()
    expect(page.get_by_role("link", name="Hostile note")).to_have_count(0)
    assert "kind=decision" in page.url
    page.goto(server.url + "/?view=tags")
    page.get_by_text("#redis 1").click()
    expect(page.get_by_role("link", name="Cache plan")).to_be_visible()
    expect(page.locator(".summary")).to_have_text("warm the cache before the first request")
    page.context.close()


def test_revisions_and_a_narrow_screen(site):
    server, notes, browser = site
    context = browser.new_context(viewport={"width": 360, "height": 740})
    page = context.new_page()
    page.goto(f"{server.url}/?note={notes['zh'].id}")
    expect(page.locator(".body")).to_contain_text("第二版")
    page.get_by_role("link", name="r1", exact=True).click()  # an id may hold "r1" too
    expect(page.locator(".body")).not_to_contain_text("第二版")
    assert "revision=1" in page.url
    page.goto(server.url + "/?q=cache&scope=all&mode=both")
    expect(page.locator("[data-mode=semantic] .card").first).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")  # nothing sideways
    context.close()


def test_semantic_mode_and_a_project_without_search_words(site):
    server, notes, browser = site
    page = _page(browser)
    page.goto(server.url + "/?q=warming+caches+before+requests&scope=all&mode=semantic")
    expect(page.locator(".card").first).to_be_visible()
    expect(page.locator(".card .meta", has_text="semantic").first).to_be_visible()
    # This project with no words: its recent notes; a broader scope asks for words.
    page.goto(server.url + "/?q=&scope=project&project=demo&mode=keyword")
    expect(page.get_by_role("link", name="Cache plan")).to_be_visible()
    page.goto(server.url + "/?q=&scope=all&mode=keyword")
    expect(page.get_by_text("Give search words to search beyond one project.")).to_be_visible()
    page.context.close()


def test_a_card_found_through_an_older_revision_says_so_and_opens_it(site):
    server, _notes, browser = site
    note = server.store.add_note("# Heron log\n\nthe bittern nests by the reeds")
    server.store.edit_note(note.id, "# Heron log\n\nthe nests by the reeds")
    page = _page(browser)
    page.goto(server.url + "/?q=bittern&scope=all&mode=keyword")
    card = page.locator(".card", has=page.get_by_role("link", name="Heron log"))
    expect(card).to_contain_text("matched in revision 1")
    expect(card.locator("mark", has_text="bittern")).to_be_visible()  # the snippet is that revision's
    card.get_by_role("link", name="Heron log").click()
    expect(page.get_by_text("revision 1 of 2")).to_be_visible()
    assert "revision=1" in page.url
    page.context.close()


def test_a_superseded_card_is_marked_and_its_note_points_to_the_correction(site):
    server, _notes, browser = site
    old = server.store.add_note("# Egret count\n\nthe egret colony holds 40 pairs")
    new = server.store.add_note(f"---\ntitle: Egret recount\nsupersedes: [{old.id}]\n---\nthe egret colony: 64 pairs")
    page = _page(browser)
    page.goto(server.url + "/?q=egret&scope=all&mode=keyword")
    cards = page.locator(".card")
    expect(cards.first).to_contain_text("Egret recount")  # the correction first, then what it corrects
    expect(cards.nth(1).locator(".chip.superseded")).to_have_text("superseded")
    expect(cards.first.locator(".chip.superseded")).to_have_count(0)
    cards.nth(1).get_by_role("link", name="Egret count").click()
    notice = page.locator(".notice.superseded")
    expect(notice).to_contain_text("Superseded: a later note corrects this one")
    notice.get_by_role("link", name="Egret recount").click()
    expect(page.get_by_role("heading", name="Egret recount")).to_be_visible()
    assert new.id in page.url
    page.context.close()
