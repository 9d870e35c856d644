"""Outside edits under a running server (issue 9).

    python stress/outside_edits.py --ops 1000 [--seed N] [--dir DIR] [--keep]

Starts a real server (``python -m notewell --store DIR serve``, keyword search, the hash embedder)
and makes a storm of random operations directly in its folder, the way an editor, a script or
``git checkout`` would: new files (with a header, with only a heading, with neither; in the root,
in sub-folders, in new sub-folders), edits in place (rewrite or append), editor-style saves (write
a hidden temp file, then rename it over the note), renames (within and across folders, and whole
folders), and deletions. Between operations there are sometimes small pauses, sometimes bursts
with none, and sometimes a probe: a search over HTTP for a note just touched (a server must pick
outside changes up before its next read) and for a token that no longer exists.

The harness keeps its own model of the folder and of the id the server should give each file
(README "The folder": a new file's id is derived from its path, an edit keeps the id, a rename —
same content at a new path — keeps it; a rename and an edit between two reads is a new note).
Afterwards it waits (bounded) until the server has caught up and checks that its view equals the
folder exactly: every file listed once under its expected id, ``GET /api/notes/{id}`` gives its
path, title and exact text, its newest token finds it and only it, deleted or overwritten tokens
find nothing, nothing else is listed.

Then the git scenario: ``git init`` in the notes folder (the whole folder, ``.notewell-history``
included, as the README suggests), commit state A, change files (edit, delete, add, rename), commit
B, ``git checkout A`` under the running server: the server must serve exactly A's notes again,
under A's ids; and back to B.

Run as a script it prints its figures and exits non-zero on any mismatch; ``run()`` returns the
figures (the quick test in tests/stress/test_outside_edits.py calls it).
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WORDS = (
    "cache stampede worker refill restart policy clause learning solver phase saving queue index "
    "journal revision header search window merge segment vector shard replica commit editor rename"
).split()
SUBDIRS = ["research", "deep/inner", "日本語", "with space"]


# -- a small real HTTP client on one kept-alive connection ------------------------------


class Client:
    def __init__(self, port: int) -> None:
        self.port = port
        self.conn: http.client.HTTPConnection | None = None
        self.requests = 0
        self.latencies: list[float] = []

    def get(self, path: str, **params: Any) -> tuple[int, Any]:
        if params:
            path += "?" + urllib.parse.urlencode(params)
        for attempt in range(3):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            try:
                t0 = time.perf_counter()
                self.conn.request("GET", path)
                response = self.conn.getresponse()
                data = response.read()
                self.latencies.append(time.perf_counter() - t0)
                self.requests += 1
                return response.status, json.loads(data) if data else None
            except (TimeoutError, ConnectionError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def search(self, q: str, limit: int = 5) -> list[str]:
        """The ids of the notes whose current text *q* matches (not those found through an older
        revision: a replaced text stays searchable as one, after the current matches)."""
        status, body = self.get("/api/notes/search", q=q, limit=limit)
        if status != 200:
            raise RuntimeError(f"search {q!r} answered {status}: {body}")
        return [c["id"] for c in body["cards"] if c.get("matched_revision") is None]

    def note(self, nid: str) -> tuple[int, Any]:
        return self.get(f"/api/notes/{nid}")

    def all_ids(self) -> list[str]:
        ids: list[str] = []
        while True:
            status, body = self.get("/api/notes", limit=100, offset=len(ids))
            if status != 200:
                raise RuntimeError(f"list answered {status}: {body}")
            ids += [c["id"] for c in body["cards"]]
            if len(body["cards"]) < 100:
                return ids

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """``notewell serve`` in a subprocess, on a free port; its stderr goes to a file."""

    def __init__(self, store_dir: Path, log_dir: Path) -> None:
        import notewell

        self.port = free_port()
        env = dict(os.environ)
        src = str(Path(notewell.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
        env["NOTEWELL_EMBEDDER"] = "hash"  # no model to load; this test is about keyword search
        env["NOTEWELL_AUTOWATCH"] = "off"
        self.log = log_dir / f"server-{self.port}.log"
        self._log = open(self.log, "wb")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "notewell", "--store", str(store_dir), "serve", "--port", str(self.port)],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.client = Client(self.port)
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log.read_text(errors='replace')[-2000:]}")
            try:
                if self.client.get("/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not answer within 60 s")
            time.sleep(0.1)

    def errors(self) -> str:
        """What the server logged (tracebacks, internal errors)."""
        return self.log.read_text(errors="replace")

    def close(self) -> None:
        self.client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


# -- the folder model ----------------------------------------------------------------


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Model:
    """What the folder holds, and the id the server should give each path."""

    root: Path
    run: int
    rng: random.Random
    files: dict[str, str] = field(default_factory=dict)  # relative path -> text
    newest: dict[str, str] = field(default_factory=dict)  # path -> its newest token
    born: set[str] = field(default_factory=set)  # every token ever written
    synced: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (id, sha) as of the last read
    counter: int = 0
    dirs: list[str] = field(default_factory=lambda: [""])

    def token(self) -> str:
        self.counter += 1
        token = f"ot{self.run}q{self.counter}"  # ends in digits: one word, never stemmed
        self.born.add(token)
        return token

    @property
    def dead(self) -> set[str]:
        """Tokens no file holds any more."""
        prefix = f"ot{self.run}q"
        live = {w for text in self.files.values() for w in text.split() if w.startswith(prefix)}
        return self.born - live

    def fresh_path(self, directory: str | None = None) -> str:
        directory = self.rng.choice(self.dirs) if directory is None else directory
        self.counter += 1
        style = self.rng.random()
        if style < 0.1:
            name = f"Notes über {self.counter}.md"
        elif style < 0.2:
            name = f"idea {self.counter} {self.rng.choice(WORDS)}.md"
        else:
            name = f"n{self.counter}-{self.rng.choice(WORDS)}.md"
        return f"{directory}/{name}" if directory else name

    def text(self, token: str) -> str:
        words = " ".join(self.rng.choices(WORDS, k=self.rng.randint(3, 40)))
        style = self.rng.random()
        if style < 0.5:
            tags = ", ".join(self.rng.sample(["ops", "outside", "editor", "storm", "git"], 2))
            return f"---\ntitle: Outside {token} {self.rng.choice(WORDS)}\ntags: [{tags}]\n---\n{words}\n{token}\n"
        if style < 0.8:
            return f"# Heading {token}\n\n{words} {token}\n"
        return f"{words}\n\nplain {token} text\n"

    def title(self, path: str) -> str:
        import notewell

        parsed = notewell.parse_note(self.files[path])
        from notewell.model.note import derive_title

        return derive_title(parsed, path)

    # Operations made directly on the folder (the server is not told).

    def _write(self, path: str, text: str, mode: str = "w") -> None:
        full = self.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        with open(full, mode, encoding="utf-8") as fh:
            fh.write(text)

    def op_new(self, directory: str | None = None) -> str:
        path = self.fresh_path(directory)
        token = self.token()
        text = self.text(token)
        self._write(path, text)
        self.files[path] = text
        self.newest[path] = token
        return path

    def op_new_folder(self) -> str:
        self.counter += 1
        directory = f"{self.rng.choice(self.dirs + ['batch'])}/d{self.counter}".lstrip("/")
        self.dirs.append(directory)
        return self.op_new(directory)

    def op_edit(self) -> str:
        path = self.rng.choice(sorted(self.files))
        token = self.token()
        if self.rng.random() < 0.3:  # append a line: the earlier tokens stay
            extra = f"appended {token}\n"
            self._write(path, extra, "a")
            self.files[path] += extra
        else:
            text = self.text(token)
            self._write(path, text)
            self.files[path] = text
        self.newest[path] = token
        return path

    def op_save_as_editor(self) -> str:
        """Write a hidden temp file beside the note, fsync, rename it over the note."""
        path = self.rng.choice(sorted(self.files))
        token = self.token()
        text = self.text(token)
        full = self.root / path
        temp = full.parent / f".{full.name}.{self.counter}.tmp"
        with open(temp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, full)
        self.files[path] = text
        self.newest[path] = token
        return path

    def op_rename(self) -> str:
        path = self.rng.choice(sorted(self.files))
        new = self.fresh_path()
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        os.rename(self.root / path, self.root / new)
        self.files[new] = self.files.pop(path)
        self.newest[new] = self.newest.pop(path)
        return new

    def op_rename_folder(self) -> str | None:
        movable = [d for d in self.dirs if d.count("/") >= 1 and (self.root / d).is_dir()]
        if not movable:
            return None
        old = self.rng.choice(movable)
        self.counter += 1
        new = f"{old.rsplit('/', 1)[0]}/moved{self.counter}"
        os.rename(self.root / old, self.root / new)
        self.dirs = [new + d[len(old) :] if d == old or d.startswith(old + "/") else d for d in self.dirs]
        for path in [p for p in self.files if p.startswith(old + "/")]:
            moved = new + path[len(old) :]
            self.files[moved] = self.files.pop(path)
            self.newest[moved] = self.newest.pop(path)
        return new

    def op_delete(self) -> None:
        path = self.rng.choice(sorted(self.files))
        (self.root / path).unlink()
        del self.files[path]
        del self.newest[path]

    # What the server should answer.

    def expected_ids(self) -> dict[str, str]:
        """The id of every file after the server's next look (README "The folder")."""
        from notewell.model.ids import derived_note_id

        missing: dict[str, list[str]] = {}
        for path, (nid, digest) in self.synced.items():
            if path not in self.files:
                missing.setdefault(digest, []).append(nid)
        out: dict[str, str] = {}
        for path, text in self.files.items():
            digest = sha(text)
            if path in self.synced:
                out[path] = self.synced[path][0]  # edited in place (or not at all): same id
            elif missing.get(digest):
                out[path] = missing[digest].pop()  # renamed: same content at a new path
            else:
                out[path] = derived_note_id(path)  # new at a path never used before
        return out

    def mark_synced(self) -> None:
        ids = self.expected_ids()
        self.synced = {p: (ids[p], sha(t)) for p, t in self.files.items()}

    def folder_state(self) -> dict[str, str]:
        """What is really on disk (notes only: hidden files and folders are not notes)."""
        out = {}
        for full in self.root.rglob("*.md"):
            rel = full.relative_to(self.root).as_posix()
            if any(part.startswith(".") for part in rel.split("/")):
                continue
            out[rel] = full.read_text(encoding="utf-8")
        return out


