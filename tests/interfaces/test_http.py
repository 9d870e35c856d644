"""The HTTP API against a real server on 127.0.0.1: endpoints, tokens, visibility, limits, errors."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

import notewell  # noqa: E402
from tests.conftest import CARD_KEYS  # noqa: E402
from tests.interfaces.server_fixture import Server  # noqa: E402


@pytest.fixture
def srv(tmp_path):
    server = Server(tmp_path / "notes")
    yield server
    server.close()


def _note(srv, text, token="alice", **extra):
    got = srv.call("POST", "/api/notes", {"text": text, **extra}, token=token)
    assert got.status == 201, got.body
    return got.body


@pytest.mark.slow
def test_health_and_openapi(srv):
    assert srv.call("GET", "/healthz").body == {"ok": True}
    doc = srv.call("GET", "/openapi.json").body
    assert doc["openapi"].startswith("3.1")
    for path in ("/api/notes/search", "/api/notes/{note_id}", "/api/attempts/{attempt_id}/end", "/api/tags"):
        assert path in doc["paths"]


@pytest.mark.slow
def test_write_read_search_edit_delete(srv):
    note = _note(srv, "---\ntitle: Redis eviction\nkind: finding\ntags: [cache]\n---\nkeys evicted under pressure")
    assert note["author"] == "alice" and note["kind"] == "finding"
    got = srv.call("GET", f"/api/notes/{note['id']}")
    assert got.status == 200 and got.body["body"].startswith("keys evicted") and got.body["header"]["kind"] == "finding"
    found = srv.call("GET", "/api/notes/search?q=eviction&kind=finding&tags=cache")
    assert found.status == 200 and [c["id"] for c in found.body["cards"]] == [note["id"]]
    assert set(found.body["cards"][0]) == CARD_KEYS and found.body["mode"] == "keyword"
    listed = srv.call("GET", "/api/notes?limit=5")
    assert [c["id"] for c in listed.body["cards"]] == [note["id"]]
    edited = srv.call(
        "PATCH", f"/api/notes/{note['id']}", {"text": "# Redis eviction\n\nLRU evicted keys"}, token="alice"
    )
    assert edited.status == 200 and edited.body["revision"] == 2
    tagged = srv.call("PATCH", f"/api/notes/{note['id']}", {"add_tags": ["redis"]}, token="alice")
    assert tagged.body["tags"] == ["redis"]
    assert srv.call("GET", "/api/tags").body["tags"][0]["tag"] == "redis"
    assert srv.call("GET", "/api/summary").status == 200
    gone = srv.call("DELETE", f"/api/notes/{note['id']}", token="alice")
    assert gone.status == 200
    assert srv.call("GET", f"/api/notes/{note['id']}").status == 404


@pytest.mark.slow
def test_the_same_cards_from_http_and_python(srv):
    for i in range(5):
        _note(srv, f"# cache note {i}\n\ncache stampede number {i}")
    http = srv.call("GET", "/api/notes/search?q=cache+stampede&limit=3").body["cards"]
    python = [c.to_dict() for c in srv.store.search_notes("cache stampede", limit=3, viewer=notewell_viewer())]
    assert http == python and len(http) == 3
    assert srv.call("GET", "/api/notes/search?q=cache&mode=semantic&wait=true").status == 401  # embedding: a write
    semantic = srv.call("GET", "/api/notes/search?q=cache+stampede&mode=both&wait=true&limit=3", token="alice").body
    assert {c["mode"] for c in semantic["cards"]} == {"keyword", "semantic"} and semantic["not_embedded"] == 0


def notewell_viewer():
    from notewell import Viewer

    return Viewer()  # anonymous, as the HTTP request without a token


@pytest.mark.slow
def test_attempts_links_and_brief(srv):
    attempt = srv.call("POST", "/api/attempts", {"project": "demo", "model": "m1"}, token="alice")
    assert attempt.status == 201 and attempt.body["author"] == "alice"
    aid = attempt.body["id"]
    first = _note(srv, "# plan\n\nthe plan", attempt_id=aid)
    second = _note(srv, f"---\ntitle: follow-up\nbuilds_on: [{first['id']}]\n---\nmore", attempt_id=aid)
    links = srv.call("GET", f"/api/notes/{first['id']}/links").body
    assert second["id"] in str(links)
    assert srv.call("GET", "/api/projects/demo/brief").status == 200
    assert srv.call("GET", f"/api/attempts/{aid}").body["id"] == aid
    # Only the attempt's author writes on it or ends it.
    assert srv.call("POST", "/api/notes", {"text": "x", "attempt_id": aid}, token="bob").status == 403
    assert srv.call("POST", f"/api/attempts/{aid}/end", {"outcome": "succeeded"}, token="bob").status == 403
    ended = srv.call("POST", f"/api/attempts/{aid}/end", {"outcome": "succeeded", "summary": "done"}, token="alice")
    assert ended.status == 200 and ended.body["outcome"] == "succeeded"
    frozen = srv.call("PATCH", f"/api/notes/{first['id']}", {"text": "changed"}, token="alice")
    assert frozen.status == 409 and frozen.body["error"]["code"] == "frozen"
    read = srv.call("GET", f"/api/notes/{first['id']}?working_attempt_id={aid}", token="bob")
    assert read.status == 403  # recording a read on someone else's attempt


@pytest.mark.slow
def test_tokens_and_permissions(srv):
    assert srv.call("POST", "/api/notes", {"text": "x"}).status == 401
    denied = srv.call("POST", "/api/notes", {"text": "x"}, token="reader")
    assert denied.status == 403 and denied.body["error"]["code"] == "forbidden"
    bad = srv.call("GET", "/api/tags", token="nwt_not-a-real-token")
    assert bad.status == 401 and bad.headers.get("www-authenticate", bad.headers.get("WWW-Authenticate"))
    note = _note(srv, "# alice's\n\ntext")
    assert srv.call("PATCH", f"/api/notes/{note['id']}", {"text": "mine now"}, token="bob").status == 403
    assert srv.call("DELETE", f"/api/notes/{note['id']}", token="bob").status == 403
    assert srv.call("PATCH", f"/api/notes/{note['id']}", {"text": "# owner edit\n\nok"}, token="boss").status == 200
    assert srv.call("GET", f"/api/notes/{note['id']}", token="reader").status == 200


@pytest.mark.slow
def test_a_private_project_is_invisible_without_the_right_token(srv):
    srv.store.set_project("alice:secret", private=True, owner="alice")
    aid = srv.call("POST", "/api/attempts", {"project": "alice:secret"}, token="alice").body["id"]
    hidden = _note(srv, "# launch codes\n\nzebra quartz", attempt_id=aid)
    public = _note(srv, "# public zebra\n\nzebra quartz in the open", token="bob")
    for who in (None, "bob", "reader"):
        cards = srv.call("GET", "/api/notes/search?q=zebra+quartz", token=who).body["cards"]
        assert [c["id"] for c in cards] == [public["id"]], who
        assert srv.call("GET", f"/api/notes/{hidden['id']}", token=who).status == 404
        assert srv.call("GET", "/api/notes/search?q=zebra&project=alice:secret", token=who).body["cards"] == []
    for who in ("alice", "boss"):
        cards = srv.call("GET", "/api/notes/search?q=zebra+quartz", token=who).body["cards"]
        assert {c["id"] for c in cards} == {hidden["id"], public["id"]}
        assert srv.call("GET", f"/api/notes/{hidden['id']}", token=who).status == 200
    assert srv.call("POST", "/api/attempts", {"project": "alice:secret"}, token="bob").status == 403


@pytest.mark.slow
def test_starting_work_tells_nobody_which_private_projects_exist(srv):
    """Bob is answered alike for alice's private project, her public one and a name she never used."""
    srv.store.set_project("alice:secret", private=True, owner="alice")
    assert srv.call("POST", "/api/attempts", {"project": "alice:secret"}, token="alice").status == 201
    assert srv.call("POST", "/api/attempts", {"project": "alice:open"}, token="alice").status == 201
    answers = {}
    for name in ("alice:secret", "alice:open", "alice:never-used"):
        got = srv.call("POST", "/api/attempts", {"project": name}, token="bob")
        answers[name] = (got.status, got.body["error"]["code"], got.body["error"]["message"].replace(name, "NAME"))
    assert len(set(answers.values())) == 1 and answers["alice:secret"][:2] == (403, "forbidden"), answers
    assert srv.call("POST", "/api/attempts", {"project": "Bob:Own Work"}, token="bob").body["project"] == "bob:own-work"
    assert srv.call("POST", "/api/attempts", {"project": "shared"}, token="bob").status == 201
    assert srv.call("POST", "/api/attempts", {"project": "alice:never-used"}, token="boss").status == 201
    # A private project under a shared name would answer apart from a free one: it cannot be made.
    refused = srv.store.set_project
    with pytest.raises(notewell.InvalidArgumentError, match="namespace"):
        refused("shared", private=True, owner="bob")
    with pytest.raises(notewell.InvalidArgumentError, match="its owner is alice"):
        refused("alice:open", private=True, owner="bob")
    assert refused("alice:open", private=True)["owner"] == "alice"


