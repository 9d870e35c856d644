"""Writing in the page, in Debian's chromium against a real server that prints sign-in links as
`notewell serve` does on loopback: signing in by the link and out, the form's note listed at
once, Edit only where it works, errors inside the page, revisions and their diff, builds-on
chips by title; and what a hostile note or an anonymous caller cannot do with any of it."""

from __future__ import annotations

import os
import re

import pytest

pytestmark = pytest.mark.browser
pytest.importorskip("playwright")
pytest.importorskip("uvicorn")
CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (scripts/install-browser)", allow_module_level=True)

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from tests.interfaces.server_fixture import Server, http_call  # noqa: E402
from tests.interfaces.test_web import ARGS  # noqa: E402

HOSTILE_TITLE = "<img src=x onerror=window.__pwned=1> Trap"
WHEN = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("write") / "notes", sign_in={"link_seconds": 0.0})
    store = server.store
    store.set_project("alice:secret", private=True, owner="alice")
    mine = store.start_attempt("garden", author="alice")
    theirs = store.start_attempt("garden", author="bob")
    hidden = store.start_attempt("alice:secret", author="alice")
    notes = {
        "alice": store.add_note("# Alice's plan\n\nwater at dawn", attempt=mine.id),
        "bob": store.add_note("# Bob's plan\n\nwater at dusk", attempt=theirs.id),
        "secret": store.add_note("# Launch codes zebra\n\ntop secret", attempt=hidden.id),
        "trap": store.add_note(f"---\ntitle: '{HOSTILE_TITLE}'\n---\nbait", attempt=mine.id),
    }
    ends = ", ".join(notes[k].id for k in ("alice", "secret", "trap"))
    notes["builder"] = store.add_note(f"---\ntitle: Builds on three\nbuilds_on: [{ends}]\n---\nbody", attempt=mine.id)
    revised = store.add_note("# Revised\n\nfirst line\nsecond line\n", author="alice")
    store.edit_note(
        revised.id, "# Revised\n\nfirst line\n<script>window.__pwned=2</script>\nsecond line\n", author="bob"
    )
    store.edit_note(
        revised.id, "# Revised\n\nfirst line, reworded\n<script>window.__pwned=2</script>\n", author="carol"
    )
    notes["revised"] = revised
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield server, notes, browser
        browser.close()
    server.close()


def _page(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors  # type: ignore[attr-defined]
    return page


def _by_link(server, page) -> None:
    """Signed in as the person at the keyboard: the link the server printed, opened."""
    server.sessions.new_link(asked=False)
    page.goto(server.printed[-1])
    expect(page.locator("#who")).to_have_text("keyboard")


def _by_token(server, page, name: str) -> None:
    page.goto(server.url + "/")
    page.get_by_text("Use a token").click()
    page.get_by_label("token").fill(server.tokens[name])
    page.get_by_role("button", name="Use token").click()
    expect(page.locator("#who")).to_have_text(name)


def test_the_printed_link_signs_the_page_in_and_signing_out_ends_it(site):
    server, _notes, browser = site
    page = _page(browser)
    page.goto(server.url + "/")
    account = page.locator("#account")
    expect(account).to_contain_text("Not signed in")
    expect(page.get_by_label("new note")).to_have_count(0)  # nothing to write with
    _by_link(server, page)
    assert page.url == server.url + "/"
    expect(account).to_contain_text("Signed in as keyboard · owner")
    (cookie,) = page.context.cookies()
    assert cookie["name"] == f"notewell_session_{server.port}" and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie") == ""  # the page's script never holds it
    assert page.evaluate("localStorage.length") == 0
    expect(page.get_by_label("new note")).to_be_visible()
    # The link again: used, said inside the page, the search box still there.
    page.goto(server.printed[-1])
    expect(page.get_by_role("alert")).to_contain_text("That sign-in link has been used already or has expired")
    expect(page.get_by_label("search")).to_be_visible()
    assert page.url == server.url + "/"
    page.get_by_role("button", name="Sign out").click()
    expect(account).to_contain_text("Not signed in")
    expect(page.get_by_text("Signed out.")).to_be_visible()
    expect(page.get_by_label("new note")).to_have_count(0)
    assert page.context.cookies() == []
    page.reload()
    expect(account).to_contain_text("Not signed in")
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()


def test_the_sign_in_button_prints_a_new_link_where_serve_runs(site):
    server, _notes, browser = site
    page = _page(browser)
    page.goto(server.url + "/")
    before = len(server.printed)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("A sign-in link was printed in the terminal")).to_be_visible()
    assert len(server.printed) == before + 1
    assert server.printed[-1].split("code=")[1] not in page.content()  # said there only
    page.goto(server.printed[-1])
    expect(page.locator("#who")).to_have_text("keyboard")
    page.context.close()