def probe(model: Model, client: Client, touched: list[str]) -> list[str]:
    """A read right after outside changes: the server must have them."""
    problems: list[str] = []
    expected = model.expected_ids()
    for path in touched[-2:]:
        if path in model.files:
            token = model.newest[path]
            found = client.search(token)
            if found != [expected[path]]:
                problems.append(f"probe: {path!r} ({token}) -> {found}, expected [{expected[path]}]")
    if model.dead:
        token = model.rng.choice(sorted(model.dead))
        found = client.search(token)
        if found:
            problems.append(f"probe: gone token {token} still finds {found}")
    model.mark_synced()
    return problems


def compare(model: Model, client: Client, *, full: bool = True) -> list[str]:
    """The server's view against the folder; an empty list when they agree exactly."""
    problems: list[str] = []
    on_disk = model.folder_state()
    if on_disk != model.files:
        problems.append(
            f"harness model differs from disk: {sorted(set(on_disk) ^ set(model.files))[:5]}"
            f" or {[p for p in on_disk if p in model.files and on_disk[p] != model.files[p]][:5]}"
        )
    expected = model.expected_ids()
    listed = client.all_ids()
    if len(listed) != len(set(listed)):
        problems.append(f"{len(listed) - len(set(listed))} ids listed twice")
    if set(listed) != set(expected.values()):
        extra = sorted(set(listed) - set(expected.values()))
        missing = sorted(p for p, i in expected.items() if i not in set(listed))
        problems.append(
            f"listed {len(set(listed))} notes, folder has {len(expected)}: extra {extra[:5]}, missing {missing[:5]}"
        )
    if not full:
        return problems
    for path, nid in sorted(expected.items()):
        found = client.search(model.newest[path])
        if found != [nid]:
            problems.append(f"{path!r}: its token {model.newest[path]} finds {found}, expected [{nid}]")
        status, note = client.note(nid)
        if status != 200:
            problems.append(f"{path!r}: GET {nid} answered {status}")
            continue
        if note["path"] != path or note["text"] != model.files[path] or note["title"] != model.title(path):
            problems.append(
                f"{path!r}: GET {nid} gives path {note['path']!r}, title {note['title']!r},"
                f" text {'same' if note['text'] == model.files[path] else 'different'}"
            )
    for token in sorted(model.dead):
        found = client.search(token)
        if found:
            problems.append(f"gone token {token} still finds {found}")
    return problems


