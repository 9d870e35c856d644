"""What an agent learns without trial and error (issue 42): the template's examples, messages
that name every accepted form, one rule for what may be removed, no false tampering report,
a nudge that names what can be trimmed, and the budget's setting."""

from __future__ import annotations

import json
import re

import pytest

from notewell.agents.notebook import Notebook
from notewell.errors import InvalidArgumentError
from notewell.model.notebook_doc import EXAMPLE_LINES, FORMAT, SECTIONS, parse_notebook
from notewell.model.notebook_rules import DEFAULT_BUDGET, validate_notebook
from notewell.settings import SETTINGS


@pytest.fixture
def book(tmp_path):
    return Notebook.init("long-task", goal="the rollout is ready", budget=3000, root=tmp_path / "ctx")


def edit(book, old, new):
    text = book.working_text()
    assert old in text
    book.path.write_text(text.replace(old, new, 1), encoding="utf-8")


def accepted(book):
    result = book.accept()
    assert result.accepted, [str(e) for e in result.errors]
    return result


def state(book):
    return json.loads((book.dir / "state.json").read_text())


# -- the template -------------------------------------------------------------


def test_init_writes_one_example_per_section_that_accept_skips(book):
    text = book.working_text()
    for name, _form, example in FORMAT[1:]:
        section = text.split(f"## {name}\n", 1)[1]
        assert section.startswith(f"<!-- e.g. {example} -->\n"), name
    doc = parse_notebook(text)
    assert doc.items == [] and doc.problems == [] and doc.sections["Next"] == []
    assert book.status()["uncited_events"] == [] and book.status()["sections"]["Facts"] == 0
    # The agent writes its own lines beside the examples; the example citing E0002 is no citation.
    book.log(b"p99 4.1 s with pool_size 64\n", "pool experiment")
    book.log(b"p99 3.9 s with pool_size 32\n", "another experiment")  # E0002, as the Ruled out example says
    edit(book, "## Facts\n", "## Facts\n- [F001] the approver is Lin Wei | source: user | verified\n")
    assert accepted(book).revision == 2 and book.status()["uncited_events"] == ["E0001", "E0002"]


def test_every_example_is_a_valid_line_of_its_section():
    # Uncommented, each example is what the validator wants in its section.
    body = ["# Working notebook: t", "## Goal", "ship it"]
    for name, _form, example in FORMAT[1:]:
        body += [f"## {name}", example]
    text = "\n".join(body) + "\n"
    doc = parse_notebook(text)
    errors, warnings = validate_notebook(doc, text, previous=None, retired=(), raw_ids={"E0002"})
    assert errors == [] and warnings == []
    assert {i.section for i in doc.items} == set(SECTIONS) - {"Goal", "Next"}


def test_an_edited_example_is_refused_not_skipped(book):
    # Only the template's exact lines are skipped: a comment must not hide an unsourced fact.
    edit(book, "4500 ms", "4700 ms")
    refused = book.accept()
    assert not refused.accepted
    assert "a comment other than the template's examples: write it as an item or delete it" in str(refused.errors[0])
    book.restore()
    for line in EXAMPLE_LINES:
        edit(book, line + "\n", "")
    assert accepted(book).revision == 2 and "<!--" not in book.show()


# -- messages that name every accepted form --------------------------------------


SOURCE_FORMS = ("an event id (E0003", "file:line (src/app.py:12", "a URL", "a command (`make test`", "or user")


@pytest.mark.parametrize(
    ("line", "wanted"),
    [
        ("- [F001] timeout 30 s | verified", ("'- [F001] what is true | source: SOURCE | verified", *SOURCE_FORMS)),
        ("- [F001] the timeout is 30 s | source: somewhere | verified", SOURCE_FORMS),
        ("- [F001] the timeout is 30 s | source: user", ("must end with '| verified' or '| unverified'", "| source:")),
        ("the timeout is 30 s", ("a Facts line must be an item: '- [F001] what is true | source: SOURCE",)),
        ("- [T001] fix it", ("'- [T001] [STATE] what to do   (STATE: todo, doing, done or blocked)'",)),
        ("- [R001] pool_size 64", ("needs '| reason: ...'", "'- [R001] what was tried | reason: why it failed'")),
    ],
)
def test_each_message_names_the_forms_it_accepts(line, wanted):
    section = {"F": "Facts", "T": "Tracker", "R": "Ruled out"}.get(line[3:4], "Facts")
    text = "# Working notebook: t\n## Goal\nship it\n## Facts\n## Tracker\n## Ruled out\n## Next\n"
    text = text.replace(f"## {section}\n", f"## {section}\n{line}\n")
    errors, _ = validate_notebook(parse_notebook(text), text, previous=None, retired=(), raw_ids=set())
    message = " ".join(str(e) for e in errors)
    for part in wanted:
        assert part in message, (part, message)


