"""NOTEWELL_EMBEDDER: which embedder the CLI and servers use."""

from __future__ import annotations

import pytest

from notewell.adapters.embedder_choice import embedder_from_environment
from notewell.errors import InvalidArgumentError
from notewell.search.embedders import HashEmbedder
from tests.interfaces.test_cli import js, run
from tests.search.test_local_embedders import _topic_rows, _write_model2vec


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    for name in ("NOTEWELL_EMBEDDER", "NOTEWELL_EMBED_URL", "NOTEWELL_EMBED_MODEL", "NOTEWELL_EMBED_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_default_and_simple_choices(monkeypatch, tmp_path):
    assert embedder_from_environment() == "default"
    monkeypatch.setenv("NOTEWELL_EMBEDDER", "hash")
    assert isinstance(embedder_from_environment(), HashEmbedder)
    monkeypatch.setenv("NOTEWELL_EMBEDDER", "openai")
    with pytest.raises(InvalidArgumentError, match="NOTEWELL_EMBED_URL"):
        embedder_from_environment()
    monkeypatch.setenv("NOTEWELL_EMBED_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("NOTEWELL_EMBED_MODEL", "m")
    assert embedder_from_environment().model_id == "openai-compatible:m@127.0.0.1:9"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("word2vec", "not one of"),
        ("fastembed:", "needs the model's directory"),
        ("st:/no/such/dir", "local directory"),
        ("default:/x", "takes no directory"),
    ],
)
def test_bad_choices_are_one_line_errors(monkeypatch, value, message):
    monkeypatch.setenv("NOTEWELL_EMBEDDER", value)
    with pytest.raises(InvalidArgumentError, match=message):
        embedder_from_environment()


def test_a_model_directory_loads_on_first_use(monkeypatch, tmp_path):
    (tmp_path / "m").mkdir()  # no model inside: only embedding would notice
    monkeypatch.setenv("NOTEWELL_EMBEDDER", f"fastembed:{tmp_path / 'm'}")
    assert callable(embedder_from_environment())


@pytest.mark.slow
def test_the_cli_embeds_with_a_fastembed_directory(tmp_path):
    pytest.importorskip("fastembed")
    _write_model2vec(tmp_path / "m2v", _topic_rows())
    env = {"NOTEWELL_EMBEDDER": f"fastembed:{tmp_path / 'm2v'}"}
    store = tmp_path / "s"
    nid = (
        run(["add", "--text", "# Redis eviction\n\ncache memory filled"], store, env_extra=env).stdout.decode().strip()
    )
    run(["add", "--text", "# Rollout\n\nkubernetes pod deploy"], store, env_extra=env)
    assert js(run(["embed", "--json"], store, env_extra=env)) == {"embedded": 2, "pending": 0, "revisions": 0}
    cards = js(run(["search", "memory", "--mode", "semantic", "--json"], store, env_extra=env))["cards"]
    assert cards[0]["id"] == nid and cards[0]["mode"] == "semantic"
    bad = run(["search", "x", "--mode", "semantic"], store, env_extra={"NOTEWELL_EMBEDDER": "nope"}, check=False)
    assert bad.returncode != 0 and bad.stderr.decode().count("\n") == 1 and "not one of" in bad.stderr.decode()