def test_a_note_added_with_the_form_is_listed_without_a_reload(site):
    server, _notes, browser = site
    page = _page(browser)
    _by_link(server, page)
    page.evaluate("window.__same_page = true")
    page.get_by_label("new note").fill("---\ntitle: Mulch the beds\nkind: action\n---\nbefore the frost\n")
    page.get_by_role("button", name="Add note").click()
    recent = page.get_by_role("region", name="recent notes")
    expect(recent.get_by_role("link", name="Mulch the beds")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("Saved Mulch the beds.")
    expect(page.get_by_label("new note")).to_have_value("")
    assert page.evaluate("window.__same_page") is True  # drawn again, not reloaded
    assert "action" in page.get_by_label("kind").locator("option").all_inner_texts()  # the new kind offered
    (card,) = server.store.search_notes("frost")
    assert card.title == "Mulch the beds" and card.author == "keyboard"
    page.context.close()


def test_edit_is_offered_only_where_saving_works(site):
    server, notes, browser = site
    page = _page(browser)
    page.goto(f"{server.url}/?note={notes['alice'].id}")
    expect(page.get_by_text("Sign in to edit notes.")).to_be_visible()
    expect(page.get_by_role("button", name="Edit")).to_have_count(0)
    _by_token(server, page, "alice")
    page.goto(f"{server.url}/?note={notes['bob'].id}")
    expect(page.get_by_role("heading", name="Bob's plan")).to_be_visible()
    expect(page.get_by_role("button", name="Edit")).to_have_count(0)
    expect(page.get_by_text("You cannot edit this note: only attempt")).to_be_visible()
    page.goto(f"{server.url}/?note={notes['alice'].id}")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("note text").fill("# Alice's plan\n\nwater at dawn, twice a week\n")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("revision 2 of 2")).to_be_visible()
    expect(page.locator(".body")).to_contain_text("twice a week")
    assert server.store.get_note(notes["alice"].id).text.endswith("twice a week\n")
    # The owner may edit everyone's.
    page.get_by_role("button", name="Sign out").click()
    _by_link(server, page)
    page.goto(f"{server.url}/?note={notes['bob'].id}")
    expect(page.get_by_role("button", name="Edit")).to_be_visible()
    page.context.close()


def test_an_error_keeps_the_layout_and_the_search_box(site):
    server, _notes, browser = site
    page = _page(browser)
    cases = {
        "/?q=%3F%3F%3F&scope=all&mode=keyword": ("Search", "invalid_query"),
        "/?note=nte_zzzzzzzzzz": ("Note not found", "not_found"),
        "/?project=nowhere": ("Project not found", "not_found"),
        "/?attempt=att_zzzzzzzzzz": ("Attempt not found", "not_found"),
    }
    for path, (title, code) in cases.items():
        page.goto(server.url + path)
        expect(page.get_by_role("heading", level=1)).to_have_text(title)
        expect(page.locator("main [role=alert]")).to_contain_text(code)
        expect(page.get_by_role("navigation", name="views")).to_be_visible()
        expect(page.get_by_label("search")).to_be_visible()
    page.goto(server.url + "/?q=%3F%3F%3F&scope=all&mode=keyword")
    expect(page.get_by_label("search")).to_have_value("???")
    page.get_by_label("search").fill("dusk")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_role("link", name="Bob's plan")).to_be_visible()
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()


def test_revisions_show_dates_and_authors_and_a_diff_between_any_two(site):
    server, notes, browser = site
    page = _page(browser)
    page.goto(f"{server.url}/?note={notes['revised'].id}")
    items = page.locator("ol.revisions li")
    expect(items).to_have_count(3)
    texts = items.all_inner_texts()
    assert [("carol" in texts[0]), ("bob" in texts[1]), ("alice" in texts[2])] == [True, True, True]  # newest first
    assert all(WHEN.search(t) for t in texts)
    page.get_by_label("compare from").select_option("1")
    page.get_by_label("compare to").select_option("3")
    page.get_by_role("button", name="Compare").click()
    assert "from=1" in page.url and "to=3" in page.url
    changes = page.get_by_role("region", name="changes")
    expect(changes.get_by_role("heading")).to_contain_text(re.compile(r"Changes from r1 \(.*alice\) to r3 \(.*carol\)"))
    expect(changes.locator("tr.del")).to_contain_text(["first line", "second line"])
    expect(changes.locator("tr.add")).to_contain_text(["first line, reworded", "<script>window.__pwned=2</script>"])
    assert changes.locator("script").count() == 0 and page.evaluate("window.__pwned") is None
    # Each revision's own change, one click away; and back to the note.
    page.locator("ol.revisions li", has_text="bob").get_by_role("link", name="changes").click()
    expect(changes.locator("tr.add td.text")).to_have_text(["+ <script>window.__pwned=2</script>"])
    changes.get_by_role("link", name="back to the note").click()
    expect(page.locator(".body")).to_contain_text("first line, reworded")
    page.context.close()


