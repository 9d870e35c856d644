"""`notewell mcp`'s stdio wire: `initialize` answered before the SDK loads, exactly as the SDK
would answer it, and only once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("mcp")

import notewell  # noqa: E402
from notewell.interfaces.mcp.stdio import _early_answer, _handshake_versions  # noqa: E402


def _initialize(ident, version="2025-06-18") -> dict:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    return {"jsonrpc": "2.0", "id": ident, "method": "initialize", "params": params}


def _session(store, messages: list, wanted: set) -> tuple[list[dict], str]:
    """Send *messages* to a real `notewell mcp` one at a time, keep every answer until all the
    ids in *wanted* are answered, then close its input; (the answers, its stderr)."""
    src = os.path.abspath(os.path.join(os.path.dirname(notewell.__file__), ".."))
    env = {**os.environ, "PYTHONPATH": src, "NOTEWELL_EMBEDDER": "hash", "NOTEWELL_AUTOWATCH": "off"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "notewell", "--store", str(store), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    answers: list[dict] = []
    try:
        for message in messages:
            line = message if isinstance(message, str) else json.dumps(message)
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()
        while wanted - {a.get("id") for a in answers}:
            line = proc.stdout.readline()
            assert line, "the server closed its output early"
            answers.append(json.loads(line))
        proc.stdin.close()
        rest = proc.stdout.read()
        answers.extend(json.loads(line) for line in rest.splitlines() if line.strip())
        proc.wait(timeout=60)
        return answers, proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()


def _side_by_side(*sessions: tuple) -> list[tuple[list[dict], str]]:
    """Each ``(store, messages, wanted)`` run by :func:`_session` at the same time as the
    others, each its own `notewell mcp` process on its own store; their results in order."""
    with ThreadPoolExecutor(len(sessions)) as pool:
        return list(pool.map(lambda args: _session(*args), sessions))


def _result(answers: list[dict], ident) -> dict:
    mine = [a for a in answers if a.get("id") == ident]
    assert len(mine) == 1, mine
    return mine[0]["result"]


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_the_early_answer_is_the_sdks_own(tmp_path, version):
    # A ping first makes the wire hand everything to the SDK, which then answers initialize itself.
    list_tools = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ping = {"jsonrpc": "2.0", "id": "p", "method": "ping"}
    (sdk, _), (early, err) = _side_by_side(
        (tmp_path / "sdk", [ping, _initialize(1, version), initialized, list_tools], {"p", 1, 3}),
        (tmp_path / "early", [_initialize(1, version), initialized, list_tools], {1, 3}),
    )
    assert _result(early, 1) == _result(sdk, 1)
    assert _result(early, 1)["protocolVersion"] == version
    assert _result(early, 3) == _result(sdk, 3)  # and the session goes on as before
    assert "differs" not in err


@pytest.mark.slow
def test_an_unknown_version_or_a_bad_first_line_is_left_to_the_sdk(tmp_path):
    (unknown, _), (bad_first, _) = _side_by_side(
        (tmp_path / "unknown", [_initialize(7, "1999-01-01")], {7}),
        (tmp_path / "bad", ["this is not json", _initialize(8)], {8}),
    )
    assert _result(unknown, 7)["protocolVersion"] in _handshake_versions()
    assert _result(bad_first, 8)["serverInfo"]["name"] == "notewell"


def test_only_a_well_formed_initialize_is_answered_early():
    ok = json.dumps(_initialize(1)).encode()
    ident, line = _early_answer(ok)
    assert ident == 1 and json.loads(line)["result"]["protocolVersion"] == "2025-06-18"
    for bad in (
        b"",
        b"[1, 2]",
        b"{not json",
        json.dumps({**_initialize(1), "id": True}).encode(),
        json.dumps({**_initialize(1), "id": None}).encode(),
        json.dumps({**_initialize(1), "method": "ping"}).encode(),
        json.dumps({**_initialize(1), "jsonrpc": "1.0"}).encode(),
        json.dumps({**_initialize(1), "params": []}).encode(),
        json.dumps(_initialize(1, "2999-01-01")).encode(),
        json.dumps({**_initialize(1), "params": {"protocolVersion": "2025-06-18"}}).encode(),
    ):
        assert _early_answer(bad) is None, bad


def test_the_wire_reads_the_installed_sdks_versions():
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    assert _handshake_versions() == tuple(HANDSHAKE_PROTOCOL_VERSIONS)


@pytest.mark.slow
def test_a_first_line_nested_past_the_recursion_limit_is_left_to_the_sdk(tmp_path):
    answers, _ = _session(tmp_path, ["[" * 100_000 + "]" * 100_000, _initialize(9)], {9})
    assert _result(answers, 9)["serverInfo"]["name"] == "notewell"
