"""`notewell serve` answers at once and loads the model behind: /healthz and keyword search
before the model is there, a semantic search waiting for it (never failing)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

import notewell
from notewell.search.embedders import HashEmbedder
from tests.interfaces.server_fixture import free_port, http_call

pytest.importorskip("uvicorn")

# The real serve path (server_cli.serve_http) with a stand-in model that loads when told to.
SLOW_MODEL_SERVER = """
import pathlib, sys, time
import notewell
from notewell.interfaces.server_cli import serve_http
from notewell.search.embedders import HashEmbedder
from notewell.services.embedder_loading import EmbedderLoader

release, called = pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])

def slow_model():
    called.touch()
    while not release.exists():
        time.sleep(0.01)
    return HashEmbedder()

loader = EmbedderLoader(slow_model)
with notewell.open(sys.argv[1], embedder=loader.store_embedder) as store:
    serve_http(store, loader, host="127.0.0.1", port=int(sys.argv[4]))
"""


def _wait_for(predicate, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.02)
    return predicate()


def test_health_and_keyword_search_answer_while_the_model_loads(tmp_path):
    root, release, called = tmp_path / "notes", tmp_path / "release", tmp_path / "called"
    with notewell.open(root, embedder=HashEmbedder()) as s:
        nid = s.add_note("# Cache stampede\n\nEvery worker refills the cache at once.\n").id
        s.embed_pending()
    port = free_port()
    src = os.path.abspath(os.path.join(os.path.dirname(notewell.__file__), ".."))
    env = {**os.environ, "PYTHONPATH": src, "NOTEWELL_AUTOWATCH": "off"}
    server = subprocess.Popen(
        [sys.executable, "-c", SLOW_MODEL_SERVER, str(root), str(release), str(called), str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        try:
            return http_call(url, "GET", "/healthz").status == 200
        except OSError:
            assert server.poll() is None, "the server stopped"
            return False

    try:
        assert _wait_for(healthy)
        assert _wait_for(called.exists) and not release.exists()  # loading began once it listened
        keyword = http_call(url, "GET", "/api/notes/search?q=stampede")
        assert keyword.status == 200 and [c["id"] for c in keyword.body["cards"]] == [nid]
        answers = []
        semantic = threading.Thread(
            target=lambda: answers.append(http_call(url, "GET", "/api/notes/search?q=workers+refill&mode=semantic"))
        )
        semantic.start()
        # Asked after the semantic search started, answered while it waits for the model.
        assert http_call(url, "GET", "/api/notes/search?q=worker").status == 200
        assert not answers
        release.touch()
        semantic.join(120)
        assert answers and answers[0].status == 200, answers
        assert [(c["id"], c["mode"]) for c in answers[0].body["cards"]] == [(nid, "semantic")]
    finally:
        server.terminate()
        server.communicate(timeout=30)
