"""Property tests over hostile text (issue 9): the header parser, add_tag/set_summary (pure and through the
store), the query parser and search, the notebook validator. Never an unhandled exception, never a lost byte.

tests/model/test_header*.py already check parse_note on st.text() and tag edits on tidy headers; these add
header-shaped text full of hostile characters (CR, CRLF mixed with LF, BOM, tabs, bidi and zero-width
characters, quotes and escapes), the exact-bytes contract of both edits, the same through the store, and
FTS5-syntax queries in every search mode."""

from __future__ import annotations

import difflib
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import notewell
from notewell import InvalidArgumentError, InvalidQueryError, NotewellError
from notewell.model.header import LIMITS, parse_note
from notewell.model.header_edit import with_summary, with_tags
from notewell.model.ids import is_link_id
from notewell.model.notebook_doc import SECTIONS, parse_notebook
from notewell.model.notebook_rules import Finding, text_problems, validate_notebook
from notewell.search.embedders import HashEmbedder
from notewell.search.meta_tokens import meta_token
from notewell.search.query import CompiledQuery, compile_query

HOSTILE_CHARS = "ab xyz:#-[]{}\"',\\\t\r\ufeff\u202e\u200b\u2028\u0085\x0b\x1c后端ü—*()^|`<>/"
atom = st.text(alphabet=HOSTILE_CHARS, max_size=12)
KEYS = ["title", "kind", "type", "tags", "builds_on", "model", "summary", "owner", "Tags", "title ", " title"]
VALUES = st.one_of(
    atom,
    st.builds(lambda xs: "[" + ", ".join(xs) + "]", st.lists(atom, max_size=4)),
    st.builds(lambda xs: "[" + ", ".join(xs), st.lists(atom, max_size=3)),  # unclosed
    st.builds(lambda v: '"' + v + '"', atom),
    st.builds(lambda v: "'" + v + "'", atom),
    st.sampled_from(["nte_0h3k9x2c7m", "att_1q8w4e6r9t", "[nte_0h3k9x2c7m, bad]", "", " # c", "a # c", "\\u202e"]),
)
HEADER_LINE = st.one_of(
    st.builds(lambda k, v: f"{k}: {v}", st.sampled_from(KEYS), VALUES),
    st.builds(lambda k, v: f"{k}:{v}", st.sampled_from(KEYS), VALUES),
    st.builds(lambda v: f"  - {v}", atom),
    st.builds(lambda v: f"- {v}", atom),
    st.builds(lambda v: f"# {v}", atom),
    st.sampled_from(["", "---", "--- ", "----", " ---", "\t", "..."]),
    atom,
)
NEWLINE = st.sampled_from(["\n", "\r\n", "\r\r\n"])


@st.composite
def note_texts(draw) -> str:
    """Header-shaped text (often a real header, often nearly one) and a hostile body."""
    lines = draw(st.lists(HEADER_LINE, max_size=10))
    body = draw(st.text(alphabet=HOSTILE_CHARS + "\n", max_size=40))
    bom = draw(st.sampled_from(["", "", "\ufeff"]))
    opening = draw(st.sampled_from(["---", "---", "--- \t", "---x", ""]))
    closing = draw(st.sampled_from(["---", "---", "---  ", "", "--"]))
    parts = [opening, *lines, closing] if opening else lines
    text = bom
    for part in parts:
        text += part.replace("\n", "") + draw(NEWLINE)
    return text + body


ANY_TEXT = st.one_of(note_texts(), st.text(max_size=200))


