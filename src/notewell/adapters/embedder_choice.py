"""Which embedder the CLI and servers use, from the environment.

``NOTEWELL_EMBEDDER`` picks it:

* unset or ``default``: the bundled USE-multilingual-v3 (or the OpenAI-compatible server
  when ``NOTEWELL_EMBED_URL`` is set, as before this variable existed);
* ``openai``: the server ``NOTEWELL_EMBED_URL`` / ``_MODEL`` / ``_KEY`` describe;
* ``fastembed:<directory>``: a local model2vec or ONNX model directory;
* ``sentence-transformers:<directory>`` (or ``st:<directory>``): a local sentence-transformers directory;
* ``hash``: the deterministic word-hash stand-in (no model; for trying the machinery).

``NOTEWELL_ANN`` (``on``, ``off`` or a number of passages) turns on the approximate index.

A model directory loads on first use, so commands that never embed never pay for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import InvalidArgumentError
from ..settings import setting

__all__ = ["ann_from_environment", "embedder_from_environment"]

_CHOICES = "default, openai, fastembed:<dir>, sentence-transformers:<dir>, hash"


def embedder_from_environment() -> Any:
    """An ``embedder=`` argument for ``open_store``: 'default', an embedder, or a factory making one."""
    from .openai_embedder import from_environment

    choice = (setting("NOTEWELL_EMBEDDER") or "").strip()
    kind, _, where = choice.partition(":")
    kind = kind.lower()
    if kind in ("", "default", "use"):
        if where:
            raise InvalidArgumentError(f"NOTEWELL_EMBEDDER={choice!r} takes no directory")
        return from_environment() or "default"
    if kind == "openai":
        embedder = from_environment()
        if embedder is None:
            raise InvalidArgumentError("NOTEWELL_EMBEDDER=openai needs NOTEWELL_EMBED_URL and NOTEWELL_EMBED_MODEL")
        return embedder
    if kind == "hash":
        from ..search.embedders import HashEmbedder

        return HashEmbedder()
    if kind in ("fastembed", "sentence-transformers", "st"):
        if not where.strip():
            raise InvalidArgumentError(f"NOTEWELL_EMBEDDER={kind}:<directory> needs the model's directory")
        from ..search.local_embedders import FastEmbedEmbedder, SentenceTransformerEmbedder, local_model_dir

        directory = local_model_dir(where.strip())  # a bad path fails now, not at the first search
        make: Callable[[], Any]
        if kind == "fastembed":
            make = lambda: FastEmbedEmbedder(directory)  # noqa: E731
        else:
            make = lambda: SentenceTransformerEmbedder(directory)  # noqa: E731
        return make
    raise InvalidArgumentError(f"NOTEWELL_EMBEDDER={choice!r} is not one of: {_CHOICES}")


def ann_from_environment() -> bool | int:
    """``NOTEWELL_ANN``: ``on`` (an approximate index from a million passages), ``off`` (the
    default: exact search), or the number of passages from which to use one."""
    value = (setting("NOTEWELL_ANN") or "").strip().lower()
    if value in ("", "off", "0", "no", "false"):
        return False
    if value in ("on", "yes", "true", "1"):
        return True
    try:
        count = int(value.replace("_", "").replace(",", ""))
    except ValueError:
        count = 0
    if count < 1:
        raise InvalidArgumentError(f"NOTEWELL_ANN must be on, off or a number of passages, got {value!r}")
    return count
