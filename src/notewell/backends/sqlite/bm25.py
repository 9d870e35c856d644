"""BM25 over the notes a search has already narrowed to, with cached phrase weights.

FTS5's bm25() weighs each phrase by walking every note that contains it, once per
statement: 30 ms for a word in a third of a million notes, 100 ms for one in all of
them. Here a phrase's document count is exact up to PROBE notes and estimated above
that from how densely its newest matches lie; estimates are kept while the store grows
or shrinks by less than a twentieth.

For a viewer who may not see some projects (*hidden*: the FTS5 match of their notes), every
figure is of the notes the viewer may see: their number, mean length and how many hold each
phrase. A viewer's scores so never move when a note they cannot see is written, edited or
deleted (with store-wide figures, one public note per guessed word told which words a
private project's notes hold). Term counts come from the candidates' own text,
matched as the snippets match it (case, accents and common endings folded), and note
lengths from FTS5's own tables. The formula and weights are FTS5's: title 3, body 1,
k1 1.2, b 0.75, and a phrase in more than half the notes weighs 1e-6.
"""

from __future__ import annotations

import math
import sqlite3
import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ...model.cjk import segment
from ...search.snippets import Phrase, fold, phrase_finder, phrases_of, scan
from .index import Index

__all__ = ["PROBE", "Weights", "bm25_ranks", "document_frequency", "phrase_expression", "visible_totals", "weigh"]

K1 = 1.2
B = 0.75
TITLE_WEIGHT = 3.0
PROBE = 2000  # matches counted exactly; beyond this a phrase's count is estimated
_DRIFT = 20  # an estimate is redone once the store's size moved by 1/_DRIFT
_CACHE_MAX = 20_000
_ONE_MATCH = "SELECT 1 FROM notes_fts WHERE notes_fts MATCH ? AND rowid = ?"
_SCAN_CHARS = 256 * 1024  # term counts in a huge note come from its first 256 KiB


@dataclass(frozen=True, slots=True)
class _Estimate:
    count: int
    rows: int  # the store's size when counted


_estimates: weakref.WeakKeyDictionary[Index, dict[str, _Estimate]] = weakref.WeakKeyDictionary()


def _varints(blob: bytes) -> list[int]:
    """SQLite's big-endian varints, as FTS5 stores its sizes."""
    out: list[int] = []
    value = 0
    for byte in blob:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            out.append(value)
            value = 0
    return out


def _totals(conn: sqlite3.Connection) -> tuple[int, float]:
    """Notes in the index and their mean length in tokens (all columns), as FTS5 keeps them."""
    row = conn.execute("SELECT block FROM notes_fts_data WHERE id = 1").fetchone()
    sizes = _varints(row[0]) if row else []
    if not sizes or sizes[0] == 0:
        (rows,) = conn.execute("SELECT count(*) FROM notes_fts_docsize").fetchone()
        return rows, 1.0
    return sizes[0], max(sum(sizes[1:]) / sizes[0], 1e-9)


def phrase_expression(phrase: Phrase) -> str:
    """The FTS5 expression that matches *phrase* in any column."""
    return '"' + segment(" ".join(phrase.words)).replace('"', '""') + '"' + ("*" if phrase.prefix else "")


def _visible(expr: str, hidden: str | None) -> str:
    return f"({expr}) NOT {hidden}" if hidden else expr


def document_frequency(index: Index, expr: str, rows: int | None = None, hidden: str | None = None) -> int:
    """How many notes match the FTS5 expression *expr*: exact up to PROBE, else estimated;
    with *hidden*, of the notes outside it only (*rows*: how many those are).

    The estimate assumes the matches lie as densely among older notes as among the
    newest PROBE of them; rowids grow with every write, so rowid spans stand for note counts.
    With *hidden*, the notes at or above the oldest match probed are counted instead.
    """
    conn = index.conn
    if rows is None:
        rows = visible_totals(index, hidden)[0] if hidden else _totals(conn)[0]
    cache = _estimates.setdefault(index, {})
    key = _visible(expr, hidden)
    known = cache.get(key)
    if known is not None and abs(rows - known.rows) * _DRIFT <= known.rows:
        return known.count
    count, oldest = conn.execute(
        "SELECT count(*), min(rowid) FROM (SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?"
        " ORDER BY rowid DESC LIMIT ?)",
        [key, PROBE + 1],
    ).fetchone()
    if count <= PROBE:
        return int(count)
    if hidden:
        (at_or_above,) = conn.execute("SELECT count(*) FROM notes_fts_docsize WHERE id >= ?", [oldest]).fetchone()
        (hidden_above,) = conn.execute(
            "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ? AND rowid >= ?", [hidden, oldest]
        ).fetchone()
        newer = max(1.0, float(at_or_above - hidden_above))
    else:
        # Two subqueries: min() and max() in one SELECT would scan the table.
        low, high = conn.execute(
            "SELECT (SELECT min(id) FROM notes_fts_docsize), (SELECT max(id) FROM notes_fts_docsize)"
        ).fetchone()
        span = max(1, high - low + 1)
        newer = max(1.0, rows * (high - oldest + 1) / span)  # notes at or above the oldest match probed
    estimate = min(rows, max(PROBE + 1, round((PROBE + 1) * rows / newer)))
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    cache[key] = _Estimate(estimate, rows)
    return estimate


_hidden_sizes: weakref.WeakKeyDictionary[Index, dict[str, tuple[str, int, int]]] = weakref.WeakKeyDictionary()