def test_user_is_a_source_for_what_the_conversation_decided(book):
    edit(book, "## Facts\n", "## Facts\n- [F001] the canary region is eu-west-1 | source: user | verified\n")
    assert accepted(book).revision == 2


# -- one rule for what leaves, and no false tampering -----------------------------------


@pytest.mark.parametrize(
    ("section", "line"),
    [
        ("Facts", "- [F001] the timeout is 4500 ms | source: deploy/app.yaml:12 | verified"),
        ("Tracker", "- [T001] [done] read the deploy log"),
        ("Notes", "- [N001] retries hide the first error"),
        ("Ruled out", "- [R001] pool_size 64 | reason: p99 got worse"),
    ],
)
def test_every_item_leaves_the_same_way_and_stays_retired(book, section, line):
    item = line[3:7]
    edit(book, f"## {section}\n", f"## {section}\n{line}\n")
    assert accepted(book).revision == 2
    # Deleted outright: refused, for every section alike.
    edit(book, line + "\n", "")
    refused = book.accept()
    assert not refused.accepted and f"{item} ({section}) vanished" in str(refused.errors[0])
    # Moved to Dropped with a reason: accepted; state.json lists it retired; no tampering.
    edit(book, "## Dropped\n", f"## Dropped\n- [{item}] no longer needed\n")
    assert accepted(book).revision == 3
    assert item in state(book)["retired"] and book.status()["tampered"] == []
    assert book.status()["trimmable"]["dropped"] == [item]
    # Its Dropped line pruned at a later accept: allowed; the id stays retired and is not reused.
    edit(book, f"- [{item}] no longer needed\n", "")
    assert accepted(book).revision == 4
    assert item in state(book)["retired"] and book.status()["tampered"] == []
    edit(book, f"## {section}\n", f"## {section}\n{line}\n")
    refused = book.accept()
    next_free = f"{item[0]}002"
    assert f"{item} was dropped earlier: ids are never reused, take a new one ({next_free})" in str(refused.errors)


def test_a_dropped_line_cannot_be_pruned_before_its_drop_is_accepted(book):
    edit(book, "## Notes\n", "## Notes\n- [N001] retries hide the first error\n")
    accepted(book)
    edit(book, "- [N001] retries hide the first error\n", "")
    refused = book.accept()  # moved and pruned at once: no accepted revision says why it left
    assert not refused.accepted and "N001 (Notes) vanished" in str(refused.errors[0])


def test_the_reported_case_moving_facts_to_dropped_reports_no_tampering(book):
    # Revision 17 moved F015 to Dropped; status then said state.json "no longer lists retired
    # ids F015" though nothing touched it: accept never wrote dropped ids into state.json.
    for n in range(1, 26):
        edit(book, "## Facts\n", f"## Facts\n- [F{n:03d}] setting {n} is {100 + n} | source: user | verified\n")
    accepted(book)
    for n in (15, 21, 24, 20):
        edit(book, f"- [F{n:03d}] setting {n} is {100 + n} | source: user | verified\n", "")
        edit(book, "## Dropped\n", f"## Dropped\n- [F{n:03d}] corrected by the user\n")
        accepted(book)
        assert book.status()["tampered"] == [], n
    assert state(book)["retired"] == ["F015", "F020", "F021", "F024"]
    # Taking one off state.json is still reported, and the id stays retired.
    taken = state(book)
    taken["retired"] = ["F015", "F020", "F024"]
    (book.dir / "state.json").write_text(json.dumps(taken))
    assert book.status()["tampered"] == ["state.json no longer lists retired ids F021 (they stay retired)"]


def test_a_state_written_by_the_old_rule_is_not_reported(book):
    # Before the fix, state.json listed only ids whose Dropped line was deleted.
    edit(book, "## Notes\n", "## Notes\n- [N001] one\n- [N002] two\n")
    accepted(book)
    edit(book, "- [N001] one\n- [N002] two\n", "")
    edit(book, "## Dropped\n", "## Dropped\n- [N001] done with\n- [N002] done with\n")
    accepted(book)
    edit(book, "- [N001] done with\n", "")
    accepted(book)
    old = state(book)
    del old["retired_rule"]
    old["retired"] = ["N001"]
    (book.dir / "state.json").write_text(json.dumps(old))
    assert book.status()["tampered"] == []
    edit(book, "## Notes\n", "## Notes\n- [N003] three\n")
    accepted(book)
    assert state(book)["retired"] == ["N001", "N002"] and state(book)["retired_rule"] == "dropped"


