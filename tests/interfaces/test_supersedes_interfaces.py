"""supersedes and stale from the command line and over HTTP (MCP: tests/interfaces/test_mcp.py)."""

from __future__ import annotations

import json

import pytest

from tests.interfaces.cli_harness import run


def _js(done):
    return json.loads(done.stdout)


@pytest.fixture(params=["folder", pytest.param("database", marks=pytest.mark.postgres)])
def place(request, tmp_path):
    """Where a command's store is: a notes folder, then a fresh PostgreSQL database."""
    return tmp_path / "s" if request.param == "folder" else request.getfixturevalue("pg_url")


@pytest.mark.slow
def test_add_supersedes_get_list_links_and_stale_from_the_cli(place):
    old = run(["add", "--title", "Unit", "--kind", "blocker", "--text", "restart unit 100"], place).stdout.decode()
    old = old.strip()
    assert [c["id"] for c in _js(run(["stale", "--older-than", "now", "--json"], place))["cards"]] == [old]
    assert "no open blocker or action" in run(["stale"], place).stdout.decode()  # none untouched for 14 days
    new = run(["add", "--title", "Unit fixed", "--supersedes", old, "--text", "restart unit 512"], place)
    new = new.stdout.decode().strip()
    got = _js(run(["get", old, "--json"], place))
    assert got["superseded_by"] == [new] and got["supersedes"] == []
    assert _js(run(["get", new, "--json"], place))["supersedes"] == [old]
    shown = run(["get", old], place).stdout.decode()
    assert f"superseded by: {new} (read that first)" in shown
    assert f"superseded by {new}" in run(["list"], place).stdout.decode()
    ranked = [c["id"] for c in _js(run(["search", "restart unit", "--json"], place))["cards"]]
    assert ranked == [new, old]
    links = run(["links", old], place).stdout.decode()
    assert "superseded by:" in links and new in links
    assert _js(run(["stale", "--older-than", "now", "--json"], place)) == {"older_than": "now", "cards": []}
    # A note cannot supersede itself: one line, exit 4 (invalid note), nothing written.
    header = f"---\ntitle: Unit\nsupersedes: [{old}]\n---\nx\n"
    bad = run(["edit", old, "--full-text", header], place, check=False)
    assert bad.returncode == 4 and bad.stderr.decode().count("\n") == 1
    assert b"cannot supersede itself" in bad.stderr
    # edit --supersedes adds to the header alone; the rest of the text stays byte for byte.
    third = run(["add", "--title", "Unit, measured", "--text", "restart unit 512, measured"], place).stdout.decode()
    third = third.strip()
    before = run(["get", third, "--raw"], place).stdout.decode()
    said = run(["edit", third, "--supersedes", new, "--supersedes", old], place).stdout.decode()
    assert f"now at revision 2: supersedes {new}, {old}" in said
    after = run(["get", third, "--raw"], place).stdout.decode()
    assert after == before.replace("\n---\n", f"\nsupersedes: [{new}, {old}]\n---\n", 1)  # before the header closes
    assert _js(run(["get", new, "--json"], place))["superseded_by"] == [third]
    assert "unchanged" in run(["edit", third, "--supersedes", old], place).stdout.decode()
    mixed = run(["edit", third, "--supersedes", old, "--text", "x"], place, check=False)
    assert mixed.returncode == 2 and b"give --supersedes alone" in mixed.stderr
    bad_age = run(["stale", "--older-than", "fortnight"], place, check=False)
    assert bad_age.returncode == 2 and b"older_than" in bad_age.stderr and bad_age.stderr.count(b"\n") == 1


pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


@pytest.fixture
def srv(tmp_path):
    from tests.interfaces.server_fixture import Server

    server = Server(tmp_path / "notes")
    yield server
    server.close()


def _note(srv, text, token="alice"):
    got = srv.call("POST", "/api/notes", {"text": text}, token=token)
    assert got.status == 201, got.body
    return got.body


@pytest.mark.slow
def test_superseded_by_and_stale_over_http_respect_visibility(srv):
    srv.store.set_project("alice:secret", private=True, owner="alice")
    old = _note(srv, "---\ntitle: Unit\nkind: blocker\n---\nrestart unit 100")
    aid = srv.call("POST", "/api/attempts", {"project": "alice:secret"}, token="alice").body["id"]
    secret = srv.call(
        "POST",
        "/api/notes",
        {"text": f"---\ntitle: Fixed\nsupersedes: [{old['id']}]\n---\nrestart unit 512", "attempt_id": aid},
        token="alice",
    ).body
    as_alice = srv.call("GET", f"/api/notes/{old['id']}", token="alice").body
    assert as_alice["superseded_by"] == [secret["id"]]
    as_bob = srv.call("GET", f"/api/notes/{old['id']}", token="bob")
    assert as_bob.status == 200 and as_bob.body["superseded_by"] == [] and secret["id"] not in json.dumps(as_bob.body)
    listed = srv.call("GET", "/api/notes", token="bob").body["cards"]
    assert [(c["id"], c["superseded_by"]) for c in listed] == [(old["id"], [])]
    assert secret["id"] not in json.dumps(srv.call("GET", f"/api/notes/{old['id']}/links", token="bob").body)
    # Bob still has the blocker left hanging; for alice the private correction settled it.
    stale = srv.call("GET", "/api/stale?older_than=now", token="bob")
    assert stale.status == 200 and [c["id"] for c in stale.body["cards"]] == [old["id"]]
    assert srv.call("GET", "/api/stale?older_than=now", token="alice").body["cards"] == []
    for query, said in (("older_than=fortnight", "older_than"), ("limit=0", "limit"), ("since=1d", "since")):
        bad = srv.call("GET", f"/api/stale?{query}", token="bob")
        assert bad.status == 400 and bad.body["error"]["code"] == "invalid_argument", query
        assert said in bad.body["error"]["message"]