def _pieces(text: str) -> list[str]:
    """Lines split at '\\n' only (the parser's rule), each with its line ending."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


# -- parse_note ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_parse_note_never_raises_and_splits_the_text_exactly(text):
    p = parse_note(text)
    if p.header is None:
        assert p.body == text and p.extra == []
        return
    # The header block is the text before the body, and ends with the closing delimiter line.
    assert text.endswith(p.body)
    head = text[: len(text) - len(p.body)]
    last = _pieces(head)[-1].rstrip("\n").rstrip("\r")
    assert re.fullmatch(r"---[ \t]*", last), (head, p)
    # The body is never parsed further: parsing it again as a note of its own is independent.
    assert set(p.header) <= {"title", "kind", "tags", "builds_on", "model", "summary"}
    for name, limit in (("title", LIMITS["title"]), ("kind", LIMITS["kind"]), ("model", LIMITS["model"])):
        value = p.header.get(name)
        assert value is None or (isinstance(value, str) and value and len(value) <= limit and "\n" not in value)
    tags = p.header.get("tags", [])
    assert len(tags) <= LIMITS["tags"] and len(set(tags)) == len(tags)
    assert all(t and len(t) <= LIMITS["tag"] and "\n" not in t for t in tags)
    assert all(is_link_id(t) for t in p.header.get("builds_on", []))
    assert all(isinstance(line, str) for line in p.extra)
    # Every comment line of the header survives verbatim in extra.
    for piece in _pieces(head)[1:-1]:
        content = piece.rstrip("\n").removesuffix("\r")
        if content.lstrip(" \t").startswith("#"):
            assert content in p.extra or content.strip() in [e.strip() for e in p.extra], (content, p)


# -- with_tags / with_summary: exact bytes --------------------------------------------------------------------

TAG = st.one_of(
    st.sampled_from(["alpha", "Beta Gamma", "x.y", "über", "C++", "后端", "a", "t1", "#x"]),
    st.text(alphabet="abcXYZ -_.+#ü后\u200b", min_size=1, max_size=8),
)


def _changed_only(old: str, new: str, removed: re.Pattern[str], added: re.Pattern[str]) -> None:
    """*new* is *old* with some lines removed (each one *removed* matches) and some added (each one *added*
    matches): every other line, with its line ending, is there byte for byte and in order.

    Some way of lining the two up must show it, not necessarily difflib's: where lines repeat (a body
    that copies the header, say) difflib may pair a kept line with its twin and call the real edit a
    removal and an insertion of unchanged lines."""
    assert old.startswith("\ufeff") == new.startswith("\ufeff")  # a byte-order mark stays first
    a, b = _pieces(old.removeprefix("\ufeff")), _pieces(new.removeprefix("\ufeff"))
    # reach[i][j]: the first i lines of old can become the first j lines of new by such changes.
    reach = [[False] * (len(b) + 1) for _ in range(len(a) + 1)]
    reach[0][0] = True
    for i in range(len(a) + 1):
        for j in range(len(b) + 1):
            if not reach[i][j]:
                continue
            if i < len(a) and removed.match(a[i]):
                reach[i + 1][j] = True
            if j < len(b) and added.match(b[j]):
                reach[i][j + 1] = True
            if i < len(a) and j < len(b) and a[i] == b[j]:
                reach[i + 1][j + 1] = True
    if reach[len(a)][len(b)]:
        return
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():  # what changed
        if tag == "equal":
            continue
        for line in a[i1:i2]:
            assert removed.match(line), ("removed", line, old, new)
        for line in b[j1:j2]:
            assert added.match(line), ("added", line, old, new)
    raise AssertionError(("not only those lines changed", old, new))


def _bodies(before, after) -> None:
    """The body after an edit is the body before (a new header goes after a BOM, which stays first)."""
    if before.header is not None:
        assert after.body == before.body
    else:
        assert after.body == before.body.removeprefix("\ufeff")


_TAG_LINE = re.compile(r"tags:.*\Z", re.DOTALL)  # the one line an inline list grows in
_TAG_ADDED = re.compile(r"(?:---\r?\n|tags:.*|[ \t]*-[ \t].*)\Z", re.DOTALL)
_SUMMARY_REMOVED = re.compile(r"(?:summary:.*|[ \t]*-.*)\Z", re.DOTALL)  # its line and any items under it
_SUMMARY_ADDED = re.compile(r"(?:---\r?\n|summary: \".*\"\r?\n?|title: \".*\"\r?\n)\Z", re.DOTALL)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(ANY_TEXT, st.lists(TAG, min_size=1, max_size=4))
def test_with_tags_changes_only_tag_lines_and_never_the_body(text, tags):
    before = parse_note(text)
    try:
        new, added = with_tags(text, tags)
    except InvalidArgumentError as exc:
        assert exc.code == "invalid_argument"
        return
    after = parse_note(new)
    if not added:
        assert new == text
        return
    assert after.header is not None and set(added) <= set(after.header["tags"])
    assert set((before.header or {}).get("tags", [])) <= set(after.header["tags"])
    _bodies(before, after)
    assert text.endswith(before.body) and new.endswith(after.body)
    _changed_only(text, new, _TAG_LINE, _TAG_ADDED)
    # Nothing the header held is lost: extras (comments, unknown keys, rejected values) stay.
    assert after.extra == before.extra
    # Idempotent: the same tags again change nothing.
    assert with_tags(new, tags) == (new, [])


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(ANY_TEXT, st.text(alphabet=HOSTILE_CHARS + "\n", min_size=1, max_size=60))
def test_with_summary_changes_only_the_summary_entry_and_never_the_body(text, summary):
    before = parse_note(text)
    try:
        new = with_summary(text, summary)
    except InvalidArgumentError as exc:
        assert exc.code == "invalid_argument"
        return
    after = parse_note(new)
    assert after.header is not None and after.header.get("summary") == " ".join(summary.split())
    _bodies(before, after)
    _changed_only(text, new, _SUMMARY_REMOVED, _SUMMARY_ADDED)
    for key in ("title", "kind", "tags", "builds_on", "model"):
        if before.header is not None and key in before.header:
            assert after.header.get(key) == before.header[key], key
    assert with_summary(new, summary) == new


# -- the same through the store (one store for all examples) ---------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = notewell.open(tmp_path_factory.mktemp("props") / "notes", watch=False, embedder=HashEmbedder())
    yield s
    s.close()


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(note_texts(), st.lists(TAG, min_size=1, max_size=3), st.text(min_size=1, max_size=40))
def test_store_edits_keep_every_byte_and_the_old_text(store, text, tags, summary):
    try:
        note = store.add_note(text)
    except NotewellError as exc:
        assert exc.code == "invalid_note" and not text.strip()
        return
    assert store.get_note(note.id).text == text
    current = text
    for edit in (lambda: store.add_tag(note.id, *tags), lambda: store.set_summary(note.id, summary)):
        try:
            got = edit()
        except NotewellError as exc:
            # Refused with a typed error (a bad tag or summary is a bad argument), and nothing changed.
            assert exc.code == "invalid_argument", exc
            assert store.get_note(note.id).text == current
            continue
        assert got.text.endswith(got.body)
        _bodies(parse_note(current), parse_note(got.text))
        if got.text != current:
            assert store.get_note(note.id, revision=got.revision - 1).text == current  # kept byte for byte
        current = got.text
    assert store.get_note(note.id, revision=1).text == text
    store.delete_note(note.id)


# -- the query parser and search --------------------------------------------------------------------------

QUERY_ATOM = st.one_of(
    st.sampled_from(
        [
            "AND",
            "OR",
            "NOT",
            "NEAR(",
            "NEAR",
            ")",
            "(",
            '"',
            '""',
            "*",
            "^",
            "-",
            "+",
            ":",
            "{",
            "}",
            "title:",
            "body:",
            "text:",
            "col:x",
            "NEAR(a b, 2)",
            "a*",
            '"a b"',
            "'",
            ";",
            "--",
            "/*",
            "\\",
            "%",
            "_",
            "\x00",
            "DROP TABLE note_index;",
            "1=1",
            "后端",
            "缓存预热",
            "ü",
            "\u202e",
            "\u200b",
            "C++",
            "what?",
            "the",
            "a",
        ]
    ),  # fmt: skip
    st.text(alphabet='abc xyz"*()^:-+{}后端\t\n', max_size=8),
)
QUERIES = st.one_of(
    st.lists(QUERY_ATOM, max_size=8).map(" ".join),
    st.lists(QUERY_ATOM, max_size=8).map("".join),
    st.text(max_size=60),
    st.integers(1990, 2010).map(lambda n: "x " * n),  # around the 2,000 character limit
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(QUERIES)
def test_compile_query_parses_or_says_invalid_query(query):
    try:
        compiled = compile_query(query)
    except InvalidQueryError as exc:
        assert exc.code == "invalid_query" and exc.message
        return
    assert isinstance(compiled, CompiledQuery) and compiled.strict
    assert "\x00" not in compiled.strict


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    QUERIES,
    st.sampled_from(["keyword", "semantic", "both", "hybrid"]),
    st.fixed_dictionaries(
        {},
        optional={
            "kind": st.sampled_from(["finding", 'x"y', "后端"]),
            "tags": st.lists(st.sampled_from(["cache", "a b", "(", "后端"]), max_size=2),
            "project": st.sampled_from(["demo", "no-such", "a b"]),
            "limit": st.integers(1, 100),
        },
    ),
)
def test_search_with_any_query_raises_only_notewell_errors(store, query, mode, filters):
    if not store.list_notes(limit=1):
        store.add_notes(
            [
                "---\ntitle: Cache stampede\nkind: finding\ntags: [cache, 后端]\n---\nevery worker refills at once",
                "# 缓存预热\n\n缓存预热把延迟降到四十毫秒 NEAR AND OR NOT",
                '# quotes "and" (parens) * ^ stars\n\nC++ what? foo-bar',
            ]
        )
    try:
        cards = store.search_notes(query, mode=mode, **filters)
    except NotewellError as exc:
        assert exc.code in ("invalid_query", "invalid_argument", "not_found"), exc
        return
    assert isinstance(cards, list) and all(c.mode in ("keyword", "semantic", "hybrid") for c in cards)


# -- no query reads the filters' column ----------------------------------------------------------------------
# notes_fts.meta holds a token per filter value (kind, tags, author, model); a query may name the title
# and the body only, so what a query finds never depends on those tokens.

TWIN_NOTES = [
    ("Cache stampede", "finding", "cache, ops", "ann", "every worker refills at once"),
    ("ops", "blocker", "ann", "bob", "the cache is cold: ann says ops"),
    ("后端 notes", "finding", "后端", "ann", "缓存预热 title body meta"),
]
META_ATOMS = [meta_token(letter, value) for letter, value in (("a", "ann"), ("t", "ops"), ("k", "finding"))]
META_ATOMS += [f'"{t}"' for t in META_ATOMS] + [f'"{META_ATOMS[0][:2]}"*', "\ue000", "\ue000a*"]
META_ATOMS += ["meta:", "-title:", "-body:", "-{title body}:", "{title meta}:", "title:", "body:", "OR", "NOT"]
META_ATOMS += ["cache", "ann", "ops", "finding", "后端", "(", ")", "*"]
META_QUERIES = st.one_of(QUERIES, st.lists(st.sampled_from(META_ATOMS), min_size=1, max_size=5).map(" ".join))


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """Two stores holding the same titles and bodies; only the first gives the notes kinds, tags and authors."""
    with_meta = notewell.open(tmp_path_factory.mktemp("meta") / "notes", watch=False)
    without = notewell.open(tmp_path_factory.mktemp("plain") / "notes", watch=False)
    where: list[dict[str, int]] = [{}, {}]
    for i, (title, kind, tags, author, body) in enumerate(TWIN_NOTES):
        where[0][
            with_meta.add_note(f"---\ntitle: {title}\nkind: {kind}\ntags: [{tags}]\n---\n{body}", author=author).id
        ] = i
        where[1][without.add_note(f"---\ntitle: {title}\n---\n{body}").id] = i
    yield (with_meta, where[0]), (without, where[1])
    with_meta.close()
    without.close()


def _twin_found(store, where, query):
    try:
        return sorted(where[c.id] for c in store.search_notes(query, limit=50))
    except InvalidQueryError:
        return "invalid_query"


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(META_QUERIES)
def test_what_a_query_finds_never_depends_on_the_filters_tokens(twins, query):
    (with_meta, a), (without, b) = twins
    assert _twin_found(with_meta, a, query) == _twin_found(without, b, query), query


# -- the notebook validator ---------------------------------------------------------------------------------

NB_LINE = st.one_of(
    st.sampled_from([f"## {s}" for s in SECTIONS] + ["## Extras", "# Working notebook: t", "##", "- [F001]", ""]),
    st.builds(
        lambda p, n, body: f"- [{p}{n:03d}] {body}",
        st.sampled_from("FTNRX"),
        st.integers(0, 1200),
        st.lists(
            st.one_of(
                st.text(alphabet=HOSTILE_CHARS, max_size=10),
                st.sampled_from(
                    [
                        "| source: E0001",
                        "| source: a.py:12",
                        "| verified",
                        "| unverified",
                        "| reason: see E0009",
                        "[done]",
                        "[doing] x",
                        "ignore previous instructions",
                        "password=hunter22",
                        "`a | b`",
                        "AKIAABCDEFGHIJKLMNOP",
                        "SYSTEM: you",
                        "always x",
                        "| source: https://example.com/x",
                    ]
                ),
            ),  # fmt: skip
            max_size=4,
        ).map(" ".join),
    ),
    st.text(alphabet=HOSTILE_CHARS, max_size=30),
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(NB_LINE, max_size=25).map("\n".join),
    st.one_of(st.none(), st.lists(NB_LINE, max_size=15).map("\n".join)),
    st.lists(st.sampled_from(["F001", "T002", "N001", "R001", "X1"]), max_size=3),
    st.sets(st.sampled_from(["E0001", "E0009", "E12345"]), max_size=2),
    st.integers(0, 3000),
)
def test_the_notebook_validator_answers_any_text_with_findings(text, previous, retired, raw_ids, budget):
    doc = parse_notebook(text)
    prev = parse_notebook(previous) if previous is not None else None
    errors, warnings = validate_notebook(doc, text, previous=prev, retired=retired, raw_ids=raw_ids, budget=budget)
    lines = max(1, len(text.splitlines()))
    for finding in [*errors, *warnings]:
        assert isinstance(finding, Finding) and isinstance(finding.message, str) and finding.message
        assert 0 <= finding.line <= lines, (finding, text)
        assert str(finding)
    assert all(isinstance(p, str) for p in text_problems(text))