def wait_until_caught_up(model: Model, client: Client, timeout: float) -> tuple[float, list[str]]:
    """Seconds until the server agrees with the folder (cheap check, then the whole one)."""
    started = time.perf_counter()
    deadline = time.monotonic() + timeout
    problems: list[str] = []
    while True:
        problems = compare(model, client, full=False)
        if not problems:
            caught_up = time.perf_counter() - started
            problems = compare(model, client, full=True)
            if not problems:
                model.mark_synced()
                return caught_up, []
        if time.monotonic() > deadline:
            model.mark_synced()  # the server has looked at the folder as it is now
            return time.perf_counter() - started, problems
        time.sleep(0.2)


# -- the storm ---------------------------------------------------------------------


OPS = {
    "new": 24,
    "new_folder": 2,
    "edit": 22,
    "save_as_editor": 16,
    "rename": 16,
    "rename_folder": 2,
    "delete": 12,
}


def storm(model: Model, client: Client, ops: int) -> dict[str, Any]:
    rng = model.rng
    counts = dict.fromkeys(OPS, 0)
    problems: list[str] = []
    probes = 0
    burst = 0
    touched: list[str] = []
    for _ in range(ops):
        op = rng.choices(list(OPS), weights=list(OPS.values()))[0]
        if op not in ("new", "new_folder") and len(model.files) < 5:
            op = "new"
        path = getattr(model, f"op_{op}")()
        if path is None and op == "rename_folder":
            path = model.op_rename()
            op = "rename"
        counts[op] += 1
        if path:
            touched.append(path)
        if burst:
            burst -= 1
            continue
        if rng.random() < 0.04:
            burst = rng.randint(20, 80)  # a run with no pause and no read, like a git checkout
            continue
        if rng.random() < 0.12:
            probes += 1
            problems += probe(model, client, touched)
            touched.clear()
        elif rng.random() < 0.3:
            time.sleep(rng.uniform(0, 0.004))
    return {"counts": counts, "probes": probes, "probe_problems": problems}


