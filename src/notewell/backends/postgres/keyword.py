"""Keyword search on PostgreSQL: a weighted tsvector (title A, body B) under a GIN index,
a tsquery built from the query as the embedded store reads it, and for CJK text each
note's CJK characters and pairs under another.

A query means what it means on SQLite (:mod:`notewell.search.query`):

- Plain words must all appear (stop words dropped as compile_query drops them); when fewer
  notes than asked for hold every word, a loose pass fills up with notes holding any
  meaningful word.
- FTS5 syntax is parsed by :func:`notewell.search.query.parse_fts5` (FTS5's own grammar, so what FTS5
  refuses runs as plain words here too) and becomes a tsquery: ``AND`` ``&``, ``OR`` ``|``,
  ``a NOT b`` ``a & !b``, ``"a phrase"`` ``<->`` (within the title or within the body, as
  an FTS5 phrase stays in one column), ``prefix*`` ``:*``, ``title:``/``body:`` the
  weights A/B, parentheses as written. Approximated: ``NEAR(a b, N)`` is ``a AND b`` in
  one column (the title or the body) with N not checked, since tsquery's ``<N>`` is an
  exact distance, not "within N"; ``^`` (start of a column) is ignored.
- Every phrase goes to ``to_tsquery`` as a bound, quoted lexeme and comes back normalised
  (stemmed as the notes were), and the pieces are joined into a tsquery that is bound
  again: no text anyone typed becomes SQL.
- The index holds no English stop words, so a phrase of stop words alone (``what?``,
  ``the``) is found by reading the text: a case-blind whole-word regular expression.
  Stop words inside a longer phrase hold their place but match any word, and at its
  edges they are not required (``"the cache"`` finds *cache*).
- CJK has no spaces for a text-search parser to split on: a CJK run matches as a
  substring of the title or body (ILIKE), combined with the other terms by the same
  AND/OR/NOT (next to a Latin word in one phrase, it is required but not checked to be
  adjacent). The notes that can hold it are looked up first in the cjk_grams column
  (each note's CJK characters and adjacent pairs, schema version 4) by the run's pairs,
  or its one character. The loose pass splits a CJK run into overlapping pairs, as the
  embedded store does.

Ranking is in the spirit of the embedded store's BM25: each positive term's ``ts_rank``
(the title weighted 3x the body, divided by 1 + log(length) so long notes are damped)
times the term's idf (:mod:`notewell.backends.postgres.rank`), so a rare word outweighs common ones. A CJK word
found by reading the text adds a fixed amount (weighed like a word in one note in a
hundred), a stop word almost nothing. Ties go to the most recently
updated note. A strict pass of CJK runs or stop words alone is not ranked: its notes come
newest first, as the updated_at index gives them without reading every match.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ...model.cjk import CJK_RE
from ...model.note import Card, preview
from ...search.filters import Filters, check_offset
from ...search.passage_rank import SCAN_CHARS, Candidate, head_size, rerank, within_budget
from ...search.query import SEARCH_COLUMNS, Near, Node, Phrase, QuerySyntaxError, compile_query, parse_fts5, plain_terms
from ...search.request import RANK_WINDOW, TITLE_WINDOW, check_limit
from ...search.snippets import make_snippet, phrases_of, snippet_maker
from .filters_sql import pg_filter_sql
from .rank import ScopedRarity, TermRarity, scan_idf, split_terms

__all__ = ["CARD_SQL", "card_from_pg", "pg_keyword_search", "pg_list_cards", "pg_older_keyword_search"]

# ts_rank's weights run {D, C, B, A}: body (B) 1/3 of title (A).
_WEIGHTS = "'{0, 0, 0.333333, 1.0}'"
# What one term found by reading the text (CJK, stop words) adds to a score: about what
# ts_rank gives one word in a short note's title (0.28) or body (0.09), so such terms and
# indexed words count alike in a mixed query.
_SCAN_TITLE, _SCAN_BODY = 0.3, 0.1
CARD_SQL = (
    "n.id, n.title, n.kind, n.tags, n.builds_on, n.model, n.author, n.created_at, n.updated_at,"
    " n.attempt_id, a.project, coalesce(p.campaign, a.campaign), n.note_kind, a.outcome, a.ended_at"
)
_CARD_FROM = "notes n LEFT JOIN attempts a ON a.id = n.attempt_id LEFT JOIN projects p ON p.name = a.project"
_CONFIG = "english"  # the text-search configuration of storage.pg's tsv column and title index
_TITLE_TSV = f"to_tsvector('{_CONFIG}', n.title)"  # exactly the title index's expression
_CJK_RUN = re.compile(CJK_RE.pattern + "+")
_WEIGHTED = re.compile(r"':\*?[ABCD]")  # a lexeme limited to weights, as the server writes it
_QUOTED = re.compile(r"'(?:[^']|'')*'")  # a lexeme, as the server writes it
_PHRASE_OP = re.compile(r"<(?:-|\d+)>")


def card_from_pg(row: tuple, snippet: str, score: float | None) -> Card:
    """A card from a CARD_SQL row (card_from_row's columns without the rowid; tags and
    builds_on arrive as arrays, not JSON text)."""
    return Card.from_columns((*row[:3], list(row[3]), list(row[4]), *row[5:15]), snippet, score)


# -- the match, as a tree -------------------------------------------------------------------
# Built from the query before the server sees it. The words of each phrase go to the server
# once (one round trip for all of them) to come back as tsquery text, stemmed as the notes
# were; _resolve folds every part that is tsquery alone into one _Ts, and _where / _score
# write the rest as SQL with every value bound.


@dataclass(frozen=True, slots=True)
class _Lex:
    """Words for to_tsquery: whole, or the last one a prefix; maybe limited to weights."""

    text: str
    prefix: bool
    weights: str  # "" (title and body), "A" (title) or "B" (body)

    @property
    def source(self) -> str:
        quoted = "'" + self.text.replace("\\", "\\\\").replace("'", "''") + "'"
        marks = ("*" if self.prefix else "") + self.weights
        return quoted + (f":{marks}" if marks else "")


@dataclass(frozen=True, slots=True)
class _Seq:
    """Lexemes that follow one another: a phrase."""

    items: tuple[_Lex, ...]


@dataclass(frozen=True, slots=True)
class _Scan:
    """Text found by reading the title and/or body: ``ILIKE`` a CJK substring, or ``~*``
    a word the text-search configuration drops (a stop word such as *what* or *once*).
    *grams*: CJK characters or pairs every matching note holds in its cjk_grams column
    (looked up in that column's index first, so only those notes are read)."""

    op: str
    pattern: str
    title: bool
    body: bool
    grams: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Ts:
    """A tsquery as the server wrote it, bound again as ``%s::tsquery``."""

    text: str


@dataclass(frozen=True, slots=True)
class _Op:
    """``&`` (all), ``|`` (any) or ``-`` (the first and none of the others)."""

    op: str
    items: tuple[_Tree, ...]


_FALSE = "false"  # a phrase with no words, or in no column (``-{title body}:``): matches nothing
_Tree = _Seq | _Scan | _Ts | _Op | str


def _phrase(parts: tuple[tuple[str, bool], ...], columns: frozenset[str] | None) -> _Tree:
    """A phrase (strings joined by ``+``, each maybe a prefix) as lexemes and CJK substrings."""
    title = columns is None or "title" in columns
    body = columns is None or "body" in columns
    if not (title or body):
        return _FALSE  # a column set naming neither (SEARCH_COLUMNS: the meta column is never read)
    weights = "" if title and body else ("A" if title else "B")
    lexes: list[_Lex] = []
    subs: list[_Tree] = []
    for text, prefix in parts:
        subs.extend(_Scan("ILIKE", _like(run), title, body, _grams(run)) for run in _CJK_RUN.findall(text))
        words = _CJK_RUN.sub(" ", text).split()
        if not any(ch.isalnum() for w in words for ch in w):
            continue
        # A star ends the last word only: the words before it are whole.
        if prefix and len(words) > 1:
            lexes.append(_Lex(" ".join(words[:-1]), False, weights))
        lexes.append(_Lex(words[-1] if prefix else " ".join(words), prefix, weights))
    if not lexes and not subs:
        return _FALSE  # as FTS5: a phrase with no words in it finds nothing
    items: list[_Tree] = ([_Seq(tuple(lexes))] if lexes else []) + subs
    return items[0] if len(items) == 1 else _Op("&", tuple(items))


def _from_fts5(node: Node) -> _Tree:
    if isinstance(node, Phrase):
        return _phrase(node.parts, node.columns)  # ^ (start of a column) has no tsquery form
    if isinstance(node, Near):
        # All of NEAR's phrases in one column, the title or the body, as FTS5 finds them;
        # how far apart they are is not checked (tsquery's <N> is an exact distance).
        return _Op(
            "|",
            tuple(
                _Op(
                    "&",
                    tuple(
                        _phrase(p.parts, frozenset({col}) & (p.columns if p.columns is not None else {col}))
                        for p in node.phrases
                    ),
                )
                for col in ("title", "body")
            ),
        )
    return _Op({"AND": "&", "OR": "|", "NOT": "-"}[node.op], (_from_fts5(node.left), _from_fts5(node.right)))


def _words(terms: tuple[str, ...], op: str) -> _Tree:
    """Plain words, each read as compile_query quotes it: one phrase per word."""
    return _Op(op, tuple(_phrase(((t, False),), None) for t in terms))


def _sources(tree: _Tree) -> list[str]:
    if isinstance(tree, _Seq):
        return [
            x.source for x in _in_columns(tree, "").items + _in_columns(tree, "A").items + _in_columns(tree, "B").items
        ]
    if isinstance(tree, _Op):
        return [s for item in tree.items for s in _sources(item)]
    return []


def _normalise(conn: Any, trees: list[_Tree]) -> dict[str, str]:
    """Each lexeme source's to_tsquery form ('' for stop words), from the server."""
    sources = sorted({s for tree in trees for s in _sources(tree)})
    if not sources:
        return {}
    rows = conn.execute(f"SELECT s, to_tsquery('{_CONFIG}', s)::text FROM unnest(%s::text[]) AS t(s)", [sources])
    return dict(rows)


def _in_columns(seq: _Seq, weights: str) -> _Seq:
    """*seq* limited to *weights*, unless it is limited already."""
    if seq.items[0].weights:
        return seq
    return _Seq(tuple(_Lex(x.text, x.prefix, weights) for x in seq.items))


def _phrase_text(seq: _Seq, norm: dict[str, str]) -> str:
    """The tsquery of *seq* ('' if all its words are stop words)."""
    texts = [norm[x.source] for x in seq.items if norm[x.source]]
    return texts[0] if len(texts) == 1 else " <-> ".join(f"( {t} )" for t in texts)


def _stop_words(seq: _Seq) -> _Scan:
    """A phrase of stop words alone, as a case-blind regular expression over whole words
    (punctuation between them allowed, as FTS5 allows it). The words are letters and
    digits only, so nothing in them is special to the expression."""
    words = [w for lex in seq.items for w in re.findall(r"[^\W_]+", lex.text)]
    pattern = r"\m" + "[^[:alnum:]]+".join(words) + ("" if seq.items[-1].prefix else r"\M")
    weights = seq.items[0].weights
    return _Scan("~*", pattern, weights != "B", weights != "A")


def _resolve(tree: _Tree, norm: dict[str, str]) -> _Tree:
    """*tree* with each phrase replaced by its tsquery text (or, if only stop words, by a
    scan), and every subtree of tsquery alone folded into one _Ts."""
    if isinstance(tree, _Seq):
        text = _phrase_text(tree, norm)
        if not text:
            # to_tsquery drops stop words, and so does the index: find them in the text.
            return _stop_words(tree)
        if tree.items[0].weights or not _PHRASE_OP.search(_QUOTED.sub("", text)):
            return _Ts(text)
        # The tsv column is the title's vector followed by the body's, positions running on:
        # a phrase must stay within one of them, as an FTS5 phrase stays in one column.
        title, body = (_phrase_text(_in_columns(tree, w), norm) for w in "AB")
        return _Ts(f"( {title} ) | ( {body} )")
    if not isinstance(tree, _Op):
        return tree
    items = [_resolve(item, norm) for item in tree.items]
    if tree.op == "-":
        if items[0] == _FALSE:
            return _FALSE
        items = [items[0], *(i for i in items[1:] if i != _FALSE)]
    elif tree.op == "&":
        if _FALSE in items:
            return _FALSE
    else:
        items = [i for i in items if i != _FALSE] or [_FALSE]
    if len(items) == 1:
        return items[0]
    texts = [f"( {i.text} )" for i in items if isinstance(i, _Ts)]
    if len(texts) == len(items):
        if tree.op == "-":
            return _Ts(texts[0] + "".join(f" & !{t}" for t in texts[1:]))
        return _Ts(f" {tree.op} ".join(texts))
    return _Op(tree.op, tuple(items))


def _where(tree: _Tree, title_only: bool = False) -> tuple[str, list[Any]]:
    """*tree* (resolved) as a condition on notes ``n``; with *title_only*, on its title."""
    if isinstance(tree, _Ts):
        return (f"{_TITLE_TSV} @@ %s::tsquery" if title_only else "n.tsv @@ %s::tsquery"), [tree.text]
    if isinstance(tree, _Scan):
        cols = [c for c, on in (("n.title", tree.title), ("n.body", tree.body and not title_only)) if on]
        if not cols:
            return "false", []
        if "n.body" in cols:
            # Through storage.pg's notewell_reads, whose estimates suit words found by reading
            # (see there): inline, the planner took one for a word in almost no note and read
            # every note (or every match of another word) to sort the few it expected.
            sql = "notewell_reads(n.title, n.body, %s, %s, %s)"
            params: list[Any] = [tree.pattern, tree.title, tree.op]
        else:
            sql, params = f"n.title {tree.op} %s", [tree.pattern]
        if tree.grams:
            sql, params = f"(n.cjk_grams @> %s::text[] AND {sql})", [list(tree.grams), *params]
        return sql, params
    assert isinstance(tree, _Op)
    parts = [_where(item, title_only) for item in tree.items]
    params = [p for _, ps in parts for p in ps]
    if tree.op == "-":
        return "(" + parts[0][0] + "".join(f" AND NOT {sql}" for sql, _ in parts[1:]) + ")", params
    return "(" + f" {'AND' if tree.op == '&' else 'OR'} ".join(sql for sql, _ in parts) + ")", params


def _leaves(tree: _Tree, *, positive: bool = False) -> list[_Ts | _Scan]:
    """The _Ts and _Scan leaves of *tree*; with *positive*, only those a note is found by
    (not those on the right of a NOT)."""
    if isinstance(tree, _Ts | _Scan):
        return [tree]
    if isinstance(tree, _Op):
        items = tree.items[:1] if positive and tree.op == "-" else tree.items
        return [leaf for item in items for leaf in _leaves(item, positive=positive)]
    return []


def _score(tree: _Tree, weigh: Callable[[list[str]], list[float]], scan_weight: float) -> tuple[str, list[Any]]:
    """A rank for the notes *tree* finds and its parameters: each positive term's ts_rank
    times its idf (*weigh*), so that rare words lead as in BM25."""
    leaves = _leaves(tree, positive=True)
    ranked = [term for leaf in leaves if isinstance(leaf, _Ts) for term in split_terms(leaf.text)]
    terms: list[str] = []
    params: list[Any] = []
    for term, weight in zip(ranked, weigh(ranked), strict=True):
        terms.append(f"{weight:.6g} * ts_rank({_WEIGHTS}, n.tsv, %s::tsquery, 1)")
        params.append(term)
    for leaf in leaves:
        if isinstance(leaf, _Scan):
            # A stop word is in most notes, where FTS5's idf gives a term almost nothing; a CJK
            # word has no lexeme to count and weighs like a word in one note in a hundred.
            weight = scan_weight if leaf.op == "ILIKE" else 1e-6
            title = f"WHEN n.title {leaf.op} %s THEN {_SCAN_TITLE * weight:.6g} " if leaf.title else ""
            body = f"WHEN n.body {leaf.op} %s THEN {_SCAN_BODY * weight:.6g} " if leaf.body else ""
            terms.append(f"(CASE {title}{body}ELSE 0 END)")
            params.extend([leaf.pattern] * (bool(title) + bool(body)))
    return " + ".join(terms) or "1.0", params


def _grams(run: str) -> tuple[str, ...]:
    """What storage.pg's notewell_cjk_grams holds for any text containing the CJK *run*:
    its adjacent pairs, or the character itself when it is one."""
    if len(run) == 1:
        return (run,)
    return tuple(sorted({run[i : i + 2] for i in range(len(run) - 1)}))


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _strict_tree(query: str, raw: bool, strict_words: tuple[str, ...]) -> tuple[_Tree, bool]:
    """The strict pass's tree, and whether it is the query as written (not its plain words)."""
    if raw:
        try:
            return _from_fts5(parse_fts5(query, SEARCH_COLUMNS)), True
        except QuerySyntaxError:
            pass  # as on SQLite: a query FTS5 refuses runs as its plain words
    return _words(strict_words, "&"), False


def pg_keyword_search(
    conn: Any,
    query: str,
    *,
    limit: int = 10,
    filters: Filters | None = None,
    partial: set[str] | None = None,
    rarity: TermRarity | None = None,
    snippets: dict[str, Callable[[], str]] | None = None,
) -> list[Card]:
    """The best *limit* notes for *query* as cards with highlighted snippets. Ids found only
    by the loose pass (not every word) are added to *partial* if given. *rarity*: the
    store's cache of how many notes hold each term (without one, they are counted anew)."""
    check_limit(limit)  # cheap; the engines are public, and the plan asks them for pools
    cq = compile_query(query)  # the same checks and errors as the embedded store
    filters = filters or Filters()
    # A viewer who may not see some projects is ranked by counts of the notes they may see.
    counts = (rarity or TermRarity()).scoped(filters.criteria.hidden_projects)
    where, params = pg_filter_sql(filters)
    extra = f" AND {where}" if where else ""
    words = plain_terms(cq.text)  # a CJK run's loose pieces: pairs, as on SQLite (cjk_grams finds them)
    strict, as_written = _strict_tree(cq.text, cq.raw, words.strict)
    loose = _words(words.loose, "|") if cq.loose is not None and words.loose else None
    norm = _normalise(conn, [strict] if loose is None else [strict, loose])
    hits: list[tuple[tuple, float, str, str]] = []  # (card row, score, body, FTS5-style expression)
    seen: set[str] = set()

    def run(tree: _Tree, expr: str, want: int, *, fill: bool, passages: bool = True) -> None:
        tree = _resolve(tree, norm)
        if tree == _FALSE:
            return  # a phrase with no words, or in no column: no note to find
        # The head is ranked by its notes' best passages too (not a query in FTS5 syntax: as written).
        pool = max(want, head_size(want)) if passages else want
        sql, args = _match_sql(tree, extra, params, pool, ranked_anyway=fill, rarity=counts, conn=conn)
        # Never a prepared statement: after five runs psycopg would prepare it and the server
        # could settle on one generic plan for every word, when how many notes hold the word
        # decides between reading the newest notes and looking the word up (measured: a CJK
        # word went from 15 to 200 ms on 10,000 notes).
        rows = [row for row in conn.execute(sql, args, prepare=False) if row[0] not in seen]
        for row in _by_passages(conn, rows, expr, counts, want) if passages else rows:
            if len(hits) < limit:
                seen.add(row[0])
                hits.append((row[:15], float(row[15]), row[16], expr))

    run(strict, cq.strict if as_written else (cq.fallback or cq.strict), limit, fill=False, passages=not as_written)
    if len(hits) < limit and loose is not None:
        before = len(hits)
        run(loose, cq.loose or "", limit + len(hits), fill=True)
        if partial is not None:
            partial.update(h[0][0] for h in hits[before:])
    cards = []
    for row, score, body, expr in hits:
        if snippets is None:
            snippet = make_snippet(body, phrases_of(expr)) or preview(body)
        else:  # made later, for the cards a fusion keeps (as on SQLite)
            snippet = ""
            snippets[row[0]] = snippet_maker(body, phrases_of(expr), preview(body))
        cards.append(card_from_pg(row, snippet, float(f"{score:.6g}")))
    return cards


def _by_passages(
    conn: Any, rows: list[tuple], expr: str, counts: TermRarity | ScopedRarity, wanted: int
) -> list[tuple]:
    """*rows* (card columns, score, body; best first) with the head ranked by each note's best
    passage as well (:mod:`notewell.search.passage_rank`), each phrase weighed by its idf among
    the notes the viewer may see (a CJK or stop-word phrase, with no lexeme, as the scan weighs it)."""
    phrases = phrases_of(expr)
    if not rows or not phrases:
        return rows
    texts = [" ".join(p.words) for p in phrases]
    queries = dict(
        conn.execute(
            f"SELECT s, phraseto_tsquery('{_CONFIG}', s)::text FROM unnest(%s::text[]) AS t(s)", [texts], prepare=False
        )
    )
    # A CJK phrase or a prefix has no lexeme the index holds: weighed as the scan weighs it.
    fallback = scan_idf(counts.rows(conn))
    weights = [
        fallback if p.prefix or _CJK_RUN.search(t) or not queries.get(t) else counts.weights(conn, [queries[t]])[0]
        for p, t in zip(phrases, texts, strict=True)
    ]
    by_id = {row[0]: row for row in rows}
    candidates = [Candidate(row[0], float(row[15]), row[1] or "", row[16] or "") for row in rows]
    read = within_budget([len(row[16] or "") for row in rows[: head_size(wanted)]], len(phrases))
    return [(*by_id[c.key][:15], c.score, *by_id[c.key][16:]) for c in rerank(candidates, phrases, weights, read)]


def pg_older_keyword_search(
    conn: Any,
    query: str,
    *,
    limit: int,
    filters: Filters,
    exclude: set[str],
    rarity: TermRarity | None = None,
) -> list[Card]:
    """The best *limit* notes (none in *exclude*) that *query*'s strict pass finds only in an
    older revision (the old_revisions table, read with the same tree as notes), as cards of the
    note as it is now with that revision's snippet and number (``matched_revision``), scoreless:
    they rank below every current match. Ranked among the RANK_WINDOW notes with the newest
    such revisions that pass the filters, as on SQLite, by the weights of the notes the viewer
    may see (rarity scoped as for current matches: nothing hidden moves the order)."""
    cq = compile_query(query)
    counts = (rarity or TermRarity()).scoped(filters.criteria.hidden_projects)
    words = plain_terms(cq.text)
    strict, as_written = _strict_tree(cq.text, cq.raw, words.strict)
    tree = _resolve(strict, _normalise(conn, [strict]))
    if tree == _FALSE:
        return []
    expr = cq.strict if as_written else (cq.fallback or cq.strict)
    cond, cond_params = _where(tree)  # over old_revisions as n: it has notes' title, body, tsv and cjk_grams
    score, score_params = _score(
        tree, lambda terms: counts.weights(conn, terms) if terms else [], scan_idf(counts.rows(conn))
    )
    where, params = pg_filter_sql(filters, alias="c")
    # The window counts notes, not revisions: one note edited a thousand times crowds out no other.
    found = conn.execute(
        f"WITH m AS (SELECT n.id, n.revision, n.seq, n.body, {score} AS score FROM old_revisions n"
        " JOIN notes c ON c.id = n.id AND n.revision < c.revision"
        f" WHERE {cond}" + (f" AND {where}" if where else "") + " AND NOT (n.id = ANY(%s))),"
        " newest AS (SELECT id, max(seq) AS top FROM m GROUP BY id ORDER BY top DESC LIMIT %s)"
        " SELECT m.id, m.revision, m.body, m.score FROM m JOIN newest ON newest.id = m.id",
        [*score_params, *cond_params, *params, sorted(exclude), max(RANK_WINDOW, limit)],
        prepare=False,
    ).fetchall()
    best: dict[str, tuple[float, int, str]] = {}
    for nid, revision, body, value in found:
        if nid not in best or (value, revision) > best[nid][:2]:
            best[nid] = (float(value), revision, body)
    chosen = sorted(best.items(), key=lambda item: (-item[1][0], -item[1][1]))[:limit]
    if not chosen:
        return []
    rows = {
        r[0]: r
        for r in conn.execute(f"SELECT {CARD_SQL} FROM {_CARD_FROM} WHERE n.id = ANY(%s)", ([c[0] for c in chosen],))
    }
    phrases = phrases_of(expr)
    cards = []
    for nid, (_value, revision, body) in chosen:
        row = rows.get(nid)
        if row is not None:
            snippet = make_snippet(body, phrases) or preview(body)
            cards.append(replace(card_from_pg(row, snippet, None), matched_revision=revision))
    return cards


def _match_sql(
    tree: _Tree,
    extra: str,
    extra_params: list[Any],
    want: int,
    *,
    ranked_anyway: bool,
    rarity: TermRarity | ScopedRarity,
    conn: Any,
) -> tuple[str, list[Any]]:
    """The statement finding the best *want* notes for *tree* (resolved) that pass the filters."""
    cond, cond_params = _where(tree)
    by_words = any(isinstance(leaf, _Ts) and split_terms(leaf.text) for leaf in _leaves(tree, positive=True))
    if not (by_words or ranked_anyway):
        # Only text to read for (CJK, stop words), nothing to rank by: the newest matches
        # straight from the updated_at index, stopping at the *want*-th, not reading them all.
        return (
            f"SELECT {CARD_SQL}, 1.0, left(n.body, {SCAN_CHARS}) FROM {_CARD_FROM} WHERE {cond}{extra}"
            " ORDER BY n.updated_at DESC, n.seq DESC LIMIT %s",
            [*cond_params, *extra_params, want],
        )
    # Ranking reads each candidate's tsvector, so a word in a third of a million notes would
    # cost a third of a million reads. As on SQLite, the candidates are the newest matches
    # (RANK_WINDOW, or as many as wanted) and, when those fill the window, the TITLE_WINDOW
    # newest whose title matches (both walks of an index).
    window = max(RANK_WINDOW, want)
    score, score_params = _score(
        tree, lambda terms: rarity.weights(conn, terms) if terms else [], scan_idf(rarity.rows(conn))
    )
    # The title's own tsvector has no weights: a query limited to some (title:, body:) skips it.
    weighted = any(isinstance(t, _Ts) and _WEIGHTED.search(t.text) for t in _leaves(tree))
    title = None if weighted else _where(tree, title_only=True)
    sql = f"WITH recent AS (SELECT n.seq FROM notes n WHERE {cond}{extra} ORDER BY n.seq DESC LIMIT %s)"
    args: list[Any] = [*cond_params, *extra_params, window]
    if title is not None:
        # A title may match where the note does not (a NOT word in the body): both must.
        sql += (
            f", titled AS (SELECT n.seq FROM notes n WHERE (SELECT count(*) FROM recent) >= %s"
            f" AND {title[0]} AND {cond}{extra} ORDER BY n.seq DESC LIMIT {TITLE_WINDOW})"
            ", picked AS (SELECT seq FROM recent UNION SELECT seq FROM titled)"
        )
        args += [window, *title[1], *cond_params, *extra_params]
    else:
        sql += ", picked AS (SELECT seq FROM recent)"
    sql += (
        f" SELECT {CARD_SQL}, {score} AS score, left(n.body, {SCAN_CHARS})"
        " FROM picked JOIN notes n ON n.seq = picked.seq"
        " LEFT JOIN attempts a ON a.id = n.attempt_id LEFT JOIN projects p ON p.name = a.project"
        " ORDER BY score DESC, n.updated_at DESC, n.seq DESC LIMIT %s"
    )
    return sql, [*args, *score_params, want]


def pg_list_cards(conn: Any, *, limit: int = 20, offset: int = 0, filters: Filters | None = None) -> list[Card]:
    """Notes newest-updated first, as cards whose snippet is the opening of the body."""
    check_limit(limit)
    check_offset(offset)
    where, params = pg_filter_sql(filters or Filters())
    sql = f"SELECT {CARD_SQL}, n.body FROM {_CARD_FROM}" + (f" WHERE {where}" if where else "")
    sql += " ORDER BY n.updated_at DESC, n.seq DESC LIMIT %s OFFSET %s"
    return [card_from_pg(r[:15], preview(r[15]), None) for r in conn.execute(sql, [*params, limit, offset])]
