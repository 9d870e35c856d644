"""The stdio wire of ``notewell mcp``, with ``initialize`` answered before the MCP SDK loads.

The SDK takes most of a second to import (its protocol types are pydantic models), and a
client waits for the ``initialize`` answer before anything else. So the first message is
read here, with nothing but the standard library: an ``initialize`` request whose protocol
version the installed SDK negotiates is answered at once, with what the SDK would answer.
The SDK then gets the same request first, as if it had come straight from the client, and
its own answer to it is dropped; everything else passes through untouched. Any other first
message (or one this module does not recognise) is simply handed on, and the SDK answers it:
so a 2026-07-28 client, which sends no ``initialize``, is the SDK's from its first request.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
import threading
from typing import Any, BinaryIO

from ...version import __version__

__all__ = ["INSTRUCTIONS", "SERVER_CAPABILITIES", "StdioWire", "claim_stdio"]

INSTRUCTIONS = """\
notewell is your external memory: notes the next agent (or you, after your context fills) can find.

Search before you start: search_notes (keyword for exact words, identifiers and error messages;
semantic for meaning; both to get the two lists side by side) returns short cards; read the few that
matter with get_note. On a project, brief is the one thing to read first.

Write one finding per note, at the moments that matter: an approach chosen (and why), a blocker, a
surprise, a change of plan, the end of a phase. Open it with a small header (title, kind such as
finding / decision / blocker / plan / digest, tags, builds_on with the ids it builds on, supersedes
with the ids of earlier notes it corrects). Record what
was done elsewhere so it can be found again: the sources read, the scripts run and where their
output is. On an attempt (a run of work that ends with an outcome and a summary), write your notes
on it (attempt_id) and record your reads on it (get_note's working_attempt_id).
"""

# What the server built by mcp_server.make_mcp declares; a test holds the two equal.
SERVER_CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}


def _handshake_versions() -> tuple[str, ...]:
    """The protocol versions the installed SDK negotiates through ``initialize``, read from its
    version table alone (importing its package would load every protocol type)."""
    try:
        spec = importlib.util.find_spec("mcp_types")
        if spec is None or not spec.submodule_search_locations:
            return ()
        path = os.path.join(next(iter(spec.submodule_search_locations)), "version.py")
        version_spec = importlib.util.spec_from_file_location("_notewell_mcp_versions", path)
        if version_spec is None or version_spec.loader is None:
            return ()
        module = importlib.util.module_from_spec(version_spec)
        version_spec.loader.exec_module(module)
        return tuple(getattr(module, "HANDSHAKE_PROTOCOL_VERSIONS", ()))
    except Exception:  # noqa: BLE001 - any surprise means: let the SDK answer
        return ()


def _early_answer(line: bytes) -> tuple[Any, bytes] | None:
    """(the request's id, the answer's line) when *line* is an ``initialize`` request this
    module can answer as the SDK would; else None."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # nested past the interpreter's depth: not ours to answer
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    ident = message.get("id")
    params = message.get("params")
    if not isinstance(ident, (int, str)) or isinstance(ident, bool) or not isinstance(params, dict):
        return None
    version = params.get("protocolVersion")
    if not isinstance(params.get("clientInfo"), dict) or not isinstance(params.get("capabilities"), dict):
        return None
    if not isinstance(version, str) or version not in _handshake_versions():
        return None  # the SDK's counter-offer is its own business
    result = {
        "capabilities": SERVER_CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": version,
        "serverInfo": {"name": "notewell", "version": __version__},
    }
    answer = json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}, separators=(",", ":"))
    return ident, answer.encode() + b"\n"


class _Reader(io.TextIOBase):
    """The client's messages as text lines, the first one (already read) given again."""

    def __init__(self, wire: BinaryIO, first: bytes) -> None:
        self._wire = wire
        self._first: bytes | None = first

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> str:  # noqa: ARG002 - the SDK reads whole lines
        if self._first is not None:
            line, self._first = self._first, None
            return line.decode("utf-8", errors="replace")
        return self._wire.readline().decode("utf-8", errors="replace")


class _Writer(io.TextIOBase):
    """The server's messages to the client, less the SDK's answer to an ``initialize`` that
    was answered already."""

    def __init__(self, wire: BinaryIO, answered: Any, ours: bytes | None) -> None:
        self._wire = wire
        self._answered = answered
        self._ours = ours
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            if self._ours is not None and self._is_second_answer(text):
                self._check(text)
                self._ours = None
                return len(text)
            self._wire.write(text.encode("utf-8"))
            return len(text)

    def _is_second_answer(self, text: str) -> bool:
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):
            return False
        return isinstance(message, dict) and message.get("id") == self._answered and "method" not in message

    def _check(self, text: str) -> None:
        # Different answers mean this module has fallen behind the SDK; the client has ours.
        theirs = json.loads(text).get("result")
        if theirs != json.loads(self._ours or b"{}").get("result"):
            print("notewell mcp: the early initialize answer differs from the MCP SDK's", file=sys.stderr)

    def flush(self) -> None:
        with self._lock:
            self._wire.flush()


class StdioWire:
    """The client's end of stdio, claimed from fds 0 and 1; see the module's docstring."""

    def __init__(self, wire_in: BinaryIO, wire_out: BinaryIO) -> None:
        self._in = wire_in
        self._out = wire_out
        self.reader: io.TextIOBase | None = None
        self.writer: io.TextIOBase | None = None

    def greet(self) -> None:
        """Read the client's first message, and answer it now if it is an ``initialize``
        request this module can answer. Blocks until the message (or end of input) comes."""
        first = self._in.readline()
        early = _early_answer(first) if first else None
        if early is not None:
            ident, answer = early
            self._out.write(answer)
            self._out.flush()
            self.writer = _Writer(self._out, ident, answer)
        else:
            self.writer = _Writer(self._out, None, None)
        self.reader = _Reader(self._in, first)


def claim_stdio() -> StdioWire:
    """Take the client's wire from fds 0 and 1, and point those at the null device and at
    stderr, so stray output from a library or a child process cannot corrupt the protocol
    (the SDK does the same when it owns the streams)."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return StdioWire(wire_in, wire_out)