@pytest.mark.slow
def test_limits_and_errors_are_json_with_a_code(srv):
    cases = [
        (srv.call("GET", "/api/notes/search?q=x&limit=101"), 400, "invalid_argument"),
        (srv.call("GET", "/api/notes/search?q=" + "a" * 1001), 400, "invalid_query"),
        (srv.call("GET", "/api/notes/search?q=x&mode=fuzzy"), 400, "invalid_argument"),
        (srv.call("GET", "/api/notes/search?q=x&colour=red"), 400, "invalid_argument"),
        (srv.call("GET", "/api/notes/search?q=%22unbalanced"), 200, None),
        (srv.call("GET", "/api/notes/nte_0000000000"), 404, "not_found"),
        (srv.call("GET", "/api/notes/not-an-id"), 400, "invalid_id"),
        (srv.call("GET", "/api/no/such/path"), 404, "not_found"),
        (srv.call("PUT", "/api/notes"), 405, "method_not_allowed"),
        (srv.call("POST", "/api/notes", raw=b"{not json", token="alice"), 400, "invalid_argument"),
        (srv.call("POST", "/api/notes", {"txt": "x"}, token="alice"), 400, "invalid_argument"),
        (srv.call("POST", "/api/notes", raw=b"x" * (srv.store.max_bytes * 3), token="alice"), 413, "too_large"),
        (srv.call("POST", "/api/attempts/att_nope/end", {"outcome": "x"}, token="alice"), 400, "invalid_id"),
    ]
    for answer, status, code in cases:
        assert answer.status == status, (answer.status, answer.body)
        if code:
            assert answer.body["error"]["code"] == code and answer.body["error"]["message"]


