"""The notebook benchmark: deterministic files whose planted facts match the key, and a fair grader."""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.agents.notebook_bench import build_bench, grade_answers, make_bench, parse_answers
from notewell.errors import InvalidArgumentError, NotFoundError


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_the_same_seed_makes_the_same_benchmark(tmp_path):
    make_bench(tmp_path / "a", seed=42)
    make_bench(tmp_path / "b", seed=42)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    other = build_bench(43)
    assert [q.expect for q in other.questions] != [q.expect for q in build_bench(42).questions]


@pytest.mark.parametrize("seed", [0, 1, 7, 99, 2**32 - 1])
def test_planted_facts_are_where_the_key_says(seed):
    """Read each answer out of the files the way an agent would, independently of the generator."""
    bench = build_bench(seed, noise=600)
    key = {q.id: q for q in bench.questions}
    files = bench.files
    log = next(text for name, text in files.items() if name.startswith("logs/deploy-"))
    errors = [line for line in log.splitlines() if " ERROR " in line]
    first = re.search(r"T(\d\d:\d\d:\d\d)\.\d+Z ERROR \S+ (E-\d+) .* shard (\d+)", errors[0])
    assert (first.group(2),) == key["Q02"].expect and (first.group(3),) == key["Q03"].expect
    assert (first.group(1),) == key["Q04"].expect
    later = {re.search(r"(E-\d+)", line).group(1) for line in errors[1:]}
    assert later == set(key["Q02"].reject) and len(errors) == 4

    def setting(text, name):
        return re.search(rf"^{name}: (\S+)$", text, re.M).group(1)

    assert (setting(files["deploy/prod/app.yaml"], "request_timeout_ms"),) == key["Q01"].expect
    assert (setting(files["config/app.yaml"], "request_timeout_ms"),) == key["Q01"].reject
    assert "staging" in files["config/README"]
    lib = re.search(r"version of (\S+) is pinned", key["Q05"].text).group(1)
    pins = dict(line.split("==") for line in files["deps/lock.txt"].splitlines())
    assert (pins[lib],) == key["Q05"].expect
    sockets = re.findall(r'sun_path="([^"]+)"', files["logs/strace-ingest.txt"])
    assert [s for s in sockets if "/ingest-" in s] == list(key["Q06"].expect)
    assert set(sockets) - set(key["Q06"].expect) <= set(key["Q06"].reject)
    assert f"port {key['Q07'].expect[0]}, not {key['Q07'].reject[0]}" in bench.prompts[2]
    assert (setting(files["deploy/prod/app.yaml"], "metrics_port"),) == key["Q07"].reject
    component = re.search(r"owns the (\S+) component", key["Q08"].text).group(1)
    owners = [line for line in files["OWNERS"].splitlines() if line.split()[0] == component]
    assert len(owners) == 1 and key["Q08"].expect[0] in owners[0]
    rows = list(csv.DictReader(files["reports/nightly.csv"].splitlines()))
    assert (str(sum(r["status"] == "failed" for r in rows)),) == key["Q09"].expect
    pool = re.search(r"with pool_size=64 p99 (\S+) s", files["experiments/pool-64.txt"]).group(1)
    assert key["Q10"].expect == ("64", pool)
    flag = re.search(r"Use (\S+) on the migration run", files["notes/email-thread.txt"]).group(1)
    assert key["Q11"].expect == (flag,)
    assert "correction" in bench.prompts[3].lower() and len(bench.prompts) == 6


def test_the_answers_stay_off_the_agents_pages(tmp_path):
    bench = make_bench(tmp_path / "b", seed=5)
    quiz = (tmp_path / "b" / "quiz.md").read_text()
    manifest = (tmp_path / "b" / "bench.json").read_text()
    for q in bench.questions:
        assert q.id in quiz
        for value in q.expect:
            if value != "64":  # the experiment's name is in the question
                assert value not in quiz and f'"{value}"' not in manifest, (q.id, value)


def _perfect(bench):
    return {q.id: " and ".join(q.expect) for q in bench.questions}


