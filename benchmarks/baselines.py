"""The baselines the quality benchmarks rank beside notewell (locomo.py, eval_long.py).

- **words**: notes ranked by how many of the query's terms they hold as case-insensitive
  substrings of title and body (ties in note order; notes holding none left out): the NoteTool
  chapter's substring search, widened to a question's words.
- **fts5_or**: raw SQLite FTS5 in memory (``porter unicode61 remove_diacritics 2``, title and body
  columns, ``bm25(t, 3.0, 1.0)``), the same terms quoted and ORed.

Each ranks note positions (the order the notes were written); the benchmarks map them to their keys.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

__all__ = ["FTS5_TOKENIZER", "STOP_WORDS", "TextBaselines"]

FTS5_TOKENIZER = "porter unicode61 remove_diacritics 2"

# English stop words the baselines drop from a query (with the pieces \w+ makes of "I'm", "don't").
STOP_WORDS = frozenset(
    """a an the is are was were be been being am of to in on at for and or nor but with without how what
    why when where which who whom whose do does did doing done i me my mine we us our you your it its this
    that these those there here can could should would will shall may might must any some about from by as
    not no into onto than then so if has have had having just also very more most such only own same too
    s t d ll m re ve he him his she her hers they them their theirs up out over again all each both other""".split()
)


class TextBaselines:
    """Both baselines over one store's notes (titles and bodies, in the order written)."""

    def __init__(self, titles: Sequence[str], bodies: Sequence[str]) -> None:
        self._notes = list(zip(titles, bodies, strict=True))
        self._lowered: list[str] | None = None
        self._fts: sqlite3.Connection | None = None

    def lowered(self) -> list[str]:
        """Each note's title and body, lowercased (what ``words`` searches)."""
        if self._lowered is None:
            self._lowered = [f"{t}\n{b}".lower() for t, b in self._notes]
        return self._lowered

    def words(self, terms: Sequence[str], limit: int) -> list[int]:
        """Positions of the notes holding the most of *terms* (lowercased), best first."""
        hits = [(-sum(t in text for t in terms), i) for i, text in enumerate(self.lowered())]
        return [i for neg, i in sorted(hits) if neg < 0][:limit]

    def fts5_or(self, terms: Sequence[str], limit: int) -> list[int]:
        """Positions of the notes raw FTS5 ranks first for *terms* ORed."""
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        rows = self._table().execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t, 3.0, 1.0), rowid LIMIT ?", (match, limit)
        )
        return [r for (r,) in rows]

    def _table(self) -> sqlite3.Connection:
        if self._fts is None:
            db = sqlite3.connect(":memory:")
            db.execute(f"CREATE VIRTUAL TABLE t USING fts5(title, body, tokenize='{FTS5_TOKENIZER}')")
            db.executemany(
                "INSERT INTO t (rowid, title, body) VALUES (?, ?, ?)",
                [(i, t, b) for i, (t, b) in enumerate(self._notes)],
            )
            self._fts = db
        return self._fts

    def close(self) -> None:
        if self._fts is not None:
            self._fts.close()
            self._fts = None
