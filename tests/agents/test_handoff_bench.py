"""The handoff benchmark: deterministic workspaces, tools that log every call in a chain, a key that
matches what the tools answer, and a grader that tells a perfect handoff from a run with no memory."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.agents.handoff_bench import build_handoff, make_handoff, next_session
from notewell.agents.handoff_grade import flag_transcript, grade_handoff, parse_fix
from notewell.agents.handoff_tools import WRITERS
from notewell.errors import InvalidArgumentError, NotFoundError


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def tool(root, *args):
    """Run a workspace tool as the agent would, from workspace/."""
    done = subprocess.run([sys.executable, *args], cwd=root / "workspace", capture_output=True, text=True)
    return done.stdout


def _log(root):
    return [json.loads(line) for line in (root / "calls.jsonl").read_text().splitlines()]


def test_the_same_seed_makes_the_same_bytes(tmp_path):
    make_handoff(tmp_path / "a", seed=42)
    make_handoff(tmp_path / "b", seed=42)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    assert build_handoff(43).key != build_handoff(42).key


def test_the_key_stays_out_of_the_folder(tmp_path):
    handoff = make_handoff(tmp_path / "b", seed=5)
    key = handoff.key
    everything = "\n".join(p.read_text() for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert key["record"] not in everything  # computed by the tools, never written
    # The writer is one of the builds the tools list; nothing written singles it out.
    assert everything.count(key["writer"]) == min(everything.count(w) for w in WRITERS)
    workspace = "\n".join(p.read_text() for p in (tmp_path / "b" / "workspace").rglob("*") if p.is_file())
    for value in (key["ticket"], key["dry_run"], key["release"], key["frozen"]):  # said only in session 1
        assert value not in workspace and value in (tmp_path / "b" / "session1.md").read_text()
        assert value not in (tmp_path / "b" / "session2.md").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 7, 2**32 - 1])
def test_the_key_is_what_the_tools_answer(tmp_path, seed):
    """An independent read-back: a binary search with the probe finds the key's shard, record and writer."""
    handoff = make_handoff(tmp_path / "b", seed=seed)
    key, root = handoff.key, tmp_path / "b"
    low, high = 0, 63
    while low < high:
        mid = (low + high) // 2
        if "a record that fails verification is in" in tool(root, "tools/probe.py", "shards", f"{low}-{mid}"):
            high = mid
        else:
            low = mid + 1
    assert low == key["bad_shard"]
    record = re.search(r"fails its checksum: (rec-\w+)", tool(root, "tools/probe.py", "shard", str(low))).group(1)
    assert record == key["record"]
    assert key["writer"] in tool(root, "tools/probe.py", "record", record)
    for name in key["tried"] + key["untried"]:
        assert tool(root, "tools/try.py", name).startswith("FAILED")
    assert tool(root, "tools/try.py", "quarantine-record", record).startswith("OK")
    assert tool(root, "tools/try.py", "delete-record", "rec-0000000000").startswith("FAILED")
    session1 = (root / "session1.md").read_text()
    assert all(f"`{name}`" in session1 for name in key["tried"])
    assert not any(f"`{name}`" in session1 for name in key["untried"])
    assert f"`{key['mode']}-record ID`" in session1 and "never use `skip-checksums`" in session1
    (root / "workspace" / "FIX.md").write_text(f"remedy: {key['mode']}-record {record}\n")
    assert tool(root, "tools/check.py").startswith("PASS")


@pytest.mark.slow
def test_every_call_is_logged_in_a_chain(tmp_path):
    make_handoff(tmp_path / "b", seed=3)
    root = tmp_path / "b"
    tool(root, "tools/try.py", "clear-cache")
    tool(root, "tools/probe.py", "shards", "0-9")
    tool(root, "tools/probe.py", "nonsense")
    tool(root, "tools/check.py")
    log = _log(root)
    assert [e["tool"] for e in log] == ["try", "probe", "probe", "check"]
    assert [e["cost_min"] for e in log] == [3, 20, 0, 0] and log[1]["prev"] == log[0]["hash"]
    assert grade_handoff(root)["log_problems"] == []
    path = root / "calls.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], *lines[2:]]) + "\n")  # a try erased
    assert any("breaks the chain" in p for p in grade_handoff(root)["log_problems"])


def _perfect_session2(root, key):
    (root / "workspace" / "FIX.md").write_text(
        f"remedy: {key['mode']}-record {key['record']}\ncause: {key['writer']}\nticket: {key['ticket']}\n"
        f"release: {key['release']}\nruled_out: {', '.join(key['tried'])}\n"
    )
    tool(root, "tools/check.py")


