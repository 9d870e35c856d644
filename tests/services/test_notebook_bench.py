"""The notebook benchmark: deterministic files whose planted facts match the key, and a fair grader."""

from __future__ import annotations

import csv
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.errors import InvalidArgumentError, NotFoundError
from notewell.services.notebook_bench import build_bench, grade_answers, make_bench, parse_answers


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


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


def test_edited_workspace_and_unknown_ids_are_reported(tmp_path):
    bench = make_bench(tmp_path / "b", seed=2)
    (tmp_path / "b" / "workspace" / "OWNERS").write_text("nobody\n")
    result = grade_answers(tmp_path / "b", {**_perfect(bench), "Q40": "x"})
    assert result["files_changed"] == ["workspace/OWNERS"] and result["unknown_ids"] == ["Q40"]


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


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_answers_text_is_parsed_or_refused_cleanly(text):
    try:
        answers = parse_answers(text)
    except InvalidArgumentError:
        return
    assert all(re.fullmatch(r"Q\d\d\d?", k) for k in answers)
