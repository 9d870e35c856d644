"""The OpenAI-compatible embedder against a real local server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

import notewell
from notewell import InvalidArgumentError, UnavailableError
from notewell.adapters.openai_embedder import OpenAICompatibleEmbedder, from_environment
from notewell.search.embedders import HashEmbedder


class Stub(BaseHTTPRequestHandler):
    calls: list[dict] = []
    fail_next = 0
    garbage = False
    model = HashEmbedder(64)

    def do_POST(self):  # noqa: N802 - the http.server name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Stub.calls.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if Stub.fail_next:
            Stub.fail_next -= 1
            self.send_response(503)
            self.end_headers()
            return
        vectors = Stub.model.embed_documents(body["input"])
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        if Stub.garbage:
            data[0]["embedding"] = data[0]["embedding"][:3]  # a ragged answer
        payload = json.dumps({"object": "list", "data": data[::-1], "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    """Every retry still happens, 10 ms apart at first instead of half a second (the CLI's
    embedder too: the command runs in this process)."""
    monkeypatch.setattr(OpenAICompatibleEmbedder, "backoff", 0.01)


@pytest.fixture
def server():
    httpd = HTTPServer(("127.0.0.1", 0), Stub)
    # A short poll: shutdown() waits for the loop's next look at its flag (half a second by default).
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    Stub.calls, Stub.fail_next, Stub.garbage = [], 0, False
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_batches_order_retries_and_a_store_searching_with_it(server, store_dir):
    emb = OpenAICompatibleEmbedder(server, "tiny", api_key="k", batch=2)
    vectors = emb.embed_documents(["a b", "c d", "e f"])
    assert vectors.shape == (3, 64) and emb.dim == 64
    assert [len(c["input"]) for c in Stub.calls] == [2, 1]
    assert Stub.calls[0]["path"] == "/v1/embeddings" and Stub.calls[0]["auth"] == "Bearer k"
    assert abs(float(vectors[0] @ HashEmbedder(64).embed_query("a b")) - 1) < 1e-5  # answers put back in order
    Stub.fail_next = 2
    assert emb.embed_query("again").shape == (64,)  # retried past two 503s
    s = notewell.open(store_dir, embedder=OpenAICompatibleEmbedder(server, "tiny"))
    n = s.add_note("# fig\n\nfig tree pruning")
    s.embed_pending()
    assert s.search_notes("fig pruning", mode="semantic")[0].id == n.id
    s.close()


def test_clear_errors(server, monkeypatch):
    dead = OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", "m", retries=1)
    with pytest.raises(UnavailableError, match="cannot reach"):
        dead.embed_query("x")
    Stub.fail_next = 99
    with pytest.raises(UnavailableError, match="HTTP 503"):
        OpenAICompatibleEmbedder(server, "m", retries=1).embed_query("x")
    with pytest.raises(InvalidArgumentError):
        OpenAICompatibleEmbedder("ftp://x", "m")
    Stub.fail_next, Stub.garbage = 0, True
    with pytest.raises(UnavailableError, match="not rows of numbers"):
        OpenAICompatibleEmbedder(server, "m").embed_documents(["a", "b"])
    monkeypatch.setenv("NOTEWELL_EMBED_URL", server)
    monkeypatch.delenv("NOTEWELL_EMBED_MODEL", raising=False)
    with pytest.raises(InvalidArgumentError):
        from_environment()
    monkeypatch.setenv("NOTEWELL_EMBED_MODEL", "tiny")
    assert from_environment().model_id.startswith("openai-compatible:tiny@127.0.0.1")


@pytest.mark.slow
def test_the_cli_uses_the_server_from_the_environment(server, tmp_path):
    from tests.interfaces.test_cli import js, run

    store = tmp_path / "s"
    env = {"NOTEWELL_EMBED_URL": server, "NOTEWELL_EMBED_MODEL": "tiny"}
    nid = run(["add", "--text", "# fig\n\nfig tree pruning"], store, env_extra=env).stdout.decode().strip()
    waiting = run(["search", "fig", "--mode", "semantic"], store, env_extra=env)
    assert b"1 note(s) not embedded yet" in waiting.stderr
    assert js(run(["embed", "--json"], store, env_extra=env)) == {"embedded": 1, "pending": 0, "revisions": 0}
    cards = js(run(["search", "fig pruning", "--mode", "both", "--json"], store, env_extra=env))["cards"]
    assert [(c["id"], c["mode"]) for c in cards] == [(nid, "keyword"), (nid, "semantic")]
    out = run(["search", "fig pruning", "--mode", "both"], store, env_extra=env).stdout.decode()
    assert out.index("== keyword") < out.index("== semantic")
    gone = run(
        ["search", "fig", "--mode", "semantic"],
        store,
        env_extra={**env, "NOTEWELL_EMBED_URL": "http://127.0.0.1:9/v1"},
        check=False,
    )
    assert gone.returncode == 9 and gone.stderr.decode().startswith("notewell: unavailable:")
