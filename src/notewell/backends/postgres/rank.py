"""How rare each searched term is on PostgreSQL: BM25's idf, to weigh ``ts_rank``.

``ts_rank`` weighs every word of a query alike, so in a loose query (``why does the iOS
build fail after upgrading Xcode``) the common words outvote the rare ones that name the
subject, where the embedded store's BM25 lets the rare ones lead. Each positive term's
rank is multiplied by its idf, FTS5's ``log((N - n + 0.5) / (n + 0.5))`` (1e-6 for a term
in more than half the notes), N the notes in the store and n those holding the term.

n comes from the statistics ANALYZE keeps of the tsvector column (its most common lexemes
and their frequencies) when the term is one of those, else from counting its matches
through the GIN index, exactly up to PROBE (a term past that is counted as PROBE: common,
but not known to ANALYZE yet). Counts are kept while the store's size moves by less than a
twentieth, and at most COUNTS_TTL seconds (edits change counts without changing the size,
and ANALYZE may have run since); the size itself is counted again after SIZE_TTL seconds.

For a viewer who may not see some projects, :meth:`TermRarity.scoped` counts only the notes
that viewer may see (N and every n, exactly up to PROBE, never from ANALYZE's figures for the
whole table), so a viewer's scores never move when a note they cannot see is written.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["COUNTS_TTL", "PROBE", "SIZE_TTL", "ScopedRarity", "TermRarity", "idf", "scan_idf", "split_terms"]

PROBE = 2000  # matches counted exactly
SIZE_TTL = 10.0  # seconds a count of the store's notes is used
COUNTS_TTL = 600.0  # seconds term counts are kept even if the store's size holds still (edits, ANALYZE)
_DRIFT = 20  # counts are redone once the store's size moved by 1/_DRIFT
_CACHE_MAX = 20_000
_LEXEME = re.compile(r"'((?:[^']|'')*)'")  # one bare lexeme, as the server writes it


def idf(rows: int, hits: int) -> float:
    """FTS5's idf: a term in more than half of *rows* notes weighs almost nothing."""
    # A count made after the store's size was (the size is kept SIZE_TTL seconds) may exceed it.
    hits = min(max(hits, 0), rows)
    value = math.log((rows - hits + 0.5) / (hits + 0.5)) if rows > 0 else 0.0
    return max(value, 1e-6)


