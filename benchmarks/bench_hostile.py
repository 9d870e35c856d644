"""Hostile inputs within notewell's own limits, timed: every parser, query compiler and renderer.

Each case builds the worst input of its kind that notewell accepts (a note under the 1 MiB
limit, a query under MAX_QUERY_CHARS, a body under the web page's RENDER_MAX, ...) at two or
more sizes, and times the function that reads it (best of a few runs). Every measurement runs
in its own process with a timeout and a memory cap, so a pathological case is reported as
``>60 s`` instead of hanging the script or the machine. The table gives, per size, the input's
bytes, the best time, and the growth against the previous size: ``exp`` is the exponent k in
time ~ size**k (1 linear, 2 quadratic). A case is flagged when it grows worse than linear
(3x the time or more for 2x the size, exp > 1.58) or when it is over its budget (0.1 s for a
parser or a compiler, 1 s for a search, a render or a store write).

    python benchmarks/bench_hostile.py --quick          # small sizes, about two minutes
    python benchmarks/bench_hostile.py                  # full sizes (up to the limits)
    python benchmarks/bench_hostile.py --only search.   # cases whose name contains a string
    python benchmarks/bench_hostile.py --list
    python benchmarks/bench_hostile.py --profile header.builds_on_inline 25000
    python benchmarks/bench_hostile.py --src /path/to/other/src   # time another checkout's code

Scratch stores go under /tmp/hostile_scratch (--scratch). Only the standard library and
notewell's own dependencies are used; render cases need the 'server' extra (markdown-it-py).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

SCRATCH = "/tmp/hostile_scratch"
NOTE_LIMIT = 1024 * 1024  # notewell.model.note.DEFAULT_MAX_BYTES
QUERY_LIMIT = 2000  # notewell.search.query.MAX_QUERY_CHARS
RENDER_LIMIT = 200_000  # notewell.interfaces.http.web.render.RENDER_MAX
BUDGETS = {"parse": 0.1, "search": 1.0, "render": 1.0, "store": 1.0}
WORSE_THAN_LINEAR = math.log2(3)  # 3x the time for 2x the size

# -- cases -----------------------------------------------------------------------------------------


@dataclass
class Bench:
    """What a case built at one size: the call to time, the input's size, and optional hooks."""

    fn: Callable[[], object]
    nbytes: int
    prep: Callable[[], None] | None = None  # before every run, untimed
    cleanup: Callable[[], None] | None = None
    detail: str = ""
    describe: Callable[[object], str] | None = None  # a note on the first run's answer


@dataclass
class Case:
    name: str
    kind: str  # a key of BUDGETS
    build: Callable[[int], Bench]
    full: tuple[int, ...]
    quick: tuple[int, ...]
    unit: str
    about: str = ""


CASES: dict[str, Case] = {}


def case(name: str, kind: str, full: tuple[int, ...], quick: tuple[int, ...], unit: str, about: str = ""):
    def register(build: Callable[[int], Bench]) -> Callable[[int], Bench]:
        CASES[name] = Case(name, kind, build, full, quick, unit, about)
        return build

    return register


def _b(text: str) -> int:
    return len(text.encode("utf-8"))


_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def _ids(n: int, prefix: str = "nte_", seed: int = 1) -> list[str]:
    r = random.Random(seed)
    return [prefix + "".join(r.choice(_ALPHABET) for _ in range(10)) for _ in range(n)]


def _note_bench(text: str, detail: str = "") -> Bench:
    """What a write does with *text* before it is stored: check it (a header past HEADER_MAX
    is refused there), then parse it."""
    from notewell.errors import InvalidNoteError
    from notewell.model.header import oversized_header, parse_note
    from notewell.model.note import check_text

    if _b(text) > NOTE_LIMIT:
        raise ValueError(f"input is {_b(text)} bytes, over the note limit: pick a smaller size")

    def read() -> object:
        try:
            check_text(text)
        except InvalidNoteError:
            return None
        return parse_note(text)

    if oversized_header(text) is not None:
        detail = (detail + "; " if detail else "") + "refused: header over HEADER_MAX (a write's check)"
    return Bench(read, _b(text), detail=detail)


def _header(lines: list[str] | str, body: str = "body\n") -> str:
    block = lines if isinstance(lines, str) else "\n".join(lines)
    return "---\ntitle: hostile\n" + block + "\n---\n" + body


# Header parser (notewell.model.header.parse_note)


@case("header.builds_on_inline", "parse", (2_047, 4_094, 50_000), (2000, 4000), "ids",
      "builds_on: [nte_…, …] with n distinct ids")  # fmt: skip
def _(n: int) -> Bench:
    return _note_bench(_header("builds_on: [" + ", ".join(_ids(n)) + "]"))


@case("header.builds_on_block", "parse", (1_723, 3_447, 50_000), (2000, 4000), "lines",
      "builds_on: then n '- nte_…' lines")  # fmt: skip
def _(n: int) -> Bench:
    return _note_bench(_header(["builds_on:", *("  - " + i for i in _ids(n))]))


@case("header.builds_on_repeated", "parse", (2_047, 4_094, 50_000), (4000, 8000), "ids", "one id n times")
def _(n: int) -> Bench:
    return _note_bench(_header("builds_on: [" + ", ".join(["nte_0h3k9x2c7m"] * n) + "]"))


@case("header.builds_on_not_ids", "parse", (4_758, 9_516, 100_000), (8000, 16000), "values", "n values that are no ids")
def _(n: int) -> Bench:
    return _note_bench(_header("builds_on: [" + ", ".join(f"x{i}" for i in range(n)) + "]"))


@case("header.builds_on_many_keys", "parse", (1_259, 2_519, 38_000), (2000, 4000), "lines",
      "n separate 'builds_on: nte_…' lines")  # fmt: skip
def _(n: int) -> Bench:
    return _note_bench(_header(["builds_on: " + i for i in _ids(n)]))


@case("header.tags_inline", "parse", (4_758, 9_517, 100_000), (8000, 16000), "tags", "tags: [t0, t1, …] (n distinct)")
def _(n: int) -> Bench:
    return _note_bench(_header("tags: [" + ", ".join(f"t{i}" for i in range(n)) + "]"))


@case("header.tags_block_unicode", "parse", (2_562, 5_124, 50_000), (4000, 8000), "lines",
      "tags: then n '- Ünï…' lines (the Unicode slug path)")  # fmt: skip
def _(n: int) -> Bench:
    return _note_bench(_header(["tags:", *(f"  - Ünï {i}" for i in range(n))]))


@case("header.tags_same_slug", "parse", (3_994, 7_989, 80_000), (8000, 16000), "tags",
      "n spellings of one slug (A, a, ' a', …)")  # fmt: skip
