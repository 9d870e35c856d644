"""The memory backend's search: keyword search by matching words as snippets match them (case,
accents and simple stems folded), and semantic search with one vector per note (its title and
body whole, no passages) by the store's embedder.

A note matches a plain query when its title or body holds every word (the strict pass), or,
to fill up the list, any of them (the loose pass); a query in FTS5 syntax (``a OR b``,
``"a phrase"``, ``title: x``, ``NOT``) is read by :func:`~notewell.search.query.parse_fts5` and
evaluated over the two columns, NEAR being read as AND. The score counts the hits, a title's
three times, each word's weighed by how rare it is among the notes the viewer may see (so that
hidden notes never move it): plausible, not BM25. Older revisions: every text is kept, so they
are searched the same way (each revision whose title or body the next one changed).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from notewell.errors import InvalidQueryError
from notewell.model.note import Card, Note, preview, superseded_texts
from notewell.model.progress import Progress
from notewell.search.embedder_slot import EmbedderSlot
from notewell.search.embedders import Embedder
from notewell.search.filters import Filters
from notewell.search.fusion import coverage as coverage_of
from notewell.search.passages import above_floor, feedback_notes, passage_snippet, query_vector, with_feedback
from notewell.search.query import SEARCH_COLUMNS, CompiledQuery, Near, Node, QuerySyntaxError, compile_query, parse_fts5
from notewell.search.query import Phrase as QueryPhrase
from notewell.search.request import check_limit
from notewell.search.snippets import Phrase, fold, make_snippet, phrase_finder, phrases_of, scan, snippet_maker

from .memory_records import MemoryState

if TYPE_CHECKING:
    import numpy as np

__all__ = ["MemoryEngines", "Vectors"]

_TITLE_WEIGHT = 3


def _hits(phrase: Phrase, text: str) -> int:
    return len(scan(fold(text), [phrase], phrase_finder([phrase])))


def _score(phrases: list[Phrase], title: str, body: str, rarity: Callable[[Phrase], float]) -> float:
    """Hits, a title's counting three times, each phrase's weighed by how rare it is in the store."""
    return round(sum(rarity(p) * (_TITLE_WEIGHT * _hits(p, title) + _hits(p, body)) for p in phrases), 6)


def _holds(node: Node, title: str, body: str) -> bool:
    """Whether a note of *title* and *body* matches the FTS5 expression *node*."""
    if isinstance(node, QueryPhrase):
        phrases = phrases_of(" + ".join('"' + t.replace('"', '""') + '"' + ("*" if s else "") for t, s in node.parts))
        columns = {"title": title, "body": body}
        texts = [columns[c] for c in sorted(node.columns if node.columns is not None else columns)]
        return bool(phrases) and any(all(_hits(p, text) for p in phrases) for text in texts)
    if isinstance(node, Near):
        return all(_holds(p, title, body) for p in node.phrases)
    left = _holds(node.left, title, body)
    if node.op == "OR":
        return left or _holds(node.right, title, body)
    right = _holds(node.right, title, body)
    return left and (not right if node.op == "NOT" else right)


def _matching(cq: CompiledQuery, title: str, body: str) -> tuple[str, list[Phrase]] | None:
    """The pass that finds a note (the expression whose phrases make its snippet), and the
    phrases of it that the note holds."""
    strict = cq.strict
    if cq.raw:
        try:
            node = parse_fts5(cq.text, SEARCH_COLUMNS)
        except QuerySyntaxError:  # as FTS5 refusing it: its plain words instead
            strict = cq.fallback or cq.strict
        else:
            return (cq.strict, phrases_of(cq.strict)) if _holds(node, title, body) else None
    for expr, need_all in ((strict, True), (cq.loose, False)):
        if expr is None:
            continue
        phrases = phrases_of(expr)
        found = [p for p in phrases if _hits(p, f"{title}\n{body}")]
        if found and (len(found) == len(phrases) or not need_all):
            return expr, found
    return None


class Vectors:
    """Each live note's vector (made from one revision's text, by one model), and older
    revisions' vectors: kept when a note's vector is replaced, or made by :meth:`embed_older`."""

    def __init__(self) -> None:
        self.current: dict[str, tuple[int, str, np.ndarray]] = {}  # note -> (revision, model, vector)
        self.older: dict[tuple[str, int], tuple[str, np.ndarray]] = {}  # (note, revision) -> (model, vector)

    @staticmethod
    def older_texts(state: MemoryState, note: Note) -> list[tuple[int, str, str]]:
        """(revision, title, body) of the note's older revisions a search finds, newest first."""
        texts = [(r.revision, r.text) for r in state.revisions[note.id]]
        return superseded_texts(texts, note.path)[::-1]

    def pending(self, state: MemoryState, model_id: str) -> list[str]:
        """The live notes without a vector of *model_id* from their current text, oldest first."""
        notes = sorted(state.notes.values(), key=lambda n: state.order[n.id])
        return [n.id for n in notes if self.current.get(n.id, (0, ""))[:2] != (n.revision, model_id)]

    def embed(self, state: MemoryState, embedder: Embedder, limit: int | None, progress: Progress | None) -> int:
        todo = self.pending(state, embedder.model_id)[:limit]
        if not todo:
            return 0
        made = embedder.embed_documents([f"{state.notes[n].title}\n{state.notes[n].body}" for n in todo])
        for nid, vector in zip(todo, made, strict=True):
            note, had = state.notes[nid], self.current.get(nid)
            older = {rev for rev, _t, _b in self.older_texts(state, note)}
            if had is not None and had[0] in older:  # its text is an older revision's now: its meaning stays
                self.older.setdefault((nid, had[0]), had[1:])
            self.current[nid] = (note.revision, embedder.model_id, vector)
        if progress is not None:
            progress(len(todo), len(todo))
        return len(todo)

    def embed_older(self, state: MemoryState, embedder: Embedder, limit: int | None) -> int:
        model = embedder.model_id
        todo = [
            (note.id, rev, f"{title}\n{body}")
            for note in state.notes.values()
            for rev, title, body in self.older_texts(state, note)
            if self.older.get((note.id, rev), ("",))[0] != model
        ][:limit]
        if todo:
            made = embedder.embed_documents([text for _n, _r, text in todo])
            for (nid, rev, _text), vector in zip(todo, made, strict=True):
                self.older[(nid, rev)] = (model, vector)
        return len(todo)