@pytest.mark.slow
def test_grading_right_wrong_hedged_and_missing(tmp_path):
    bench = make_bench(tmp_path / "b", seed=3)
    key = {q.id: q for q in bench.questions}
    result = grade_answers(tmp_path / "b", _perfect(bench))
    assert (result["score"], result["total"], result["percent"]) == (11, 11, 100.0)
    assert result["files_changed"] == [] and result["by_kind"]["early"] == {"right": 6, "total": 6}

    timeout = key["Q01"].expect[0]
    answers = {
        "Q01": f"{timeout} or {key['Q01'].reject[0]}",  # hedging between prod and staging
        "Q02": key["Q02"].expect[0].lower(),  # case does not matter
        "Q05": "v" + key["Q05"].expect[0],
        "Q06": f"`{key['Q06'].expect[0]}`",
        "Q07": key["Q07"].expect[0] + "0",  # a longer number is another number
        "Q09": "unknown",
    }
    rows = {r["id"]: r for r in grade_answers(tmp_path / "b", answers)["questions"]}
    assert not rows["Q01"]["correct"] and rows["Q01"]["decoys"] == list(key["Q01"].reject)
    assert rows["Q02"]["correct"] and rows["Q05"]["correct"] and rows["Q06"]["correct"]
    assert not rows["Q07"]["correct"] and not rows["Q09"]["correct"]
    assert not rows["Q03"]["correct"] and rows["Q03"]["answer"] == ""  # missing is wrong


@pytest.mark.slow
def test_number_forms(tmp_path):
    make_bench(tmp_path / "b", seed=11)
    timeout = build_bench(11).questions[0].expect[0]
    grouped = f"{timeout[:-3]},{timeout[-3:]}"
    for answer, right in [
        (f"{timeout} ms", True),
        (f"{timeout}ms", True),
        (grouped, True),
        (f"{timeout}.5", False),
        (f"1{timeout}", False),
    ]:
        row = grade_answers(tmp_path / "b", {"Q01": answer})["questions"][0]
        assert row["correct"] is right, answer


def test_answers_as_lines_or_json():
    assert parse_answers("Q01: 4187 ms\n- **Q2**) E-1\n  more text\nQ10 = x\n") == {
        "Q01": "4187 ms",
        "Q02": "E-1 more text",
        "Q10": "x",
    }
    assert parse_answers('{"Q1": 4187, "q02": null}') == {"Q01": "4187", "Q02": ""}
    for bad in ["", "just prose", "{not json", "[1, 2]", '{"what": 1}']:
        with pytest.raises(InvalidArgumentError):
            parse_answers(bad)


@pytest.mark.slow
def test_edited_workspace_and_unknown_ids_are_reported(tmp_path):
    bench = make_bench(tmp_path / "b", seed=2)
    (tmp_path / "b" / "workspace" / "OWNERS").write_text("nobody\n")
    result = grade_answers(tmp_path / "b", {**_perfect(bench), "Q40": "x"})
    assert result["files_changed"] == ["workspace/OWNERS"] and result["unknown_ids"] == ["Q40"]


@pytest.mark.slow
def test_bad_input(tmp_path):
    make_bench(tmp_path / "b")
    with pytest.raises(InvalidArgumentError, match="not an empty folder"):
        make_bench(tmp_path / "b")
    for seed in (-1, 2**32, "1", True):
        with pytest.raises(InvalidArgumentError):
            build_bench(seed)
    with pytest.raises(InvalidArgumentError):
        build_bench(1, noise=10)
    with pytest.raises(NotFoundError):
        grade_answers(tmp_path, {})
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "bench.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(InvalidArgumentError, match="manifest"):
        grade_answers(tmp_path / "c", {})


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_answers_text_is_parsed_or_refused_cleanly(text):
    try:
        answers = parse_answers(text)
    except InvalidArgumentError:
        return
    assert all(re.fullmatch(r"Q\d\d\d?", k) for k in answers)


def _grade(root, answers):
    return {r["id"]: r for r in grade_answers(root, answers)["questions"]}


