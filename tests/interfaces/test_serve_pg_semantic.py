"""`notewell serve --database URL` embeds new notes in the background (unless --no-embed), and
every server finds them by meaning: real server processes, the hash embedder, one database."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.interfaces.server_fixture import Answer, http_call
from tests.interfaces.test_serve_pg import Served, cli

pytest.importorskip("uvicorn")
pytest.importorskip("numpy")


class _Server(Served):
    """A `notewell serve --database URL` process with the hash embedder."""

    def __init__(self, url: str, *extra: str) -> None:
        super().__init__(url, {"NOTEWELL_EMBEDDER": "hash"}, extra)

    def search(self, query: str) -> Answer:
        return http_call(self.base, "GET", f"/api/notes/search?q={query}&mode=semantic")


def _until_embedded(server: _Server, query: str, timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        body = server.search(query).body
        if body["not_embedded"] == 0 or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


def test_serve_embeds_in_the_background_and_every_server_finds_by_meaning(pg_url):
    token = cli("token", "create", "alice", "--database", pg_url).stdout.strip()
    embedding, idle = _Server(pg_url), _Server(pg_url, "--no-embed")
    try:
        made = idle.call("POST", "/api/notes", {"text": "# heron\n\nnest by the weir"}, token=token)
        assert made.status == 201
        found = _until_embedded(embedding, "heron%20nest")
        assert found["not_embedded"] == 0 and found["cards"][0]["id"] == made.body["id"]
        assert found["cards"][0]["mode"] == "semantic" and found["cards"][0]["snippet"] == "# heron nest by the weir"
        assert [c["id"] for c in idle.search("heron%20nest").body["cards"]] == [made.body["id"]]
        embedding.close()
        later = idle.call("POST", "/api/notes", {"text": "# kingfisher\n\ndives for fish"}, token=token)
        assert later.status == 201
        time.sleep(3)  # longer than a background thread's pause between looks at the queue
        assert idle.search("kingfisher").body["not_embedded"] == 1  # --no-embed: it waits for a server that embeds
    finally:
        embedding.close()
        idle.close()
