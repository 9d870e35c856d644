"""An embedder that asks any OpenAI-compatible ``POST /v1/embeddings`` endpoint.

That covers Ollama, llama.cpp's server, LM Studio, vLLM, Hugging Face TEI, LocalAI,
infinity and OpenAI itself. Texts go in batches; a busy or failing server is retried
with backoff; one that cannot be reached answers a clear ``unavailable`` error. The CLI
uses it when ``NOTEWELL_EMBED_URL`` is set (with ``NOTEWELL_EMBED_MODEL`` and, if the
server wants one, ``NOTEWELL_EMBED_KEY``).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import InvalidArgumentError, UnavailableError
from ..search.embedders import numpy
from ..settings import setting

if TYPE_CHECKING:
    import numpy as np

__all__ = ["OpenAICompatibleEmbedder", "from_environment"]

_RETRY = (429, 500, 502, 503, 504)


class OpenAICompatibleEmbedder:
    """Embeddings from an OpenAI-compatible server (base URL like ``http://127.0.0.1:11434/v1``)."""

    backoff: float = 0.5  # first wait between retries (doubles each time)

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        batch: int = 64,
        timeout: float = 60.0,
        retries: int = 4,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise InvalidArgumentError(
                f"the embedding server's URL must be http(s)://host[:port]/..., got {base_url!r}"
            )
        if not model:
            raise InvalidArgumentError("name the embedding model the server should use")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.model_id = f"openai-compatible:{model}@{parts.netloc}"
        self.api_key = api_key
        self.batch = batch
        self.timeout = timeout
        self.retries = retries
        self.dim = 0  # learned from the first answer

    def _post(self, texts: list[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        delay = self.backoff
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    answer: dict[str, Any] = json.loads(response.read())
                rows = sorted(answer["data"], key=lambda d: d.get("index", 0))
                vectors = [row["embedding"] for row in rows]
                if len(vectors) != len(texts):
                    raise UnavailableError(f"{self.url} answered {len(vectors)} embeddings for {len(texts)} texts")
                return vectors
            except urllib.error.HTTPError as exc:
                if exc.code not in _RETRY or attempt == self.retries:
                    raise UnavailableError(f"{self.url} answered HTTP {exc.code}: {exc.reason}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt == self.retries:
                    reason = getattr(exc, "reason", exc)
                    raise UnavailableError(f"cannot reach the embedding server {self.url}: {reason}") from None
            except (ValueError, KeyError, TypeError) as exc:
                raise UnavailableError(f"{self.url} did not answer like an embeddings endpoint ({exc})") from None
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        np = numpy()
        rows: list[list[float]] = []
        for at in range(0, len(texts), self.batch):
            rows += self._post(list(texts[at : at + self.batch]))
        if not rows:
            return np.zeros((0, self.dim or 1), dtype=np.float32)
        try:
            matrix = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        except (ValueError, TypeError) as exc:
            raise UnavailableError(f"{self.url} answered embeddings that are not rows of numbers ({exc})") from None
        if matrix.shape[1] == 0 or not np.isfinite(matrix).all():
            raise UnavailableError(f"{self.url} answered empty or non-finite embeddings")
        if self.dim and matrix.shape[1] != self.dim:
            raise UnavailableError(f"{self.url} changed its dimension from {self.dim} to {matrix.shape[1]}")
        self.dim = int(matrix.shape[1])
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1, norms)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def from_environment() -> OpenAICompatibleEmbedder | None:
    """The embedder NOTEWELL_EMBED_URL / _MODEL / _KEY describe, or None when no URL is set."""
    url = setting("NOTEWELL_EMBED_URL")
    if not url:
        return None
    model = setting("NOTEWELL_EMBED_MODEL")
    if not model:
        raise InvalidArgumentError("NOTEWELL_EMBED_URL is set: set NOTEWELL_EMBED_MODEL to the model's name too")
    return OpenAICompatibleEmbedder(url, model, api_key=setting("NOTEWELL_EMBED_KEY"))