def _session1(root, key):
    """Session 1 as its prompts ask: three dead ends, a binary search, the record's writer."""
    for name in key["tried"]:
        tool(root, "tools/try.py", name)
    for span in ("0-31", "32-63"):
        tool(root, "tools/probe.py", "shards", span)
    tool(root, "tools/probe.py", "shard", str(key["bad_shard"]))
    tool(root, "tools/probe.py", "record", key["record"])


@pytest.mark.slow
def test_a_perfect_handoff_and_a_run_with_no_memory_grade_apart(tmp_path):
    """Scripted runs, as tests of the grader (not results): the differences are the ones it counts."""
    runs = {}
    for arm in ("notewell", "none"):
        root = tmp_path / arm
        key = make_handoff(root, seed=11).key
        _session1(root, key)
        (root / "workspace" / "FIX.md").write_text("remedy: not yet\n")  # session 1's leftovers are cleared
        done = next_session(root, arm)
        assert "FIX.md" in done["removed"] and not (root / "workspace" / "FIX.md").exists()
        if arm == "notewell":
            _perfect_session2(root, key)
        else:  # the runbook in order, cheapest first; then a search again; guesses for what was only said
            for name in sorted(key["tried"] + key["untried"]):
                tool(root, "tools/try.py", name)
            tool(root, "tools/probe.py", "shards", "0-31")
            tool(root, "tools/probe.py", "shards", "32-63")
            for shard in range(64):
                if shard == key["bad_shard"]:
                    tool(root, "tools/probe.py", "shard", str(shard))
            tool(root, "tools/try.py", "delete-record", key["record"])
            (root / "workspace" / "FIX.md").write_text(
                f"remedy: delete-record {key['record']}\ncause: unknown\nticket: unknown\nrelease: unknown\n"
                f"ruled_out: {', '.join(sorted(key['tried'] + key['untried']))}\n"
            )
            tool(root, "tools/check.py")
        runs[arm] = grade_handoff(root)
    good, plain = runs["notewell"], runs["none"]
    key = build_handoff(11).key
    assert good["arm"] == "notewell" and good["completed"] and good["completed_as_decided"]
    assert good["dead_ends_retried"] == [] and good["probes"] == 0 and good["probe_minutes"] == 0
    assert set(good["decisions"].values()) == {"kept"} and good["findings"] == {"record": "reused", "writer": "reused"}
    assert good["ruled_out_named"] == good["session1_failed_tries"] == 3
    assert plain["completed"] and plain["dead_ends_retried"] == sorted(key["tried"])
    assert plain["new_dead_ends"] == sorted(key["untried"]) and plain["probes_repeated"] == 3
    assert plain["probe_minutes"] == 64 * 2 + 5 == plain["session1_probe_minutes"] - 10
    assert plain["findings"] == {"record": "re-probed", "writer": "missing"}
    assert plain["decisions"]["ticket"] == plain["decisions"]["release"] == "missing"
    assert plain["decisions"]["mode"] == ("kept" if key["mode"] == "delete" else "contradicted")
    assert plain["completed_as_decided"] is (key["mode"] == "delete")
    assert good["log_calls"]["session1"] == plain["log_calls"]["session1"] == 7 and not plain["log_problems"]


@pytest.mark.slow
def test_hedges_and_the_forbidden_remedy_are_contradictions(tmp_path):
    root = tmp_path / "b"
    key = make_handoff(root, seed=2).key
    next_session(root, "none")
    other = "quarantine" if key["mode"] == "delete" else "delete"
    (root / "workspace" / "FIX.md").write_text(
        f"remedy: `{other}-record {key['record']}`\ncause: {key['writer']} or wirecodec 1.3.9+b44\n"
        f"ticket: {key['ticket']} (or {key['dry_run']})\nrelease: {key['frozen']}\n"
    )
    tool(root, "tools/try.py", "skip-checksums")
    result = grade_handoff(root)
    assert result["completed"] and not result["completed_as_decided"]
    assert result["decisions"] == {
        "no skip-checksums": "contradicted", "mode": "contradicted", "ticket": "contradicted",
        "release": "contradicted",
    }  # fmt: skip
    expected_writer = "wrong" if key["writer"] != "wirecodec 1.3.9+b44" else "reused"
    assert result["findings"] == {"record": "reused", "writer": expected_writer}


