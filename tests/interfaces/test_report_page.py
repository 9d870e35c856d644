"""The HTML report in Debian's chromium: served by `notewell serve` and saved to a file with
--base-url, each note's link opens the page's view of that note; the report loads nothing and
breaks no rule of its own Content-Security-Policy."""

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

from tests.interfaces.cli_harness import call  # noqa: E402
from tests.interfaces.server_fixture import Server  # noqa: E402
from tests.interfaces.test_web import ARGS  # noqa: E402


def test_a_report_s_links_open_the_notes_on_the_page(tmp_path):
    server = Server(tmp_path / "notes")
    try:
        run = server.store.start_attempt("sat", author="agent-7")
        note = server.store.add_note(
            "---\ntitle: Phase saving <helps>\nkind: finding\n---\nfewer conflicts\n", attempt=run.id
        )
        saved = tmp_path / "report.html"
        done = call(
            ["report", "--store", server.store.root, "--format", "html", "--output", saved, "--base-url", server.url]
        )
        assert done.returncode == 0, done.stderr
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            for start in (f"{server.url}/api/report?format=html&since=1d", saved.as_uri()):
                requests: list[str] = []

                def seen(request, into=requests):
                    into.append(request.url)

                page.on("request", seen)
                page.goto(start)
                expect(page.locator("h1")).to_have_text("Progress report: all projects")
                page.remove_listener("request", seen)
                assert requests == [start]  # the report alone: no style sheet, script or picture fetched
                page.get_by_role("link", name="Phase saving <helps>").click()
                page.wait_for_url(f"{server.url}/?note={note.id}")
                expect(page.locator("h1")).to_contain_text("Phase saving <helps>")
            browser.close()
        assert errors == []
    finally:
        server.close()