def scan_idf(rows: int) -> float:
    """The weight of a term found by reading the text (CJK, stop words), which has no
    lexeme to count: that of a word in one note in a hundred."""
    return idf(rows, rows // 100)


def split_terms(tsquery: str) -> list[str]:
    """The parts of a tsquery (as the server writes it) that are ANDed or ORed at its top,
    each to be weighed on its own; a negated part finds nothing to rank and is dropped, and
    a part in parentheses is split in turn. A phrase (``<->``) stays one part."""
    text = tsquery.strip()
    cuts = [i for i, ch, depth in _unquoted(text) if depth == 0 and ch in "&|"]
    if not cuts:
        closing = next((i for i, ch, depth in _unquoted(text) if ch == ")" and depth == 0), None)
        if text.startswith("(") and closing == len(text) - 1:
            return split_terms(text[1:-1])  # wholly in parentheses
        return [] if text.startswith("!") or not text else [text]
    bounds = [-1, *cuts, len(text)]
    return [term for a, b in zip(bounds, bounds[1:], strict=False) for term in split_terms(text[a + 1 : b])]


def _unquoted(text: str) -> Iterator[tuple[int, str, int]]:
    """Each character of *text* outside quoted lexemes, with its position and the depth of
    parentheses after it (so a closing one is at the depth it returns to)."""
    depth, quoted = 0, False
    for i, ch in enumerate(text):
        if quoted:
            quoted = ch != "'"  # a doubled quote closes and reopens: the same state after both
            continue
        if ch == "'":
            quoted = True
            continue
        depth += (ch == "(") - (ch == ")")
        yield i, ch, depth


class TermRarity:
    """Document counts of tsquery terms in one database, shared by a store's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows = -1  # the store's size when the counts below were made
        self._sized_at = -math.inf
        self._counted_at = -math.inf
        self._size = 0
        self._common: dict[str, float] = {}
        self._counts: dict[str, int] = {}
        self._scoped_sizes: dict[tuple[str, ...], tuple[float, int]] = {}  # hidden -> (when, visible notes)

    def scoped(self, hidden: Sequence[str]) -> ScopedRarity | TermRarity:
        """The counts a viewer who may not see the projects *hidden* is ranked by (this
        store-wide one when nothing is hidden)."""
        return ScopedRarity(self, tuple(sorted(hidden))) if hidden else self

    def visible_rows(self, conn: Any, hidden: tuple[str, ...]) -> int:
        """Notes outside the projects *hidden* (counted at most every SIZE_TTL seconds)."""
        now = time.monotonic()
        with self._lock:
            known = self._scoped_sizes.get(hidden)
            if known is not None and now - known[0] < SIZE_TTL:
                return known[1]
        (size,) = conn.execute(f"SELECT count(*) FROM notes n {_VISIBLE_FROM}", (list(hidden),)).fetchone()
        with self._lock:
            if len(self._scoped_sizes) >= 64:
                self._scoped_sizes.clear()
            self._scoped_sizes[hidden] = (now, int(size))
        return int(size)

    def rows(self, conn: Any) -> int:
        """Notes in the store (counted at most every SIZE_TTL seconds)."""
        now = time.monotonic()
        with self._lock:
            if now - self._sized_at < SIZE_TTL:
                return self._size
            stale = self._rows < 0 or now - self._counted_at > COUNTS_TTL
        (size,) = conn.execute("SELECT count(*) FROM notes").fetchone()
        size = int(size)
        stale = stale or abs(size - self._rows) * _DRIFT > max(self._rows, 1)
        common = _common_lexemes(conn) if stale else None  # read outside the lock: searches go on
        with self._lock:
            self._size, self._sized_at = size, now
            if common is not None:
                self._rows, self._counted_at = size, now
                self._counts.clear()
                self._common = common
            return self._size

    def weights(self, conn: Any, terms: Sequence[str]) -> list[float]:
        """The idf of each tsquery in *terms* (normalised, as ``_resolve`` leaves them)."""
        rows = self.rows(conn)
        out = []
        for term in terms:
            out.append(idf(rows, self._hits(conn, term, rows)))
        return out

    def _hits(self, conn: Any, term: str, rows: int) -> int:
        with self._lock:
            known = self._counts.get(term)
            lexeme = _LEXEME.fullmatch(term.strip())
            freq = self._common.get(lexeme.group(1).replace("''", "'")) if lexeme else None
        if known is not None:
            return known
        if freq is not None:
            hits = round(freq * rows)
        else:
            (hits,) = conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM notes WHERE tsv @@ %s::tsquery LIMIT %s) s", (term, PROBE)
            ).fetchone()
        with self._lock:
            if len(self._counts) >= _CACHE_MAX:
                self._counts.clear()
            self._counts[term] = int(hits)
        return int(hits)


# The notes a viewer may see: those on no attempt, or on an attempt outside the hidden projects.
_VISIBLE_FROM = "LEFT JOIN attempts a ON a.id = n.attempt_id WHERE (a.project IS NULL OR a.project <> ALL(%s))"


class ScopedRarity:
    """Document counts among the notes a viewer may see (see :meth:`TermRarity.scoped`):
    the same ``rows`` and ``weights`` as :class:`TermRarity`, counted per search."""

    def __init__(self, store: TermRarity, hidden: tuple[str, ...]) -> None:
        self._store = store
        self._hidden = hidden
        self._rows: int | None = None
        self._counts: dict[str, int] = {}

    def rows(self, conn: Any) -> int:
        if self._rows is None:
            self._rows = self._store.visible_rows(conn, self._hidden)
        return self._rows

    def weights(self, conn: Any, terms: Sequence[str]) -> list[float]:
        rows = self.rows(conn)
        out = []
        for term in terms:
            if term not in self._counts:
                (hits,) = conn.execute(
                    f"SELECT count(*) FROM (SELECT 1 FROM notes n {_VISIBLE_FROM} AND n.tsv @@ %s::tsquery LIMIT %s) s",
                    (list(self._hidden), term, PROBE),
                ).fetchone()
                self._counts[term] = int(hits)
            out.append(idf(rows, self._counts[term]))
        return out


def _common_lexemes(conn: Any) -> dict[str, float]:
    """The tsvector column's most common lexemes and the share of notes holding each, as
    the last ANALYZE saw them (none before the first)."""
    row = conn.execute(
        "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats"
        " WHERE schemaname = current_schema() AND tablename = 'notes' AND attname = 'tsv'"
    ).fetchone()
    if row is None or row[0] is None:
        return {}
    return dict(zip(row[0], row[1], strict=False))