@pytest.mark.slow
def test_writes_are_rate_limited_per_token(tmp_path):
    server = Server(tmp_path / "notes", write_rate=2.0)  # bursts of 6
    try:
        statuses = [server.call("POST", "/api/notes", {"text": f"# n{i}\n\nx"}, token="alice") for i in range(10)]
        limited = [a for a in statuses if a.status == 429]
        assert limited and limited[0].body["error"]["code"] == "rate_limited"
        assert int(limited[0].headers.get("retry-after", limited[0].headers.get("Retry-After"))) >= 1
        assert server.call("POST", "/api/notes", {"text": "# other\n\nx"}, token="bob").status == 201
        assert len(server.store.list_notes(limit=50)) == 10 - len(limited) + 1  # nothing refused was written
    finally:
        server.close()


@pytest.mark.slow
def test_a_private_server_answers_nothing_without_a_token(tmp_path):
    server = Server(tmp_path / "notes", private=True)
    try:
        assert server.call("GET", "/api/notes/search?q=x").status == 401
        assert server.call("GET", "/api/notes/search?q=x", token="reader").status == 200
        assert server.call("GET", "/healthz").status == 200
    finally:
        server.close()


@pytest.mark.slow
def test_the_server_sees_files_written_beside_it_and_embeds_in_the_background(tmp_path):
    import time

    server = Server(tmp_path / "notes")
    try:
        server.store.start_embedding(idle=0.05)  # what `notewell serve` does (it looks at the queue every 2 s)
        (server.store.root / "outside.md").write_text("# Written outside\n\nplatypus migration findings\n")
        deadline = time.monotonic() + 15
        cards = []
        while time.monotonic() < deadline and not cards:
            cards = server.call("GET", "/api/notes/search?q=platypus").body["cards"]
            time.sleep(0.1)
        assert [c["title"] for c in cards] == ["Written outside"]
        note = _note(server, "# Added over HTTP\n\nwombat burrow survey")
        semantic = []
        # Until the background thread has embedded the new note, only the other one has a vector.
        while time.monotonic() < deadline + 15 and note["id"] not in [c["id"] for c in semantic]:
            semantic = server.call("GET", "/api/notes/search?q=wombat+burrow&mode=semantic").body["cards"]
            time.sleep(0.1)
        assert semantic and semantic[0]["id"] == note["id"]
    finally:
        server.store.stop_embedding()
        server.close()