class MemoryEngines:
    """The memory backend's :class:`~notewell.search.plan.Engines`, run inside its lock."""

    def __init__(self, state: MemoryState, vectors: Vectors, embedders: EmbedderSlot) -> None:
        self._state = state
        self._vectors = vectors
        self._embedders = embedders

    def _rarity(self, filters: Filters) -> Callable[[Phrase], float]:
        """A phrase's weight: the rarer among the notes the viewer may see, the more a hit of it
        counts (idf; hidden notes never move a viewer's scores)."""
        notes = self._state.under(Filters(hidden_projects=filters.criteria.hidden_projects))

        @functools.cache
        def rarity(phrase: Phrase) -> float:
            holding = sum(1 for n in notes if _hits(phrase, f"{n.title}\n{n.body}"))
            return math.log(1 + len(notes) / (1 + holding))

        return rarity

    def _ranked(self, query: str, limit: int, filters: Filters) -> list[tuple[Note, str, float]]:
        """The best *limit* notes: those of the strict pass first, each pass by score, then newest."""
        check_limit(limit)
        cq, rarity = compile_query(query), self._rarity(filters)
        found = []
        for note in self._state.under(filters):
            hit = _matching(cq, note.title, note.body)
            if hit is not None:
                found.append((note, hit[0], _score(hit[1], note.title, note.body, rarity)))
        found.sort(key=lambda f: (f[1] not in (cq.strict, cq.fallback), -f[2]))  # stable: newest first among equals
        return found[:limit]

    def keyword(
        self,
        query: str,
        limit: int,
        filters: Filters,
        coverage: dict[str, float] | None = None,
        snippets: dict[str, Callable[[], str]] | None = None,
    ) -> list[Card]:
        cq = compile_query(query)
        cards = []
        for note, expr, score in self._ranked(query, limit, filters):
            make = snippet_maker(note.body, phrases_of(expr), preview(note.body))
            snippet = make() if snippets is None else ""
            if snippets is not None:
                snippets[note.id] = make
            cards.append(self._state.card(note, snippet, score))
            if coverage is not None and expr not in (cq.strict, cq.fallback):
                coverage[note.id] = coverage_of(cq, note.title, note.body)
        return cards

    def feedback_ids(self, query: str, limit: int, filters: Filters) -> list[str]:
        try:
            return [note.id for note, _e, _s in self._ranked(query, limit, filters)]
        except InvalidQueryError:
            return []

    def _wanted(self, embedder: Embedder, query: str, limit: int, feedback: list[str]) -> np.ndarray:
        raw = query_vector(embedder, query, limit)
        have = self._vectors.current
        openings = [have[n][2] for n in feedback_notes(feedback) if n in have and have[n][1] == embedder.model_id]
        return with_feedback(raw, openings)  # type: ignore[arg-type]  # a list of rows: with_feedback takes their mean

    def semantic(self, query: str, limit: int, filters: Filters, feedback: list[str]) -> list[Card]:
        embedder = self._embedders.get()
        wanted = self._wanted(embedder, query, limit, feedback)
        best: list[tuple[str, float, tuple[int, int]]] = []
        for note in self._state.under(filters):
            have = self._vectors.current.get(note.id)
            if have is not None and have[1] == embedder.model_id:
                best.append((note.id, float(have[2] @ wanted), (0, len(note.body))))
        best.sort(key=lambda b: -b[1])
        notes = self._state.notes
        return [
            replace(
                self._state.card(notes[nid], passage_snippet(notes[nid].body, 0, end), round(score, 6)), mode="semantic"
            )
            for nid, score, (_start, end) in above_floor(best[:limit], embedder)
        ]

    def older_keyword(self, query: str, limit: int, filters: Filters, exclude: set[str]) -> list[Card]:
        cq, rarity = compile_query(query), self._rarity(filters)
        found: list[tuple[float, Note, int, str, str]] = []
        for note in self._state.under(filters):
            if note.id in exclude:
                continue
            for rev, title, body in Vectors.older_texts(self._state, note):  # the newest matching revision
                hit = _matching(replace(cq, loose=None), title, body)
                if hit is not None:
                    found.append((_score(hit[1], title, body, rarity), note, rev, body, hit[0]))
                    break
        found.sort(key=lambda f: -f[0])
        return [
            replace(
                self._state.card(note, make_snippet(body, phrases_of(expr)) or preview(body), None),
                matched_revision=rev,
            )
            for _score, note, rev, body, expr in found[:limit]
        ]

    def older_semantic(
        self, query: str, limit: int, filters: Filters, exclude: set[str], feedback: list[str]
    ) -> list[Card]:
        embedder = self._embedders.get()
        wanted = self._wanted(embedder, query, limit, feedback)
        best: dict[str, tuple[str, float, tuple[int, int]]] = {}
        revision: dict[str, tuple[int, str]] = {}
        for note in self._state.under(filters):
            if note.id in exclude:
                continue
            for rev, _title, body in Vectors.older_texts(self._state, note):
                got = self._vectors.older.get((note.id, rev))
                if got is None or got[0] != embedder.model_id:
                    continue
                score = float(got[1] @ wanted)
                if note.id not in best or score > best[note.id][1]:
                    best[note.id], revision[note.id] = (note.id, score, (0, len(body))), (rev, body)
        ranked = above_floor(sorted(best.values(), key=lambda b: -b[1])[:limit], embedder)
        notes = self._state.notes
        return [
            replace(
                self._state.card(notes[nid], passage_snippet(revision[nid][1], 0, end), None),
                matched_revision=revision[nid][0],
                mode="semantic",
            )
            for nid, _score, (_start, end) in ranked
        ]

    def require_model(self) -> None:
        self._embedders.get()

    def embed_waiting(self) -> None:
        self._vectors.embed(self._state, self._embedders.get(), None, None)