def _(n: int) -> Bench:
    spell = ["Cache", "cache", "CACHE", "cAche", " cache"]
    return _note_bench(_header("tags: [" + ", ".join(spell[i % 5] + "-" * (i // 5 % 3) for i in range(n)) + "]"))


@case("header.long_tag", "parse", (32_754, 65_508, 500_000), (50_000, 100_000), "chars",
      "one tag of n non-ASCII characters (not slugged past 8 × 40)")  # fmt: skip
def _(n: int) -> Bench:
    return _note_bench(_header("tags: [" + "é" * n + "]"))


@case("header.long_kind", "parse", (32_755, 65_510, 500_000), (50_000, 100_000), "chars", "kind: of n non-ASCII chars")
def _(n: int) -> Bench:
    return _note_bench(_header("kind: " + "ü a" * (n // 3)))


@case("header.many_keys", "parse", (3_701, 7_403, 80_000), (8000, 16000), "lines", "n unknown 'kN: v' lines")
def _(n: int) -> Bench:
    return _note_bench(_header([f"k{i}: v" for i in range(n)]))


@case("header.repeated_title", "parse", (2_562, 5_125, 70_000), (8000, 16000), "lines", "n distinct 'title:' lines")
def _(n: int) -> Bench:
    return _note_bench(_header([f"title: t{i}" for i in range(n)]))


@case("header.comments", "parse", (3_639, 7_279, 80_000), (8000, 16000), "lines",
      "n lines alternating '# c' and 'tags: [a] # c'")  # fmt: skip
def _(n: int) -> Bench:
    return _note_bench(_header(["# c" if i % 2 else "tags: [a] # c" for i in range(n)]))


@case("header.long_quoted_escapes", "parse", (38_212, 76_425, 500_000), (50_000, 100_000), "chars",
      'title: "\\u0041\\x41\\t…" (escapes scanned char by char)')  # fmt: skip
def _(n: int) -> Bench:
    return _note_bench(_header('summary: "' + "\\u0041\\x41\\t" * (n // 14) + '"'))


@case("header.blank_run_value", "parse", (32_753, 65_507, 500_000), (50_000, 100_000), "chars",
      "title: <n blanks> x (the 23 s regex of old)")  # fmt: skip
def _(n: int) -> Bench:
    return _note_bench(_header("summary:" + " \t" * (n // 2) + "x"))


@case(
    "header.hash_run_value",
    "parse",
    (32_753, 65_507, 500_000),
    (50_000, 100_000),
    "chars",
    "summary: a #a #a … (comments)",
)
def _(n: int) -> Bench:
    return _note_bench(_header("summary: " + "a #" * (n // 3)))


@case("header.unclosed_inline_list", "parse", (10_918, 21_836, 200_000), (20_000, 40_000), "items",
      "tags: [a, a, … (never closed)")  # fmt: skip
def _(n: int) -> Bench:
    return _note_bench(_header("tags: [" + "a, " * n))


@case("header.quoted_inline_list", "parse", (4_094, 8_188, 100_000), (10000, 20000), "items",
      'tags: ["a\\"b", \'c\'\'d\', …]')  # fmt: skip
def _(n: int) -> Bench:
    return _note_bench(_header("tags: [" + ", ".join('"a\\"b"' if i % 2 else "'c''d'" for i in range(n)) + "]"))


@case("header.nested_brackets", "parse", (32_755, 65_511, 500_000), (50_000, 100_000), "chars", "tags: [[[[…]]]]")
def _(n: int) -> Bench:
    return _note_bench(_header("tags: " + "[" * (n // 2) + "]" * (n // 2)))


@case("header.odd_yaml", "parse", (2_482, 4_964, 50_000), (5000, 10000), "lines",
      "YAML-ish shapes: nested '- - x', flow maps, anchors (the header is refused at once)")  # fmt: skip
def _(n: int) -> Bench:
    shapes = ["tags:", "  - - x", "  - {a: [b, {c: d}]}", "  - &a *a", "  -  - [x, [y, [z]]]"]
    return _note_bench(_header([shapes[i % 5] for i in range(n)]))


@case("header.never_closes", "parse", (50000, 100000), (10000, 20000), "lines",
      "'---' then n 'k: v' lines and no closing '---'")  # fmt: skip
def _(n: int) -> Bench:
    return _note_bench("---\ntitle: x\n" + "k: v\n" * n)


@case("header.long_line_no_header", "parse", (500_000, 1_000_000), (100_000, 200_000), "chars",
      "'---' + one line of n characters")  # fmt: skip
def _(n: int) -> Bench:
    return _note_bench("---\n" + "a" * (n - 10) + "\n---\n")


# Titles from the body (notewell.model.note.derive_title: runs on every add, edit and reindex)


def _title_bench(body: str) -> Bench:
    from notewell.model.header import parse_note
    from notewell.model.note import derive_title

    parsed = parse_note(body)
    return Bench(lambda: derive_title(parsed, "x.md"), _b(body))


@case("title.heading_blank_run", "parse", (10000, 20000, 40000), (2000, 4000), "blanks",
      "body '# a<n blanks>b' (first heading becomes the title)")  # fmt: skip
def _(n: int) -> Bench:
    return _title_bench("# a" + " " * n + "b\n")


@case("title.heading_tab_run", "parse", (10000, 20000), (2000, 4000), "blanks", "body '# a<n tabs/spaces>b #'")
def _(n: int) -> Bench:
    return _title_bench("# a" + " \t" * (n // 2) + "b #\n")


@case("title.many_fences", "parse", (100_000, 200_000), (20_000, 40_000), "lines", "n '```' / '~~~' lines")
def _(n: int) -> Bench:
    return _title_bench("".join("```\n" if i % 3 else "~~~~\n" for i in range(n)))


@case("title.many_heading_like", "parse", (100_000, 200_000), (20_000, 40_000), "lines",
      "n lines '#a  ' (not headings: no blank after #)")  # fmt: skip
def _(n: int) -> Bench:
    return _title_bench("#a  \n" * n)


# Header edits (notewell.model.header_edit) and the store calls that use them


@case("edit.with_tags_many", "parse", (10000, 20000), (2000, 4000), "tags",
      "with_tags(note, n distinct tags): refused past 20, after the dedupe")  # fmt: skip
def _(n: int) -> Bench:
    from notewell.model.header_edit import with_tags

    tags = [f"tag{i}" for i in range(n)]

    run = _refusal(lambda: with_tags("x", tags))
    return Bench(run, sum(map(_b, tags)), describe=_answer)


@case("edit.with_tags_big_header", "parse", (6000, 12500, 25000), (2000, 4000), "ids",
      "with_tags(note with n builds_on ids, ['new'])")  # fmt: skip
def _(n: int) -> Bench:
    from notewell.model.header_edit import with_tags

    text = _header("builds_on: [" + ", ".join(_ids(n)) + "]")
    return Bench(lambda: with_tags(text, ["new"]), _b(text))


@case("edit.with_summary_big_header", "parse", (6000, 12500, 25000), (2000, 4000), "ids",
      "with_summary(note with n builds_on ids, 's')")  # fmt: skip
def _(n: int) -> Bench:
    from notewell.model.header_edit import with_summary

    text = _header("builds_on: [" + ", ".join(_ids(n)) + "]")
    return Bench(lambda: with_summary(text, "s"), _b(text))


class _Scratch:
    """A store in a fresh folder under the scratch directory."""

    def __init__(self) -> None:
        import notewell

        self.dir = tempfile.mkdtemp(prefix="store-", dir=os.environ.get("HOSTILE_SCRATCH", SCRATCH))
        self.store = notewell.open(self.dir, embedder=None)

    def close(self) -> None:
        try:
            self.store.close()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def _store_bench(make: Callable[[_Scratch], Bench]) -> Bench:
    s = _Scratch()
    bench = make(s)
    bench.cleanup = s.close
    return bench


def _answer(got: object) -> str:
    return f"answer: {got!r:.100}"


def _cards(got: object) -> str:
    return f"{len(got)} cards" if isinstance(got, list) else _answer(got)


def _refusal(call: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        try:
            return call()
        except Exception as exc:  # a refusal is an answer: what it cost is the measurement
            return exc

    return run


@case("store.add_tag_many", "store", (10000, 20000), (2000, 4000), "tags",
      "Store.add_tag(id, *n distinct tags): refused past 20")  # fmt: skip
def _(n: int) -> Bench:
    def make(s: _Scratch) -> Bench:
        note = s.store.add_note("---\ntitle: a\n---\nbody\n")
        tags = [f"tag{i}" for i in range(n)]
        run = _refusal(lambda: s.store.add_tag(note.id, *tags))
        return Bench(run, sum(map(_b, tags)), describe=_answer)

    return _store_bench(make)


@case("store.add_tag_big_header", "store", (6000, 12500, 25000), (2000, 4000), "ids",
      "Store.add_tag on a note with n builds_on ids")  # fmt: skip
def _(n: int) -> Bench:
    def make(s: _Scratch) -> Bench:
        text = _header("builds_on: [" + ", ".join(_ids(n)) + "]")
        note = s.store.add_note(text)
        tags = iter(range(10**9))
        return Bench(lambda: s.store.add_tag(note.id, f"t{next(tags) % 15}"), _b(text))

    return _store_bench(make)


@case("store.add_note_builds_on", "store", (6000, 12500, 25000, 50000), (2000, 4000), "ids",
      "Store.add_note with n builds_on ids (none of them notes)")  # fmt: skip
def _(n: int) -> Bench:
    def make(s: _Scratch) -> Bench:
        text = _header("builds_on: [" + ", ".join(_ids(n)) + "]")
        return Bench(lambda: s.store.add_note(text), _b(text))

    return _store_bench(make)


@case("store.add_note_heading_blanks", "store", (10000, 20000, 40000), (2000, 4000), "blanks",
      "Store.add_note of '# a<n blanks>b' (the title regex)")  # fmt: skip
def _(n: int) -> Bench:
    def make(s: _Scratch) -> Bench:
        text = "# a" + " " * n + "b\nbody\n"
        return Bench(lambda: s.store.add_note(text), _b(text))

    return _store_bench(make)


@case("store.add_note_cjk_body", "store", (170_000, 340_000), (40_000, 80_000), "chars",
      "Store.add_note of n CJK characters (segmented for the index)")  # fmt: skip
def _(n: int) -> Bench:
    def make(s: _Scratch) -> Bench:
        r = random.Random(3)
        text = "# cjk\n" + "".join(chr(0x4E00 + r.randrange(3000)) for _ in range(n))
        return Bench(lambda: s.store.add_note(text), _b(text))

    return _store_bench(make)


@case("store.add_note_distinct_words", "store", (60000, 120000), (15000, 30000), "words",
      "Store.add_note of n distinct words")  # fmt: skip
def _(n: int) -> Bench:
    def make(s: _Scratch) -> Bench:
        text = "# words\n" + " ".join(f"w{i:x}" for i in range(n))
        return Bench(lambda: s.store.add_note(text), _b(text))

    return _store_bench(make)


@case("store.edit_note_builds_on", "store", (6000, 12500, 25000), (2000, 4000), "ids",
      "Store.edit_note to a text with n builds_on ids")  # fmt: skip
def _(n: int) -> Bench:
    def make(s: _Scratch) -> Bench:
        note = s.store.add_note("# a\nbody\n")
        texts = [_header("builds_on: [" + ", ".join(_ids(n, seed=k)) + "]") for k in range(2)]
        flip = iter(range(10**9))
        return Bench(lambda: s.store.edit_note(note.id, texts[next(flip) % 2]), _b(texts[0]))

    return _store_bench(make)


@case("store.links_fanout", "store", (6000, 12500, 25000), (2000, 4000), "ids",
      "Store.links(id) of a note with n builds_on ids")  # fmt: skip
def _(n: int) -> Bench:
    def make(s: _Scratch) -> Bench:
        text = _header("builds_on: [" + ", ".join(_ids(n)) + "]")
        note = s.store.add_note(text)
        return Bench(lambda: s.store.links(note.id, depth=10), _b(text))

    return _store_bench(make)


# Keyword search: a store of 300 notes sharing a vocabulary (every word starts with k)

_VOCAB_SEED = 0


def _vocab() -> list[str]:
    r = random.Random(_VOCAB_SEED)
    return sorted({"k" + "".join(r.choice("abcdefgh") for _ in range(4)) for _ in range(2600)})[:2000]


def _search_store(notes: int = 300, cjk: bool = False) -> _Scratch:
    s = _Scratch()
    r = random.Random(1)
    if cjk:
        chars = [chr(0x4E00 + i) for i in range(500)]
        texts = ["# " + "".join(r.choices(chars, k=6)) + "\n" + "".join(r.choices(chars, k=300)) for _ in range(notes)]
    else:
        vocab = _vocab()
        texts = [
            "---\ntitle: " + " ".join(r.sample(vocab, 3)) + "\n---\n" + " ".join(r.choices(vocab, k=300))
            for _ in range(notes)
        ]
    s.store.add_notes(texts)
    return s


def _search_bench(query: str, cjk: bool = False) -> Bench:
    if len(query) > QUERY_LIMIT:
        raise ValueError(f"query is {len(query)} characters, over the limit: pick a smaller size")
    s = _search_store(cjk=cjk)
    run = _refusal(lambda: s.store.search_notes(query, limit=10))
    return Bench(run, _b(query), cleanup=s.close, describe=_cards)


@case("search.kstar_same", "search", (83, 166, 333, 666), (20, 40), "terms",
      "n x 'k*' (every word of 300 notes matches each)")  # fmt: skip
def _(n: int) -> Bench:
    return _search_bench(" ".join(["k*"] * n))


@case("search.kstar_store_size", "search", (150, 300, 600), (75, 150), "notes",
      "40 x 'k*' on a store of n notes (300 words each)")  # fmt: skip
def _(n: int) -> Bench:
    s = _search_store(notes=n)
    query = " ".join(["k*"] * 40)
    return Bench(_refusal(lambda: s.store.search_notes(query, limit=10)), _b(query), cleanup=s.close, describe=_cards)


@case("search.prefix_distinct_or", "search", (55, 110, 220), (15, 30), "terms",
      "n distinct prefixes 'kab* OR kac* OR …'")  # fmt: skip
def _(n: int) -> Bench:
    prefixes = ["k" + a + b + c for a in "abcdefgh" for b in "abcdefgh" for c in "abcdefgh"]
    return _search_bench(" OR ".join(p + "*" for p in prefixes[:n]))


@case("search.filters_many", "search", (50, 100), (25, 50), "values",
      "a search with n tags (all) and n kinds as filters")  # fmt: skip
def _(n: int) -> Bench:
    s = _search_store()
    tags = [f"tag-{i}" for i in range(n)]
    run = _refusal(lambda: s.store.search_notes("k*", limit=10, tags=tags, tag_mode="all", kind=tags))
    return Bench(run, sum(map(_b, tags)) * 2, cleanup=s.close)


@case("search.words_distinct", "search", (83, 166, 333), (20, 40), "words",
      "n distinct vocabulary words, plain (the loose pass ORs them)")  # fmt: skip
def _(n: int) -> Bench:
    return _search_bench(" ".join(_vocab()[:n]))


@case("search.one_letter_words", "search", (250, 500, 999), (250, 500), "words",
      "n one-letter words 'b c d …' (the longest AND a query can hold)")  # fmt: skip
def _(n: int) -> Bench:
    return _search_bench(" ".join("bcdefgh"[i % 7] for i in range(n)))


@case("search.or_words", "search", (50, 100, 200), (15, 30), "terms", "'w1 OR w2 OR …' (FTS5 syntax)")
def _(n: int) -> Bench:
    return _search_bench(" OR ".join(_vocab()[:n]))


@case("search.quoted_phrases_or", "search", (30, 60, 110), (10, 20), "phrases", '\'"w1 w2" OR "w3 w4" …\'')
def _(n: int) -> Bench:
    v = _vocab()
    return _search_bench(" OR ".join(f'"{v[2 * i]} {v[2 * i + 1]}"' for i in range(n)))


@case("search.near_kstar", "search", (40, 83, 166), (20, 40), "terms", "'NEAR(k* k* …, 300)'")
def _(n: int) -> Bench:
    return _search_bench("NEAR(" + " ".join(["k*"] * n) + ", 300)")


@case("search.phrase_chain_kstar", "search", (100, 200, 399), (25, 50), "terms", "'k* + k* + …' (one phrase)")
def _(n: int) -> Bench:
    return _search_bench(" + ".join(["k*"] * n))


@case("search.column_or_kstar", "search", (40, 80, 158), (15, 30), "terms",
      "'title: k* OR body: k* OR …' (column filters)")  # fmt: skip
def _(n: int) -> Bench:
    return _search_bench(" OR ".join("title: k*" if i % 2 else "body: k*" for i in range(n)))


@case("search.cjk_run", "search", (250, 500, 1000, 2000), (100, 200), "chars",
      "n CJK characters, no spaces, on 300 CJK notes (pairs OR'd in the loose pass)")  # fmt: skip
def _(n: int) -> Bench:
    r = random.Random(5)
    return _search_bench("".join(chr(0x4E00 + r.randrange(500)) for _ in range(n)), cjk=True)


@case("search.cjk_spaced", "search", (250, 500, 1000), (100, 200), "chars", "n CJK characters split by spaces")
def _(n: int) -> Bench:
    r = random.Random(5)
    return _search_bench(" ".join(chr(0x4E00 + r.randrange(500)) for _ in range(n)), cjk=True)


def _big_notes_bench(query: str, body: Callable[[random.Random], str]) -> Bench:
    s = _Scratch()
    r = random.Random(2)
    s.store.add_notes(["# big\n" + body(r) for _ in range(4)])
    run = _refusal(lambda: s.store.search_notes(query, limit=10))
    return Bench(run, _b(query), cleanup=s.close, describe=_cards)


@case("search.big_notes_kstar", "search", (2, 4, 8), (2, 4), "terms",
      "n x 'ka*' (8 two-letter prefixes at most) on 4 notes of 512 KiB of ka-words")  # fmt: skip
def _(n: int) -> Bench:
    words = [w for w in _vocab() if w.startswith("ka")]
    return _big_notes_bench(" ".join(["ka*"] * n), lambda r: " ".join(r.choices(words, k=87_000)))


@case("search.big_notes_same_word", "search", (25, 50, 100, 200), (10, 20), "words",
      "one word n times, on 4 notes of 512 KiB holding only that word (no prefix: not refused)")  # fmt: skip
def _(n: int) -> Bench:
    return _big_notes_bench(" ".join(["kaaaa"] * n), lambda r: "kaaaa " * 87_000)


@case("search.big_notes_long_phrase", "search", (50, 100, 200), (10, 20), "words",
      "'\"kaaaa kaaaa …\"' (one n-word phrase) on the same 4 notes")  # fmt: skip
def _(n: int) -> Bench:
    return _big_notes_bench('"' + " ".join(["kaaaa"] * n) + '"', lambda r: "kaaaa " * 87_000)


@case("search.same_word", "search", (83, 166, 333), (20, 40), "words",
      "one vocabulary word n times on the 300-note store")  # fmt: skip
def _(n: int) -> Bench:
    return _search_bench(" ".join([_vocab()[7]] * n))


# The query compiler alone (notewell.search.query)


def _compile_bench(query: str) -> Bench:
    from notewell.search.query import compile_query

    if len(query) > QUERY_LIMIT:
        raise ValueError(f"query is {len(query)} characters, over the limit")
    run = _refusal(lambda: compile_query(query))
    return Bench(run, _b(query), describe=lambda got: f"answer: {type(got).__name__}")


@case("compile.kstar", "parse", (333, 666), (166, 333), "terms", "compile_query(n x 'k*')")
def _(n: int) -> Bench:
    return _compile_bench(" ".join(["k*"] * n))


@case("compile.words", "parse", (166, 333), (83, 166), "words", "compile_query(n plain words)")
def _(n: int) -> Bench:
    return _compile_bench(" ".join(_vocab()[:n]))


@case("compile.cjk_run", "parse", (1000, 2000), (500, 1000), "chars", "compile_query(n CJK characters)")
def _(n: int) -> Bench:
    return _compile_bench("".join(chr(0x4E00 + i % 500) for i in range(n)))


@case("compile.or_chain", "parse", (166, 333), (83, 166), "terms", "compile_query('a OR a OR …')")
def _(n: int) -> Bench:
    return _compile_bench(" OR ".join(["ab"] * n))


@case("compile.parens", "parse", (48, 96), (24, 48), "levels", "compile_query('((((a))))'), to FTS5's stack limit")
def _(n: int) -> Bench:
    return _compile_bench("(" * n + "a" + ")" * n)


@case("compile.title_expression", "parse", (100, 200), (50, 100), "terms",
      "title_expression('title: a OR body: b …')")  # fmt: skip
def _(n: int) -> Bench:
    from notewell.search.query import title_expression

    expr = " OR ".join("title: ab" if i % 2 else "body: cd" for i in range(n))
    return Bench(lambda: title_expression(expr), _b(expr))


# Snippets (notewell.search.snippets): what a search does with each card's body


def _snippet_bench(body: str, expr: str) -> Bench:
    from notewell.search.snippets import make_snippet, phrases_of

    def run() -> object:
        return make_snippet(body, phrases_of(expr))

    return Bench(run, _b(body) + _b(expr))


@case("snippet.kstar_phrases", "search", (166, 333, 666), (40, 80), "terms",
      "make_snippet(20 KB of k-words, phrases of n x 'k*')")  # fmt: skip
def _(n: int) -> Bench:
    r = random.Random(4)
    return _snippet_bench(" ".join(r.choices(_vocab(), k=3400)), " ".join(['"k"*'] * n))


@case("snippet.body_size", "search", (256_000, 512_000, 1_000_000), (64_000, 128_000), "chars",
      "make_snippet(n chars of k-words, 20 x 'k*')")  # fmt: skip
def _(n: int) -> Bench:
    r = random.Random(4)
    return _snippet_bench(" ".join(r.choices(_vocab(), k=n // 6)), " ".join(['"k"*'] * 20))


@case("snippet.distinct_words", "search", (166, 333), (40, 80), "words",
      "make_snippet(20 KB of k-words, n distinct words OR'd)")  # fmt: skip
def _(n: int) -> Bench:
    r = random.Random(4)
    v = _vocab()
    return _snippet_bench(" ".join(r.choices(v, k=3400)), " OR ".join(f'"{w}"' for w in v[:n]))


@case("snippet.unparsable_expr", "search", (166, 333), (40, 80), "terms",
      "make_snippet with an expression FTS5 refuses (the pattern fallback)")  # fmt: skip
def _(n: int) -> Bench:
    r = random.Random(4)
    v = _vocab()
    return _snippet_bench(" ".join(r.choices(v, k=3400)), " ".join(f'"{w}" AND' for w in v[:n]) + " (")


# Markdown for the web page (notewell.interfaces.http.web.render.render_markdown)

_MARKDOWN: dict[str, tuple[str, Callable[[int], str]]] = {
    "brackets": ("n x '['", lambda n: "[" * n),
    "image_openers": ("'![' repeated", lambda n: "![" * (n // 2)),
    "nested_brackets": ("'[[[…a…]]]'", lambda n: "[" * (n // 2) + "a" + "]" * (n // 2 - 1)),
    "link_emph_openers": ("'[ a_' repeated", lambda n: "[ a_" * (n // 4)),
    "unclosed_links": ("'[a](b' repeated", lambda n: "[a](b" * (n // 5)),
    "unclosed_angle_links": ("'[a](<b' repeated", lambda n: "[a](<b" * (n // 6)),
    "paren_links": ("'[ (](' repeated", lambda n: "[ (](" * (n // 5)),
    "emph_links": ("'*[a](b)' repeated", lambda n: "*[a](b)" * (n // 7)),
    "emph_mismatch": ("'*a_ ' repeated", lambda n: "*a_ " * (n // 4)),
    "emph_nested": ("'*a **a ' … ' a** a*'", lambda n: "*a **a " * (n // 14) + "b" + " a** a*" * (n // 14)),
    "strong_runs": ("'**' x n/4, a, '**' x n/4", lambda n: "**" * (n // 4) + "a" + "**" * (n // 4)),
    "setext_paragraph": ("n/2 lines then '='", lambda n: "a\n" * (n // 2 - 1) + "="),
    "setext_headings": ("'a\\n=\\n' repeated", lambda n: "a\n=\n" * (n // 4)),
    "table_1000_columns": ("1000-column header, then one-char rows", lambda n: _table(1000, n)),
    "tables_autocomplete": ("tables of 181 columns x 363 short rows (65,536 cells filled each)", lambda n: _tables(n)),
    "reference_amplify": ("a definition with an n/8-char URL and title, then '[a]' repeated", lambda n: _refs(n)),
    "tables_many": ("'a|b\\n-|-\\n' repeated", lambda n: "a|b\n-|-\n" * (n // 8)),
    "list_items": ("'1. a' lines", lambda n: "1. a\n" * (n // 5)),
    "list_lazy": ("'- a\\n b' repeated", lambda n: "- a\n b\n" * (n // 7)),
    "nested_lists": ("lists nested as deep as they go", lambda n: _nested_lists(n)),
    "nested_quotes": ("'> > > …a'", lambda n: "> " * (n // 2 - 1) + "a"),
    "quote_list_mix": ("'> - > - …' lines", lambda n: ("> - " * 10 + "a\n") * (n // 41)),
    "backtick_growth": ("'e`', 'e``', 'e```', …", lambda n: _backticks(n)),
    "backtick_run": ("n x '`'", lambda n: "`" * n),
    "lt_run": ("n x '<'", lambda n: "<" * n),
    "amp_run": ("n x '&'", lambda n: "&" * n),
    "entity_openers": ("'&#' repeated", lambda n: "&#" * (n // 2)),
    "html_comments": ("'</' + '<!--' repeated", lambda n: "</" + "<!--" * (n // 4 - 1)),
    "autolink_openers": ("'<http://' repeated", lambda n: "<http://" * (n // 8)),
    "reference_uses": ("a definition, then '[a]' repeated", lambda n: "[a]: /u\n" + "[a]" * (n // 3 - 3)),
    "reference_defs": ("'[aN]: /u' lines", lambda n: "".join(f"[a{i}]: /u\n" for i in range(n // 12))),
    "backslashes": ("n x '\\\\'", lambda n: "\\" * n),
}


def _table(columns: int, n: int) -> str:
    head = "|a" * columns + "\n" + "|-" * columns + "\n"
    return head + "b\n" * max(0, (n - len(head)) // 2)


def _tables(n: int) -> str:
    # markdown-it fills a short row up to the header's width, at most 65,536 cells a table:
    # 181 columns x 363 rows is the smallest table (about 1.4 KB) that reaches the cap.
    one = "|a" * 181 + "\n" + "|-" * 181 + "\n" + "b\n" * 363 + "\n"
    return one * max(1, n // len(one))


def _refs(n: int) -> str:
    size = n // 8
    head = "[a]: /" + "x" * size + ' "' + "t" * size + '"\n\n'
    return head + "[a]" * max(1, (n - len(head)) // 3)


def _nested_lists(n: int) -> str:
    out, depth = [], 0
    while sum(map(len, out)) < n:
        out.append("  " * depth + "- a\n")
        depth = (depth + 1) % 40
    return "".join(out)[:n]


def _backticks(n: int) -> str:
    out, k, size = [], 1, 0
    while size + k + 1 <= n:
        out.append("e" + "`" * k)
        size += k + 1
        k += 1
    return "".join(out)


_SYNTAX_CHAR = re.compile(r"[^\w \u00a0\u3000]")  # what render.syntax_count counts (1c25130 on)


def _render_module():
    """The web page's Markdown renderer, where this tree keeps it (``--src`` may name a tree from
    before the interfaces became packages)."""
    import importlib

    try:
        return importlib.import_module("notewell.interfaces.http.web.render")
    except ImportError:
        return importlib.import_module("notewell.interfaces.web.render")


def _syntax_prefix(text: str, most: int) -> str:
    """The longest start of *text* holding at most *most* characters of Markdown syntax."""
    for k, m in enumerate(_SYNTAX_CHAR.finditer(text)):
        if k == most:
            return text[: m.start()]
    return text


def _render_case(shape: Callable[[int], str], mode: str = "chars") -> Callable[[int], Bench]:
    """*shape* at n characters (mode ``chars``); ``syntax``: the shape at RENDER_MAX characters
    cut to its first n characters of syntax (the most the web page renders as Markdown since
    SYNTAX_MAX); ``exact``: shape(n) as it is."""

    def build(n: int) -> Bench:
        render_module = _render_module()
        RENDER_MAX, _renderer, render_markdown = (  # noqa: N806 - the module's own names
            render_module.RENDER_MAX,
            render_module._renderer,
            render_module.render_markdown,
        )

        if mode == "syntax":
            text = _syntax_prefix(shape(RENDER_LIMIT - 1), n)
        else:
            text = shape(n) if mode == "exact" else shape(n)[:n]
        if len(text) > RENDER_MAX:
            raise ValueError(f"body is {len(text)} characters, over RENDER_MAX: pick a smaller size")
        _renderer()  # markdown-it's set-up is not the input's cost

        def describe(html: object) -> str:
            out = len(str(html).encode("utf-8"))
            plain = ", shown as plain text" if str(html).startswith('<p class="plain">') else ""
            return f"html {out:,} B ({out / max(1, _b(text)):.0f}x the input{plain})"

        return Bench(lambda: render_markdown(text), _b(text), describe=describe)

    return build


def _refs_long(n: int) -> str:
    """With at most about n syntax characters: '[a]' as often as they allow, and a definition
    whose URL and title fill the rest of RENDER_MAX with letters (which are not syntax)."""
    uses = "[a]" * max(1, n // 2 - 20)
    size = max(1, (RENDER_LIMIT - 1 - len(uses) - 20) // 2)
    return "[a]: /" + "x" * size + ' "' + "t" * size + '"\n\n' + uses


for _name, (_about, _shape) in _MARKDOWN.items():
    _slow = _name == "tables_autocomplete"  # about 0.7 ms a byte: the full sizes would all time out
    CASES[f"render.{_name}"] = Case(
        f"render.{_name}", "render", _render_case(_shape),
        (12_500, 25_000, 50_000, 199_999) if _slow else (50_000, 100_000, 199_999),
        (3_000, 6_000) if _slow else (10_000, 20_000), "chars", _about,
    )  # fmt: skip
    # The same shape cut to n characters of syntax: what still renders as Markdown under
    # SYNTAX_MAX (full runs only: the quick sizes are under it already).
    CASES[f"render.capped.{_name}"] = Case(
        f"render.capped.{_name}", "render", _render_case(_shape, "syntax"), (10_000, 19_999), (),
        "syntax chars", _about + ", cut to n syntax characters",
    )  # fmt: skip
CASES["render.capped.reference_long_url"] = Case(
    "render.capped.reference_long_url", "render", _render_case(_refs_long, "exact"), (10_000, 19_999), (8_000,),
    "syntax chars", "'[a]' x n/2, defined once with a URL and title filling RENDER_MAX with letters",
)  # fmt: skip


# Everything else that reads user input


@case("filters.tags_unicode", "parse", (5000, 10000, 20000), (1000, 2000), "chars",
      "Filters(tags=[100 tags of n non-ASCII chars]): no length bound")  # fmt: skip
def _(n: int) -> Bench:
    from notewell.search.filters import Filters

    tags = [("é" + str(i)) * (n // 3) for i in range(100)]
    return Bench(_refusal(lambda: Filters(tags=tags, tag_mode="all")), sum(map(_b, tags)))


@case("filters.kinds_and_dates", "parse", (5000, 10000), (1000, 2000), "chars",
      "Filters(kind=[100 long kinds], created_after=<n-char garbage>)")  # fmt: skip
def _(n: int) -> Bench:
    from notewell.search.filters import Filters

    kinds = ["Ü" * n] * 100
    when = "2026-11-29T" + "9" * n
    run = _refusal(lambda: Filters(kind=kinds, created_after=when))
    return Bench(run, sum(map(_b, kinds)) + _b(when), describe=lambda got: f"answer: {type(got).__name__}")


@case("ids.check_note_id", "parse", (500_000, 1_000_000), (100_000, 200_000), "chars", "check_note_id(n-char string)")
def _(n: int) -> Bench:
    from notewell.model.ids import check_note_id

    text = "nte_" + "a" * n
    return Bench(_refusal(lambda: check_note_id(text)), _b(text))


@case("slug.unicode", "parse", (250_000, 500_000), (50_000, 100_000), "chars", "slugify(n chars of 'é a')")
def _(n: int) -> Bench:
    from notewell.model.slug import slugify

    text = "é a" * (n // 3)
    return Bench(lambda: slugify(text), _b(text))


@case("slug.project", "parse", (250_000, 500_000), (50_000, 100_000), "chars",
      "check_project(n chars): slugged before the length check")  # fmt: skip
def _(n: int) -> Bench:
    from notewell.model.attempt import check_project

    text = "Ünï " * (n // 4)
    return Bench(_refusal(lambda: check_project(text)), _b(text))


@case("cjk.segment", "parse", (170_000, 340_000), (40_000, 80_000), "chars", "segment(n CJK characters)")
def _(n: int) -> Bench:
    from notewell.model.cjk import segment

    text = "".join(chr(0x4E00 + i % 3000) for i in range(n))
    return Bench(lambda: segment(text), _b(text))


@case("cjk.segment_mixed", "parse", (250_000, 500_000), (50_000, 100_000), "chars", "segment('中a' x n/2)")
def _(n: int) -> Bench:
    from notewell.model.cjk import segment

    text = "中a" * (n // 2)
    return Bench(lambda: segment(text), _b(text))


_TOKEN_SHAPES: dict[str, Callable[[int], str]] = {
    "mixed_alnum": lambda n: "a1_" * (n // 3),
    "letters_then_digit": lambda n: ("a" * 999 + "1 ") * (n // 1001),
    "cjk_rare": lambda n: "".join(chr(0x3400 + i % 6000) for i in range(n // 3)),
    "punct_space": lambda n: "!? \t" * (n // 4),
    "emoji": lambda n: "\U0001f600a" * (n // 5),
}


def _token_case(shape: Callable[[int], str], exact: bool) -> Callable[[int], Bench]:
    def build(n: int) -> Bench:
        from notewell.model import token_count

        text = shape(n)
        count = token_count.exact_counter() if exact else token_count.estimate_tokens
        return Bench(_refusal(lambda: count(text)), _b(text), prep=token_count._han.cache_clear, describe=_answer)

    return build


for _name, _shape in _TOKEN_SHAPES.items():
    CASES[f"tokens.estimate_{_name}"] = Case(
        f"tokens.estimate_{_name}", "parse", _token_case(_shape, False), (500_000, 1_000_000), (100_000, 200_000),
        "bytes", "estimate_tokens of a 1 MiB-class text",
    )  # fmt: skip
CASES["tokens.exact_mixed_alnum"] = Case(
    "tokens.exact_mixed_alnum", "parse", _token_case(_TOKEN_SHAPES["mixed_alnum"], True), (500_000, 1_000_000),
    (100_000, 200_000), "bytes", "bpe-openai's exact count (where installed)",
)  # fmt: skip


# The working notebook (notewell.model.notebook_doc / notebook_rules): an agent's text


def _notebook_bench(make: Callable[[], object], text: str) -> Bench:
    """What ``Notebook.check`` does with *text*: a notebook far over the default budget is
    refused by its length (far_over_budget) before any rule reads it."""
    from notewell.model.notebook_rules import far_over_budget

    refused = far_over_budget(text)

    def run() -> object:
        return far_over_budget(text) or make()

    return Bench(run, _b(text), detail="refused: far over the budget" if refused else "")


@case("notebook.item_blank_run", "parse", (10000, 20000), (2000, 4000), "blanks",
      "parse_notebook: '- [F001] a<n blanks>b'")  # fmt: skip
def _(n: int) -> Bench:
    from notewell.model.notebook_doc import parse_notebook

    text = "# Working notebook: t\n## Facts\n- [F001] a" + " " * n + "b\n"
    return _notebook_bench(lambda: parse_notebook(text), text)


@case("notebook.heading_blank_run", "parse", (10000, 20000), (2000, 4000), "blanks",
      "parse_notebook: '## a<n blanks>b'")  # fmt: skip
def _(n: int) -> Bench:
    from notewell.model.notebook_doc import parse_notebook

    text = "## a" + " " * n + "b\n"
    return _notebook_bench(lambda: parse_notebook(text), text)


@case("notebook.secret_sk_run", "parse", (8000, 16000, 30000), (3000, 6000), "chars",
      "text_problems('sk-sk-sk-…'): the secret-token lookaheads")  # fmt: skip
def _(n: int) -> Bench:
    from notewell.model.notebook_rules import text_problems

    text = "sk-" * (n // 3)
    return _notebook_bench(lambda: text_problems(text), text)


@case("notebook.secret_jwt_run", "parse", (8000, 16000, 40000), (4000, 8000), "chars", "text_problems('eyJ-eyJ-…')")
def _(n: int) -> Bench:
    from notewell.model.notebook_rules import text_problems

    text = "eyJ-" * (n // 4)
    return _notebook_bench(lambda: text_problems(text), text)


@case("notebook.secret_pair_run", "parse", (8000, 16000, 100000), (10000, 20000), "chars", "text_problems('a-a-a-…')")
def _(n: int) -> Bench:
    from notewell.model.notebook_rules import text_problems

    text = "a-" * (n // 2)
    return _notebook_bench(lambda: text_problems(text), text)


@case("notebook.source_list", "parse", (8000, 16000, 100000), (10000, 20000), "chars",
      "validate a fact whose source is 'a, a, a, …'")  # fmt: skip
def _(n: int) -> Bench:
    from notewell.model.notebook_doc import parse_notebook
    from notewell.model.notebook_rules import validate_notebook

    text = (
        "# Working notebook: t\n## Goal\ng\n## Facts\n- [F001] x | source: "
        + "a.py:1, " * (n // 8)
        + "| verified\n## Tracker\n## Next\n"
    )

    def run() -> object:
        return validate_notebook(parse_notebook(text), text, previous=None, retired=(), raw_ids=set(), budget=10**9)

    return _notebook_bench(run, text)


# -- running ---------------------------------------------------------------------------------------


def _reset_caches() -> None:
    """Forget what an earlier run cached (a hostile caller varies the input to defeat caches)."""
    mods = sys.modules
    for module, names in (
        ("notewell.search.snippets", ("_phrases_of", "_stem")),
        ("notewell.model.token_count", ("_han",)),
    ):
        for name in names:
            fn = getattr(mods.get(module), name, None)
            if hasattr(fn, "cache_clear"):
                fn.cache_clear()
    render = mods.get("notewell.interfaces.http.web.render") or mods.get("notewell.interfaces.web.render")
    if render is not None and hasattr(render, "_cache"):  # rendered HTML kept by digest (1c25130 on)
        render._cache.clear()
        render._cached_bytes = 0
    bm25 = mods.get("notewell.backends.sqlite.bm25")
    if bm25 is not None and hasattr(bm25, "_estimates"):
        bm25._estimates.clear()


def _limit_memory(mb: int) -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))
    except (ImportError, ValueError, OSError):
        pass


def child(name: str, n: int, repeat: int, budget: float, mem_mb: int) -> None:
    """Build one case at one size and print one JSON line: bytes, best time, runs."""
    _limit_memory(mem_mb)  # the recursion limit stays Python's default: a RecursionError is a finding
    out: dict[str, object] = {"case": name, "n": n}
    bench = None
    try:
        bench = CASES[name].build(n)
        times: list[float] = []
        spent = 0.0
        for k in range(repeat):
            if bench.prep:
                bench.prep()
            _reset_caches()
            start = time.perf_counter()
            got = bench.fn()
            took = time.perf_counter() - start
            if k == 0 and bench.describe:
                bench.detail = bench.describe(got)
            del got
            times.append(took)
            spent += took
            if spent > budget:
                break
        out.update(bytes=bench.nbytes, best=min(times), runs=len(times), detail=bench.detail)
    except Exception as exc:  # a case that cannot run is reported, not fatal
        out.update(error=f"{type(exc).__name__}: {exc}"[:200])
    finally:
        if bench is not None and bench.cleanup:
            bench.cleanup()
    print(json.dumps(out), flush=True)


def profile(name: str, n: int, top: int) -> None:
    import cProfile
    import pstats

    bench = CASES[name].build(n)
    try:
        if bench.prep:
            bench.prep()
        _reset_caches()
        prof = cProfile.Profile()
        prof.runcall(bench.fn)
        pstats.Stats(prof).sort_stats("tottime").print_stats(top)
    finally:
        if bench.cleanup:
            bench.cleanup()


@dataclass
class Row:
    case: Case
    n: int
    nbytes: int | None = None
    best: float | None = None  # None: timed out or failed
    runs: int = 0
    note: str = ""
    exp: float | None = None
    bound: bool = False  # exp is a lower bound (the measurement timed out)
    flags: list[str] = field(default_factory=list)


def measure(case_: Case, n: int, args: argparse.Namespace) -> Row:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", case_.name, str(n), "--repeat", str(args.repeat)]
    cmd += ["--budget", str(args.run_budget), "--mem-mb", str(args.mem_mb)]
    # Each measurement's stores go in a folder of its own, removed even when the child was killed.
    scratch = tempfile.mkdtemp(prefix="run-", dir=args.scratch)
    env = dict(os.environ, HOSTILE_SCRATCH=scratch, PYTHONDONTWRITEBYTECODE="1")
    if args.src:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (args.src, env.get("PYTHONPATH")) if p)
    row = Row(case_, n)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired:
        row.note = f">{args.timeout:g} s"
        return row
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        row.note = f"crashed: {tail[:120]}"
        return row
    got = json.loads(lines[-1])
    if "error" in got:
        row.note = f"error: {got['error']}"
        return row
    row.nbytes, row.best, row.runs, row.note = got["bytes"], got["best"], got["runs"], got.get("detail", "")
    return row


def _fmt_time(row: Row) -> str:
    if row.best is None:
        return row.note.split(":")[0] if row.note.startswith((">", "error", "crashed")) else "-"
    return f"{row.best:.4f}" if row.best < 10 else f"{row.best:.1f}"


def _print_row(row: Row, first: bool) -> None:
    name = row.case.name if first else ""
    nbytes = f"{row.nbytes:,}" if row.nbytes is not None else "-"
    exp = (">" if row.bound else "") + f"{row.exp:.2f}" if row.exp is not None else ""
    note = row.note if row.best is not None or not row.note.startswith(">") else ""
    print(
        f"{name:34s} {row.n:>9,} {nbytes:>11} {_fmt_time(row):>9} {row.runs:>2} {exp:>5} {' '.join(row.flags):10s}"
        f" {note[:70]}",
        flush=True,
    )


def run_cases(cases: list[Case], args: argparse.Namespace) -> list[Row]:
    print(f"{'case':34s} {'n':>9} {'bytes':>11} {'best s':>9} {'r':>2} {'exp':>5} {'flags':10s} note")
    print("-" * 120, flush=True)
    rows: list[Row] = []
    for case_ in cases:
        sizes = case_.quick if args.quick else case_.full
        prev: Row | None = None
        for k, n in enumerate(sizes):
            row = measure(case_, n, args)
            # A note refused for its header is a write's check (a store write's budget), not a read.
            budget = BUDGETS["store" if "refused: header" in row.note else case_.kind]
            if row.best is None and row.note.startswith(">"):
                row.flags.append("TIMEOUT")
            if row.best is not None and row.best > budget:
                row.flags.append("SLOW")
            if prev is not None and prev.best and row.best and row.n > prev.n:
                # Growth against n (what the case scales; the bytes may hold a constant part).
                # Below two milliseconds the figure is mostly noise: no exponent from it.
                if prev.best >= 0.002:
                    row.exp = math.log(row.best / prev.best) / math.log(row.n / prev.n)
                    if row.exp > WORSE_THAN_LINEAR:
                        row.flags.append("SUPERLIN")
            if prev is not None and prev.best and row.best is None and row.note.startswith(">"):
                # A timeout still bounds the growth from below.
                row.exp = math.log(args.timeout / prev.best) / math.log(row.n / prev.n)
                row.bound = True
                if row.exp > WORSE_THAN_LINEAR:
                    row.flags.append("SUPERLIN")
                row.note = f"at least {args.timeout / prev.best:.1f}x the time of n={prev.n:,}"
            _print_row(row, k == 0)
            rows.append(row)
            prev = row
            if row.best is None:
                break  # a timeout or failure at n: larger sizes will not do better
    return rows


def summary(rows: list[Row], timeout: float) -> None:
    by_case: dict[str, list[Row]] = {}
    for row in rows:
        by_case.setdefault(row.case.name, []).append(row)
    flagged = [name for name, rs in by_case.items() if any(r.flags for r in rs)]
    print("\nflagged, worst first: case, time at its largest size, worst growth exponent (>: a lower bound)")
    if not flagged:
        print("  none")
        return

    def worst(name: str) -> tuple[float, float]:
        rs = by_case[name]
        return (max(r.best if r.best is not None else math.inf for r in rs), max(r.exp or 0.0 for r in rs))

    for name in sorted(flagged, key=worst, reverse=True):
        rs = by_case[name]
        t, e = worst(name)
        last = rs[-1]
        shown = f">{timeout:g} s" if math.isinf(t) else f"{t:.3g} s"
        where = f"timeout at n={last.n:,}" if last.best is None else f"n={last.n:,} ({last.nbytes:,} B)"
        flags = ",".join(sorted({f for r in rs for f in r.flags}))
        e_shown = (">" if any(r.bound and r.exp == e for r in rs) else "") + f"{e:.2f}"
        print(f"  {name:34s} {shown:>9}  exp {e_shown:>5}  {where:28s} {flags:22s} {CASES[name].about}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about two minutes)")
    parser.add_argument("--only", action="append", default=[], help="run the cases whose name contains this")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per measurement (default 60)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per measurement (default 3, quick 2)")
    parser.add_argument("--run-budget", type=float, help="stop repeating once runs took this long (4 s, quick 1 s)")
    parser.add_argument("--mem-mb", type=int, default=3072, help="address-space cap of each measurement (MiB)")
    parser.add_argument("--scratch", default=SCRATCH, help="where scratch stores go")
    parser.add_argument("--src", help="import notewell from this directory (another checkout's src)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows to FILE as JSON")
    parser.add_argument("--profile", nargs=2, metavar=("CASE", "N"), help="cProfile one case at one size")
    parser.add_argument("--top", type=int, default=15, help="functions shown by --profile")
    parser.add_argument("--child", nargs=2, metavar=("CASE", "N"), help=argparse.SUPPRESS)
    parser.add_argument("--budget", type=float, default=4.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeat is None:
        args.repeat = 2 if args.quick else 3
    if args.run_budget is None:
        args.run_budget = 1.0 if args.quick else 4.0
    if args.child:
        child(args.child[0], int(args.child[1]), args.repeat, args.budget, args.mem_mb)
        return
    os.makedirs(args.scratch, exist_ok=True)
    os.environ["HOSTILE_SCRATCH"] = args.scratch
    if args.src:
        sys.path.insert(0, args.src)
    if args.profile:
        profile(args.profile[0], int(args.profile[1]), args.top)
        return
    cases = [c for c in CASES.values() if not args.only or any(s in c.name for s in args.only)]
    if args.list:
        for c in cases:
            print(f"{c.name:34s} {c.kind:7s} full {c.full} quick {c.quick} ({c.unit}): {c.about}")
        return
    where = args.src or os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + "/src (installed)"
    print(f"notewell from {where}; python {sys.version.split()[0]}; timeout {args.timeout:g} s; "
          f"best of {args.repeat}; budgets {BUDGETS}")  # fmt: skip
    started = time.perf_counter()
    rows = run_cases(cases, args)
    summary(rows, args.timeout)
    print(f"\n{len(rows)} measurements in {time.perf_counter() - started:.0f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(
                [
                    {"case": r.case.name, "n": r.n, "bytes": r.nbytes, "best": r.best, "runs": r.runs,
                     "exp": r.exp, "exp_is_lower_bound": r.bound, "flags": r.flags, "note": r.note}
                    for r in rows
                ],
                fh,
                indent=1,
            )  # fmt: skip


if __name__ == "__main__":
    main()