@pytest.mark.slow
def test_a_time_copied_from_the_log_is_right(tmp_path):
    bench = make_bench(tmp_path / "b", seed=4)
    log = next(text for name, text in bench.files.items() if name.startswith("logs/deploy-"))
    stamp = next(line for line in log.splitlines() if " ERROR " in line).split()[0]  # 2026-..T01:33:16.596Z
    time = build_bench(4).questions[3].expect[0]
    assert stamp[11:19] == time
    hour, rest = time.split(":", 1)
    later = f"{hour}:{rest[:3]}{(int(rest[3:]) + 1) % 60:02d}"
    for answer, right in [
        (stamp, True),
        (stamp[11:], True),  # 01:33:16.596Z
        (stamp[11:23], True),  # 01:33:16.596
        (f"{time}Z", True),
        (f"{time} UTC ({stamp})", True),  # the same time twice is one value
        (f"{time}1", False),
        (f"1{time}", False),
        (f"{time}.5.1", False),
        (f"{time} or {later}", False),  # hedging between two times
        (f"between {time} and {later}", False),
    ]:
        assert _grade(tmp_path / "b", {"Q04": answer})["Q04"]["correct"] is right, answer


@pytest.mark.slow
def test_a_count_with_a_second_number_is_a_hedge(tmp_path):
    bench = make_bench(tmp_path / "b", seed=6)
    n = int(bench.questions[8].expect[0])
    for answer, right in [
        (f"{n}", True),
        (f"{n} failed jobs", True),
        (f"{n} ({n} rows with status=failed)", True),
        (f"{n:,}", True),
        (f"{n} or {n + 1}", False),
        (f"between {n - 1} and {n}", False),
        (f"{n}-{n + 2}", False),
        (f"about {n}.5", False),
    ]:
        assert _grade(tmp_path / "b", {"Q09": answer})["Q09"]["correct"] is right, answer
    assert _grade(tmp_path / "b", {"Q09": f"{n} or {n + 1}"})["Q09"]["decoys"] == [str(n + 1)]


@pytest.mark.slow
def test_naming_another_owner_or_the_baseline_p99_is_wrong(tmp_path):
    bench = make_bench(tmp_path / "b", seed=8)
    key = {q.id: q for q in bench.questions}
    owner = key["Q08"].expect[0]
    listed = [p for line in bench.files["OWNERS"].splitlines()[1:] for p in [" ".join(line.split()[1:3])]]
    others = [p for p in listed if p != owner]
    assert owner in listed and len(others) == len(listed) - 1 >= 3
    assert set(key["Q08"].reject) == set(others)
    base = re.search(r"baseline p99 (\S+) s", bench.files["experiments/pool-64.txt"]).group(1)
    assert key["Q10"].reject == (base,)
    pool = key["Q10"].expect[1]
    rows = _grade(
        tmp_path / "b",
        {
            "Q08": f"{others[0]} or {owner}",
            "Q10": f"pool_size 64, p99 {pool} s (or {base} s)",
        },
    )
    assert not rows["Q08"]["correct"] and rows["Q08"]["decoys"] == [others[0]]
    assert not rows["Q10"]["correct"] and rows["Q10"]["decoys"] == [base]
    rows = _grade(tmp_path / "b", {"Q08": owner, "Q10": f"pool-64 (pool_size 32 -> 64): p99 {pool} s, ruled out"})
    assert rows["Q08"]["correct"] and rows["Q10"]["correct"]


@pytest.mark.slow
def test_a_date_does_not_hold_a_number(tmp_path):
    bench = make_bench(tmp_path / "b", seed=10)
    key = {q.id: q for q in bench.questions}
    shard, code = key["Q03"].expect[0], key["Q02"].expect[0]
    rows = _grade(tmp_path / "b", {"Q03": f"2026-05-{int(shard):02d}", "Q02": f"{code} on 2026-05-17"})
    assert not rows["Q03"]["correct"] and rows["Q02"]["correct"]
    assert _grade(tmp_path / "b", {"Q03": f"{2000 + int(shard)}-01-01"})["Q03"]["correct"] is False
    assert _grade(tmp_path / "b", {"Q03": f"shard {shard}"})["Q03"]["correct"]


