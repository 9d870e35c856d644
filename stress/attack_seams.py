#!/usr/bin/env python3
"""Attacks on the seams: the importers, the installer, the HTTP server and the private-word
timing, each bounded in size and time, loopback only. Prints figures; never asserts (the tests
hold the behaviour; this says what it costs at sizes a test cannot take).

    python stress/attack_seams.py                          # every part
    python stress/attack_seams.py --parts importers,server --bomb-mb 128 --slow-sockets 100

Parts:
- importers: a ChatGPT export zip that unpacks to --bomb-mb MB (small objects), one holding a
  conversation of 40 MB, a conversations.json that is a FIFO, and a Claude Code transcript whose one
  tool call fails 160,000 and 320,000 times (time ratio: 2 is linear). Peak memory (max RSS) and time
  of each `notewell import`.
- installer: a .mcp.json nested 100,000 deep, a .mcp.json linked to /dev/zero, and install then
  uninstall on odd files (CRLF, escapes, an empty mcpServers): exit codes, time, bytes given back.
- server: `notewell serve` (MCP on): a token holder's request latency quiet, then beside
  --slow-sockets connections that send a header line every 2 s; how soon the server closes them;
  then --initializes anonymous MCP `initialize` requests: the server's memory before and after.
- timing: --private notes in a private project hold a word no public note holds; an anonymous
  viewer searches for it and for an absent word, alternated: p50/p95 of each (the residual channel).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NOTEWELL_AUTOWATCH": "off"}
NOTEWELL = [sys.executable, "-m", "notewell"]

# Runs a command and prints its exit code, seconds and peak memory (its own max RSS, in MB).
_MEASURED = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
    "s = time.perf_counter() - t\n"
    "mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
    "print(done.returncode, round(s, 2), round(mb, 1), (done.stderr.strip().splitlines() or [''])[-1][:150])\n"
)


def measured(cmd: list[str], timeout: float = 600) -> tuple[int, float, float, str]:
    """(exit code, seconds, peak MB, last line of stderr) of *cmd*, in a process of its own."""
    out = subprocess.run(
        [sys.executable, "-c", _MEASURED, *cmd], capture_output=True, text=True, env=ENV, timeout=timeout
    ).stdout.split(" ", 3)
    return int(out[0]), float(out[1]), float(out[2]), out[3].strip()


def line(label: str, result: tuple[int, float, float, str]) -> None:
    code, seconds, mb, said = result
    print(f"  {label:<46} exit {code:>3}  {seconds:7.2f} s  peak {mb:7.1f} MB  {said[:90]}")


def importers(work: Path, args: argparse.Namespace) -> None:
    print(f"importers (each `notewell import` in a process of its own; --bomb-mb {args.bomb_mb})")
    store = ["--store", str(work / "imp")]
    bomb = work / "bomb.zip"
    item = json.dumps({"title": "x", "note": "a" * 1000})
    count = args.bomb_mb * 1024 * 1024 // (len(item) + 1)
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z, z.open("conversations.json", "w") as f:
        f.write(b"[")
        for i in range(count):
            f.write((("," if i else "") + item).encode())
        f.write(b"]")
    print(f"  a zip of {bomb.stat().st_size / 1e6:.2f} MB unpacking to {args.bomb_mb} MB ({count:,} objects)")
    line("chatgpt, the bomb", measured([*NOTEWELL, *store, "import", "chatgpt", str(bomb)]))
    huge = work / "huge.zip"
    with zipfile.ZipFile(huge, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("conversations.json", json.dumps([{"mapping": {}, "title": "b" * (40 << 20)}]))
    line("chatgpt, one conversation of 40 MB", measured([*NOTEWELL, *store, "import", "chatgpt", str(huge)]))
    fifo_dir = work / "fifo-export"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / "conversations.json")
    line("chatgpt, conversations.json a FIFO", measured([*NOTEWELL, *store, "import", "chatgpt", str(fifo_dir)]))
    line("claude-code, /dev/zero", measured([*NOTEWELL, *store, "import", "claude-code", "/dev/zero"]))
    times = []
    for failures in (160_000, 320_000):
        path = _failing_transcript(work / f"cc-{failures}", failures)
        result = measured(
            [*NOTEWELL, "--store", str(work / f"cc-store-{failures}"), "import", "claude-code", str(path)]
        )
        line(f"claude-code, one call failing {failures:,} times", result)
        times.append(result[1])
    print(f"  time ratio for twice the failures: {times[1] / times[0]:.2f} (2.0 is linear)")
    times = []
    for sessions in (2_000, 4_000):  # every line names a session of its own: each becomes a conversation
        path = _many_sessions(work / f"ms-{sessions}", sessions)
        result = measured(
            [*NOTEWELL, "--store", str(work / f"ms-store-{sessions}"), "import", "claude-code", str(path)]
        )
        line(f"claude-code, one file holding {sessions:,} sessions", result)
        times.append(result[1])
    print(f"  time ratio for twice the sessions: {times[1] / times[0]:.2f} (2.0 is linear)")


def _many_sessions(folder: Path, sessions: int) -> Path:
    folder.mkdir(parents=True)
    path = folder / "0c0ffee0-0000-4000-8000-000000000001.jsonl"
    with path.open("w") as f:
        for i in range(sessions):
            base = {"sessionId": f"s-{i:06d}", "cwd": "/home/dev", "timestamp": f"2026-11-01T09:{i % 60:02d}:00Z"}
            f.write(
                json.dumps({**base, "type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": f"q {i}"}})
            )
            f.write("\n")
    return path


def _failing_transcript(folder: Path, failures: int) -> Path:
    folder.mkdir(parents=True)
    session = "0c0ffee0-0000-4000-8000-000000000000"
    base = {"sessionId": session, "cwd": "/home/dev", "timestamp": "2026-11-01T09:00:00Z"}
    rows = [
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "run the tests"}},
        {**base, "type": "assistant", "uuid": "a1", "message": {"role": "assistant", "id": "m1", "model": "m",
         "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}}]}},
    ]  # fmt: skip
    fail = {**base, "type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "no", "is_error": True}]}}  # fmt: skip
    path = folder / f"{session}.jsonl"
    with path.open("w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
        text = json.dumps(fail) + "\n"
        for _ in range(failures):
            f.write(text)
    return path


def installer(work: Path, args: argparse.Namespace) -> None:
    print("installer (`notewell install claude-code` on a project of its own each time)")
    cases = {
        ".mcp.json nested 100,000 deep": "[" * 100_000 + "]" * 100_000,
        ".mcp.json linked to /dev/zero": None,
    }
    for n, (label, text) in enumerate(cases.items()):
        project = work / f"inst-{n}"
        project.mkdir()
        if text is None:
            (project / ".mcp.json").symlink_to("/dev/zero")
        else:
            (project / ".mcp.json").write_text(text)
        cmd = [*NOTEWELL, "--store", str(project / "notes"), "install", "claude-code", "--dir", str(project)]
        line(label, measured(cmd, timeout=120))
    given_back = 0
    odd = [b'{"mcpServers": {}}', b'{\r\n  "a": "caf\\u00e9", "n": 1e3\r\n}\r\n', b'{"x":1.50}']
    for i, data in enumerate(odd):
        project = work / f"round-{i}"
        project.mkdir()
        (project / ".mcp.json").write_bytes(data)
        env = {**ENV, "NOTEWELL_STATE_DIR": str(work / f"state-{i}")}
        for verb in ("install", "uninstall"):
            subprocess.run([*NOTEWELL, "--store", str(project / "notes"), verb, "claude-code", "--dir", str(project)],
                           env=env, capture_output=True, timeout=120)  # fmt: skip
        given_back += (project / ".mcp.json").read_bytes() == data
    print(f"  install then uninstall gave back the very bytes of {given_back} of {len(odd)} odd files")


def _rss_mb(pid: int) -> float:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1]) / 1024
    return 0.0


def _timed_get(url: str, token: str, n: int) -> tuple[list[float], int]:
    took, refused = [], 0
    for _ in range(n):
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
        t = time.perf_counter()
        try:
            urllib.request.urlopen(request, timeout=30).read()
        except urllib.error.HTTPError as exc:
            refused += exc.code == 503
        except OSError:
            refused += 1
        took.append((time.perf_counter() - t) * 1000)
        time.sleep(0.05)
    return took, refused


def _pcts(values: list[float]) -> str:
    values = sorted(values)
    return f"p50 {statistics.median(values):.1f} ms, p95 {values[int(len(values) * 0.95) - 1]:.1f} ms"


def server(work: Path, args: argparse.Namespace) -> None:
    print(f"server (`notewell serve` on 127.0.0.1; {args.slow_sockets} slow sockets, {args.initializes} initializes)")
    store = work / "srv"
    subprocess.run([*NOTEWELL, "--store", str(store), "init"], env=ENV, capture_output=True, check=True)
    token = subprocess.run([*NOTEWELL, "--store", str(store), "token", "create", "alice"], env=ENV,
                           capture_output=True, text=True, check=True).stdout.split()[-1]  # fmt: skip
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([*NOTEWELL, "--store", str(store), "serve", "--port", str(port), "--no-embed"],
                            env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_up(url)
        quiet, _ = _timed_get(f"{url}/api/notes", token, 40)
        print(f"  a token holder's list, quiet: {_pcts(quiet)}")
        _slow_attack(url, port, token, args.slow_sockets)
        _initialize_flood(url, proc.pid, token, args.initializes)
    finally:
        proc.terminate()
        proc.wait(30)


def _wait_up(url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/healthz", timeout=2).read()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the server did not start")


def _slow_attack(url: str, port: int, token: str, count: int) -> None:
    socks, opened = [], time.monotonic()
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /api/notes HTTP/1.1\r\nHost: x\r\n")
        socks.append(s)
    closed_at: dict[int, float] = {}
    stop = threading.Event()

    def dribble() -> None:
        while not stop.is_set() and len(closed_at) < len(socks):
            for i, s in enumerate(socks):
                if i in closed_at:
                    continue
                try:
                    s.sendall(b"X-Slow: 1\r\n")
                    s.setblocking(False)
                    if s.recv(1) == b"":
                        closed_at[i] = time.monotonic() - opened
                except BlockingIOError:
                    pass
                except OSError:
                    closed_at[i] = time.monotonic() - opened
                finally:
                    s.setblocking(True)
            stop.wait(2.0)

    thread = threading.Thread(target=dribble, daemon=True)
    thread.start()
    took, refused = _timed_get(f"{url}/api/notes", token, 40)
    thread.join(30)
    stop.set()
    for s in socks:
        s.close()
    closes = sorted(closed_at.values())
    print(f"  beside them, the token holder: {_pcts(took)}, {refused} of 40 refused (503) or failed")
    if closes:
        print(
            f"  slow sockets closed by the server: {len(closes)} of {count}, after {closes[0]:.1f}-{closes[-1]:.1f} s"
        )
    else:
        print(f"  slow sockets closed by the server: none of {count}")


def _initialize_flood(url: str, pid: int, token: str, count: int) -> None:
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}
    hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    before, sessions, t = _rss_mb(pid), 0, time.perf_counter()
    for _ in range(count):
        request = urllib.request.Request(f"{url}/mcp", data=hello, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
            sessions += answer.headers.get("mcp-session-id") is not None
    seconds = time.perf_counter() - t
    call = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "list_notes", "arguments": {}}}).encode()  # fmt: skip
    request = urllib.request.Request(f"{url}/mcp", data=call, headers={**headers, "Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        status = answer.status
    print(
        f"  {count:,} anonymous initializes in {seconds:.1f} s: {sessions} sessions opened, server memory"
        f" {before:.0f} -> {_rss_mb(pid):.0f} MB; then alice's tools/call: {status}"
    )


def timing(work: Path, args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT / "src"))
    import notewell

    print(f"timing (in-process; {args.private:,} private notes hold the word, {args.private // 10:,} public do not)")
    with notewell.open(work / "timing", embedder=None) as store:  # watched: reads do not scan the folder
        store.set_project("alice:vault", private=True, owner="alice")
        run = store.start_attempt("alice:vault", author="alice").id
        store.add_notes([f"# secret {i}\n\nquokka plan number {i}" for i in range(args.private)], attempt=run)
        store.add_notes([f"# public {i}\n\nordinary note {i}" for i in range(args.private // 10)])
        stranger = notewell.Viewer("stranger")
        held, absent = [], []
        for i in range(400):
            for word, into in (("quokka", held), ("wombat", absent))[:: 1 if i % 2 else -1]:
                t = time.perf_counter()
                found = store.search_notes(word, viewer=stranger)
                into.append((time.perf_counter() - t) * 1000)
                assert found == []
    print(f"  anonymous search, a word only private notes hold: {_pcts(held[20:])}")
    print(f"  anonymous search, a word no note holds:           {_pcts(absent[20:])}")
    print(f"  ratio of the p50s: {statistics.median(held[20:]) / statistics.median(absent[20:]):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="importers,installer,server,timing")
    parser.add_argument("--bomb-mb", type=int, default=256)
    parser.add_argument("--slow-sockets", type=int, default=200)
    parser.add_argument("--initializes", type=int, default=2000)
    parser.add_argument("--private", type=int, default=20_000)
    args = parser.parse_args()
    parts = {"importers": importers, "installer": installer, "server": server, "timing": timing}
    with tempfile.TemporaryDirectory(prefix="notewell-attack-") as tmp:
        for name in args.parts.split(","):
            work = Path(tmp) / name
            work.mkdir()
            parts[name.strip()](work, args)


if __name__ == "__main__":
    main()
