from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notewell import InvalidNoteError, NoteTooLargeError, parse_note, slugify
from notewell.model import ids as ids_module
from notewell.model.ids import derived_note_id, is_link_id, is_note_id, new_note_id, new_note_ids
from notewell.model.note import check_text, derive_title, heading_text


@pytest.mark.parametrize(
    ("raw", "slug"),
    [
        ("über-wichtig", "uber-wichtig"),
        ("后端", "后端"),
        ("Foo  Bar", "foo-bar"),
        ("C++", "c++"),
        ("#tag", "#tag"),
        ("snake_case.v2", "snake_case.v2"),
        ("Ångström", "angstrom"),
        ("ＡＢＣ", "abc"),  # NFKC
        ("が", "が"),  # a Japanese dakuten is not a Latin diacritic
        ("कि", "कि"),  # nor is a Devanagari vowel sign
        ("a,b!", "ab"),
        ("🚀", ""),
        ("ß", "ss"),
    ],
)
def test_slugify(raw, slug):
    assert slugify(raw) == slug


@pytest.mark.slow
@given(st.text())
def test_slugify_never_raises_and_is_idempotent(text):
    s = slugify(text)
    assert slugify(s) == s
    assert not any(c.isspace() for c in s)


def test_ids():
    nid = new_note_id()
    assert is_note_id(nid) and is_link_id(nid)
    assert is_link_id("att_1q8w4e6r9t") and not is_note_id("att_1q8w4e6r9t")
    assert not is_note_id("../x") and not is_note_id("nte_ABCDEFGHIJ") and not is_note_id("nte_abc")
    assert derived_note_id("a/b.md") == derived_note_id("a/b.md") != derived_note_id("a/c.md")
    assert is_note_id(derived_note_id("x.md"))
    assert len({new_note_id() for _ in range(1000)}) == 1000


def test_a_batch_of_ids_is_distinct_and_shares_a_random_prefix():
    assert new_note_ids(0) == [] and len(new_note_ids(1)) == 1
    batch = new_note_ids(3000)
    assert len(set(batch)) == 3000 and all(is_note_id(nid) for nid in batch)
    assert len({nid[:8] for nid in batch}) == 1  # neighbours in an index keyed by id
    # Each batch draws its prefix afresh (36^4 of them), and the rest of each id too.
    assert len({new_note_ids(2)[0][:8] for _ in range(500)}) > 490
    assert len({nid[8:] for nid in batch}) == 3000


def test_a_batch_larger_than_a_prefix_holds_sparsely_takes_several(monkeypatch):
    monkeypatch.setattr(ids_module, "_BATCH_PREFIX", 7)  # 36^3 ids a prefix: 46 to a part
    batch = new_note_ids(200)
    assert len(set(batch)) == 200 and all(is_note_id(nid) for nid in batch)
    assert len({nid[:11] for nid in batch}) == 5  # 46, 46, 46, 46, 16
    draw = ids_module._random_chars
    monkeypatch.setattr(ids_module, "_random_chars", lambda n: "a" * n if n == 7 else draw(n))
    again = new_note_ids(200)  # every part draws the same prefix: still distinct
    assert len(set(again)) == 200 and {nid[:11] for nid in again} == {"nte_aaaaaaa"}


def test_check_text_rules():
    assert check_text("hi") == ("hi", b"hi")
    assert check_text(b"a\r\nb") == ("a\r\nb", b"a\r\nb")
    for bad, msg in [("", "empty"), ("  \n\t", "empty"), ("a\x00b", "NUL"), (b"\xff\xfe", "UTF-8"), (3, "string")]:
        with pytest.raises(InvalidNoteError, match=msg):
            check_text(bad)
    with pytest.raises(NoteTooLargeError):
        check_text("x" * 11, max_bytes=10)
    with pytest.raises(InvalidNoteError, match="surrogate"):
        check_text("\ud800")


def test_title_precedence():
    assert derive_title(parse_note("---\ntitle: H\n---\n# Heading\n"), "f.md") == "H"
    assert derive_title(parse_note("intro\n\n# Heading #\n"), "f.md") == "Heading"
    # No title and no heading: the first line of words outside code, without its marks (issue 40)
    assert derive_title(parse_note("```\n# not a heading\n```\nno heading\n"), "dir/f.md") == "no heading"
    assert derive_title(parse_note("## second level only\n"), "x.md") == "second level only"
    assert derive_title(parse_note("```sh\nmake test\n```\n"), "x.md") == "make test"  # code alone: its line
    assert derive_title(parse_note("---\n\n- [ ] ship it ##\n"), "x.md") == "ship it ##"
    assert derive_title(parse_note("> ***\n\n%%%\n"), "dir/x.md") == "x"  # no words: the file name


@pytest.mark.slow
@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_fast_path_agrees_with_general_path(text):
    from notewell.model.slug import unicode_slug

    assert slugify(text) == unicode_slug(text)


_HEADING_REFERENCE = re.compile(r"[ ]{0,3}#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*")  # the old rule, quadratic


@pytest.mark.slow
@given(st.lists(st.sampled_from([" ", "\t", "#", "a", "é", "\u00a0", "x#", "# "]), max_size=12).map("".join))
def test_a_heading_reads_as_the_old_rule_read_it(line):
    # The old regex backtracked quadratically; on short lines it is the reference.
    m = _HEADING_REFERENCE.fullmatch(line)
    assert heading_text(line) == ((m.group(1).strip() or None) if m else None)


