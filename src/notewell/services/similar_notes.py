"""The notes most like a new one: what ``add_note`` points an agent at, so that it updates a note
rather than writing the same finding twice. It never blocks or merges anything.

Candidates come from a keyword search for the new note's title and first content words (and,
when the store's model is loaded already, a search by meaning); each keyword candidate is kept
when its words overlap the new note's by at least WORDS_THRESHOLD (the cosine of their content
word sets, see search/similarity.py), a meaning candidate when its cosine is at least
MEANING_THRESHOLD. Both thresholds were chosen by ``benchmarks/eval_duplicates.py`` on two
evaluation sets and checked on a third never tuned on (docs/notes.md). The store passes a search
and a reader that see only the notes the viewer may see, so the answer says nothing about others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import InvalidQueryError, UnavailableError
from ..model.header import parse_note
from ..model.note import derive_title
from ..model.timestamps import age_words
from ..search.similarity import content_words, probe_query, word_overlap

__all__ = ["MEANING_THRESHOLD", "WORDS_THRESHOLD", "similar_notes"]

WORDS_THRESHOLD = 0.30  # best mean F1 on eval and eval2-a (see benchmarks/eval_duplicates.py)
MEANING_THRESHOLD = 0.85  # the lowest that adds no false alarm on eval and eval2-a (meaning adds no F1)
_CANDIDATES = 8
_MEANING_CHARS = 1500  # the opening a model reads for the new note's meaning


Search = Callable[[str, str, int], list[Any]]  # (query, mode, limit) -> cards the viewer may see
Read = Callable[[list[str]], dict[str, str]]  # note ids -> "title\nbody" of those the viewer may see


def similar_notes(
    search: Search,
    read: Read,
    text: str,
    *,
    exclude: Iterable[str] = (),
    limit: int = 3,
    meaning: bool = False,
    words_threshold: float = WORDS_THRESHOLD,
    meaning_threshold: float = MEANING_THRESHOLD,
) -> list[dict[str, Any]]:
    """Up to *limit* notes that say much what *text* says, most alike first: ``{"id", "title",
    "kind", "updated_at", "age", "similarity", "by"}`` (``by``: words or meaning). *search* and
    *read* see only what the caller may see."""
    parsed = parse_note(text)
    header = parsed.header or {}
    # A note that builds on another follows it up (a digest pulls its notes together), and one
    # that supersedes another corrects it: neither repeats what it names. And a digest is one
    # only of an older digest, the one to update.
    skip = set(exclude) | set(header.get("builds_on", ())) | set(header.get("supersedes", ()))
    digest = header.get("kind") == "digest"
    title, body = derive_title(parsed, ""), parsed.body  # as the index keeps them: a `# heading` is a title too
    query = probe_query(title, body)
    found: dict[str, dict[str, Any]] = {}
    if query:
        try:
            cards = search(query, "keyword", _CANDIDATES + len(skip))
        except InvalidQueryError:
            cards = []
        # an older text's match is not what the note says now
        cards = [c for c in cards if c.id not in skip and c.matched_revision is None and _alike(c, digest)]
        texts = read([c.id for c in cards]) if cards else {}
        mine = content_words(f"{title}\n{body}")
        for card in cards:
            if card.id not in texts:
                continue  # deleted meanwhile
            score = word_overlap(mine, content_words(texts[card.id]))
            if score >= words_threshold:
                found[card.id] = _entry(card, score, "words")
    if meaning and (title or body).strip():
        try:
            cards = search(f"{title} {body}"[:_MEANING_CHARS], "semantic", _CANDIDATES + len(skip))
        except (InvalidQueryError, UnavailableError):
            cards = []
        for card in cards:
            if card.id in skip or card.matched_revision is not None or card.score is None or not _alike(card, digest):
                continue
            if card.score >= meaning_threshold and card.score > found.get(card.id, {}).get("similarity", -1.0):
                found[card.id] = _entry(card, card.score, "meaning")
    ranked = sorted(found.values(), key=lambda e: -e["similarity"])
    return ranked[:limit]


def _alike(card: Any, digest: bool) -> bool:
    """Whether *card* is of the sort a note can repeat: a digest only another digest."""
    return not digest or card.kind == "digest"


def _entry(card: Any, score: float, by: str) -> dict[str, Any]:
    return {
        "id": card.id,
        "title": card.title,
        "kind": card.kind,
        "updated_at": card.updated_at,
        "age": age_words(card.updated_at),
        "similarity": round(float(score), 3),
        "by": by,
    }
