"""The notebook benchmark's scale size: as many must-survive values as asked, each where the key says."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys

import pytest

from notewell.agents.notebook_bench import build_bench, grade_answers, make_bench
from notewell.errors import InvalidArgumentError


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _digest(root):
    h = hashlib.sha256()
    for rel, data in _files(root).items():
        h.update(rel.encode() + b"\0" + data + b"\0")
    return h.hexdigest()


# What the generator wrote for these seeds before the scale size was added (noise 4000): the
# short and long benchmarks of a seed stay byte for byte what they were, so earlier runs still grade.
BEFORE = {
    ("short", 1): "b873019c0e116be02f7d4067e34f6ce92401b10158c30c214cb13437ddfffd7d",
    ("short", 2): "3f9d95fa2559902223a87f3d7734de33c8f66da0297db82ffa0a2b687dfd5eeb",
    ("short", 3): "4fd1830b04dd5f5cf28db792f4a6eecc48e38d2c3fb9ebe2a813d25e47035025",
    ("long", 1): "bcf136b3f9f64b9160c78051d74d30cc783d99805413062328e6db65ab4d7e70",
    ("long", 2): "7f02582af88b0e6c184353382bf992b502746fc1deee8336d458bcee9c67cfea",
    ("long", 3): "16040f3f0655d8a56fcbea345d88d0c4763dc0b1afc63001e6718dc884ba16ce",
}


@pytest.mark.slow
@pytest.mark.parametrize(("size", "seed"), sorted(BEFORE))
def test_short_and_long_are_byte_for_byte_what_they_were(tmp_path, size, seed):
    make_bench(tmp_path / "b", seed=seed, size=size)
    assert _digest(tmp_path / "b") == BEFORE[size, seed]


@pytest.mark.slow
def test_the_same_seed_and_count_make_the_same_bytes(tmp_path):
    make_bench(tmp_path / "a", seed=4, noise=400, size="scale", survive=40)
    make_bench(tmp_path / "b", seed=4, noise=400, size="scale", survive=40)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    other = build_bench(4, 400, "scale", 20)
    assert [q.expect for q in other.questions[31:]] != [
        q.expect for q in build_bench(4, 400, "scale", 40).questions[31:]
    ]
    # the short session inside is the seed's short benchmark
    short = build_bench(4, 400)
    assert [q.expect for q in other.questions[:11]] == [q.expect for q in short.questions]
    assert {k: v for k, v in other.files.items() if k in short.files} == short.files


@pytest.mark.parametrize("survive", [5, 10, 20, 40, 80])
def test_the_must_survive_count_is_the_parameter(tmp_path, survive):
    bench = make_bench(tmp_path / "b", seed=survive, noise=300, size="scale", survive=survive)
    groups = [q.group for q in bench.questions]
    assert bench.survive == survive == groups.count("conversation-only") + groups.count("output-only")
    assert groups.count("output-only") == max(2, survive // 5) and groups.count("re-readable") == 30
    talk = "\n".join(bench.prompts)
    # every conversation-only value but the short session's canary port is a rollout's "Decision:" line
    decided = re.findall(r"^Decision: the .+ rollout is ", talk, re.M)
    assert len(decided) == groups.count("conversation-only") - 1
    first, second = bench.compact_after
    assert 0 < first < second < len(bench.prompts)
    session = (tmp_path / "b" / "session.md").read_text()
    assert session.count("**Compact here**") == 2 and f"after prompt {first}, after prompt {second}" in session
    manifest = json.loads((tmp_path / "b" / "bench.json").read_text())
    assert manifest["survive"] == survive and manifest["compact_after"] == [first, second, len(bench.prompts)]
    assert len({q.id for q in bench.questions}) == len(bench.questions)
    quiz = "\n".join(line for line in (tmp_path / "b" / "quiz.md").read_text().splitlines() if line.startswith("- Q"))
    for q in bench.questions:  # the values stay off the agent's pages (64 is the experiment's name)
        assert all(f" {v}" not in quiz and f'"{v}"' not in json.dumps(manifest) for v in q.expect if v != "64"), q


_DECISION = re.compile(
    r"^(Decision|Correction): the (.+) of the (\w+) rollout is (.+?)(?:%| node-hours)?"
    r"(?:, | \()not (.+?)(?:%| node-hours)?\)?\.$"
)


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "survive"), [(0, 5), (3, 5), (7, 40), (2**32 - 1, 80)])
def test_the_conversation_values_are_where_the_key_says(seed, survive):
    """Read the decisions and corrections out of the prompts in order, as an agent would hear them."""
    bench = build_bench(seed, 300, "scale", survive)
    said: dict[tuple[str, str], list[str]] = {}  # (what, rollout) -> values in force, latest last
    decoys: dict[tuple[str, str], set[str]] = {}
    decided_in: dict[tuple[str, str], int] = {}
    for n, prompt in enumerate(bench.prompts):
        for line in prompt.splitlines():
            m = _DECISION.match(line)
            if not m:
                continue
            verb, attr, rollout, value, other = m.groups()
            key = (attr, rollout)
            if verb == "Decision":
                assert key not in said, key  # one decision per topic
                said[key], decoys[key], decided_in[key] = [value], {other}, n
            else:
                assert said[key][-1] == other and n > decided_in[key]  # corrects what was in force, later
                said[key].append(value)
                decoys[key].add(other)
    asked = [q for q in bench.questions if q.group == "conversation-only" and q.id != "Q07"]
    assert len(asked) == len(said) == survive - 1 - max(2, survive // 5)
    for q in asked:
        attr, rollout = re.fullmatch(r"What is the (.+) of the (\w+) rollout\?", q.text).groups()
        assert q.expect == (said[attr, rollout][-1],)
        assert set(q.reject) == decoys[attr, rollout]
        assert q.kind == ("corrected" if len(said[attr, rollout]) > 1 else "conversation")
    values = [v for q in asked for v in (*q.expect, *q.reject)]
    assert len(values) == len(set(values))  # no value is another topic's value or decoy
    # nowhere in the files: only the conversation holds them (a bare number may be in the noise too)
    distinct = sorted((re.escape(v) for v in values if not re.fullmatch(r"[\d.]+", v)), key=len, reverse=True)
    anywhere = re.compile(rf"(?<![\w.:-])(?:{'|'.join(distinct)})(?![\w:-]|\.\d)")
    assert not distinct or [m.group(0) for t in bench.files.values() for m in anywhere.finditer(t)] == []
    assert sum(q.kind == "corrected" for q in asked) == len(asked) // 3


@pytest.mark.slow
def test_the_output_values_do_not_come_back(tmp_path):
    bench = make_bench(tmp_path / "b", seed=12, noise=300, size="scale", survive=20)
    work = tmp_path / "b" / "workspace"
    outputs = [q for q in bench.questions if q.group == "output-only"]
    assert len(outputs) == 4
    for q in outputs:
        if "probe_" in q.text:
            script = re.search(r"tools/probe_\w+\.py", q.text).group(0)
            runs = [
                subprocess.run([sys.executable, script], cwd=work, capture_output=True, text=True, check=True).stdout
                for _ in range(3)
            ]
            assert runs[0].strip() == f"leader: {q.expect[0]}"
            assert len(set(runs)) == 3 and all(r.split(": ")[1].strip() in q.reject for r in runs[1:])
        else:
            log = re.search(r"logs/\w+-current\.log", q.text).group(0)
            replays = re.findall(r"replay ok, checkpoint (\S+)", (work / log).read_text())
            assert replays == list(q.expect)
            rotate = next(p for p in bench.prompts if log in p and "rotate_" in p)
            subprocess.run([sys.executable, re.search(r"tools/rotate_\w+\.py", rotate).group(0)], cwd=work, check=True,
                           capture_output=True)  # fmt: skip
            after = re.findall(r"replay ok, checkpoint (\S+)", (work / log).read_text())
            assert q.expect[0] not in after and sorted(after) == sorted(q.reject)
    graded = grade_answers(tmp_path / "b", {q.id: " and ".join(q.expect) for q in bench.questions})
    assert graded["files_changed"] == [] and graded["score"] == graded["total"] == 50  # state files change by design
    (work / "services").joinpath(next(p.name for p in (work / "services").iterdir()), "prod.yaml").write_text("x\n")
    assert len(grade_answers(tmp_path / "b", {})["files_changed"]) == 1  # any other edit is still reported


def test_grading_by_group_hedges_and_decoys(tmp_path):
    bench = make_bench(tmp_path / "b", seed=5, noise=300, size="scale", survive=10)
    perfect = {q.id: " and ".join(q.expect) for q in bench.questions}
    corrected = next(q for q in bench.questions if q.kind == "corrected" and q.group == "conversation-only")
    plain = next(q for q in bench.questions if q.kind == "conversation" and q.id != "Q07")
    vanished = next(q for q in bench.questions if q.group == "output-only")
    answers = {
        **perfect,
        corrected.id: f"{corrected.expect[0]} (was {corrected.reject[0]})",  # names the value it corrected
        plain.id: plain.reject[0],  # the alternative it was chosen over
        vanished.id: f"{vanished.expect[0]} or {vanished.reject[0]}",  # a hedge
    }
    result = grade_answers(tmp_path / "b", answers)
    assert result["survive"] == 10 and result["score"] == result["total"] - 3
    assert result["by_group"] == {
        "re-readable": {"right": 30, "total": 30},
        "conversation-only": {"right": 6, "total": 8},
        "output-only": {"right": 1, "total": 2},
    }
    rows = {r["id"]: r for r in result["questions"]}
    assert rows[corrected.id]["decoys"] == [corrected.reject[0]] and rows[plain.id]["decoys"] == [plain.reject[0]]
    assert rows[vanished.id]["group"] == "output-only" and not rows[vanished.id]["correct"]
    # the short and long sizes report their groups too: the canary port, then the long session's ten more
    make_bench(tmp_path / "s", seed=5, noise=300)
    short = grade_answers(tmp_path / "s", {})
    assert short["survive"] == 1 and short["by_group"]["conversation-only"] == {"right": 0, "total": 1}
    long = build_bench(5, 300, "long")
    assert long.survive == 11 and sum(q.group == "output-only" for q in long.questions) == 2


def test_bad_parameters():
    with pytest.raises(InvalidArgumentError, match="survive is for --size scale"):
        build_bench(1, 300, "long", 20)
    for bad in (4, 81, True, "20"):
        with pytest.raises(InvalidArgumentError, match="survive"):
            build_bench(1, 300, "scale", bad)
    assert build_bench(1, 300, "scale").survive == 20  # the default