def test_a_heading_padded_with_blanks_is_read_in_linear_time():
    # "# a" + 40,000 blanks + "b" took 20 s to title (19 s for every add of such a note).
    import time

    started = time.perf_counter()
    title = derive_title(parse_note("# a" + " " * 200_000 + "b\n\nbody"), "x.md")
    assert time.perf_counter() - started < 2
    assert title == ("a" + " " * 200_000)[:200]  # a title keeps its first 200 characters
    assert heading_text("# a" + " " * 200_000 + "b") == "a" + " " * 200_000 + "b"
    assert heading_text("#  Title  ##  ") == "Title" and heading_text("# C# ") == "C#"


def test_a_note_as_a_dict_is_what_asdict_makes_it_and_shares_nothing():
    from dataclasses import asdict

    from notewell.model.note import note_from_text

    note = note_from_text(
        "---\ntitle: T\ntags: [a, b]\nbuilds_on: [nte_0h3k9x2c7m]\nodd: x\n---\nbody",
        path="x.md", model=None, id="nte_0000000001", backlinks=[{"id": "nte_0000000002", "title": "b"}],
        attempt={"id": "att_0000000001", "outcome": None}, author="a", created_at="t", updated_at="t",
        revision=1, revisions=1, attempt_id="att_0000000001", note_kind="note",
    )  # fmt: skip
    made = note.to_dict()
    assert made == {**asdict(note), "age": None}  # "t" is no time: no age
    made["tags"].append("c")
    made["backlinks"][0]["title"] = "changed"
    made["header"]["tags"].append("z")
    assert note.tags == ["a", "b"] and note.backlinks[0]["title"] == "b" and note.header["tags"] == ["a", "b"]


@pytest.mark.parametrize(
    ("raw", "slug", "space"),
    [
        ("SAT solver", "sat-solver", None),
        ("Alice:Secret work", "alice:secret-work", "alice"),
        (" alice : x ", "alice:x", "alice"),
        ("a:b:c", "a:b-c", "a"),  # one namespace: later colons part words
        ("后端:缓存", "后端:缓存", "后端"),
    ],
)
def test_a_project_name_may_carry_a_namespace(raw, slug, space):
    from notewell.model.attempt import check_project, project_namespace

    assert check_project(raw) == slug and project_namespace(slug) == space


@pytest.mark.parametrize("raw", [":x", "x:", "::", "🚀:x", " : "])
def test_a_namespace_or_a_name_left_empty_is_refused(raw):
    from notewell import InvalidArgumentError
    from notewell.model.attempt import check_project

    with pytest.raises(InvalidArgumentError, match="both sides|no letters"):
        check_project(raw)


@pytest.mark.slow
@given(st.text(max_size=60))
def test_a_project_slug_is_checked_to_itself(raw):
    from notewell import InvalidArgumentError
    from notewell.model.attempt import check_project, project_namespace
    from notewell.model.visibility import handle_namespace

    try:
        slug = check_project(raw)
    except InvalidArgumentError:
        return
    assert check_project(slug) == slug and slug.count(":") <= 1
    space = project_namespace(slug)
    assert space is None or handle_namespace(space) == space


@given(st.text(max_size=400), st.integers(min_value=1, max_value=60))
def test_slug_within_is_the_slug_when_it_fits(raw, most):
    from notewell.model.slug import slug_within

    got, slug = slug_within(raw, most), slugify(raw)
    if len(raw) <= 8 * most:
        assert got == (slug if len(slug) <= most else None)
    else:
        assert got is None


def test_a_first_line_title_is_cut_at_a_sentence_or_a_word():
    from notewell.model.note import LINE_TITLE_CHARS, line_title

    assert line_title("\n\n  plain words  here \nmore") == "plain words here"
    long = "Why does the checkout hang when the proxy is slow? We tried a longer timeout and it only moved the hang."
    assert line_title(long) == "Why does the checkout hang when the proxy is slow?"  # a question keeps its mark
    stated = "The checkout hangs when the proxy is slow. We tried a longer timeout and it only moved the hang away."
    assert line_title(stated) == "The checkout hangs when the proxy is slow"
    words = "word " * 40
    cut = line_title(words)
    assert cut.endswith("word…") and len(cut) <= LINE_TITLE_CHARS
    assert line_title("热点键过期时所有请求同时回源。" * 8) == "热点键过期时所有请求同时回源"
    assert line_title("x" * 300) == "x" * (LINE_TITLE_CHARS - 1) + "…"  # no word to end at
    assert line_title("   \n***\n") == ""


def test_a_preview_leaves_out_an_opening_heading_only():
    from notewell.model.note import preview

    assert preview("# My Heading\n\nBody text here.") == "Body text here."
    assert preview("\n\n  # Indented heading\r\nbody") == "body"
    assert preview("no heading\n# later") == "no heading # later"
    assert preview("    # indented code, not a heading\nx") == "# indented code, not a heading x"
    assert preview("## a lesser heading\nbody") == "## a lesser heading body"
    assert preview("# only a heading") == ""