def test_decomposed_accents_match(tmp_path):
    seed = next(s for s in range(200) if "á" in build_bench(s, noise=200).questions[7].expect[0])
    bench = make_bench(tmp_path / "b", seed=seed, noise=200)
    owner = bench.questions[7].expect[0]
    nfd = unicodedata.normalize("NFD", owner)
    assert nfd != owner
    assert _grade(tmp_path / "b", {"Q08": nfd})["Q08"]["correct"]


def test_lines_that_are_not_answers_stay_out():
    assert parse_answers("Q01: 6353\nQ02 E-1365\nq3 17\n") == {"Q01": "6353", "Q02": "E-1365", "Q03": "17"}
    text = (
        "Here are my answers.\n\nQ10: pool_size 64,\n  p99 2.9 s\nQ11: --skip-shard-verify\n\n"
        "All values from the notebook; --skip-shard-verify was rejected.\n"
    )
    assert parse_answers(text) == {"Q10": "pool_size 64, p99 2.9 s", "Q11": "--skip-shard-verify"}
    # A line that mentions another question is never part of this answer.
    assert parse_answers("Q01: 6353\nsee Q02 for the code\nQ03: 17") == {"Q01": "6353", "Q03": "17"}
    assert parse_answers("Q11 --no-lease-steal\nQ07 - 7123") == {"Q11": "--no-lease-steal", "Q07": "7123"}


@pytest.mark.slow
def test_an_epilogue_does_not_spoil_the_last_answer(tmp_path):
    bench = make_bench(tmp_path / "b", seed=12)
    flag, wrong = bench.questions[10].expect[0], bench.questions[10].reject[0]
    text = f"Q11: {flag}\n\nAll values from the notebook; {wrong} was rejected.\n"
    assert _grade(tmp_path / "b", parse_answers(text))["Q11"]["correct"]


@pytest.mark.parametrize(
    "text",
    [
        "1. Q01: 6353\n2. Q02: E-1365\n",
        "- Q01 (production timeout): 6353\n- Q02 (first error code): E-1365\n",
        "| Question | Answer |\n|---|---|\n| Q01 | 6353 |\n| Q02 | E-1365 |\n",
        "|id|answer|\n|:--|--:|\n|Q01|6353|\n|Q02|E-1365|",
        "### Q01\n6353\n\n### Q02\n\nE-1365\n",
        "**Q01:** 6353\n**Q02:** E-1365\n",
        "**Q01**: **6353**\n**Q02** — E-1365\n",
        'My answers:\n\n```json\n{"Q01": 6353, "Q02": "E-1365"}\n```\n\nDone.\n',
        '```\n{"Q01": "6353", "Q02": "E-1365"}\n```',
    ],
)
def test_common_answer_formats_parse(text):
    assert parse_answers(text) == {"Q01": "6353", "Q02": "E-1365"}


# -- the long session --------------------------------------------------------------------------


@pytest.mark.slow
def test_the_long_session_is_deterministic_and_the_short_one_unchanged(tmp_path):
    # The long size draws from a stream of its own: a seed's short benchmark is what it was.
    make_bench(tmp_path / "a", seed=3, size="long")
    make_bench(tmp_path / "b", seed=3, size="long")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    short, long = build_bench(3), build_bench(3, size="long")
    assert [q.expect for q in long.questions[:11]] == [q.expect for q in short.questions]
    assert {k: v for k, v in long.files.items() if k in short.files} == short.files
    assert (len(long.prompts), len(long.questions)) == (30, 41) and long.prompts[-1] == short.prompts[-1]
    session = (tmp_path / "a" / "session.md").read_text()
    assert "# Session: 30 prompts" in session and "at most 150 words" in session
    assert json.loads((tmp_path / "a" / "bench.json").read_text())["compaction_words"] == 150
    with pytest.raises(InvalidArgumentError, match="short, long or scale"):
        build_bench(1, size="huge")


