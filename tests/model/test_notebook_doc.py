"""The notebook's text: sections, items and problems with line numbers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notewell.model.notebook_doc import SECTIONS, parse_notebook, render_template

SAMPLE = """# Working notebook: fix-timeout

## Goal
the deploy no longer times out

## Facts
- [F001] timeout = 30 s | source: E0003 | verified
- [F002] deploy config is infra/deploy.yaml | source: infra/deploy.yaml:12 | unverified

## Tracker
- [T001] [done] reproduce the timeout

## Notes
- [N001] retries hide the first error

## Ruled out
- [R001] raising the timeout to 120 s | reason: still fails, see E0005

## Dropped
- [F004] superseded by F007

## Next
- read the upstream health endpoint
"""


def test_the_spec_example_parses():
    doc = parse_notebook(SAMPLE)
    assert doc.task == "fix-timeout" and doc.problems == []
    assert list(doc.sections) == list(SECTIONS)
    f1 = doc.by_id()["F001"]
    assert f1.section == "Facts" and f1.line == 7 and f1.head == "timeout = 30 s"
    assert f1.field("source") == "E0003" and f1.field("reason") is None
    assert doc.by_id()["R001"].field("reason") == "still fails, see E0005"
    assert [i.id for i in doc.in_section("Dropped")] == ["F004"]
    assert doc.sections["Next"] == [(23, "- read the upstream health endpoint")]


def test_problems_carry_line_numbers():
    doc = parse_notebook("# Working notebook: t\nstray\n## Facts\nnot an item\n## Facts\n## Extras\n- [F001] x\n")
    assert [line for line, _ in doc.problems] == [2, 4, 5, 6, 7]
    assert "unknown section" in doc.problems[3][1]


def test_a_new_notebook_is_well_formed():
    doc = parse_notebook(render_template("t", "ship it"))
    assert doc.problems == [] and doc.sections["Goal"] == [(5, "ship it")] and doc.items == []


@pytest.mark.slow
@given(st.text(max_size=400))
def test_any_text_parses_without_raising(text):
    doc = parse_notebook(text)
    assert all(isinstance(n, int) and n >= 1 for n, _ in doc.problems)
    assert all(i.section in SECTIONS for i in doc.items)


def test_lines_padded_with_blanks_parse_in_linear_time():
    # A lazy group before \s*$ backtracked: 20,000 blanks before an item's last word took 1.9 s.
    import time

    from notewell.model.notebook_doc import parse_notebook

    pad = " " * 200_000
    text = f"# Working notebook: task{pad}\n\n## Facts{pad}\n- [F001] a{pad}b{pad}\n"
    started = time.perf_counter()
    doc = parse_notebook(text)
    assert time.perf_counter() - started < 5
    assert doc.task == "task" and [(i.section, i.id, i.text) for i in doc.items] == [("Facts", "F001", f"a{pad}b")]
