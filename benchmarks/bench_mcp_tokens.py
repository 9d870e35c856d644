"""What an agent reads over MCP in a typical session: the tool definitions it is sent before
its first call, and the tokens of every tool answer, counted with the project's own counter
(model/token_count.estimate_tokens), over a real stdio session.

Definitions: each tool as `tools/list` gives it to the client, measured two ways: its name,
description and inputSchema as JSON (``json.dumps`` of the three, as the client holds them),
and the whole entry as it comes over the wire (annotations and any outputSchema included,
compact JSON), for the default tool set (``notewell mcp``) and for every tool (``--tools all``).
A notewell from before the tool sets serves every tool whatever it is asked.

The session (15 calls): start an attempt, add five notes (English and Chinese, with headers),
search four times (keyword and hybrid), read two notes, tag one, edit one, list the recent notes,
with every tool offered. The same calls run against whichever notewell is on PYTHONPATH, so the
figures before and after a change come from one script:

    python benchmarks/bench_mcp_tokens.py                      # this checkout
    PYTHONPATH=/path/to/old/src python benchmarks/bench_mcp_tokens.py
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

import notewell
from notewell.model.token_count import estimate_tokens

NOTES = [
    "---\ntitle: Cache stampede on deploy\nkind: finding\ntags: [cache, redis]\n---\n"
    "Every worker refills the cache at once after a deploy; p99 went from 80 ms to 1.9 s. "
    "A 30 s jittered TTL and a single-flight lock fixed it (bench/stampede.py).\n",
    "---\ntitle: Restart policy\nkind: decision\ntags: [sat]\n---\nLuby restarts beat geometric ones on the "
    "medium fixtures (412 vs 388 solved in 60 s); geometric kept for the large ones.\n",
    "---\ntitle: 缓存预热\nkind: finding\ntags: [cache]\n---\n缓存预热把首个请求的延迟从 900 毫秒降到四十毫秒。\n",
    "---\ntitle: Flaky login test\nkind: blocker\ntags: [ci]\n---\ntest_login fails one run in twenty: the "
    "session cookie expires during the retry. Waiting on the auth team.\n",
    "---\ntitle: Dead end: bigger pool\nkind: dead_end\ntags: [db]\n---\nRaising the pool to 200 did not help; "
    "the lock on the jobs table is the bottleneck.\n",
]


def _env() -> dict[str, str]:
    src = os.path.abspath(os.path.join(os.path.dirname(notewell.__file__), ".."))
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": src,
        "NOTEWELL_EMBEDDER": "hash",
        "NOTEWELL_AUTOWATCH": "off",
    }


def _takes_tools() -> bool:
    """Whether this notewell's `mcp` takes --tools (from before the tool sets, it serves all)."""
    shown = subprocess.run(
        [sys.executable, "-m", "notewell", "mcp", "--help"], env=_env(), capture_output=True, text=True, check=False
    )
    return "--tools" in shown.stdout


def _params(store: str, tools: str | None = None) -> StdioServerParameters:
    chosen = ["--tools", tools] if tools is not None and _takes_tools() else []
    args = ["-m", "notewell", "--store", store, "mcp", *chosen]
    return StdioServerParameters(command=sys.executable, args=args, env=_env())


def definition_chars(tool: Any) -> tuple[int, int, int]:
    """Characters of the name, description and inputSchema as JSON; of the whole tools/list
    entry as sent; and the tokens of the first."""
    held = json.dumps({"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema})
    sent = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return len(held), len(json.dumps(sent, ensure_ascii=False, separators=(",", ":"))), estimate_tokens(held)


async def definitions(store: str, tools: str | None) -> dict[str, tuple[int, int, int]]:
    """Each offered tool's definition characters (see :func:`definition_chars`)."""
    async with stdio_client(_params(store, tools)) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        return {tool.name: definition_chars(tool) for tool in (await s.list_tools()).tools}


async def session(store: str) -> dict[str, list[int]]:
    spent: dict[str, list[int]] = defaultdict(list)

    async def call(s: ClientSession, tool: str, **arguments: object) -> dict:
        result = await s.call_tool(tool, arguments)
        spent[tool].append(sum(estimate_tokens(c.text) for c in result.content if hasattr(c, "text")))
        return result.structured_content or {}

    async with stdio_client(_params(store, "all")) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        attempt = await call(s, "start_attempt", project="demo", author="agent-1", model="m")
        ids = [(await call(s, "add_note", text=text, attempt_id=attempt["id"]))["id"] for text in NOTES]
        for query, mode in (
            ("cache stampede", "keyword"),
            ("缓存", "keyword"),
            ("why is login flaky", "hybrid"),
            ("pool size", "keyword"),
        ):
            await call(s, "search_notes", query=query, mode=mode, wait=True)
        for nid in ids[:2]:
            await call(s, "get_note", id=nid)
        await call(s, "add_tag", id=ids[0], tags=["deploy"])
        await call(s, "edit_note", id=ids[3], text=NOTES[3] + "\nUpdate: fixed by refreshing the cookie.\n")
        await call(s, "list_notes", limit=5)
    return spent


def _print_definitions(label: str, defs: dict[str, tuple[int, int, int]]) -> int:
    held, sent, tokens = (sum(d[i] for d in defs.values()) for i in range(3))
    print(
        f"  {label:8} {len(defs):2} tools  {held:6,} chars (name+description+inputSchema)"
        f"  {sent:6,} chars as sent  {tokens:5,} tokens"
    )
    for name, (one, whole, _tokens) in defs.items():
        print(f"    {name:18} {one:5,} {whole:6,}")
    return tokens


def main() -> None:
    store = os.path.join(tempfile.mkdtemp(prefix="nw-mcp-tokens-"), "notes")
    print(f"notewell {notewell.__file__}")
    print("tool definitions, sent to every session:")
    offered = _print_definitions("default", asyncio.run(definitions(store, None)))
    _print_definitions("all", asyncio.run(definitions(store, "all")))
    spent = asyncio.run(session(store))
    print("tool answers of a 15-call session (every tool offered):")
    total = 0
    for tool, counts in spent.items():
        total += sum(counts)
        print(f"  {tool:14} {len(counts):2} call(s) {sum(counts):6} tokens  ({sum(counts) // len(counts)} a call)")
    print(f"  {'session':14} {sum(map(len, spent.values())):2} calls    {total:6} tokens")
    print(f"  {'+ definitions':14} (default set)  {offered:6} tokens: {total + offered} in all")


if __name__ == "__main__":
    main()
