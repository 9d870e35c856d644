"""What both stores embed and how a semantic search uses it, whatever holds the vectors.

What is embedded: the title with the opening of the body (its first 1,500 characters,
without the header), and for a longer note further overlapping passages, so that a fact
deep inside it is found too; a note comes back once, with its best passage as the
snippet. The query vector takes pseudo-relevance feedback from the best keyword hits,
and the snippet is then chosen by the query's own vector.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import InvalidQueryError
from ..model.cjk import unsegment
from .embedders import Embedder, numpy
from .query import check_query_text
from .request import check_limit

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "FEEDBACK_NOTES",
    "FEEDBACK_WEIGHT",
    "OLD_CAP",
    "above_floor",
    "feedback_limit",
    "feedback_notes",
    "passage_key",
    "passage_snippet",
    "passages",
    "query_vector",
    "respan",
    "similarity_floor",
    "stacked",
    "with_feedback",
]

OPENING = 1500  # characters of the body embedded with the title
PASSAGE = 1000  # characters in each further passage of a long note
OVERLAP = 200
# Until issue 39 a note's passages stopped at 24: a store embedded then holds notes with exactly
# that many vectors, which may have more passages to embed (each backend queues them once).
OLD_CAP = 24
# Pseudo-relevance feedback: the opening passages of the FEEDBACK_NOTES best keyword hits,
# FEEDBACK_WEIGHT of their mean added to the query vector (chosen across the evaluation sets
# and LoCoMo: docs/quality.md).
FEEDBACK_NOTES = 3
FEEDBACK_WEIGHT = 0.5
_SNIPPET = 240
_PARAGRAPH = re.compile(r"(?:[^\n]|\n(?![ \t]*\n))+")


def passage_key(model_id: str, dim: int, text: str) -> bytes:
    """What a vector was made from: sha256 of the model, its dimension and the passage text
    (stored with every vector, so that one is reused, by a rebuild or an older revision,
    only for the very text it was made from)."""
    return hashlib.sha256(f"{model_id}\0{dim}\0{text}".encode("utf-8", "surrogatepass")).digest()


def passages(title: str, body: str) -> list[tuple[int, int, str]]:
    """(start, stop, text) of what to embed: the title with the body's opening, then the
    rest by paragraphs (packed up to PASSAGE characters; a longer one in overlapping
    windows), so that a short finding after a long log is a passage of its own. Every
    part of the body is in a passage: the note's size limit, not a count, bounds them.
    start and stop index the body."""
    body = body.strip("\n")
    out = [(0, min(len(body), OPENING), f"{title}\n{body[:OPENING]}")]
    pieces: list[tuple[int, int]] = []
    for m in _PARAGRAPH.finditer(body):
        start, stop = max(m.start(), OPENING - OVERLAP), m.end()
        if stop <= OPENING:
            continue
        while stop - start > PASSAGE:
            pieces.append((start, start + PASSAGE))
            start += PASSAGE - OVERLAP
        pieces.append((start, stop))
    for start, stop in pieces:
        if len(out) > 1 and stop - out[-1][0] <= PASSAGE and out[-1][1] - out[-1][0] < PASSAGE - OVERLAP:
            start = out[-1][0]
            out.pop()
        out.append((start, stop, body[start:stop]))
    return out


def query_vector(embedder: Embedder, query: str, limit: int) -> np.ndarray:
    """The checked *query*'s vector (InvalidQueryError, or 'unavailable' without numpy)."""
    check_limit(limit)
    query = check_query_text(query)  # as a keyword search checks it: the modes refuse alike
    if not any(ch.isalnum() for ch in query):
        raise InvalidQueryError(
            "query has no words to search for" if query.strip() else "query is empty: give search words"
        )
    numpy()  # without the extra: 'unavailable', naming it, before any work
    return embedder.embed_query(query)  # first: a remote model tells its dimension with its first answer


def passage_snippet(body: str, start: int, stop: int) -> str:
    """A semantic card's snippet: the best passage of *body*, cut to _SNIPPET characters."""
    passage = " ".join(unsegment(body.strip("\n")[start:stop]).split())
    snippet = passage[:_SNIPPET] + ("…" if len(passage) > _SNIPPET else "")
    return "…" + snippet if start > 0 else snippet


def with_feedback(wanted: np.ndarray, openings: np.ndarray) -> np.ndarray:
    """The query vector moved towards the opening passages of the best keyword hits
    (pseudo-relevance feedback): a paraphrase's vector alone often sits far from the note
    it means, while the note's own words, found by keyword search, sit close. Normalised."""
    np = numpy()
    if FEEDBACK_WEIGHT <= 0 or not len(openings):
        return wanted
    moved = wanted + FEEDBACK_WEIGHT * np.asarray(openings, dtype=np.float32).mean(axis=0)
    norm = float(np.linalg.norm(moved))
    return (moved / norm).astype(np.float32) if norm else wanted


def feedback_limit() -> int:
    """How many keyword hits feedback takes (0: feedback is off, no keyword pass needed)."""
    return FEEDBACK_NOTES if FEEDBACK_WEIGHT > 0 else 0


def feedback_notes(ids: Sequence[str]) -> list[str]:
    """The keyword hits (best first) whose opening passages move the query vector."""
    return list(ids)[: feedback_limit()]


def stacked(blobs: list[bytes], dim: int) -> np.ndarray:
    """float32 vectors stored as bytes, one row each."""
    lib = numpy()
    matrix: np.ndarray = lib.array([lib.frombuffer(b, dtype=lib.float32) for b in blobs], dtype=lib.float32)
    return matrix.reshape(-1, dim)


def similarity_floor(embedder: Embedder) -> float | None:
    """The cosine below which the embedder's results mean nothing close (None: no floor)."""
    floor = getattr(embedder, "similarity_floor", None)
    return float(floor) if isinstance(floor, int | float) else None


def respan(
    best: list[tuple[str, float, tuple[int, int]]], raw: np.ndarray, vectors: list[tuple[str, int, int, bytes]]
) -> list[tuple[str, float, tuple[int, int]]]:
    """*best* with each note's snippet passage chosen by the query's own vector *raw*: the
    feedback that ranked the notes leans towards their openings, while the snippet should
    show the passage that answers the query. *vectors*: (note, start, stop, vector bytes)."""
    np = numpy()
    spans: dict[str, tuple[float, tuple[int, int]]] = {}
    for nid, start, stop, blob in vectors:
        score = float(np.frombuffer(blob, dtype=np.float32) @ raw)
        if nid not in spans or score > spans[nid][0]:
            spans[nid] = (score, (start, stop))
    return [(nid, score, spans[nid][1] if nid in spans else span) for nid, score, span in best]


def above_floor(
    best: list[tuple[str, float, tuple[int, int]]], embedder: Embedder
) -> list[tuple[str, float, tuple[int, int]]]:
    """*best* without the notes scored below the embedder's similarity floor (the score that
    ranked them, feedback included: measured, it parts relevant notes from off-topic queries'
    better than the query's own cosine does)."""
    floor = similarity_floor(embedder)
    return best if floor is None else [b for b in best if b[1] >= floor]
