"""`notewell serve` answers at once and loads the model behind: /healthz and keyword search
before the model is there, a semantic search waiting for it (never failing)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

import notewell
from notewell.search.embedders import HashEmbedder
from tests.conftest import wait_for
from tests.interfaces.server_fixture import SLOW_MODEL_TEMPLATE, free_port, http_call

pytest.importorskip("uvicorn")

SLOW_MODEL_SERVER = SLOW_MODEL_TEMPLATE.format(serve="serve_http", extra=', host="127.0.0.1", port=int(sys.argv[4])')


@pytest.mark.slow
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
        assert wait_for(healthy)
        assert wait_for(called.exists) and not release.exists()  # loading began once it listened
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