def visible_totals(index: Index, hidden: str) -> tuple[int, float]:
    """Notes outside *hidden* (an FTS5 match) and their mean length, as :func:`_totals`
    gives them for the whole store. The hidden notes' count and length are kept until the
    journal moves (every write, in any process, appends to it)."""
    conn = index.conn
    rows, mean = _totals(conn)
    mark = index.get_state("journal_size", "0") or "0"
    cache = _hidden_sizes.setdefault(index, {})
    known = cache.get(hidden)
    if known is not None and known[0] == mark:
        _mark, hidden_rows, hidden_length = known
    else:
        hidden_rows = hidden_length = 0
        for (size,) in conn.execute(
            "SELECT d.sz FROM notes_fts f JOIN notes_fts_docsize d ON d.id = f.rowid WHERE notes_fts MATCH ?",
            [hidden],
        ):
            hidden_rows += 1
            hidden_length += sum(_varints(size))
        if len(cache) >= 64:
            cache.clear()
        cache[hidden] = (mark, hidden_rows, hidden_length)
    seen = rows - hidden_rows
    if seen <= 0:
        return 0, 1.0
    return seen, max((mean * rows - hidden_length) / seen, 1e-9)


def _idf(rows: int, hits: int) -> float:
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0 else 1e-6


@dataclass(frozen=True, slots=True)
class Weights:
    """The phrases of a match expression with their document counts, and the store's size."""

    phrases: tuple[Phrase, ...]
    repeats: tuple[int, ...]  # how often each phrase is written in the expression
    counts: tuple[int, ...]
    rows: int
    mean_length: float

    @property
    def total(self) -> int:
        """Notes FTS5's bm25() would walk to weigh the phrases."""
        return sum(self.counts)


def weigh(index: Index, expr: str, hidden: str | None = None) -> Weights:
    """The phrases of the FTS5 expression *expr* and how many notes hold each (of the notes
    outside *hidden*, when given)."""
    rows, mean = visible_totals(index, hidden) if hidden else _totals(index.conn)
    repeats = Counter(phrases_of(expr))
    counts: list[int] = []
    for phrase in repeats:
        try:
            counts.append(document_frequency(index, phrase_expression(phrase), rows, hidden))
        except sqlite3.OperationalError:
            counts.append(0)  # a phrase FTS5 will not take on its own: it still counts, at full weight
    return Weights(tuple(repeats), tuple(repeats.values()), tuple(counts), rows, mean)


def bm25_ranks(index: Index, weights: Weights, rowids: Sequence[int]) -> dict[int, float]:
    """FTS5-style ranks (negative BM25: lower is better) of the notes *rowids*, which
    are known to match the expression *weights* came from."""
    if not rowids:
        return {}
    conn = index.conn
    phrases = weights.phrases
    idf = [_idf(weights.rows, c) * r for c, r in zip(weights.counts, weights.repeats, strict=True)]
    marks = ",".join("?" * len(rowids))
    lengths = {
        r: sum(_varints(sz))
        for r, sz in conn.execute(f"SELECT id, sz FROM notes_fts_docsize WHERE id IN ({marks})", list(rowids))
    }
    # All titles and bodies folded into one text, scanned once per phrase: a pass of the
    # regex engine per note would cost more than the matching.
    pieces: list[str] = []
    starts: list[int] = []
    owners: list[tuple[int, float]] = []
    at = 0
    for rowid, title, body in conn.execute(
        f"SELECT n.rowid, n.title, substr(t.text, t.body_at + 1, {_SCAN_CHARS}) FROM note_index n"
        f" JOIN note_text t ON t.rowid = n.rowid WHERE n.rowid IN ({marks})",
        list(rowids),
    ):
        for text, weight in ((title or "", TITLE_WEIGHT), (body or "", 1.0)):
            folded = fold(text)  # raw: the patterns treat a CJK character as a word of its own
            pieces.append(folded)
            starts.append(at)
            owners.append((rowid, weight))
            at += len(folded) + 1
    freq = {rowid: [0.0] * len(phrases) for rowid in lengths}
    if phrases:
        for start, end, n in scan("\n".join(pieces), phrases, phrase_finder(phrases)):
            piece = bisect_right(starts, start) - 1
            if end > starts[piece] + len(pieces[piece]):
                continue  # a phrase running on into the next text
            rowid, weight = owners[piece]
            freq[rowid][n] += weight
    if phrases:
        _fill_folds(conn, phrases, freq)
    ranks: dict[int, float] = {}
    for rowid, f in freq.items():
        norm = K1 * (1 - B + B * lengths[rowid] / weights.mean_length)
        ranks[rowid] = -sum(w * x * (K1 + 1) / (x + norm) for w, x in zip(idf, f, strict=True))
    return ranks


def _fill_folds(conn: sqlite3.Connection, phrases: Sequence[Phrase], freq: dict[int, list[float]]) -> None:
    """A note FTS5 matched in which no phrase was counted: the Porter stemmer joined forms
    the text matching does not (``university`` and ``universal``). FTS5 says which phrases
    it holds (rare: one look-up per phrase for such a note); each counts once, in the body."""
    for rowid, f in freq.items():
        if any(f):
            continue
        for n, phrase in enumerate(phrases):
            try:
                if conn.execute(_ONE_MATCH, [phrase_expression(phrase), rowid]).fetchone():
                    f[n] = 1.0
            except sqlite3.OperationalError:
                pass  # a phrase FTS5 will not take on its own