def test_builds_on_chips_show_titles_only_of_notes_the_viewer_may_see(site):
    server, notes, browser = site
    page = _page(browser)
    page.goto(f"{server.url}/?note={notes['builder'].id}")
    chips = page.locator(".chips")
    expect(chips.get_by_role("link", name="builds on: Alice's plan")).to_be_visible()
    expect(chips.get_by_text(f"builds on: {HOSTILE_TITLE}")).to_be_visible()  # a title, shown as text
    expect(chips.get_by_text(f"builds on {notes['secret'].id}")).to_be_visible()  # an id, no title
    assert "Launch codes" not in page.content()  # not in a chip, the graph or a tooltip
    assert page.locator("main img").count() == 0 and page.evaluate("window.__pwned") is None
    _by_token(server, page, "alice")
    page.goto(f"{server.url}/?note={notes['builder'].id}")
    expect(chips.get_by_role("link", name="builds on: Launch codes zebra")).to_be_visible()
    page.context.close()


def test_anonymous_callers_learn_nothing_of_a_private_note(site):
    server, notes, _browser = site
    secret, nobody = notes["secret"].id, "nte_zzzzzzzzzz"
    for tail in ("/history", "/diff?from=1&to=1", "/links", "/graph.svg", "?render=html"):
        hidden = http_call(server.url, "GET", f"/api/notes/{secret}{tail}")
        missing = http_call(server.url, "GET", f"/api/notes/{nobody}{tail}")
        assert hidden.status == missing.status == 404, tail
        assert str(hidden.body).replace(secret, "ID") == str(missing.body).replace(nobody, "ID"), tail
    links = http_call(server.url, "GET", f"/api/notes/{notes['builder'].id}/links").body
    (end,) = [e for e in links["builds_on"] if e["id"] == secret]
    assert end == {"id": secret, "missing": True}
    assert http_call(server.url, "GET", f"/api/notes/{secret}/history", token=server.tokens["alice"]).status == 200


def test_every_page_loads_without_a_failed_request_and_has_its_icon(site):
    server, notes, browser = site
    page = _page(browser)
    failed: list[str] = []
    icons: list[int] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("response", lambda r: icons.append(r.status) if "favicon" in r.url else None)
    for path in ("/", "/?view=notes", "/?project=garden", f"/?note={notes['revised'].id}", "/?view=tags"):
        page.goto(server.url + path)
        page.wait_for_load_state("networkidle")
    assert failed == [] and icons and set(icons) == {200}
    icon = page.request.get(server.url + "/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"] == "image/x-icon" and icon.body()[:4] == b"\0\0\1\0"
    page.context.close()


def test_a_token_an_earlier_page_kept_is_swapped_for_a_session_and_forgotten(site):
    server, _notes, browser = site
    page = _page(browser)
    page.goto(server.url + "/")
    page.evaluate(f"localStorage.setItem('notewell-token', {server.tokens['bob']!r})")
    page.reload()
    expect(page.locator("#who")).to_have_text("bob")
    assert page.evaluate("localStorage.getItem('notewell-token')") is None
    page.context.close()


def test_an_edit_conflict_shows_the_note_as_it_now_is_beside_the_merge(site):
    server, _notes, browser = site
    store = server.store
    note = store.add_note("# Shared plan\n\nfirst draft\n", author="alice")
    store.edit_note(note.id, "# Shared plan\n\nstale line from revision two\n", author="alice")
    page = _page(browser)
    _by_link(server, page)
    page.goto(f"{server.url}/?note={note.id}")
    expect(page.get_by_text("revision 2 of 2")).to_be_visible()
    page.get_by_role("button", name="Edit").click()
    # An agent saves meanwhile.
    store.edit_note(note.id, "# Shared plan\n\nthe agent's line\n", author="agent")
    page.get_by_label("note text").fill("# Shared plan\n\nstale line from revision two, and mine\n")
    page.get_by_role("button", name="Save").click()
    conflict = page.locator(".conflict")
    expect(conflict).to_contain_text("now at revision 3 (you started from 2). Nothing was saved.")
    # The note around the merge view is the note as it now is, not the revision the edit began from.
    meta = page.locator("main > .meta")
    expect(meta).to_contain_text("revision 3 of 3")
    expect(page.get_by_text("revision 2 of 2")).to_have_count(0)
    items = page.locator("ol.revisions li")
    expect(items).to_have_count(3)
    expect(items.first).to_contain_text(re.compile(r"^r3 current"))
    expect(page.locator("ol.revisions li", has_text="current")).to_have_count(1)
    expect(page.locator("article.note .body")).not_to_contain_text("stale line")
    expect(page.locator("article.note .body")).to_contain_text("the agent's line")
    expect(page.get_by_role("button", name="Edit")).to_have_count(0)  # one editor: the merge
    expect(page.get_by_label("your text")).to_have_value("# Shared plan\n\nstale line from revision two, and mine\n")
    # The merge saved: everything current, the merge view gone.
    page.get_by_label("your text").fill("# Shared plan\n\nthe agent's line, and mine\n")
    page.get_by_role("button", name="Save mine over revision 3").click()
    expect(meta).to_contain_text("revision 4 of 4")
    expect(conflict).to_have_count(0)
    expect(items.first).to_contain_text(re.compile(r"^r4 current"))
    expect(page.locator("article.note .body")).to_contain_text("the agent's line, and mine")
    saved = store.get_note(note.id)
    assert saved.revision == 4 and saved.text.endswith("the agent's line, and mine\n")
    assert page.errors == []  # type: ignore[attr-defined]
    page.context.close()
