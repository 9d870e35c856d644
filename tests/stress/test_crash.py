"""Quick runs of the crash-consistency and disk-full harnesses (stress/crash.py, stress/disk_full.py).

The long runs are `python stress/crash.py --kills 200` and `python stress/disk_full.py`; these use the
same code with fewer kills. stress/ is not a package, so the harnesses are loaded from their paths.
"""

from __future__ import annotations

import io

import pytest

from tests.stress import load_harness

crash = load_harness("crash")
disk_full = load_harness("disk_full")


@pytest.mark.slow
def test_writer_killed_15_times_loses_no_acked_write(tmp_path):
    stats = crash.run(15, 7, tmp_path, rebuild_every=5, max_delay=0.4)
    out = io.StringIO()
    crash.report(stats, out)
    print(out.getvalue())
    assert stats.kills == 15
    assert stats.mismatches == [], out.getvalue()
    assert stats.acked_ops > 15  # the writer got work done between kills
    assert stats.rebuild_compares == 3
    assert all(r.recovery_s < 10 for r in stats.rounds)


def test_model_folds_acks_and_resolutions():
    """The bookkeeping the check relies on: an op in doubt is settled by a resolution line."""
    intents = [
        {"seq": 1, "op": "add", "text": "# a\n", "attempt": None},
        {"seq": 2, "op": "edit", "id": "nte_aaaaaaaaaa", "text": "# b\n"},
        {"seq": 3, "op": "delete", "id": "nte_aaaaaaaaaa"},
    ]
    acks = [
        {"seq": 1, "op": "add", "notes": [{"id": "nte_aaaaaaaaaa", "sha": crash.sha("# a\n")}], "attempt": None},
        {"seq": 2, "op": "edit", "id": "nte_aaaaaaaaaa", "sha": crash.sha("# b\n")},
    ]
    model = crash.Model.fold(intents, acks)
    assert model.seq == 2 and model.text("nte_aaaaaaaaaa") == "# b\n"
    assert [i for i in intents if i["seq"] > model.seq] == [intents[2]]  # the one op in doubt
    model.apply({"seq": 3, "op": "delete", "id": "nte_aaaaaaaaaa", "resolved": True})
    assert model.live() == [] and model.seq == 3


def test_torn_log_tail_is_not_an_ack(tmp_path):
    log = tmp_path / "acks.jsonl"
    log.write_text('{"seq": 1, "op": "void"}\n{"seq": 2, "op": "ad')
    assert crash.read_log(log) == [{"seq": 1, "op": "void"}]
    crash.cut_torn_tail(log)
    assert log.read_text() == '{"seq": 1, "op": "void"}\n'


@pytest.mark.slow
def test_disk_full_fails_writes_cleanly_and_recovers(tmp_path):
    try:
        figures = disk_full.run_disk_full(tmp_path, "auto")
    except RuntimeError as exc:  # only when not even the RLIMIT_FSIZE child can run
        pytest.skip(f"no way to make a small file system here: {exc}")
    out = io.StringIO()
    disk_full.report(figures, out)
    print(out.getvalue())
    # Never an unhandled exception, a torn note or a damaged index; every acked write kept.
    assert figures["problems"] == [], out.getvalue()
    # While full, every write answered (ok, or a notewell error with the storage code); most failed.
    full = figures["full_log"]
    assert all(e["outcome"] in ("ok", "failed") for e in full)
    assert all(e.get("code") == "storage" for e in full if e["outcome"] == "failed")
    assert sum(e["outcome"] == "failed" for e in full) >= len(full) - 2
    # Space back: every kind of write works, and every note reads back and is found by search.
    assert all(outcome == "ok" for _op, outcome, _code in figures["after_free"])
    assert figures["reads_after_free"][1] == 0 and figures["reads_after_free"][0] > 30
    assert figures["index_checks"] > 30
    # A write that answered an error left nothing behind, and reads never needed free space.
    assert figures["took_effect"] == [], out.getvalue()
    assert figures["read_failures"] == [], out.getvalue()
