"""The handoff benchmark with a past: the same entries in each arm's memory, three of them bearing on
the task and found only there, deterministic by seed and size, graded on what the past was used for."""

from __future__ import annotations

import re

import pytest

from notewell.agents.handoff_bench import build_handoff, make_handoff, next_session, start_session
from notewell.agents.handoff_grade import grade_handoff
from notewell.agents.handoff_history import FIRST_PLANTED, build_history, loaded_head, memory_file
from notewell.errors import InvalidArgumentError, NotFoundError
from notewell.services.opening import open_store
from tests.conftest import cpu_seconds


def key_day(root):
    """The incident's day, as the README says it."""
    readme = (root / "workspace" / "README.md").read_text()
    return re.search(r"Since (\d{4}-\d\d-\d\d)", readme).group(1)


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _read_back(text, service):
    """An independent reader of MEMORY.md: the service's rule, its latest release train, its window."""
    rule = train = window = None
    for heading, body in re.findall(r"^## [\d-]+ · (.+?) \(\w+\)\n\n(.+?)$", text, re.M):
        if not heading.startswith(f"{service}:"):
            continue
        if m := re.search(r"is (quarantine|delete)d, never", body):
            rule = m.group(1)
        if m := re.search(r"fixes ship in release (\d+\.\d+\.\d+)", body):
            train = m.group(1)  # oldest first: the last one read is the one in force
        if m := re.search(r"writes only shards (\d+)-(\d+)", body):
            window = [int(m.group(1)), int(m.group(2))]
    return rule, train, window


@pytest.mark.parametrize("seed", [1, 2, 3, 99])
def test_the_past_holds_the_key_once_and_nothing_else_does(tmp_path, seed):
    handoff = make_handoff(tmp_path / "b", seed=seed, history=200)
    key, root = handoff.key, tmp_path / "b"
    text = memory_file(handoff.history)
    assert len(handoff.history) == 200
    assert _read_back(text, key["service"]) == (key["mode"], key["release"], key["window"])
    lo, hi = key["window"]
    assert lo <= key["bad_shard"] <= hi and hi - lo == 7
    roles = [e.role for e in handoff.history if e.role]
    assert sorted(roles) == ["rule", "train_new", "train_old", "window"]
    assert roles.index("train_old") < roles.index("train_new")
    # Neither arm is handed one at the start: past the loaded head, before the newest tenth.
    places = [i for i, e in enumerate(handoff.history) if e.role]
    assert all(FIRST_PLANTED <= i < 180 for i in places)
    head = loaded_head(text)[0]
    assert not any(e.text in head for e in handoff.history if e.role)
    days = [e.day for e in handoff.history]
    assert days == sorted(days) and all(d.startswith(str(int(key_day(root)[:4]) - 1)) for d in days)
    window = next(e for e in handoff.history if e.role == "window")
    assert f"incident of {window.day}" in window.text
    # Neither the workspace nor the prompts say the rule or the release: only the past does.
    said = "\n".join(p.read_text() for p in root.rglob("*") if p.is_file())
    assert key["release"] not in said and key["frozen"] not in said
    assert f"shards {lo}-{hi}" not in said
    assert "Decision: the fix is" not in said and "never deleted" not in said and "not quarantined" not in said
    # Other services' rules and trains are there too, as decoys.
    assert len(re.findall(r"fails verification is (?:quarantine|delete)d", text)) == 8
    assert len(re.findall(r"writes only shards", text)) == 8


def test_the_same_seed_and_size_make_the_same_bytes(tmp_path):
    for name in ("a", "b"):
        make_handoff(tmp_path / name, seed=4, history=120)
        start_session(tmp_path / name, "memory-file")
    # (the notewell arm's notes differ only in their ids, which are new each time)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    key = build_handoff(4, 120).key
    assert memory_file(build_history(4, 121, key, ["courier"] * 8, "2026-05-01")) != memory_file(
        build_history(4, 120, key, ["courier"] * 8, "2026-05-01")
    )


def test_without_a_past_the_benchmark_is_what_it_was(tmp_path):
    assert build_handoff(7).session1 == build_handoff(7, 0).session1
    make_handoff(tmp_path / "b", seed=7)
    assert "history" not in (tmp_path / "b" / "handoff.json").read_text()
    assert not build_handoff(7).history and "window" not in build_handoff(7).key


def test_the_loaded_head_is_what_a_runtime_loads():
    text = "".join(f"line {i}\n" for i in range(500))
    head, loaded, total = loaded_head(text)
    assert (loaded, total) == (200, 500) and head.endswith("line 199")
    wide = "".join("x" * 999 + "\n" for _ in range(100))
    head, loaded, _ = loaded_head(wide)
    assert loaded == 25 and len(head.encode()) <= 25_000


def _fast(path):
    return open_store(path, embedder=None)


