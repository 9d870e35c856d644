"""The notebook benchmark's curve: graded runs of several arms and sizes in one table."""

from __future__ import annotations

import json

import pytest

from notewell.agents.notebook_bench import build_bench, grade_answers, make_bench
from notewell.agents.notebook_curve import curve, curve_table, graded_runs
from notewell.errors import InvalidArgumentError


def _run(root, bench, arm, keep):
    """A run that answers every re-readable question and the first *keep* must-survive ones."""
    must = [q for q in bench.questions if q.group != "re-readable"][:keep]
    answers = {q.id: " and ".join(q.expect) for q in bench.questions if q.group == "re-readable" or q in must}
    return {**grade_answers(root, answers), "arm": arm}


@pytest.mark.slow
def test_the_curve_of_two_arms_over_two_counts(tmp_path):
    runs = []
    for survive in (10, 20):
        for seed in (1, 2):
            root = tmp_path / f"s{survive}-{seed}"
            bench = make_bench(root, seed=seed, noise=300, size="scale", survive=survive)
            runs.append(_run(root, bench, "notebook", survive))  # keeps everything
            runs.append(_run(root, bench, "plain", 5 if seed == 1 else 0))  # keeps what a summary holds
    rows = curve(runs)
    assert [(r["arm"], r["survive"], r["runs"]) for r in rows] == [
        ("notebook", 10, 2), ("notebook", 20, 2), ("plain", 10, 2), ("plain", 20, 2),
    ]  # fmt: skip
    notebook10, _, plain10, plain20 = rows
    assert notebook10["must_survive"] == 100.0 and notebook10["re-readable"] == 100.0
    assert plain10["must_survive"] == 25.0 and plain10["must_survive_range"] == [0.0, 50.0]
    assert plain20["must_survive"] == 12.5 and plain20["re-readable"] == 100.0
    assert plain20["all"] == round((100 * 35 / 50 + 100 * 30 / 50) / 2, 1)
    table = curve_table(rows).splitlines()
    assert table[0].split()[:4] == ["arm", "size", "survive", "runs"] and len(table) == 5
    assert table[3].split()[:6] == ["plain", "scale", "10", "2", "25.0", "(0-50)"]


def test_graded_runs_are_read_from_grade_json_or_refused(tmp_path):
    make_bench(tmp_path / "b", seed=3, noise=300)
    graded = {"runs": [{**grade_answers(tmp_path / "b", {}), "arm": "plain"}]}
    runs = graded_runs(json.dumps(graded), "g.json")
    assert curve(runs)[0]["size"] == "short" and curve(runs)[0]["survive"] == 1
    no_arm = {"runs": [{**graded["runs"][0], "arm": None}]}
    for text, message in [
        ("nope", "not JSON"),
        ("[]", "no graded runs"),
        ('{"runs": []}', "no graded runs"),
        ('{"runs": [1]}', "per-group"),
        (json.dumps(no_arm), "--arm"),
        (json.dumps({"runs": [{**graded["runs"][0], "survive": "1"}]}), "must-survive"),
    ]:
        with pytest.raises(InvalidArgumentError, match=message):
            graded_runs(text, "g.json")
    for tally in ({"right": "1", "total": 2}, {"right": 3, "total": 2}, [1, 2]):
        bad = {**graded["runs"][0], "by_group": {"output-only": tally}}
        with pytest.raises(InvalidArgumentError, match="not right/total counts"):
            curve(graded_runs(json.dumps({"runs": [bad]}), "g.json"))


def test_a_run_with_no_must_survive_questions_answered_is_zero_not_missing(tmp_path):
    bench = build_bench(2, 300, "scale", 5)
    make_bench(tmp_path / "b", seed=2, noise=300, size="scale", survive=5)
    row = curve([_run(tmp_path / "b", bench, "plain", 0)])[0]
    assert row["must_survive"] == 0.0 and row["conversation-only"] == 0.0 and row["output-only"] == 0.0