# -- nudge, uncited events, the budget ----------------------------------------------


def test_nudge_names_what_can_be_trimmed_and_never_asks_for_the_impossible(tmp_path):
    book = Notebook.init("tight", goal="ship", budget=300, root=tmp_path)
    for line in EXAMPLE_LINES:
        edit(book, line + "\n", "")
    facts = "".join(f"- [F{n:03d}] value {n} is {n * 7} | source: user | verified\n" for n in range(1, 9))
    edit(book, "## Facts\n", "## Facts\n" + facts)
    accepted(book)
    message = book.nudge()
    assert message is not None and "% of its budget" in message
    assert "trim stale items" not in message and "nothing is stale yet" in message
    edit(book, "## Tracker\n", "## Tracker\n- [T001] [done] read every config\n")
    edit(book, "- [F001] value 1 is 7 | source: user | verified\n", "")
    edit(book, "## Dropped\n", "## Dropped\n- [F001] superseded by the user\n")
    for n in range(9, 14):
        edit(book, "## Facts\n", f"## Facts\n- [F{n:03d}] value {n} is {n * 7} | source: user | verified\n")
    accepted(book)
    message = book.nudge()
    assert message is not None and "delete the accepted ## Dropped lines (F001" in message
    assert "move the done tracker items (T001) to ## Dropped" in message


def test_events_cited_by_dropped_facts_are_not_reported_uncited(book):
    for n in range(1, 5):
        book.log(f"Decision {n}: the window is 0{n}:00 UTC\n".encode(), f"decision {n}")
    facts = "".join(f"- [F00{n}] the window is 0{n}:00 UTC | source: E000{n} | verified\n" for n in range(1, 5))
    edit(book, "## Facts\n", "## Facts\n" + facts)
    accepted(book)
    for n in range(1, 4):  # superseded one by one, then the Dropped lines pruned
        edit(book, f"- [F00{n}] the window is 0{n}:00 UTC | source: E000{n} | verified\n", "")
        edit(book, "## Dropped\n", f"## Dropped\n- [F00{n}] superseded by F004\n")
    accepted(book)
    assert book.status()["uncited_events"] == []
    edit(book, "".join(f"- [F00{n}] superseded by F004\n" for n in (3, 2, 1)), "")
    accepted(book)
    assert book.status()["uncited_events"] == [] and book.nudge() is None
    book.log(b"never recorded\n", "other")
    assert book.status()["uncited_events"] == ["E0005"]


def test_the_default_budget_is_a_setting(tmp_path, monkeypatch):
    row = next(s for s in SETTINGS if s.name == "NOTEWELL_NOTEBOOK_BUDGET")
    assert row.default == str(DEFAULT_BUDGET)
    monkeypatch.delenv("NOTEWELL_NOTEBOOK_BUDGET", raising=False)
    assert Notebook.init("a", goal="g", root=tmp_path).state()["budget"] == DEFAULT_BUDGET
    monkeypatch.setenv("NOTEWELL_NOTEBOOK_BUDGET", "5000")
    assert Notebook.init("b", goal="g", root=tmp_path).state()["budget"] == 5000
    assert Notebook.init("c", goal="g", budget=900, root=tmp_path).state()["budget"] == 900
    monkeypatch.setenv("NOTEWELL_NOTEBOOK_BUDGET", "lots")
    with pytest.raises(InvalidArgumentError, match="NOTEWELL_NOTEBOOK_BUDGET is a number of tokens"):
        Notebook.init("d", goal="g", root=tmp_path)
    assert not re.search(r"\bd\b", " ".join(p.name for p in tmp_path.iterdir()))


def test_the_docs_page_shows_the_format_and_template_as_the_code_makes_them():
    from pathlib import Path

    from notewell.model.notebook_doc import format_help, render_template

    page = (Path(__file__).parents[2] / "docs" / "notebook.md").read_text(encoding="utf-8")
    assert format_help() in page
    assert render_template("fix-timeout", "the deploy stops timing out").rstrip("\n") in page