@pytest.mark.slow
def test_review_findings_stay_fixed(srv):
    import urllib.request

    note = _note(srv, "# kept\n\noriginal text")
    # A label that is not valid text is refused before anything is written.
    bad = srv.call("POST", "/api/notes", raw=b'{"text": "# x\\n\\ny", "model": "\\ud800"}', token="alice")
    assert bad.status == 400 and bad.body["error"]["code"] == "invalid_argument"
    assert len(srv.store.list_notes(limit=10)) == 1
    # One change per PATCH: both at once is refused whole.
    both = srv.call("PATCH", f"/api/notes/{note['id']}", {"text": "# changed\n\nx", "add_tags": []}, token="alice")
    assert both.status == 400 and srv.store.get_note(note["id"]).revision == 1
    # Numbers: ASCII digits only, bounded.
    for query in ("limit=%C2%B2", "limit=--5", "limit=" + "9" * 5000):
        assert srv.call("GET", f"/api/notes/search?q=x&{query}").status == 400, query
    assert srv.call("GET", "/api/notes?offset=" + "1" + "0" * 12).status == 400
    assert srv.call("GET", "/api/notes?offset=1000000000").status == 400
    assert srv.call("GET", f"/api/notes/{note['id']}/links?depth=0").status == 400
    assert srv.call("GET", "/api/notes/search?q=x&offset=5").status == 400
    deep = srv.call("POST", "/api/notes", raw=b"[" * 100000 + b"]" * 100000, token="alice")
    assert deep.status in (400, 413) and "error" in deep.body
    # Recording a read is a write: not with a read-only token.
    aid = srv.call("POST", "/api/attempts", {"project": "p"}, token="alice").body["id"]
    assert srv.call("GET", f"/api/notes/{note['id']}?working_attempt_id={aid}", token="reader").status == 403
    assert srv.call("GET", f"/api/notes/{note['id']}?working_attempt_id={aid}", token="alice").status == 200
    # A request not addressed to loopback (DNS rebinding) is refused.
    request = urllib.request.Request(srv.url + "/api/notes")
    request.add_header("Host", "attacker.example")
    try:
        urllib.request.urlopen(request, timeout=10)
        raise AssertionError("answered a request for another host")
    except urllib.error.HTTPError as exc:
        assert exc.code == 421


@pytest.mark.slow
def test_concurrent_token_creation_keeps_every_token(tmp_path):
    import subprocess
    import sys

    store = tmp_path / "s"
    notewell_open = __import__("notewell").open
    notewell_open(store, watch=False).close()
    env = {**__import__("os").environ, "NOTEWELL_AUTOWATCH": "off"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "notewell", "--store", str(store), "token", "create", f"t{i}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )
        for i in range(8)
    ]  # fmt: skip
    secrets = [p.communicate(timeout=60)[0].decode().strip() for p in procs]
    from notewell.backends.sqlite.tokens import TokenBook

    book = TokenBook(store / ".notewell")
    assert sorted(t.name for t in book.list()) == [f"t{i}" for i in range(8)]
    assert all(book.verify(s) is not None for s in secrets)


@pytest.mark.slow
def test_a_private_server_makes_no_mcp_session_without_a_token(tmp_path):
    pytest.importorskip("mcp")
    import urllib.request

    server = Server(tmp_path / "notes", private=True)
    try:
        body = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}'
        request = urllib.request.Request(server.url + "/mcp", data=body, method="POST")
        request.add_header("Content-Type", "application/json")
        request.add_header("Accept", "application/json, text/event-stream")
        try:
            urllib.request.urlopen(request, timeout=10)
            raise AssertionError("a session without a token")
        except urllib.error.HTTPError as exc:
            assert exc.code == 401 and b"unauthorized" in exc.read()
    finally:
        server.close()


