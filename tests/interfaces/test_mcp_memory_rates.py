"""The `memory` tool through the servers' API (as /mcp calls it): a command that changes a
directory's files is refused whole when the caller's write rate cannot take all of them, instead
of stopping part-way (it moved 63 of 100 files, then said to retry, and a retry found the
destination taken)."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from notewell import InvalidArgumentError, RateLimitedError  # noqa: E402
from notewell.agents.memory_files import MemoryFiles, memory_text  # noqa: E402
from notewell.interfaces.mcp.memory_tools import ApiNotes  # noqa: E402
from notewell.model.access_tokens import Token  # noqa: E402
from notewell.services.server_api import Caller, ServerAPI, WriteLimiter  # noqa: E402

BOB = Caller(token=Token("bob"))


def _listing(api: ServerAPI) -> str:
    return MemoryFiles(notes=ApiNotes(api, BOB)).view("/memories")


def test_a_directory_is_renamed_or_deleted_whole_or_not_at_all_under_a_write_rate(store):
    for i in range(8):
        store.add_note(memory_text(f"/memories/d/{i}.md", "x\n"), author="bob")
    api = ServerAPI(store, limiter=WriteLimiter(rate=0.001, burst=10))
    files = MemoryFiles(notes=ApiNotes(api, BOB))
    files.create("/memories/a.md", "1\n")
    files.create("/memories/b.md", "2\n")
    files.create("/memories/c.md", "3\n")  # 7 writes left: the 8 files' rename needs 8
    before = _listing(api)
    with pytest.raises(RateLimitedError, match="8 at once"):
        files.rename("/memories/d", "/memories/e")
    with pytest.raises(RateLimitedError):
        files.delete("/memories/d")
    assert _listing(api) == before  # nothing moved, nothing deleted
    assert files.delete("/memories/a.md") == "Successfully deleted /memories/a.md"  # one file: its own write


def test_a_directory_larger_than_a_burst_is_refused_whole(store):
    for i in range(12):
        store.add_note(memory_text(f"/memories/d/{i}.md", "x\n"), author="bob")
    api = ServerAPI(store, limiter=WriteLimiter(rate=0.001, burst=10))
    before = _listing(api)
    with pytest.raises(InvalidArgumentError, match="12 writes at once: a caller may make at most 10"):
        MemoryFiles(notes=ApiNotes(api, BOB)).rename("/memories/d", "/memories/e")
    assert _listing(api) == before