# -- git -----------------------------------------------------------------------------


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "stress",
        "GIT_AUTHOR_EMAIL": "stress@example.invalid",
        "GIT_COMMITTER_NAME": "stress",
        "GIT_COMMITTER_EMAIL": "stress@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def git_scenario(model: Model, client: Client, changes: int, timeout: float) -> dict[str, Any]:
    """Commit A, change the folder, commit B, check out A under the server, then B again."""
    root = model.root
    out: dict[str, Any] = {"problems": []}
    caught, problems = wait_until_caught_up(model, client, timeout)
    out["problems"] += [f"before git: {p}" for p in problems]
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "A")
    commit_a = git(root, "rev-parse", "HEAD")
    state_a = (dict(model.files), dict(model.newest), dict(model.synced))
    rng = model.rng
    for i in range(changes):
        op = ("edit", "save_as_editor", "delete", "new", "rename", "new_folder")[i % 6]
        getattr(model, f"op_{op}")()
        if rng.random() < 0.2:
            probe(model, client, [])
    caught, problems = wait_until_caught_up(model, client, timeout)
    out["problems"] += [f"state B: {p}" for p in problems]
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "B")
    commit_b = git(root, "rev-parse", "HEAD")
    state_b = (dict(model.files), dict(model.newest), dict(model.synced))
    for name, commit, (files, newest, synced) in (
        ("checkout A", commit_a, state_a),
        ("checkout B again", commit_b, state_b),
    ):
        git(root, "checkout", "-q", "-f", commit)  # -f: the server journaled the last checkout
        # The commit's files, each under the id it had then; the other state's own tokens are gone.
        model.files, model.newest, model.synced = dict(files), dict(newest), dict(synced)
        model.dirs = sorted({p.rsplit("/", 1)[0] if "/" in p else "" for p in model.files} | {""})
        caught, problems = wait_until_caught_up(model, client, timeout)
        out[f"{name} catch-up s"] = caught
        out["problems"] += [f"{name}: {p}" for p in problems]
    out["notes in A"] = len(state_a[0])
    out["notes in B"] = len(state_b[0])
    return out