@pytest.mark.slow
def test_kind_like_tags_may_repeat_or_be_comma_separated(srv):
    a = _note(srv, "---\ntitle: Pool size\nkind: decision\n---\nconnection pool raised to forty")
    b = _note(srv, "---\ntitle: Pool leak\nkind: blocker\n---\nconnection pool leaks under load")
    _note(srv, "---\ntitle: Pool docs\nkind: finding\n---\nconnection pool documented")
    for query in ("kind=decision&kind=blocker", "kind=decision,blocker"):
        found = srv.call("GET", f"/api/notes/search?q=pool&{query}")
        assert found.status == 200 and {c["id"] for c in found.body["cards"]} == {a["id"], b["id"]}, query
    doc = srv.call("GET", "/openapi.json").body
    params = {p["name"]: p for p in doc["paths"]["/api/notes/search"]["get"]["parameters"]}
    assert params["kind"]["schema"]["type"] == "array" and params["tag_mode"]["schema"]["enum"] == ["any", "all"]


@pytest.mark.slow
def test_a_method_a_path_does_not_take_is_405_naming_the_ones_it_does(srv):
    note = _note(srv, "# allowed\n\nmethods")
    for method, path, allowed in [
        ("OPTIONS", "/api/notes", {"GET", "HEAD", "POST"}),
        ("PUT", "/api/notes", {"GET", "HEAD", "POST"}),
        ("OPTIONS", f"/api/notes/{note['id']}", {"GET", "HEAD", "PATCH", "DELETE"}),
        ("POST", f"/api/notes/{note['id']}", {"GET", "HEAD", "PATCH", "DELETE"}),
        # Not read as a note id "search": the search path takes GET only.
        ("PATCH", "/api/notes/search", {"GET", "HEAD"}),
        ("DELETE", "/api/notes/search", {"GET", "HEAD"}),
        ("GET", "/api/attempts", {"POST"}),
        ("OPTIONS", "/healthz", {"GET", "HEAD"}),
    ]:
        got = srv.call(method, path, raw=b"{}" if method in ("PATCH", "POST", "PUT") else None, token="alice")
        assert got.status == 405 and got.body["error"]["code"] == "method_not_allowed", (method, path, got.body)
        allow = got.headers.get("allow", got.headers.get("Allow", ""))
        assert {m.strip() for m in allow.split(",")} == allowed, (method, path, allow)
    assert srv.call("GET", "/api/notes/search?q=allowed").status == 200
    assert srv.call("HEAD", "/api/notes").status == 200


@pytest.mark.slow
def test_query_parameters_outside_the_document_are_refused(srv):
    _note(srv, "---\ntitle: tagged\ntags: [cache]\n---\ncache")
    for path in (
        "/api/notes?tag_mode=AAA",  # refused even without tags, where the search layer never reads it
        "/api/notes/search?q=cache&tag_mode=AAA",
        "/api/tags?notes=null",
        "/api/tags?notes=",
        "/api/notes/search?q=cache&wait=perhaps",
        "/api/notes?" + "&".join(["kind="] * 101),  # counted as given, blank ones too
    ):
        got = srv.call("GET", path, token="alice")
        assert got.status == 400 and got.body["error"]["code"] == "invalid_argument", (path, got.body)
    assert srv.call("GET", "/api/notes?tags=cache&tag_mode=all").status == 200
    with_notes = srv.call("GET", "/api/tags?notes=1")  # as the web page asks
    assert with_notes.status == 200 and with_notes.body["notes"]
    assert "notes" not in srv.call("GET", "/api/tags?notes=false").body
    # A time valid as ISO whose UTC falls outside the years 1-9999 filters like the first or last time.
    early, late = "0001-01-01T00:00:00%2B05:00", "9999-12-31T23:59:59-05:00"
    assert len(srv.call("GET", f"/api/notes?created_after={early}").body["cards"]) == 1
    assert srv.call("GET", f"/api/notes?created_before={early}").body["cards"] == []
    assert len(srv.call("GET", f"/api/notes/search?q=cache&updated_before={late}").body["cards"]) == 1
    assert srv.call("GET", f"/api/notes?updated_after={late}").body["cards"] == []


