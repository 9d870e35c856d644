"""``notewell bench handoff make|next|grade`` from the command line."""

from __future__ import annotations

import json

import pytest

from notewell.agents.handoff_bench import build_handoff
from tests.interfaces.cli_harness import call


def bench(cwd, *args, check=True):
    done = call(["bench", "handoff", *args], cwd=cwd)
    if check:
        assert done.returncode == 0, done.stderr.decode()
    return done


@pytest.mark.slow
def test_make_next_grade(tmp_path):
    made = bench(tmp_path, "make", "b", "--seed", "9").stdout.decode()
    assert "session1.md (5 prompts), session2.md (1)" in made and "bench handoff next b --arm ARM" in made
    key = build_handoff(9).key
    (tmp_path / "b" / "workspace" / "MEMORY.md").write_text("kept\n")
    moved = bench(tmp_path, "next", "b", "--arm", "memory-file").stdout.decode()
    assert moved.startswith("session 2 may begin (arm memory-file): session 1 made 0 tool calls")
    (tmp_path / "b" / "workspace" / "FIX.md").write_text(
        f"remedy: {key['mode']}-record {key['record']}\nticket: {key['ticket']}\n"
    )
    (tmp_path / "t.txt").write_text("$ cat ../session1.md\n")
    graded = bench(tmp_path, "grade", "b", "--transcript", "t.txt").stdout.decode()
    assert "seed 9, arm memory-file" in graded and "task completed: yes (as decided: yes)" in graded
    assert "ticket kept, release missing" in graded and "TRANSCRIPT t.txt: 1: $ cat ../session1.md" in graded
    as_json = json.loads(bench(tmp_path, "grade", "b", "--json").stdout)
    assert as_json["findings"]["record"] == "reused" and as_json["decisions"]["mode"] == "kept"


@pytest.mark.slow
def test_errors_are_one_line_and_nonzero(tmp_path):
    bench(tmp_path, "make", "b")
    for args, status in (
        (("make", "b"), 2),
        (("grade", "nowhere"), 3),
        (("next", "b", "--arm", "notes"), 2),
        (("grade", "b", "--transcript", "no-such-file"), 2),
    ):
        done = bench(tmp_path, *args, check=False)
        assert done.returncode == status and done.stderr.decode().count("\n") == 1, (args, done.stderr)


@pytest.mark.slow
def test_next_gives_the_notewell_arm_its_briefing(tmp_path):
    import notewell

    bench(tmp_path, "make", "b", "--seed", "3")
    with notewell.open(tmp_path / "b" / "notes", watch=False) as store:
        store.add_note("---\ntitle: Bad record found\nkind: finding\n---\nshard 7 holds rec-1.\n", author="s1")
    said = bench(tmp_path, "next", "b", "--arm", "notewell").stdout.decode()
    preamble = (tmp_path / "b" / "preamble-session2.txt").read_text()
    assert preamble.startswith("Memory: this project keeps notes in notewell") and "{briefing}" not in preamble
    assert '"Bad record found" by "s1"' in preamble and "> shard 7 holds rec-1." in preamble
    assert preamble.strip() in said


@pytest.mark.slow
def test_a_past_is_written_by_start_and_shown_to_each_arm(tmp_path):
    made = bench(tmp_path, "make", "m", "--seed", "2", "--history", "120").stdout.decode()
    assert "a past of 120 entries: start m --arm ARM before session 1" in made
    said = bench(tmp_path, "start", "m", "--arm", "memory-file").stdout.decode()
    assert "120 of the past's 120 entries written" in said
    first = (tmp_path / "m" / "preamble-session1.txt").read_text()
    assert "The runtime loaded its first 200 lines (of 4" in first and "{head}" not in first
    assert first.count("\n## ") < 120  # the head, not the whole file
    memory = tmp_path / "m" / "workspace" / "MEMORY.md"
    memory.write_text("# kept {total} and {head} as written\n" + memory.read_text())
    bench(tmp_path, "next", "m", "--arm", "memory-file")
    second = (tmp_path / "m" / "preamble-session2.txt").read_text()
    assert "the previous agent on this task among them" in second
    assert "# kept {total} and {head} as written" in second and "lines (of 482)" in second
    bench(tmp_path, "make", "n", "--seed", "2", "--history", "120")
    bench(tmp_path, "start", "n", "--arm", "notewell")
    first = (tmp_path / "n" / "preamble-session1.txt").read_text()
    assert "[Recent notes]" in first and '"earlier-agents"' in first and "{briefing}" not in first
    graded = bench(tmp_path, "grade", "n").stdout.decode()
    assert "the past (120 entries; mode and release are its decisions)" in graded
    for args in (("make", "x", "--history", "1001"), ("start", "n", "--arm", "notewell")):
        done = bench(tmp_path, *args, check=False)
        assert done.returncode != 0 and done.stderr.decode().count("\n") == 1, (args, done.stderr)