@pytest.mark.slow
def test_next_restores_the_workspace_and_keeps_only_what_the_arm_allows(tmp_path):
    for arm, kept in (("memory-file", True), ("none", False), ("notewell", False)):
        root = tmp_path / arm
        make_handoff(root, seed=4)
        work = root / "workspace"
        (work / "MEMORY.md").write_text("the record is rec-…\n")
        (work / "scratch").mkdir()
        (work / "scratch" / "notes.txt").write_text("x\n")
        (work / "RUNBOOK.md").write_text("edited\n")
        (work / "tools" / "try.py").unlink()
        tool(root, "tools/probe.py", "shard", "1")
        done = next_session(root, arm)
        assert (work / "MEMORY.md").exists() is kept and not (work / "scratch").exists()
        assert done["restored"] == ["RUNBOOK.md", "tools/try.py"] and done["session1_calls"] == 1
        if not (tmp_path / "fresh").exists():
            make_handoff(tmp_path / "fresh", seed=4)
        made = _files(tmp_path / "fresh")
        now = _files(root)
        assert all(now[p] == b for p, b in made.items() if p.startswith("workspace/")), arm
        runs = json.loads((root / "runs.json").read_text())
        assert runs["arm"] == arm and runs["session1_entries"] == 1 and runs["session1_head"] == _log(root)[0]["hash"]
        with pytest.raises(InvalidArgumentError, match="begun already"):
            next_session(root, arm)


@pytest.mark.slow
def test_session_1_rewritten_in_session_2_is_found(tmp_path):
    root = tmp_path / "b"
    key = make_handoff(root, seed=6).key
    _session1(root, key)
    next_session(root, "none")
    # An agent that read the tools' code rebuilds the whole chain without session 1's probes.
    from notewell.agents.handoff_tools import LOG_NAME, append_entry

    kept = [e for e in _log(root) if e["tool"] != "probe"]
    (root / LOG_NAME).unlink()
    for e in kept:
        append_entry(root, {k: e[k] for k in ("tool", "args", "result", "cost_min")})
    result = grade_handoff(root)
    assert any("not what next recorded" in p for p in result["log_problems"])


def test_transcript_flags_reading_hidden_things():
    text = (
        "$ python tools/try.py clear-cache\n$ cat tools/_shared.py\n$ cat tools/try.py\n$ tail ../session1.md\n"
        "$ grep hash ../calls.jsonl\nI will run python -c 'import notewell.agents.handoff_bench'\n"
        "$ python tools/probe.py shard 3\n"
    )
    flagged = flag_transcript(text)
    assert [f.split(":")[0] for f in flagged] == ["2", "3", "4", "5", "6"]


def test_fix_fields_in_the_forms_agents_write():
    assert parse_fix("remedy: quarantine-record rec-1\n**ticket:** OPS-1\n- `release`: 1.2.3\nnote: x\n") == {
        "remedy": "quarantine-record rec-1",
        "ticket": "OPS-1",
        "release": "1.2.3",
    }
    assert parse_fix("ticket: OPS-1\nticket: OPS-2\n") == {"ticket": "OPS-1"}  # the first one counts


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_any_fix_text_parses(text):
    fields = parse_fix(text)
    assert set(fields) <= {"remedy", "cause", "ticket", "release", "ruled_out"}


@pytest.mark.slow
def test_the_worst_inputs_are_linear():
    # The longest plausible FIX.md and transcript line: ten times the size takes about ten times as long.
    from tests.conftest import cpu_seconds

    def cpu(text, fn):
        return cpu_seconds(lambda: fn(text))

    for fn, unit in ((parse_fix, "- **" * 20_000 + "remedy"), (flag_transcript, "cat " + "x" * 79 + " ")):
        small, big = cpu(unit * 5, fn), cpu(unit * 50, fn)
        assert big < 0.5 and big < 30 * max(small, 1e-3)


def test_bad_input(tmp_path):
    make_handoff(tmp_path / "b")
    with pytest.raises(InvalidArgumentError, match="not an empty folder"):
        make_handoff(tmp_path / "b")
    for seed in (-1, 2**32, "1", True):
        with pytest.raises(InvalidArgumentError):
            build_handoff(seed)
    with pytest.raises(InvalidArgumentError, match="arm"):
        next_session(tmp_path / "b", "notes")
    with pytest.raises(NotFoundError):
        grade_handoff(tmp_path)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "handoff.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(InvalidArgumentError, match="manifest"):
        grade_handoff(tmp_path / "c")
    (tmp_path / "c" / "handoff.json").write_text("{not json")
    with pytest.raises(InvalidArgumentError, match="not valid JSON"):
        next_session(tmp_path / "c", "none")
    # A run graded before anything happened: nothing done, nothing claimed.
    result = grade_handoff(tmp_path / "b")
    assert not result["completed"] and result["arm"] is None and result["log_calls"] == {"session1": 0, "session2": 0}


