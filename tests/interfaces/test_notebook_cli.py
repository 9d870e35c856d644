"""`notewell notebook ...` as an agent runs it, in the test process (see cli_harness)."""

from __future__ import annotations

import json

import pytest

import notewell
from tests.interfaces.cli_harness import call


def nb(cwd, *args, input=None, check=True):
    # The notebook is found from the working directory, and the environment must not name one.
    done = call(["notebook", *args], cwd=cwd, input=input, unset=("AGENT_CONTEXT_ROOT", "NOTEWELL_NOTEBOOK"))
    if check:
        assert done.returncode == 0, done.stderr.decode()
    return done


@pytest.mark.slow
def test_the_loop_from_the_command_line(tmp_path):
    assert b"notebook ready" in nb(tmp_path, "init", "fix", "--goal", "the deploy stops timing out").stdout
    assert (tmp_path / ".agent-context" / ".gitignore").exists()
    pointer = nb(tmp_path, "log", "--label", "deploy log", input=b"ERROR upstream timeout after 30 s\n").stdout
    assert pointer.startswith(b"[E0001] deploy log")
    assert nb(tmp_path, "recall", "E0001", "--grep", "upstream").stdout == b"1: ERROR upstream timeout after 30 s\n"
    path = tmp_path / ".agent-context" / "fix" / "notebook.md"
    text = path.read_text()
    path.write_text(text.replace("## Facts\n", "## Facts\n- [F001] timeout = 30 s | source: E0001 | verified\n"))
    assert nb(tmp_path, "nudge").stdout.startswith(b"notebook.md has edits not accepted yet")
    assert nb(tmp_path, "nudge").stdout == b""  # once
    assert nb(tmp_path, "accept").stdout == b"accepted as revision 2\n"
    bad = path.read_text().replace("timeout = 30 s", "timeout = 60 s").replace("E0001 | verified", "E0007 | verified")
    path.write_text(bad)
    refused = nb(tmp_path, "accept", check=False)
    err = refused.stderr.decode()
    assert refused.returncode == 4 and "error: line 8: F001 was rewritten in place" in err
    assert "error: line 8: E0007 is not in the raw log" in err and "revision 2 stays in force" in err
    assert b"timeout = 30 s" in nb(tmp_path, "show").stdout
    nb(tmp_path, "restore")
    assert path.read_text() == nb(tmp_path, "show").stdout.decode()
    assert b"revision 2" in nb(tmp_path, "status").stdout
    assert b"+- [F001]" in nb(tmp_path, "diff", "1", "2").stdout
    assert nb(tmp_path, "history").stdout.count(b"\n") == 2
    promoted = nb(tmp_path, "promote", "F001", "--store", str(tmp_path / "notes")).stdout.decode()
    assert promoted.startswith("F001 -> nte_")
    with notewell.open(tmp_path / "notes", watch=False) as store:
        assert [c.kind for c in store.search_notes("timeout")] == ["conclusion"]


@pytest.mark.slow
def test_errors_are_one_line_and_nonzero(tmp_path):
    missing = nb(tmp_path, "show", check=False)
    assert missing.returncode == 3 and missing.stderr.decode().count("\n") == 1
    nb(tmp_path, "init", "a", "--goal", "x")
    nb(tmp_path, "init", "b", "--goal", "y")
    several = nb(tmp_path, "show", check=False)
    assert several.returncode == 2 and b"--task" in several.stderr
    assert b"## Goal\ny" in nb(tmp_path, "show", "--task", "b").stdout
    assert nb(tmp_path, "recall", "E0001", "--task", "a", check=False).returncode == 3
    assert nb(tmp_path, "log", "--task", "a", "--label", "x", "/no/such/file", check=False).returncode == 2