@pytest.mark.slow
def test_a_body_field_outside_the_document_is_refused_and_null_is_left_out(srv):
    for path, body in [
        ("/api/notes", {"text": "# x\n\ny", "atempt_id": "att_0000000000"}),
        ("/api/attempts", {"project": "demo", "campaing": "spring"}),
    ]:
        got = srv.call("POST", path, body, token="alice")
        assert got.status == 400 and got.body["error"]["code"] == "invalid_argument", (path, got.body)
        assert "atempt_id" in got.body["error"]["message"] or "campaing" in got.body["error"]["message"]
    assert srv.store.list_notes(limit=5) == [] and srv.store.list_attempts(limit=5) == []
    aid = srv.call("POST", "/api/attempts", {"project": "demo", "campaign": None, "model": None}, token="alice")
    assert aid.status == 201, aid.body
    assert _note(srv, "# x\n\ny", attempt_id=None, model=None)["attempt_id"] is None
    end = f"/api/attempts/{aid.body['id']}/end"
    assert srv.call("POST", end, {"outcome": "failed", "sumary": "x"}, token="alice").status == 400
    assert srv.call("POST", end, {"outcome": "failed", "summary": None}, token="alice").status == 200


@pytest.mark.slow
def test_the_document_refuses_what_the_server_refuses_and_allows_what_it_takes(srv):
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    doc = srv.call("GET", "/openapi.json").body
    aid = srv.call("POST", "/api/attempts", {"project": "demo"}, token="alice").body["id"]
    nid = _note(srv, "# kept\n\ntext")["id"]
    notes, attempts, end, note = "/api/notes", "/api/attempts", f"/api/attempts/{aid}/end", f"/api/notes/{nid}"

    def param(path, name):
        method = next(iter(doc["paths"][path]))
        return next(p["schema"] for p in doc["paths"][path][method]["parameters"] if p["name"] == name)

    def field(path, name):
        return doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"][name]

    cases = [  # (the document's schema, a value, a request with that value, whether the server takes it)
        (field(notes, "text"), "", ("POST", notes, {"text": ""}), False),
        (field(notes, "text"), " \n\x1c", ("POST", notes, {"text": " \n\x1c"}), False),
        (field(notes, "text"), "a\x00", ("POST", notes, {"text": "a\x00"}), False),
        (field(notes, "text"), "0", ("POST", notes, {"text": "0"}), True),
        (field(notes, "model"), "a\nb", ("POST", notes, {"text": "x", "model": "a\nb"}), False),
        (field(notes, "model"), "m" * 101, ("POST", notes, {"text": "x", "model": "m" * 101}), False),
        (field(notes, "model"), " \n", ("POST", notes, {"text": "x", "model": " \n"}), True),
        (field(notes, "attempt_id"), "0", ("POST", notes, {"text": "x", "attempt_id": "0"}), False),
        (field(attempts, "project"), "", ("POST", attempts, {"project": ""}), False),
        (field("/api/attempts/{attempt_id}/end", "outcome"), "", ("POST", end, {"outcome": ""}), False),
        (field("/api/attempts/{attempt_id}/end", "outcome"), "no way", ("POST", end, {"outcome": "no way"}), False),
        (field("/api/attempts/{attempt_id}/end", "summary"), "", ("POST", end, {"outcome": "x", "summary": ""}), False),
        (param("/api/attempts/{attempt_id}", "attempt_id"), "0", ("GET", "/api/attempts/0", None), False),
        (param("/api/notes/{note_id}", "note_id"), f"x{nid}x", ("GET", f"{notes}/x{nid}x", None), False),
        (param("/api/notes/{note_id}", "working_attempt_id"), "", ("GET", f"{note}?working_attempt_id=", None), False),
        (param("/api/notes/{note_id}", "revision"), 10**12, ("GET", f"{note}?revision={10**12}", None), False),
        (param(notes, "offset"), 10**6 + 1, ("GET", f"{notes}?offset={10**6 + 1}", None), False),
        (param(notes, "project"), "", ("GET", f"{notes}?project=", None), False),
        (param(notes, "builds_on"), "", ("GET", f"{notes}?builds_on=", None), False),
        (param(notes, "created_after"), "", ("GET", f"{notes}?created_after=", None), False),
        (param(notes, "created_after"), "2026-11-29", ("GET", f"{notes}?created_after=2026-11-29", None), True),
        (param("/api/notes/search", "q"), "a" * 1001, ("GET", f"{notes}/search?q={'a' * 1001}", None), False),
    ]  # fmt: skip
    for schema, value, (method, path, body), takes in cases:
        # Formats asserted, as clients and the fuzzing test read them.
        assert jsonschema_rs.validator_for(schema, validate_formats=True).is_valid(value) is takes, (path[:80], value)
        got = srv.call(method, path, body, token="alice")
        assert (got.status < 400) is takes and (takes or got.status == 400), (path[:80], value, got.status, got.body)
    # Every status an operation answers is documented: /api/tags refuses unknown parameters.
    assert srv.call("GET", "/api/tags?colour=red").status == 400
    assert "400" in doc["paths"]["/api/tags"]["get"]["responses"]
    assert "413" in doc["paths"]["/api/attempts"]["post"]["responses"]
    assert "403" in doc["paths"]["/api/notes/search"]["get"]["responses"]  # wait=true is a write
    # A blank query is taken with a project or an attempt (their recent notes): q is not required.
    assert srv.call("GET", "/api/notes/search?project=demo").status == 200
    assert not next(p for p in doc["paths"]["/api/notes/search"]["get"]["parameters"] if p["name"] == "q")["required"]


