"""add_tag and set_summary edit only what they must (the rest stays byte for byte)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell import InvalidArgumentError
from notewell.model.header import parse_note
from notewell.model.header_edit import with_summary, with_supersedes, with_tags
from notewell.model.slug import slugify


def _subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(line in it for line in small)


@pytest.mark.parametrize(
    "text",
    [
        "just a body\n",
        "---\ntitle: T\n---\nbody\n",
        '---\ntitle: T  # c\ntags: [a, "b c"]  # tags here\nfoo: bar\n---\nbody\n',
        "---\r\ntitle: T\r\ntags:\r\n  - a\r\n  - b # x\r\n# comment\r\n---\r\nbody\r\n",
        "---\ntitle: T\ntags: a\n---\nbody",
        "---\ntitle: T\ntags: []\n---\n",
        "---\ntitle: T\ntags:   # none yet\n---\n",
        "\ufeff---\nkind: x\n---\nb",
        "---\nnot a header because: no field\n---\nbody",
    ],
)
def test_add_tags_everywhere_a_header_can_keep_them(text):
    new, added = with_tags(text, ["New Tag", "a", "C++"])
    parsed, before = parse_note(new), parse_note(text)
    assert set(parsed.header["tags"]) == set((before.header or {}).get("tags", [])) | {"new-tag", "a", "c++"}
    assert parsed.body == before.body
    assert parsed.extra == before.extra
    old_lines = text.splitlines(keepends=True)
    changed = [line for line in old_lines if line.startswith("tags:")]
    assert _subsequence([line for line in old_lines if line not in changed], new.splitlines(keepends=True))
    assert ("\r\n" in new) == ("\r\n" in text)
    assert with_tags(new, ["a", "new-tag"]) == (new, [])  # nothing to add: nothing changes


def test_tag_limits():
    with pytest.raises(InvalidArgumentError):
        with_tags("x", ["!!!"])
    with pytest.raises(InvalidArgumentError):
        with_tags("x", [f"t{i}" for i in range(21)])
    full = with_tags("x", [f"t{i}" for i in range(20)])[0]
    with pytest.raises(InvalidArgumentError, match="it has 20 and 1 new ones would make 21"):
        with_tags(full, ["one-more"])
    assert with_tags(full, ["T1", "t2"] * 5000) == (full, [])  # repeats of tags it has: nothing to add


def test_ten_thousand_tags_are_refused_at_once_and_say_why():
    # Each new tag was compared with every earlier one (0.7-2.2 s for 10,000), and the refusal,
    # made against an empty text, said "it has 0". Now it stops at the 21st distinct tag.
    many = [f"t{i}" for i in range(10_000)]
    with pytest.raises(InvalidArgumentError, match="more than 20 different ones were given"):
        with_tags("---\ntitle: T\ntags: [a]\n---\nbody", many)
    calls = []
    import notewell.model.header_edit as edit

    real = edit.slug_within
    try:
        edit.slug_within = lambda tag, most: calls.append(tag) or real(tag, most)
        with pytest.raises(InvalidArgumentError):
            with_tags("x", many)
    finally:
        edit.slug_within = real
    assert len(calls) == 21  # counted, not timed: the rest is never looked at
    # Repeats of one tag are one tag: 10,000 of them are added once.
    assert with_tags("x", ["same"] * 10_000)[1] == ["same"]


def test_summary_is_set_in_place_or_added():
    assert with_summary("---\nkind: x\nsummary: old  # c\nz: 1\n---\nb", "new\n one") == (
        '---\nkind: x\nsummary: "new one"\nz: 1\n---\nb'
    )
    assert with_summary("---\ntitle: T\n---\nb", 'say "hi"') == '---\ntitle: T\nsummary: "say \\"hi\\""\n---\nb'
    made = with_summary("# Heading\n\nbody", "short")
    assert parse_note(made).header == {"title": "Heading", "summary": "short"}
    assert parse_note(made).body == "# Heading\n\nbody"
    for bad in ("", "   ", "x" * 2001):
        with pytest.raises(InvalidArgumentError):
            with_summary("# H", bad)


_line = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00"), max_size=30)
_header_line = st.one_of(
    _line,
    st.sampled_from(["title: T", "kind: k", "tags: [a, b]", "tags:", "  - x", "# c", "foo: bar # z", ""]),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(_header_line, max_size=6),
    st.lists(_line, max_size=5),
    st.lists(st.sampled_from(["alpha", "Beta Gamma", "a", "x.y", "über"]), min_size=1, max_size=3),
    st.booleans(),
)
def test_add_tag_leaves_every_other_line_unchanged(head, body, tags, with_header):
    text = ("---\n" + "\n".join(head) + "\n---\n" if with_header else "") + "\n".join(body)
    before = parse_note(text)
    try:
        new, _added = with_tags(text, tags)
    except InvalidArgumentError:
        return  # over the tag limit
    after = parse_note(new)
    assert after.header is not None and set(after.header["tags"]) >= {slugify(t) for t in tags}
    # A byte-order mark stays first in the file, so a new header goes after it.
    assert after.body == (before.body if before.header else before.body.removeprefix("\ufeff"))
    old_lines = text.split("\n")
    kept = [line for line in old_lines if not line.startswith("tags:")]
    assert _subsequence(kept, new.split("\n"))


def test_summary_replaces_a_block_list_summary_whole():
    text = "---\ntitle: t\ntags: [a]\nsummary:\n  - first point\n  - second\n---\nbody\n"
    made = with_summary(text, "S")
    assert made == '---\ntitle: t\ntags: [a]\nsummary: "S"\n---\nbody\n'
    assert parse_note(made).header == {"title": "t", "tags": ["a"], "summary": "S"}


def test_a_tag_of_a_million_characters_is_refused_unslugged_in_a_short_message():
    huge = "é" * 1_000_000
    with pytest.raises(InvalidArgumentError) as refused:
        with_tags("x", [huge])
    assert len(str(refused.value)) < 120 and "1,000,000 characters" in str(refused.value)
    from notewell.model.attempt import check_project

    with pytest.raises(InvalidArgumentError, match="1,000,000 characters; the limit is 80"):
        check_project(huge)


A, B, C = "nte_aaaaaaaaaa", "nte_bbbbbbbbbb", "nte_cccccccccc"


@pytest.mark.parametrize(
    "text",
    [
        "just a body\n",
        "---\ntitle: T\n---\nbody\n",
        f"---\ntitle: T  # c\nsupersedes: [{A}]  # corrects\nfoo: bar\n---\nbody\n",
        f"---\r\ntitle: T\r\nsupersedes:\r\n  - {A}\r\n# comment\r\n---\r\nbody\r\n",
        f"---\ntitle: T\nsupersedes: {A}\n---\nbody",
        "---\nnot a header because: no field\n---\nbody",
    ],
)
def test_add_supersedes_everywhere_a_header_can_keep_them(text):
    new, added = with_supersedes(text, [B, A, C, B])
    parsed, before = parse_note(new), parse_note(text)
    had = (before.header or {}).get("supersedes", [])
    assert parsed.header["supersedes"] == [*had, *[n for n in (B, A, C) if n not in had]]
    assert added == [n for n in (B, A, C) if n not in had]
    assert parsed.body == before.body and parsed.extra == before.extra
    old_lines = text.splitlines(keepends=True)
    changed = [line for line in old_lines if line.startswith("supersedes:")]
    assert _subsequence([line for line in old_lines if line not in changed], new.splitlines(keepends=True))
    assert ("\r\n" in new) == ("\r\n" in text)
    assert with_supersedes(new, [A, C]) == (new, [])  # nothing to add: nothing changes


def test_supersedes_takes_note_ids_only_and_leaves_a_line_it_cannot_read():
    for bad in ("att_1q8w4e6r9t", "nte_SHORT", "x" * 100_000, 7):
        with pytest.raises(InvalidArgumentError, match="is not a note id") as refused:
            with_supersedes("# t\n", [bad])
        assert len(refused.value.message) < 200
    with pytest.raises(InvalidArgumentError, match="fix that line first"):
        with_supersedes("---\ntitle: T\nsupersedes: later, maybe\n---\n", [A])


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(_header_line, st.sampled_from([f"supersedes: [{A}]", "supersedes:", f"  - {B}"])), max_size=6),
    st.lists(_line, max_size=5),
    st.lists(st.sampled_from([A, B, C]), min_size=1, max_size=3),
    st.booleans(),
)
def test_add_supersedes_leaves_every_other_line_unchanged(head, body, ids, with_header):
    text = ("---\n" + "\n".join(head) + "\n---\n" if with_header else "") + "\n".join(body)
    before = parse_note(text)
    try:
        new, _added = with_supersedes(text, ids)
    except InvalidArgumentError:
        return  # a supersedes line it cannot read, left for a person
    after = parse_note(new)
    assert after.header is not None and set(after.header["supersedes"]) >= set(ids)
    assert after.body == (before.body if before.header else before.body.removeprefix("\ufeff"))
    kept = [line for line in text.split("\n") if not line.startswith("supersedes:")]
    assert _subsequence(kept, new.split("\n"))
