"""What listing and reading notes as MCP resources costs: a store of N notes (default 2,000)
paged through with ``resources/list`` by an anonymous caller (the visibility scope applied),
and one note read 100 times, at each protocol revision (the SDK's client pinned to 2025-11-25
through ``initialize``, and to the stateless 2026-07-28), the server in this process. Process
CPU time, since the store is read on a worker thread:

    python benchmarks/bench_mcp_resources.py [N]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time

from mcp import Client

import notewell
from notewell.interfaces.mcp.server import make_mcp
from notewell.services.server_api import ServerAPI


async def measure(store: notewell.Store, mode: str) -> str:
    async with Client(make_mcp(ServerAPI(store), None, local=False), mode=mode) as client:
        started = time.process_time()
        cursor, listed, pages = None, 0, 0
        while True:
            page = await client.list_resources(cursor=cursor)
            listed, pages, cursor = listed + len(page.resources), pages + 1, page.next_cursor
            if cursor is None:
                break
        paged = time.process_time()
        for _ in range(100):
            await client.read_resource(page.resources[0].uri)
        read = time.process_time()
    return (
        f"{mode:10} {listed:,} notes in {pages} pages: {(paged - started) * 1000 / pages:.1f} ms CPU a page; "
        f"a read {(read - paged) * 10:.2f} ms CPU"
    )


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    texts = [f"---\ntitle: note {i}\ntags: [t{i % 7}]\n---\nbody {i} " + "word " * 200 for i in range(count)]
    with tempfile.TemporaryDirectory() as folder, notewell.open(folder + "/notes", embedder=None) as store:
        store.add_notes(texts)
        for mode in ("legacy", "2026-07-28"):
            print(asyncio.run(measure(store, mode)))


if __name__ == "__main__":
    main()
