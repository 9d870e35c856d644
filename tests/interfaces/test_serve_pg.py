"""`notewell serve|token|mcp --database URL`: real server processes sharing one PostgreSQL database.

Each test gets a new database on the server the ``pg_url`` fixture starts (skipped, saying
why, when none can be); the servers are real ``notewell serve`` processes on 127.0.0.1 (and
`notewell mcp` a real stdio process). The one-shot commands around them (``token``, ``db``,
the refusals) run in the test process (cli_harness): what they do is the database's.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
from typing import Any

import pytest

import notewell
from notewell.backends.postgres.db import MIGRATIONS
from tests.interfaces.cli_harness import Finished, call
from tests.interfaces.server_fixture import Answer, free_port, http_call

pytest.importorskip("uvicorn")

NOTE = "---\ntitle: Cache stampede\ntags: [cache]\n---\nEvery worker refills the cache at once.\n"


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NOTEWELL_STORE", "NOTEWELL_DATABASE")}
    src = os.path.abspath(os.path.join(os.path.dirname(notewell.__file__), ".."))
    env.update({"PYTHONPATH": src, "NOTEWELL_AUTOWATCH": "off", **(extra or {})})
    return env


def cli(*args: str, env: dict[str, str] | None = None, check: bool = True) -> Finished:
    """``notewell ARGS`` in this process (text output), with the environment a server gets."""
    done = call(args, env={"NOTEWELL_AUTOWATCH": "off", **(env or {})}, unset=_UNSET, text=True)
    if check:
        assert done.returncode == 0, done.stderr
    return done


_UNSET = ("NOTEWELL_STORE", "NOTEWELL_DATABASE")
_GIVEN: set[str] = set()


def _new_port() -> str:
    """A free port no other server of these tests was given: servers started side by side
    have not bound theirs yet when the next one asks."""
    while (port := str(free_port())) in _GIVEN:
        pass
    _GIVEN.add(port)
    return port


class Served:
    """A `notewell serve --database URL` process on a free port of 127.0.0.1; with
    ``wait=False`` started only, :meth:`wait_ready` then waits for it to answer (so that
    servers start side by side)."""

    def __init__(
        self, url: str, env: dict[str, str] | None = None, extra: tuple[str, ...] = (), *, wait: bool = True
    ) -> None:
        port = _new_port()
        self.base = f"http://127.0.0.1:{port}"
        cmd = [sys.executable, "-m", "notewell", "serve", "--database", url, "--port", port, "--write-rate", "500"]
        cmd += extra
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(env))
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.base + "/healthz", timeout=2).read()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.close()
                    raise AssertionError(f"the server did not start: {self.proc.stderr.read()}") from None
                time.sleep(0.1)
        self.banner = self.proc.stdout.readline()  # printed (and flushed) before it serves

    def call(self, method: str, path: str, body: Any = None, *, token: str | None = None) -> Answer:
        return http_call(self.base, method, path, body, token=token)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.communicate(timeout=20)


@pytest.fixture
def serve():
    started: list[Served] = []

    def start(url: str, env: dict[str, str] | None = None, *, wait: bool = True) -> Served:
        started.append(Served(url, env, wait=wait))
        return started[-1]

    yield start
    for server in started:  # all told to stop first: they shut down side by side
        if server.proc.poll() is None:
            server.proc.terminate()
    for server in started:
        server.close()


def _tokens(url: str, **flags: list[str]) -> dict[str, str]:
    return {
        name: cli("token", "create", name, *extra, "--database", url).stdout.strip() for name, extra in flags.items()
    }


def test_two_servers_on_one_database_share_notes_and_tokens(pg_url, serve):
    tokens = _tokens(pg_url, alice=[], bob=[], reader=["--read-only"], boss=["--owner"])
    assert all(s.startswith("nwt_") for s in tokens.values())
    listed = json.loads(cli("token", "list", "--json", "--database", pg_url).stdout)
    assert [(t["name"], t["read_only"], t["owner"]) for t in listed] == [
        ("alice", False, False),
        ("bob", False, False),
        ("boss", False, True),
        ("reader", True, False),
    ]
    again = cli("token", "create", "alice", "--database", pg_url, check=False)
    assert again.returncode == 2 and "exists" in again.stderr and len(again.stderr.splitlines()) == 1
    import psycopg

    with psycopg.connect(pg_url) as conn:  # only digests are kept
        stored = json.dumps(conn.execute("SELECT * FROM tokens").fetchall(), default=str)
    assert not any(secret in stored for secret in tokens.values())

    first = serve(pg_url.replace("postgres@", "postgres:s3cret@", 1), wait=False)  # the test server trusts 127.0.0.1
    second = serve(pg_url, wait=False)
    first.wait_ready()
    second.wait_ready()
    assert "s3cret" not in first.banner and "serving postgres@127.0.0.1:" in first.banner
    alice, bob, reader = tokens["alice"], tokens["bob"], tokens["reader"]

    made = first.call("POST", "/api/notes", {"text": NOTE}, token=alice)
    assert made.status == 201 and made.body["author"] == "alice"
    nid = made.body["id"]
    got = second.call("GET", f"/api/notes/{nid}")
    assert got.status == 200 and got.body["text"] == NOTE
    assert [c["id"] for c in second.call("GET", "/api/notes/search?q=stampede").body["cards"]] == [nid]
    assert [c["id"] for c in second.call("GET", "/api/notes?limit=5", token=bob).body["cards"]] == [nid]
    edited = second.call("PATCH", f"/api/notes/{nid}", {"text": NOTE.replace("at once", "together")}, token=alice)
    assert edited.status == 200 and edited.body["revision"] == 2
    tagged = first.call("PATCH", f"/api/notes/{nid}", {"add_tags": ["hot"]}, token=alice)
    assert tagged.status == 200 and tagged.body["tags"] == ["cache", "hot"]
    assert "together" in first.call("GET", f"/api/notes/{nid}").body["text"]

    refused = second.call("PATCH", f"/api/notes/{nid}", {"text": "# mine now"}, token=bob)
    assert refused.status == 403 and refused.body["error"]["code"] == "forbidden"
    read_only = first.call("POST", "/api/notes", {"text": "# no\n"}, token=reader)
    assert read_only.status == 403 and read_only.body["error"]["code"] == "forbidden"
    assert second.call("GET", f"/api/notes/{nid}", token=reader).status == 200  # it may still read

    assert second.call("DELETE", f"/api/notes/{nid}", token=alice).status == 200
    gone = first.call("GET", f"/api/notes/{nid}")
    assert gone.status == 404 and gone.body["error"]["code"] == "not_found"

    assert [s.call("GET", "/api/tags", token=bob).status for s in (first, second)] == [200, 200]
    cli("token", "revoke", "bob", "--database", pg_url)
    for server in (first, second):  # at once: each check reads the table
        answer = server.call("GET", "/api/tags", token=bob)
        assert answer.status == 401 and answer.body["error"]["code"] == "unauthorized"
    assert cli("token", "revoke", "bob", "--database", pg_url, check=False).returncode == 3


def test_private_projects_attempts_reads_and_search_modes_over_http(pg_url, serve):
    tokens = _tokens(pg_url, alice=[], bob=[])
    alice, bob = tokens["alice"], tokens["bob"]
    server = serve(pg_url, env={"NOTEWELL_MAX_BYTES": "4096"})
    with notewell.open(pg_url, pool_size=1) as store:
        store.set_project("alice:vault", private=True, owner="alice")

    attempt = server.call("POST", "/api/attempts", {"project": "alice:vault"}, token=alice)
    assert attempt.status == 201 and attempt.body["author"] == "alice"
    aid = attempt.body["id"]
    secret = server.call("POST", "/api/notes", {"text": "# launch plan\n\nzeppelin", "attempt_id": aid}, token=alice)
    public = server.call("POST", "/api/notes", {"text": "# open plan\n\nzeppelin"}, token=bob).body
    sid = secret.body["id"]
    assert secret.status == 201 and secret.body["attempt"]["author"] == "alice"

    for token in (bob, None):
        cards = server.call("GET", "/api/notes/search?q=zeppelin", token=token).body["cards"]
        assert [c["id"] for c in cards] == [public["id"]]
        assert server.call("GET", f"/api/notes/{sid}", token=token).status == 404
        assert sid not in json.dumps(server.call("GET", "/api/notes", token=token).body)
    assert {c["id"] for c in server.call("GET", "/api/notes/search?q=zeppelin", token=alice).body["cards"]} == {
        sid,
        public["id"],
    }
    # Alice is not the store's owner: she may change the note because the attempt is hers.
    changed = server.call("PATCH", f"/api/notes/{sid}", {"text": "# launch plan\n\nzeppelin, delayed"}, token=alice)
    assert changed.status == 200 and changed.body["revision"] == 2

    read = server.call("GET", f"/api/notes/{public['id']}?working_attempt_id={aid}", token=alice)
    assert read.status == 200 and read.body["id"] == public["id"]
    not_hers = server.call("GET", f"/api/notes/{public['id']}?working_attempt_id={aid}", token=bob)
    assert not_hers.status == 404  # bob may not even see the private attempt
    with notewell.open(pg_url, pool_size=1) as store:
        assert [r["note_id"] for r in store.attempt_reads(aid)] == [public["id"]]

    for mode in ("semantic", "both", "hybrid"):
        answer = server.call("GET", f"/api/notes/search?q=zeppelin&mode={mode}", token=alice)
        assert answer.status == 200 and answer.body["mode"] == mode

    too_long = server.call("POST", f"/api/attempts/{aid}/end", {"outcome": "done", "summary": "x" * 5000}, token=alice)
    assert too_long.status == 413 and too_long.body["error"]["code"] == "too_large"
    ended = server.call("POST", f"/api/attempts/{aid}/end", {"outcome": "done", "summary": "it flew"}, token=alice)
    assert ended.status == 200 and ended.body["outcome"] == "done"
    frozen = server.call("PATCH", f"/api/notes/{sid}", {"text": "# late"}, token=alice)
    assert frozen.status == 409 and frozen.body["error"]["code"] == "frozen"


def test_mcp_at_slash_mcp_on_a_database(pg_url, serve):
    pytest.importorskip("mcp")
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    alice = _tokens(pg_url, alice=[])["alice"]
    server = serve(pg_url)

    async def scenario() -> tuple[str, Any, Any]:
        headers = {"Authorization": f"Bearer {alice}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(f"{server.base}/mcp", http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as s:
                    await s.initialize()
                    added = await s.call_tool("add_note", {"text": "# heron\n\nheron nest by the weir"})
                    found = await s.call_tool("search_notes", {"query": "heron nest"})
                    semantic = await s.call_tool("search_notes", {"query": "heron", "mode": "semantic"})
                    return added.structured_content["id"], found, semantic

    nid, found, semantic = asyncio.run(scenario())
    assert not found.is_error and [c["id"] for c in found.structured_content["cards"]] == [nid]
    assert not semantic.is_error
    assert server.call("GET", f"/api/notes/{nid}").body["author"] == "alice"  # the token's name, kept in the table


def test_mcp_over_stdio_on_a_database(pg_url):
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "notewell", "mcp", "--database", pg_url], env=_env()
    )

    async def scenario() -> Any:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                added = await s.call_tool("add_note", {"text": "# kestrel\n\nhovering over the verge"})
                assert not added.is_error, added.content[0].text
                return await s.call_tool("search_notes", {"query": "kestrel"})

    found = asyncio.run(scenario())
    assert not found.is_error and [c["title"] for c in found.structured_content["cards"]] == ["kestrel"]
    with notewell.open(pg_url, pool_size=1) as store:  # it landed in the database
        assert [c.title for c in store.list_notes()] == ["kestrel"]


def test_a_folder_and_a_database_together_are_refused_in_one_line(tmp_path, pg_url):
    both = cli("--store", str(tmp_path / "s"), "token", "list", "--database", pg_url, check=False)
    assert both.returncode == 2 and "not both" in both.stderr and len(both.stderr.splitlines()) == 1
    envs = cli("token", "list", env={"NOTEWELL_STORE": str(tmp_path / "s"), "NOTEWELL_DATABASE": pg_url}, check=False)
    assert envs.returncode == 2 and "both set" in envs.stderr and len(envs.stderr.splitlines()) == 1
    bad = cli("serve", "--database", "mysql://x/y", check=False)
    assert bad.returncode == 2 and "postgresql://" in bad.stderr and len(bad.stderr.splitlines()) == 1
    assert not (tmp_path / "s").exists()  # nothing was made on the way to the error
    # $NOTEWELL_DATABASE alone names the store, as for `notewell db`.
    cli("token", "create", "carol", env={"NOTEWELL_DATABASE": pg_url})
    assert [t["name"] for t in json.loads(cli("token", "list", "--json", "--database", pg_url).stdout)] == ["carol"]


def test_a_database_at_schema_1_is_upgraded_in_place_before_serving(pg_url):
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:  # as the first PostgreSQL release left it
        conn.execute(MIGRATIONS[0][1])
        conn.execute("CREATE TABLE notewell_schema(version integer NOT NULL, applied_at text)")
        conn.execute("INSERT INTO notewell_schema VALUES (1, now()::text)")
    old = cli("token", "list", "--database", pg_url, check=False)
    assert old.returncode == 6 and "notewell db upgrade" in old.stderr and len(old.stderr.splitlines()) == 1
    assert json.loads(cli("--json", "db", "upgrade", "--database", pg_url).stdout)["applied"] == list(
        range(2, len(MIGRATIONS) + 1)
    )
    cli("token", "create", "dave", "--database", pg_url)
    assert "dave" in cli("token", "list", "--database", pg_url).stdout