_ENTRY = st.fixed_dictionaries(
    {},
    optional={
        "tool": st.sampled_from(["try", "probe", "check", "session", "x"]),
        "args": st.one_of(st.lists(st.text(max_size=12), max_size=3), st.text(max_size=5), st.integers()),
        "result": st.one_of(st.text(max_size=30), st.sampled_from(["FAILED: x", "PASS"]), st.none()),
        "cost_min": st.one_of(st.integers(), st.text(max_size=3), st.none(), st.booleans()),
        "hash": st.text(max_size=5),
    },
)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(_ENTRY, st.just("not json")), max_size=12), st.text(max_size=200))
def test_a_tampered_log_and_any_fix_are_graded_not_crashed_on(tmp_path_factory, lines, fix):
    root = tmp_path_factory.mktemp("h")
    make_handoff(root / "b", seed=1)
    log = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    (root / "b" / "calls.jsonl").write_text(log)
    (root / "b" / "workspace" / "FIX.md").write_text(fix)
    result = grade_handoff(root / "b")
    assert isinstance(result["completed"], bool) and result["probe_minutes"] >= 0
    assert bool(result["log_problems"]) is bool(lines)  # no line of these is a link of the chain


def test_next_never_follows_a_link_out_of_the_workspace(tmp_path):
    root = tmp_path / "b"
    make_handoff(root, seed=1)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_text("keep me\n")
    (root / "workspace" / "link").symlink_to(outside)
    shutil.rmtree(root / "workspace" / "tools")
    (root / "workspace" / "tools").symlink_to(outside)  # the tools' folder swapped for a link
    done = next_session(root, "none")
    assert (outside / "precious").read_text() == "keep me\n" and sorted(p.name for p in outside.iterdir()) == [
        "precious"
    ]
    assert "link" in done["removed"] and not (root / "workspace" / "tools").is_symlink()
    assert (root / "workspace" / "tools" / "try.py").is_file()


@pytest.mark.slow
def test_the_grade_and_the_checker_agree_on_done(tmp_path):
    root = tmp_path / "b"
    key = make_handoff(root, seed=8).key
    right = f"{key['mode']}-record {key['record']}"
    for text, done in [
        (f"remedy: {right}\n", True),
        (f"remedy: `{right}`\n", True),
        (f"- **remedy**: {right}\n", False),  # the checker reads a line that starts remedy:
        (f"remedy: {right} (approved)\n", False),
        (f"remedy: {key['mode']}-record rec-0\n", False),
        ("remedy: skip-checksums\n", True),  # done, though against a decision
        (f"ticket: x\nremedy: {right}\nremedy: skip-checksums\n", True),  # the first line counts
        ("", False),
    ]:
        (root / "workspace" / "FIX.md").write_text(text)
        said = tool(root, "tools/check.py")
        assert said.startswith("PASS" if done else "FAIL"), text
        assert grade_handoff(root)["completed"] is done, text


def test_values_in_the_forms_agents_write_them(tmp_path):
    root = tmp_path / "b"
    key = make_handoff(root, seed=9).key
    build = key["writer"].split()[-1]  # 1.4.2+b19
    (root / "workspace" / "FIX.md").write_text(
        f"remedy: {key['mode']}-record {key['record']}\ncause: the writer build {build}\n"
        f"ticket: {key['ticket'].lower()}\nrelease: v{key['release']}\n"
    )
    result = grade_handoff(root)
    assert result["findings"]["writer"] == "reused"
    assert result["decisions"]["ticket"] == result["decisions"]["release"] == "kept"


def test_a_viewer_is_flagged_on_the_tools_source_only_not_beside_a_tools_run():
    # Found by the first agent runs: each session 2 that printed FIX.md and then ran the checker
    # was flagged as reading the tools' source.
    for innocent in (
        "$ cat FIX.md && python tools/check.py",
        "$ cat FIX.md; python tools/check.py",
        "$ sed -n 595,601p logs/export.log; python tools/try.py --help",
        "$ head -3 FIX.md | python tools/check.py",
    ):
        assert flag_transcript(innocent) == [], innocent
    for reading in ("$ cat tools/try.py", "$ sed -n 1,40p tools/_shared.py", "$ less  workspace/tools/probe.py"):
        assert flag_transcript(reading) != [], reading
