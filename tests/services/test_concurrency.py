"""Several writer processes at once, and a writer killed mid-write."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import notewell
from tests.conftest import wait_for
from tests.interfaces.cli_harness import call

WRITER = textwrap.dedent(
    """
    import sys, notewell
    store = notewell.open(sys.argv[1], watch=False)
    tag = sys.argv[2]
    for i in range(int(sys.argv[3])):
        store.add_note(f"---\\ntags: [{tag}]\\n---\\nwriter {tag} note {i} parallel\\n", author=tag)
    print("ok")
    """
)

KILLED = textwrap.dedent(
    """
    import sys, notewell
    store = notewell.open(sys.argv[1], watch=False)
    pad = "x" * 200_000
    ids = []
    i = 0
    while True:
        i += 1
        text = f"BEGIN {i}\\n{pad}\\nEND {i}\\n"
        if ids and i % 2:
            store.edit_note(ids[i % len(ids)], text)
        else:
            ids.append(store.add_note(text).id)
    """
)


def _env():
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(notewell.__file__), "..")
    env["PYTHONPATH"] = os.path.abspath(src) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.mark.slow
def test_parallel_writers_lose_nothing(store_dir):
    notewell.open(store_dir).close()
    per = 40
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(store_dir), f"w{k}", str(per)],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(4)
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert "locked" not in err and out.strip() == "ok"
    files = [f for f in os.listdir(store_dir) if f.endswith(".md")]
    assert len(files) == 4 * per
    s = notewell.open(store_dir)
    cards = s.list_notes(limit=1000)
    assert len(cards) == 4 * per and len({c.id for c in cards}) == 4 * per
    assert len(s.search_notes("parallel", limit=1000)) == 4 * per
    for k in range(4):
        assert len(s.list_notes(author=f"w{k}", limit=1000)) == per
    s.close()


@pytest.mark.slow
def test_writer_killed_mid_write_leaves_old_or_new(store_dir):
    notewell.open(store_dir).close()
    rng = random.Random(7)
    for _ in range(5):
        p = subprocess.Popen(
            [sys.executable, "-c", KILLED, str(store_dir)],
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.6, 1.2))
        p.send_signal(signal.SIGKILL)
        p.wait()
    s = notewell.open(store_dir)
    cards = s.list_notes(limit=1000)  # the first read also names an add killed after its journal record
    files = sorted(f for f in os.listdir(store_dir) if f.endswith(".md"))
    assert files
    for name in files:
        data = (store_dir / name).read_text()
        first, last = data.splitlines()[0], data.splitlines()[-1]
        assert first.startswith("BEGIN ") and last == "END " + first.split()[1], name  # whole, never torn
    assert sorted(f"{c.id}.md" for c in cards) == files
    for c in cards:
        assert s.get_note(c.id).text == (store_dir / f"{c.id}.md").read_text()
    assert s.summary()["problems"] == []
    s.close()


@pytest.mark.slow
def test_watch_daemon_lets_one_shot_readers_skip_the_scan(store_dir):
    notewell.open(store_dir).close()
    (store_dir / "before.md").write_text("# before\n\nwritten before the watcher started: aardvark")
    daemon = subprocess.Popen(
        [sys.executable, "-m", "notewell", "--store", str(store_dir), "watch"],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert "watching" in daemon.stdout.readline()
        deadline = time.monotonic() + 20
        s = notewell.open(store_dir, watch=False)
        while time.monotonic() < deadline:
            s.refresh()
            if s.last_check == "watcher":
                break
            time.sleep(0.05)
        assert s.last_check == "watcher"
        assert [c.title for c in s.search_notes("aardvark")] == ["before"]
        # An outside edit made just before a read is seen: the cookie waits for the watcher.
        with open(store_dir / "before.md", "a") as fh:
            fh.write(" and a bumblebee")
        (store_dir / "new.md").write_text("# new\n\nfresh capybara")
        assert [c.title for c in s.search_notes("bumblebee")] == ["before"]
        assert [c.title for c in s.search_notes("capybara")] == ["new"]
        assert s.last_check == "watcher"
        s.close()
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)
        daemon.stdout.close()
    # With the watcher gone, readers scan again.
    s = notewell.open(store_dir, watch=False)
    (store_dir / "late.md").write_text("# late\n\nlate dormouse")
    assert [c.title for c in s.search_notes("dormouse")] == ["late"]
    assert s.last_check == "scan"
    s.close()


READER = textwrap.dedent(
    """
    import os, sys, time, notewell
    store = notewell.open(sys.argv[1], watch=False)
    ready, stop = sys.argv[2], sys.argv[3]
    end = time.time() + 100  # a cap, in case nobody says stop
    n = 0
    while True:
        store.list_notes(limit=5)
        store.search_notes("parallel")
        n += 1
        if n == 1:
            open(ready, "w").close()
        if os.path.exists(stop) or time.time() > end:
            break
    print("ok", n)
    """
)


@pytest.mark.slow
def test_writer_and_readers_at_once(store_dir, tmp_path):
    notewell.open(store_dir).close()
    stop = tmp_path / "stop"
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, str(store_dir), str(tmp_path / f"reading{k}"), str(stop)],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(2)
    ]
    try:
        # The readers read from before the writer's first note until after its last one.
        def reading() -> bool:
            return all((tmp_path / f"reading{k}").exists() for k in range(2))

        wait_for(lambda: reading() or any(p.poll() is not None for p in readers))
        if not (reading() and all(p.poll() is None for p in readers)):
            stop.touch()
            pytest.fail(f"the readers did not start reading: {[p.communicate(timeout=120) for p in readers]}")
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(store_dir), "w", "150"],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
        assert out.startswith("ok")
    finally:
        stop.touch()
    for p in readers:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.startswith("ok")
    s = notewell.open(store_dir)
    cards = s.list_notes(limit=1000)
    assert len(cards) == 150 and {c.author for c in cards} == {"w"}
    s.close()


def watcher_pid(store_dir) -> int | None:
    s = notewell.open(store_dir, watch=False)
    try:
        return s.watcher_pid()
    finally:
        s.close()


@pytest.mark.slow
def test_a_large_folder_starts_a_watcher_on_demand_that_stops_when_idle(store_dir):
    s = notewell.open(store_dir)
    s.add_notes([f"note {i} about otters" for i in range(4)])
    s.close()
    cli = [sys.executable, "-m", "notewell", "--store", str(store_dir)]
    # Off, or a folder under the threshold: no watcher. (These commands start nothing, and a
    # watcher they wrongly started would be a process all the same: they run in this one.)
    for value in ("off", "1000"):
        done = call(["--store", str(store_dir), "search", "otters"], env={"NOTEWELL_AUTOWATCH": value}, text=True)
        assert done.returncode == 0 and "otters" in done.stdout
    time.sleep(1.0)
    assert watcher_pid(store_dir) is None
    bad = call(["--store", str(store_dir), "list"], env={"NOTEWELL_AUTOWATCH": "lots"}, text=True)
    assert bad.returncode != 0 and "NOTEWELL_AUTOWATCH" in bad.stderr and "Traceback" not in bad.stderr
    # Over the threshold: the command answers, then a watcher starts in the background.
    done = subprocess.run(
        [*cli, "search", "otters"], env={**_env(), "NOTEWELL_AUTOWATCH": "3"}, text=True, capture_output=True
    )
    assert done.returncode == 0 and "otters" in done.stdout
    pid = wait_for(lambda: watcher_pid(store_dir))
    assert pid
    # And says so, in one line: what it is, how long it lives, how to stop it (issue 40).
    assert f"started a background watcher (pid {pid})" in done.stderr and "watch --stop" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    try:
        s = notewell.open(store_dir, watch=False)
        (store_dir / "new.md").write_text("# new\n\na fresh beaver")
        assert [c.title for c in s.search_notes("beaver")] == ["new"]
        assert s.last_check == "watcher"
        s.close()
        # A second on-demand watcher sees the live one and does not start.
        second = subprocess.run(
            [*cli, "watch", "--idle-exit", "30"], env=_env(), text=True, capture_output=True, timeout=60
        )
        assert second.returncode == 0
        assert watcher_pid(store_dir) == pid
    finally:
        os.kill(pid, signal.SIGTERM)
    assert wait_for(lambda: watcher_pid(store_dir) is None)


@pytest.mark.slow
def test_an_on_demand_watcher_stops_after_its_idle_time(store_dir):
    notewell.open(store_dir).close()
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "notewell", "--store", str(store_dir), "watch", "--idle-exit", "1"],
        env=_env(),
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0 and "watching" in done.stdout
    assert time.monotonic() - started < 30
    assert watcher_pid(store_dir) is None


def _hold_write_lock(store_dir, seconds: float) -> threading.Thread:
    """Another connection takes the store's write lock and keeps it for *seconds*."""
    held = threading.Event()

    def run() -> None:
        conn = sqlite3.connect(store_dir / ".notewell" / "index.db", isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        held.set()
        time.sleep(seconds)
        conn.execute("COMMIT")
        conn.close()

    thread = threading.Thread(target=run)
    thread.start()
    held.wait(5)
    return thread


@pytest.mark.slow
def test_a_read_does_not_wait_behind_another_writer(store_dir):
    with notewell.open(store_dir) as s:
        nid = s.add_note("---\ntitle: Lock\n---\nold words\n").id
        assert s.search_notes("old")
        (store_dir / f"{nid}.md").write_text("---\ntitle: Lock\n---\nnew words\n")
        holder = _hold_write_lock(store_dir, 1.0)
        t = time.monotonic()
        found = s.search_notes("old")
        took = time.monotonic() - t
        assert took < 0.5, f"the read waited {took:.2f}s behind the lock"
        assert s.last_check == "deferred"
        assert [c.id for c in found] == [nid]  # the index as last committed, whole
        holder.join()
        assert [c.id for c in s.search_notes("new")] == [nid]  # the change was kept and applied
        assert [(c.id, c.matched_revision) for c in s.search_notes("old")] == [(nid, 1)]  # as revision 1


@pytest.mark.slow
def test_a_read_deferred_too_long_waits_its_turn(store_dir, monkeypatch):
    from notewell.backends.sqlite import backend as store_module

    monkeypatch.setattr(store_module, "_MAX_DEFER", 0.2)
    with notewell.open(store_dir) as s:
        nid = s.add_note("---\ntitle: Lock\n---\nold words\n").id
        s.search_notes("old")
        (store_dir / f"{nid}.md").write_text("---\ntitle: Lock\n---\nnew words\n")
        holder = _hold_write_lock(store_dir, 1.0)
        assert s.search_notes("new") == []
        assert s.last_check == "deferred"
        time.sleep(0.3)
        t = time.monotonic()
        assert [c.id for c in s.search_notes("new")] == [nid]  # waited for the lock, then caught up
        assert time.monotonic() - t > 0.2
        holder.join()


@pytest.mark.slow
def test_a_write_waits_for_the_lock_and_then_lands(store_dir):
    with notewell.open(store_dir) as s:
        s.list_notes()
        holder = _hold_write_lock(store_dir, 0.4)
        t = time.monotonic()
        note = s.add_note("written after the other writer let go\n")
        assert time.monotonic() - t >= 0.3
        holder.join()
        assert s.get_note(note.id).body.strip() == "written after the other writer let go"


@pytest.mark.slow
def test_asking_for_the_lock_without_waiting(store_dir):
    from notewell.backends.sqlite.index import Index, LockHeld

    notewell.open(store_dir).close()
    index = Index(store_dir)
    try:
        holder = _hold_write_lock(store_dir, 0.5)
        with pytest.raises(LockHeld):
            with index.write(wait=False):
                pass
        assert index.remember("k", "v") is False
        holder.join()
        with index.write(wait=False):
            index.set_state("k", "v")
        assert index.get_state("k") == "v"
    finally:
        index.close()


@pytest.mark.slow
def test_a_note_deleted_behind_a_deferred_read_is_not_found(store_dir):
    with notewell.open(store_dir) as s:
        nid = s.add_note("---\ntitle: Doomed\n---\ndoomed words\n").id
        s.search_notes("doomed")
        (store_dir / f"{nid}.md").unlink()
        holder = _hold_write_lock(store_dir, 0.5)
        assert [c.id for c in s.search_notes("doomed")] == [nid]  # deferred: the index as committed
        with pytest.raises(notewell.NotFoundError):
            s.get_note(nid)  # the file is gone: the read waits, catches up, and says so
        holder.join()
        assert s.search_notes("doomed") == []


@pytest.mark.slow
@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_watcher_stops_when_its_folder_goes_and_never_makes_it_again(tmp_path, how):
    store_dir = tmp_path / "notes"
    with notewell.open(store_dir) as store:
        store.add_notes([f"# note {i}\n\nbody {i}" for i in range(300)])
    watcher = subprocess.Popen(
        [sys.executable, "-m", "notewell", "--store", str(store_dir), "watch", "--idle-exit", "1800"],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_for(lambda: watcher_pid(store_dir) == watcher.pid, 30)
        if how == "removed":
            shutil.rmtree(store_dir)  # fails ("Directory not empty") if the watcher writes meanwhile
        else:
            store_dir.rename(tmp_path / "elsewhere")
            store_dir.mkdir()
            (store_dir / "mine.txt").write_text("a folder of someone else's")
        watcher.wait(timeout=15)  # it stops by itself
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()
    if how == "removed":
        assert not store_dir.exists()  # nothing made again: no journal, no index
    else:
        assert sorted(p.name for p in store_dir.iterdir()) == ["mine.txt"]
        with notewell.open(tmp_path / "elsewhere") as moved:
            assert moved.summary()["total_notes"] == 300  # no note recorded as deleted


@pytest.mark.slow
def test_a_hook_leaves_no_watcher_behind(store_dir):
    with notewell.open(store_dir) as s:
        s.add_notes([f"note {i} about otters" for i in range(4)])
    cli = [sys.executable, "-m", "notewell", "--store", str(store_dir)]
    for event in ("session-start", "stop"):
        done = subprocess.run(
            [*cli, "hook", event],
            input='{"session_id": "s1", "source": "startup"}',
            env={**_env(), "NOTEWELL_AUTOWATCH": "3"},  # over the threshold: any other command would start one
            text=True,
            capture_output=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
    time.sleep(1.5)
    assert watcher_pid(store_dir) is None