@pytest.mark.slow
def test_search_takes_query_as_the_mcp_tool_does_and_q_as_its_alias(srv):
    note = _note(srv, "# alias test\n\nquokka habitat")
    for key in ("query", "q"):
        got = srv.call("GET", f"/api/notes/search?{key}=quokka")
        assert got.status == 200 and [c["id"] for c in got.body["cards"]] == [note["id"]], key
    twice = srv.call("GET", "/api/notes/search?query=quokka&q=quokka")
    assert twice.status == 400 and twice.body["error"]["code"] == "invalid_argument"
    assert srv.call("GET", "/api/notes?query=quokka").status == 400


@pytest.mark.slow
def test_a_note_is_addressed_by_its_path_over_http(srv):
    (srv.store.root / "research").mkdir()
    (srv.store.root / "research" / "go-tips.md").write_text("# Go tips\n\nerrors are values\n")
    srv.store.refresh()
    by_name = srv.call("GET", "/api/notes/go-tips.md")
    by_path = srv.call("GET", "/api/notes/research/go-tips.md")
    assert by_name.status == by_path.status == 200 and by_name.body["id"] == by_path.body["id"]
    assert by_name.body["title"] == "Go tips"
    assert srv.call("GET", "/api/notes/research/go-tips.md/links").body["id"] == by_name.body["id"]
    patched = srv.call("PATCH", "/api/notes/go-tips.md", {"add_tags": ["go"]}, token="boss")
    assert patched.status == 200 and patched.body["tags"] == ["go"]
    missing = srv.call("GET", "/api/notes/nope.md")
    assert missing.status == 404 and missing.body["error"]["code"] == "not_found"


@pytest.mark.slow
def test_paths_over_http_reveal_nothing_of_the_folder_or_a_hidden_note(srv):
    # An absolute path answered "... is not inside the store /tmp/.../notes"; a slash that names
    # no note answered invalid_id; a hidden top-level X.md hid the visible sub/X.md.
    for path in ("/api/notes//etc/passwd.md", "/api/notes/%2Fetc%2Fpasswd.md"):
        got = srv.call("GET", path, token="bob")
        assert got.status == 404 and str(srv.store.root) not in json.dumps(got.body), got.body
    for path in ("/api/notes/search/", "/api/notes/nte_0000000000/history"):
        assert srv.call("GET", path).status == 404
    srv.store.set_project("alice:secret", private=True)
    aid = srv.call("POST", "/api/attempts", {"project": "alice:secret"}, token="alice").body["id"]
    hidden = _note(srv, "# hidden\n\nx", attempt_id=aid)
    (srv.store.root / "sub").mkdir()
    (srv.store.root / "sub" / f"{hidden['id']}.md").write_text("# visible twin\n\ny")
    srv.store.refresh()
    seen = srv.call("GET", f"/api/notes/{hidden['id']}.md", token="bob")
    assert seen.status == 200 and seen.body["title"] == "visible twin"  # as if the hidden one were absent