@pytest.mark.slow
def test_start_writes_the_arms_memory_once(tmp_path):
    for arm in ("none", "memory-file", "notewell"):
        root = tmp_path / arm
        make_handoff(root, seed=2, history=100)
        done = start_session(root, arm, _fast)
        assert done == {"arm": arm, "history": 100, "written": 0 if arm == "none" else 100}
        with pytest.raises(InvalidArgumentError, match="start runs once"):
            start_session(root, arm, _fast)
    assert not (tmp_path / "none" / "workspace" / "MEMORY.md").exists()
    memory = (tmp_path / "memory-file" / "workspace" / "MEMORY.md").read_text()
    assert memory.count("\n## ") == 100
    # next keeps the memory file, grown by session 1, and removes what else session 1 made
    (tmp_path / "memory-file" / "workspace" / "MEMORY.md").write_text(memory + "\n## today\n\nsession 1\n")
    (tmp_path / "memory-file" / "workspace" / "scratch.txt").write_text("x")
    moved = next_session(tmp_path / "memory-file", "memory-file")
    assert moved["removed"] == ["scratch.txt"]
    assert (tmp_path / "memory-file" / "workspace" / "MEMORY.md").read_text().endswith("session 1\n")


@pytest.mark.slow
def test_the_notewell_arm_gets_the_correction_ranked_first(tmp_path):
    root = tmp_path / "b"
    key = make_handoff(root, seed=3, history=100).key
    start_session(root, "notewell", _fast)
    store = _fast(root / "notes")
    cards = store.search_notes(f"{key['service']} release train")
    mine = [c for c in cards if c.title.startswith(f"{key['service']}:")]
    assert [bool(c.superseded_by) for c in mine[:2]] == [False, True]
    assert key["release"] in store.get_note(mine[0].id).text
    assert len(store.list_notes(limit=500)) == 100
    store.close()


def _probe(root, *args):
    from notewell.agents.handoff_tools import append_entry

    append_entry(root, {"tool": "probe", "args": list(args), "result": "", "cost_min": 2})


def test_the_grade_says_what_the_past_was_used_for(tmp_path):
    root = tmp_path / "b"
    key = make_handoff(root, seed=5, history=100).key
    start_session(root, "memory-file")
    lo, hi = key["window"]
    _probe(root, "shards", f"{lo}-{hi}")
    far = "0-7" if lo > 7 else "56-63"
    _probe(root, "shards", far)
    next_session(root, "memory-file")
    (root / "workspace" / "FIX.md").write_text(
        f"remedy: {key['mode']}-record {key['record']}\nrelease: {key['frozen']}\nticket: {key['ticket']}\n"
    )
    graded = grade_handoff(root)
    assert graded["past"] == {"entries": 100, "window": [lo, hi], "window_first": True,
                              "range_probes_outside_window": 1, "release_stale": True}  # fmt: skip
    assert graded["decisions"]["mode"] == "kept" and graded["decisions"]["release"] == "contradicted"
    assert not graded["completed_as_decided"]
    (root / "workspace" / "FIX.md").write_text(
        f"remedy: {key['mode']}-record {key['record']}\nrelease: {key['release']}\n"
    )
    assert grade_handoff(root)["decisions"]["release"] == "kept"
    assert grade_handoff(root)["past"]["release_stale"] is False


def test_bad_sizes_and_steps_are_refused(tmp_path):
    for bad in (-1, 1, 3, 99, 1001, True, 2.5):
        with pytest.raises(InvalidArgumentError):
            build_handoff(1, bad)
    root = tmp_path / "b"
    make_handoff(root, seed=1, history=100)
    with pytest.raises(InvalidArgumentError, match="the arm is one of"):
        start_session(root, "memory")
    with pytest.raises(InvalidArgumentError, match="needs `bench handoff start"):
        next_session(root, "memory-file")
    assert "start was not run" in " ".join(grade_handoff(root)["log_problems"])
    start_session(root, "memory-file")
    with pytest.raises(InvalidArgumentError, match="started as arm memory-file, not notewell"):
        next_session(root, "notewell")  # which would remove MEMORY.md
    assert (root / "workspace" / "MEMORY.md").is_file()
    # Nothing is made where there is no benchmark, and a store holding notes is not written again.
    with pytest.raises(NotFoundError):
        start_session(tmp_path / "nowhere", "notewell", _fast)
    assert not (tmp_path / "nowhere").exists()
    make_handoff(tmp_path / "c", seed=1, history=100)
    (tmp_path / "c" / "notes").mkdir()
    (tmp_path / "c" / "notes" / "x.md").write_text("hello\n")
    with pytest.raises(InvalidArgumentError, match="holds notes already"):
        start_session(tmp_path / "c", "notewell", _fast)


def test_the_past_is_made_in_linear_time():
    key = build_handoff(1, 100).key
    small = cpu_seconds(lambda: memory_file(build_history(1, 100, key, ["a", "b"], "2026-05-01")))  # the least
    large = cpu_seconds(lambda: memory_file(build_history(1, 1000, key, ["a", "b"], "2026-05-01")))
    assert large < small * 10 * 3 + 0.05


def test_a_memory_file_that_is_a_link_or_a_fifo_is_not_kept(tmp_path):
    import os

    for kind in ("link", "fifo"):
        root = tmp_path / kind
        make_handoff(root, seed=6, history=100)
        start_session(root, "memory-file")
        memory = root / "workspace" / "MEMORY.md"
        memory.unlink()
        if kind == "link":
            memory.symlink_to(root / "calls.jsonl")  # session 1's results, outside the workspace
        else:
            os.mkfifo(memory)
        assert "MEMORY.md" in next_session(root, "memory-file")["removed"]
        assert not memory.exists() and not memory.is_symlink()