@pytest.mark.slow
def test_bench_make_and_grade(tmp_path):
    made = nb(tmp_path, "bench", "make", "b", "--seed", "9", "--noise", "500").stdout.decode()
    assert "seed 9" in made and "quiz.md (11 questions)" in made
    from notewell.agents.notebook_bench import build_bench

    key = build_bench(9, 500).questions
    (tmp_path / "run1.txt").write_text("".join(f"{q.id}: {' '.join(q.expect)}\n" for q in key))
    (tmp_path / "run2.json").write_text(json.dumps({key[0].id: key[0].reject[0], "Q77": "x"}))
    done = nb(tmp_path, "bench", "grade", "b", "run1.txt", "run2.json")
    out, err = done.stdout.decode(), done.stderr.decode()
    assert "run1.txt: 11/11 (100.0%)" in out and "run2.json: 0/11 (0.0%)" in out
    assert "Q01 WRONG [corrected]" in out and "names the decoy" in out and "mean over 2 runs: 50.0%" in out
    assert "Q77 is not a question" in err
    as_json = json.loads(nb(tmp_path, "bench", "grade", "b", "run1.txt", "--json").stdout)
    assert as_json["mean_percent"] == 100.0
    again = nb(tmp_path, "bench", "make", "b", check=False)
    assert (
        again.returncode != 0
        and again.stderr.decode().count("\n") == 1
        and "not an empty folder" in again.stderr.decode()
    )
    missing = nb(tmp_path, "bench", "grade", "b", "nope.txt", check=False)
    assert missing.returncode != 0 and "cannot read nope.txt" in missing.stderr.decode()
    long = nb(tmp_path, "bench", "make", "long", "--seed", "9", "--noise", "500", "--size", "long").stdout.decode()
    assert "session.md (30 prompts), quiz.md (41 questions)" in long
    (tmp_path / "run3.txt").write_text(
        "".join(f"{q.id}: {' '.join(q.expect)}\n" for q in build_bench(9, 500, "long").questions)
    )
    assert "run3.txt: 41/41" in nb(tmp_path, "bench", "grade", "long", "run3.txt").stdout.decode()


@pytest.mark.slow
def test_bench_scale_grade_by_group_and_curve(tmp_path):
    from notewell.agents.notebook_bench import build_bench

    made = nb(tmp_path, "bench", "make", "s", "--seed", "9", "--noise", "300", "--size", "scale", "--survive", "10")
    compact = build_bench(9, 300, "scale", 10).compact_after
    assert (
        f"compacted after prompt {compact[0]}, compacted after prompt {compact[1]} and the last" in made.stdout.decode()
    )
    assert "quiz.md (40 questions); 10 values must survive the compaction" in made.stdout.decode()
    key = build_bench(9, 300, "scale", 10).questions
    (tmp_path / "all.txt").write_text("".join(f"{q.id}: {' and '.join(q.expect)}\n" for q in key))
    (tmp_path / "reread.txt").write_text(
        "".join(f"{q.id}: {' and '.join(q.expect)}\n" for q in key if q.group == "re-readable")
    )
    shown = nb(tmp_path, "bench", "grade", "s", "all.txt", "--arm", "notebook").stdout.decode()
    assert "  conversation-only        8/8     100.0%" in shown and "  kind vanished            2/2     100.0%" in shown
    for arm, answers in (("notebook", "all.txt"), ("plain", "reread.txt")):
        graded = nb(tmp_path, "bench", "grade", "s", answers, "--arm", arm, "--json").stdout
        (tmp_path / f"{arm}.json").write_bytes(graded)
        assert json.loads(graded)["runs"][0]["by_group"]["output-only"]["total"] == 2
    table = nb(tmp_path, "bench", "curve", "notebook.json", "plain.json").stdout.decode().splitlines()
    assert [line.split()[:5] for line in table[1:]] == [
        ["notebook", "scale", "10", "1", "100.0"],
        ["plain", "scale", "10", "1", "0.0"],
    ]
    rows = json.loads(nb(tmp_path, "bench", "curve", "plain.json", "--json").stdout)["curve"]
    assert rows[0]["re-readable"] == 100.0 and rows[0]["must_survive"] == 0.0
    for args, message in [
        (("make", "x", "--size", "long", "--survive", "10"), b"survive is for --size scale"),
        (("make", "x", "--size", "scale", "--survive", "81"), b"from 5 to 80"),
        (("curve", "all.txt"), b"all.txt is not JSON"),
        (("curve", "missing.json"), b"cannot read missing.json"),
    ]:
        refused = nb(tmp_path, "bench", *args, check=False)
        assert refused.returncode == 2 and message in refused.stderr and refused.stderr.count(b"\n") == 1