@pytest.mark.parametrize("seed", [0, 5, 2**32 - 1])
def test_the_long_sessions_facts_are_where_the_key_says(seed):
    bench = build_bench(seed, noise=400, size="long")
    key = {q.id: q for q in bench.questions}
    talk = "\n".join(bench.prompts)
    for q in bench.questions[11:]:
        if q.kind == "fact":  # production settings, beside a staging copy with other values
            key_name, service = re.fullmatch(r"What is the production (\w+) of (\w+)\?", q.text).groups()
            prod = dict(re.findall(r"^(\w+): (\S+)$", bench.files[f"services/{service}/prod.yaml"], re.M))
            staging = dict(re.findall(r"^(\w+): (\S+)$", bench.files[f"services/{service}/staging.yaml"], re.M))
            assert (prod[key_name],) == q.expect and (staging[key_name],) == q.reject
            assert prod["environment"] == "prod" and f"services/{service}/prod.yaml" in talk
        elif q.kind in ("conversation", "corrected"):  # told in the conversation, not in the files
            assert all(v in talk for v in q.expect)
            distinctive = [v for v in q.expect if re.match(r"OPS-|#|[a-z]{2}-[a-z]+-\d|\d{4}-\d\d-\d\d", v)]
            assert not any(v in text for v in distinctive for text in bench.files.values()), q
            if q.kind == "corrected":  # the value in force is the one a later correction gave
                assert any(p.startswith("Correction:") and q.expect[0] in p for p in bench.prompts), q
    assert any(q.kind == "vanished" for q in key.values())


@pytest.mark.slow
def test_output_that_does_not_come_back(tmp_path):
    # The lease moves on after each run of the probe, and the rotated log loses its lines: the
    # first values exist only in what the agent kept. The grader does not count those files as edited.
    import subprocess
    import sys

    bench = make_bench(tmp_path / "b", seed=11, size="long")
    work = tmp_path / "b" / "workspace"
    lease_q, log_q = [q for q in bench.questions if q.kind == "vanished"]
    runs = [subprocess.run([sys.executable, "tools/probe.py"], cwd=work, capture_output=True, text=True).stdout
            for _ in range(3)]  # fmt: skip
    assert runs[0].strip() == f"lease holder: {lease_q.expect[0]}"
    assert len(set(runs)) == 3 and all(r.split(": ")[1].strip() in lease_q.reject for r in runs[1:])
    assert log_q.expect[0] in (work / "logs" / "current.log").read_text()
    subprocess.run([sys.executable, "tools/rotate.py"], cwd=work, check=True, capture_output=True)
    rotated = (work / "logs" / "current.log").read_text()
    assert log_q.expect[0] not in rotated and all(c in rotated for c in log_q.reject)
    graded = grade_answers(tmp_path / "b", _perfect(bench))
    assert graded["files_changed"] == [] and graded["score"] == graded["total"] == 41
    hedged = grade_answers(
        tmp_path / "b", {**_perfect(bench), lease_q.id: f"{lease_q.expect[0]} or {lease_q.reject[0]}"}
    )
    assert hedged["score"] == 40 and hedged["by_kind"]["vanished"] == {"right": 1, "total": 2}


@pytest.mark.slow
def test_the_default_budget_holds_the_long_session_with_room():
    # benchmarks/bench_notebook_budget.py: the scripted agent (one short fact per prompt, each
    # with its source, corrections dropped) on the long session of seed 3, the template's
    # examples kept. The default budget was chosen from it: the notebook stays under the 50%
    # nudge at prompt 30, and under 75% at the size of the agent that reported (issue 42).
    from notewell.model.notebook_rules import DEFAULT_BUDGET
    from tests.conftest import load_script

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_notebook_budget.py"
    script = load_script("bench_notebook_budget", path)
    tokens = script.run(3, keep_examples=True, prune=False)
    assert len(tokens) == 30 and tokens == sorted(tokens)  # one accept per prompt, nothing pruned
    assert tokens[-1] < 0.5 * DEFAULT_BUDGET and 1960 + 190 < 0.75 * DEFAULT_BUDGET
    assert script.run(3, keep_examples=False, prune=True)[-1] < tokens[-1]