# -- the run -------------------------------------------------------------------------


def run(
    base: Path, *, ops: int = 1000, seed: int = 1, initial: int = 40, git_changes: int = 60, timeout: float = 60
) -> dict[str, Any]:
    """Start a server on a new store in *base*/notes, storm it, check; returns the figures."""
    import notewell

    base = Path(base)
    root = base / "notes"
    notewell.open(root, watch=False, embedder=None).close()
    server = ServerProcess(root, base)
    figures: dict[str, Any] = {"ops": ops}
    try:
        model = Model(root=root, run=seed, rng=random.Random(seed))
        for d in SUBDIRS[:2]:
            model.dirs.append(d)
        for _ in range(initial):
            model.op_new()
        # The server reads the first files once (their ids: derived from their paths).
        _, problems = wait_until_caught_up(model, server.client, timeout)
        figures["initial_mismatches"] = problems
        started = time.perf_counter()
        result = storm(model, server.client, ops)
        figures["storm_seconds"] = time.perf_counter() - started
        figures["op_counts"] = result["counts"]
        figures["probes"] = result["probes"]
        caught, problems = wait_until_caught_up(model, server.client, timeout)
        figures["catch_up_seconds"] = caught
        figures["files_after_storm"] = len(model.files)
        figures["gone_tokens_checked"] = len(model.dead)
        figures["storm_mismatches"] = result["probe_problems"] + problems
        started = time.perf_counter()
        figures["git"] = git_scenario(model, server.client, git_changes, timeout)
        figures["git_seconds"] = time.perf_counter() - started
        figures["requests"] = server.client.requests
        lat = sorted(server.client.latencies)
        figures["request_p50_ms"] = lat[len(lat) // 2] * 1000 if lat else 0.0
        figures["request_p95_ms"] = lat[int(len(lat) * 0.95)] * 1000 if lat else 0.0
    finally:
        server.close()
        log = server.errors()
    figures["server_errors"] = [line for line in log.splitlines() if "Traceback" in line or "ERROR" in line]
    figures["mismatches"] = (
        figures.get("initial_mismatches", [])
        + figures.get("storm_mismatches", [])
        + figures.get("git", {}).get("problems", [])
    )
    return figures


def print_figures(fig: dict[str, Any], out: Any = sys.stdout) -> None:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"outside edits under a running server: {fig['ops']} operations")
    p(f"  storm time                   {fig.get('storm_seconds', 0):.2f} s ({fig.get('probes', 0)} probing reads)")
    p(f"  operations                   {fig.get('op_counts')}")
    p(f"  catch-up after the storm     {fig.get('catch_up_seconds', 0):.3f} s")
    gone = fig.get("gone_tokens_checked", 0)
    p(f"  files checked                {fig.get('files_after_storm', 0)} (+ {gone} gone tokens)")
    p(f"  storm mismatches             {len(fig.get('storm_mismatches', []))}")
    g = fig.get("git", {})
    p(f"  git: notes in A / B          {g.get('notes in A')} / {g.get('notes in B')}")
    p(f"  git: checkout A catch-up     {g.get('checkout A catch-up s', 0):.3f} s")
    p(f"  git: checkout B catch-up     {g.get('checkout B again catch-up s', 0):.3f} s")
    p(f"  git mismatches               {len(g.get('problems', []))}")
    p(
        f"  HTTP requests                {fig.get('requests', 0)}, p50 {fig.get('request_p50_ms', 0):.1f} ms,"
        f" p95 {fig.get('request_p95_ms', 0):.1f} ms"
    )
    p(f"  server errors logged         {len(fig['server_errors'])}")
    p(f"  mismatches                   {len(fig['mismatches'])}")
    for m in (fig["mismatches"] + fig["server_errors"])[:25]:
        p(f"    {m}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--git-changes", type=int, default=120)
    ap.add_argument("--timeout", type=float, default=60, help="seconds to wait for the server to catch up")
    ap.add_argument("--dir", help="work folder (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="nw-outside-"))
    try:
        fig = run(base, ops=args.ops, seed=args.seed, git_changes=args.git_changes, timeout=args.timeout)
        print_figures(fig)
        if args.keep:
            print(f"  kept in {base}")
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 1 if fig["mismatches"] or fig["server_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
