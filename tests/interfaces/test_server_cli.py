"""`notewell token` and `notewell serve` as a user runs them: token in the test process (see
cli_harness), serve in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest

import notewell
from tests.interfaces.server_fixture import free_port
from tests.interfaces.test_cli import js, run


@pytest.mark.slow
def test_tokens_are_created_listed_and_revoked(tmp_path):
    store = tmp_path / "s"
    secret = run(["token", "create", "alice"], store).stdout.decode().strip()
    assert secret.startswith("nwt_")
    stored = (store / ".notewell" / "tokens.json").read_text()
    assert secret not in stored and "alice" in stored  # only its hash is kept
    assert oct(os.stat(store / ".notewell" / "tokens.json").st_mode & 0o777) == "0o600"
    run(["token", "create", "ci", "--read-only"], store)
    listed = js(run(["token", "list", "--json"], store))
    assert [(t["name"], t["read_only"], t["owner"]) for t in listed] == [("alice", False, False), ("ci", True, False)]
    again = run(["token", "create", "alice"], store, check=False)
    assert again.returncode == 2 and b"exists" in again.stderr
    assert run(["token", "create", "bad name!"], store, check=False).returncode == 2
    assert run(["token", "create", "x", "--read-only", "--owner"], store, check=False).returncode == 2
    run(["token", "revoke", "alice"], store)
    assert [t["name"] for t in js(run(["token", "list", "--json"], store))] == ["ci"]
    assert run(["token", "revoke", "alice"], store, check=False).returncode == 3


# Real process: serve runs until a signal stops it, with uvicorn's signal handlers and threads.
@pytest.mark.slow
def test_serve_answers_on_loopback_and_stops(tmp_path):
    pytest.importorskip("uvicorn")
    store = tmp_path / "s"
    secret = run(["token", "create", "alice"], store).stdout.decode().strip()
    port = free_port()
    src = os.path.abspath(os.path.join(os.path.dirname(notewell.__file__), ".."))
    env = {**os.environ, "PYTHONPATH": src, "NOTEWELL_EMBEDDER": "hash", "NOTEWELL_AUTOWATCH": "off"}
    cmd = [sys.executable, "-m", "notewell", "--store", str(store), "serve", "--port", str(port)]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url + "/healthz", timeout=2).read()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, server.stderr.read()
                time.sleep(0.1)
        req = urllib.request.Request(url + "/api/notes", data=b'{"text": "# hello\\n\\nfrom serve"}', method="POST")
        req.add_header("Authorization", f"Bearer {secret}")
        req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=10) as answer:
            assert answer.status == 201 and json.loads(answer.read())["author"] == "alice"
    finally:
        server.terminate()
        server.communicate(timeout=20)  # waits, and closes the pipes
    with notewell.open(store, watch=False) as s:
        assert [c.title for c in s.search_notes("hello")] == ["hello"]