def test_the_format_is_in_help(tmp_path):
    # An agent learned the line format from two failed accepts: it is in --help now.
    for args in (("--help",), ("accept", "--help")):
        shown = nb(tmp_path, *args).stdout.decode()
        assert "the notebook's format (notebook.md; accept checks it):" in shown
        assert "## Tracker   - [T001] [STATE] what to do   (STATE: todo, doing, done or blocked)" in shown
        assert "## Next      the next step: one to three plain lines (a '- ' before each is fine), no id" in shown
        assert "or user (said in the conversation)" in shown and "its Dropped line may be deleted" in shown


@pytest.mark.slow
def test_init_takes_the_task_one_way(tmp_path):
    shown = nb(tmp_path, "init", "--help").stdout.decode()
    assert "[TASK]" in shown and "--task" not in shown
    assert "(default: $NOTEWELL_NOTEBOOK_BUDGET, else 3000)" in " ".join(shown.split())
    made = nb(tmp_path, "init", "one", "--goal", "g", "--json").stdout
    assert json.loads(made)["task"] == "one"
    # --task, as every other action takes it, is still understood (hidden), but never beside TASK.
    assert json.loads(nb(tmp_path, "init", "--task", "two", "--goal", "g", "--json").stdout)["task"] == "two"
    both = nb(tmp_path, "init", "three", "--task", "four", "--goal", "g", check=False)
    assert both.returncode == 2 and "give the task once, as TASK: 'three' or 'four'?" in both.stderr.decode()
    neither = nb(tmp_path, "init", "--goal", "g", check=False)
    assert neither.returncode == 2 and "name the task: notewell notebook init TASK --goal" in neither.stderr.decode()
    assert not (tmp_path / ".agent-context" / "three").exists() and not (tmp_path / ".agent-context" / "four").exists()


def test_status_names_what_may_be_trimmed(tmp_path):
    nb(tmp_path, "init", "t", "--goal", "g")
    path = tmp_path / ".agent-context" / "t" / "notebook.md"
    path.write_text(path.read_text().replace("## Tracker\n", "## Tracker\n- [T001] [done] read the log\n"))
    nb(tmp_path, "accept")
    assert "to trim: move the done tracker items T001 to ## Dropped" in nb(tmp_path, "status").stdout.decode()


@pytest.mark.slow
def test_bench_runner_steps(tmp_path):
    nb(tmp_path, "bench", "make", "s", "--seed", "4", "--noise", "300", "--size", "scale", "--survive", "5",
       "--summary-chars", "300")  # fmt: skip
    (tmp_path / "summary.txt").write_text("ledgerd port=41237," * 20)  # 380 characters, one "word"
    over = nb(tmp_path, "bench", "summary-check", "s", "summary.txt", check=False)
    assert over.returncode != 0 and b"380 characters (over 300)" in over.stdout and b"void" in over.stderr
    assert b"within 500" in nb(tmp_path, "bench", "summary-check", "s", "summary.txt", "--limit", "500").stdout
    nb(tmp_path, "bench", "summary-check", "s", "summary.txt", "--cut")
    assert len((tmp_path / "summary.txt").read_text()) == 300
    (tmp_path / "s" / "copy.log").write_text("kept\n")
    done = json.loads(nb(tmp_path, "bench", "compact", "s", "--arm", "plain", "--json").stdout)
    assert done["removed"] == ["copy.log"] and done["n"] == 1
    (tmp_path / "answers.txt").write_text("Q01: 1\n")
    graded = nb(tmp_path, "bench", "grade", "s", "answers.txt", "--json")
    assert b"1 compactions logged, the protocol has 3 (the run is void)" in graded.stderr
    assert json.loads(graded.stdout)["runs"][0]["compactions"]["done"] == 1
    bad = nb(tmp_path, "bench", "compact", "s", "--arm", "both", check=False)
    assert bad.returncode != 0 and b"invalid choice" in bad.stderr
