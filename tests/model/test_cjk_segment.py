"""segment() makes exactly the text of its definition (a separator around every CJK character),
however the text mixes scripts: the index and every query must agree on it byte for byte."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.model.cjk import CJK_RE, SEP, segment, unsegment

PIECES = st.lists(
    st.sampled_from(
        ["缓存", "击", "ひらがな", "カタカナ", "한국어", "𠀀𠀁", "abc", " ", "，", "。", SEP, "x1", "\n", "ｶﾀ"]
    ),
    max_size=30,
).map("".join)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(PIECES | st.text(max_size=60))
def test_segment_is_its_definition(text):
    assert segment(text) == CJK_RE.sub(lambda m: SEP + m.group(0) + SEP, text)
    if SEP not in text:
        assert unsegment(segment(text)) == text
