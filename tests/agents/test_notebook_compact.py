"""The runner's steps at a compaction: the summary's budget in characters, what each arm may keep, the log."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from notewell.agents.notebook_bench import make_bench
from notewell.agents.notebook_compact import compact, compaction_record, summary_check
from notewell.errors import InvalidArgumentError


@pytest.mark.slow
def test_the_scale_budget_is_in_characters(tmp_path):
    make_bench(tmp_path / "b", seed=3, noise=300, size="scale", survive=10)
    session = (tmp_path / "b" / "session.md").read_text()
    manifest = json.loads((tmp_path / "b" / "bench.json").read_text())
    assert manifest["compaction_chars"] == 900 and "compaction_words" not in manifest
    assert session.count("**Compact here**: at most 900 characters carry over.") == 2
    assert "words" not in session.split("## Prompt 1")[0]  # the protocol counts no words
    assert "bench compact DIR --arm plain|notebook" in session and "summary-check" in session
    make_bench(tmp_path / "c", seed=3, noise=300, size="scale", survive=10, summary_chars=600)
    assert json.loads((tmp_path / "c" / "bench.json").read_text())["compaction_chars"] == 600
    for bad in (199, 20_001, True):
        with pytest.raises(InvalidArgumentError, match="summary_chars"):
            make_bench(tmp_path / f"x{bad}", seed=3, noise=300, size="scale", summary_chars=bad)
    with pytest.raises(InvalidArgumentError, match="summary_chars is for --size scale"):
        make_bench(tmp_path / "y", seed=3, noise=300, size="long", summary_chars=900)


def test_summary_check_counts_characters_not_words():
    # what the plain agents wrote: 150 "words" of comma-joined key=value runs, far over 900 characters
    packed = " ".join(",".join(f"ledgerd.port{i}=4{i:04d}" for i in range(j, j + 3)) for j in range(0, 450, 3))
    assert len(packed.split()) == 150 and len(packed) > 3000
    rows = summary_check({"packed": packed, "prose": "The canary runs on 7313. " * 30}, 900, cut=True)
    assert [(r["chars"], r["over"]) for r in rows] == [(len(packed), True), (750, False)]
    assert rows[0]["text"] == packed[:900]
    assert summary_check({"é": "é" * 900}, 900)[0]["over"] is False  # characters, not bytes
    with pytest.raises(InvalidArgumentError, match="limit"):
        summary_check({}, 0)


def _tools(work, kind):
    return sorted(p.relative_to(work).as_posix() for p in (work / "tools").glob(f"{kind}_*.py"))


@pytest.mark.slow
def test_compact_keeps_only_the_arms_allowance(tmp_path):
    root = tmp_path / "b"
    bench = make_bench(root, seed=8, noise=300, size="scale", survive=10)
    work = root / "workspace"
    for script in _tools(work, "probe") + _tools(work, "rotate"):
        subprocess.run([sys.executable, script], cwd=work, check=True, capture_output=True)
    changed = {p: (work / p).read_text() for p in bench.changing}
    log = next(p for p in bench.changing if p.endswith(".log"))
    (root / "ledgerd-current.log.pre-rotate").write_text("replay ok, checkpoint CKP-abcdef\n")  # a copy kept
    (work / "logs" / "saved").mkdir()
    (work / "logs" / "saved" / "copy.log").write_text("x\n")
    (work / "config" / "app.yaml").write_text("tampered\n")  # a file of make's, edited
    (work / "tools" / "probe.py.bak").symlink_to(work / "tools" / _tools(work, "probe")[0].split("/")[1])
    notebook = root / ".agent-context" / "fix" / "notebook.md"
    notebook.parent.mkdir(parents=True)
    notebook.write_text("# kept by the notebook arm\n")
    entry = compact(root, "plain")
    assert sorted(entry["removed"]) == [
        ".agent-context/fix/notebook.md",
        "ledgerd-current.log.pre-rotate",
        "workspace/logs/saved/copy.log",
        "workspace/tools/probe.py.bak",
    ]
    assert entry["restored"] == ["workspace/config/app.yaml"] and entry["tampered"] == []
    assert (work / "config" / "app.yaml").read_text() == bench.files["config/app.yaml"]
    assert {p: (work / p).read_text() for p in bench.changing} == changed  # the tools' changes stay
    assert not (root / ".agent-context").exists() and not (work / "logs" / "saved").exists()
    notebook.parent.mkdir(parents=True)
    notebook.write_text("# kept\n")
    (root / "notes.txt").write_text("not the notebook\n")
    (work / log).write_text("my notes: checkpoint CKP-abcdef\n")  # a changing file used as a hiding place
    entry = compact(root, "notebook")
    assert entry["removed"] == ["notes.txt"] and notebook.read_text() == "# kept\n"
    assert entry["tampered"] == [f"workspace/{log}"] and (work / log).read_text() == changed[log]  # rotated, not make's
    record = compaction_record(root)
    assert record["done"] == 2 and record["expected"] == 3 and record["arms"] == ["notebook", "plain"]
    assert len(record["problems"]) == 3  # too few, two arms, a tampered file
    with pytest.raises(InvalidArgumentError, match="arm is plain or notebook"):
        compact(root, "both")


@pytest.mark.slow
def test_a_clean_run_has_the_protocols_count(tmp_path):
    make_bench(tmp_path / "b", seed=2, noise=300, size="scale", survive=5)
    assert compaction_record(tmp_path / "b")["problems"] == ["0 compactions logged, the protocol has 3"]
    for _ in range(3):
        assert compact(tmp_path / "b", "plain")["removed"] == []
    record = compaction_record(tmp_path / "b")
    assert record == {"done": 3, "expected": 3, "arms": ["plain"], "tampered": [], "problems": []}
    make_bench(tmp_path / "s", seed=2, noise=300)  # short and long: one compaction, after the last prompt
    compact(tmp_path / "s", "notebook")
    assert compaction_record(tmp_path / "s")["problems"] == []


@pytest.mark.slow
def test_no_output_value_comes_back_from_the_workspace(tmp_path):
    """Once the tools ran, the values they printed or rotated away are nowhere in the folder: not in the
    probes' state (a one-way hash of the secret that printed the leader), their source, or the new log."""
    root = tmp_path / "b"
    bench = make_bench(root, seed=1, noise=300, size="scale", survive=40)
    work = root / "workspace"
    printed = {}
    for script in _tools(work, "probe"):
        out = subprocess.run([sys.executable, script], cwd=work, check=True, capture_output=True, text=True).stdout
        printed[script] = out.split(": ")[1].strip()
    for script in _tools(work, "rotate"):
        subprocess.run([sys.executable, script], cwd=work, check=True, capture_output=True)
    outputs = [q for q in bench.questions if q.group == "output-only"]
    assert len(outputs) == 8 and sorted(printed.values()) == sorted(q.expect[0] for q in outputs if "probe_" in q.text)
    everything = "\n".join(p.read_text() for p in root.rglob("*") if p.is_file())
    for q in outputs:
        assert not re.search(rf"(?<![\w-]){re.escape(q.expect[0])}(?![\w-])", everything), q.text
