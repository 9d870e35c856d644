"""Disk full: writes must fail cleanly while there is no space, and work again once there is.

    python stress/disk_full.py [--mechanism auto|tmpfs|loop|rlimit] [--dir D]

The store goes on a small file system of its own, tried in this order:

1. ``tmpfs``: ``mount -t tmpfs -o size=8m`` (needs root or CAP_SYS_ADMIN);
2. ``loop``: a 16 MiB ext4 image, ``mount -o loop`` (root, mkfs.ext4, a loop device);
3. ``rlimit``: no mount; the run goes in a child process with ``RLIMIT_FSIZE`` lowered to the
   size of the largest file of the store, SIGXFSZ ignored, so that growing any file past it
   fails with EFBIG. A weaker stand-in: a file may still be created while it stays under the
   limit, so small note files can be written while the journal and the index cannot grow.

The run: a store of 30 notes (tags, links, an attempt with notes on it); the file system is
filled to the last byte by a filler file; then every kind of write is tried (add, add of a
large note, batch add, edit, add_tag, set_summary, delete, start and end of an attempt). Each
must raise a notewell error with a code (never another exception) or succeed entirely. Reads
and searches of the earlier notes must keep working. A sweep then leaves 0 to 256 KiB free and
tries an add and an edit at each step, so that the space runs out at different points of a
write (the note file, the kept revision, the journal, the index). Then the filler is deleted
and every kind of write must succeed. At the end: no note file is torn (each is a text the
run wrote), the index passes ``PRAGMA integrity_check`` and the FTS5 ``integrity-check`` and
matches a fresh parse of the folder and a rebuild of a copy, and every write that succeeded
is there. A write that raised but whose change shows up afterwards is counted and listed
("failed but took effect").

The mounts are always undone (try/finally). Exit status 1 when anything did not hold.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import hashlib
import importlib.util
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()

TMPFS_SIZE = "8m"
LOOP_SIZE = "16M"
SWEEP_FREE = [0, 1024, 4096, 8192, 12288, 16384, 24576, 32768, 49152, 65536, 98304, 131072, 196608, 262144]


def _crash_module() -> Any:
    """stress/crash.py, for its index checks (stress/ is not a package)."""
    name = "notewell_stress_crash"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE.parent / "crash.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- the small file system -----------------------------------------------------------


def _run(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _umount(path: Path) -> None:
    if not _run(["umount", str(path)]):
        _run(["umount", "-l", str(path)])


@contextlib.contextmanager
def small_fs(base: Path, mechanism: str) -> Iterator[tuple[str, Path, str]]:
    """A small file system under *base*: (mechanism used, its mount point, why others were not)."""
    mnt = base / "mnt"
    mnt.mkdir(parents=True, exist_ok=True)
    why: list[str] = []
    used = None
    if mechanism in ("auto", "tmpfs"):
        if _run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(mnt)]):
            used = "tmpfs"
        else:
            why.append("tmpfs: mount failed (not root?)")
    if used is None and mechanism in ("auto", "loop"):
        img = base / "fs.img"
        if (
            shutil.which("mkfs.ext4")
            and _run(["truncate", "-s", LOOP_SIZE, str(img)])
            and _run(["mkfs.ext4", "-q", "-F", str(img)])
            and _run(["mount", "-o", "loop", str(img), str(mnt)])
        ):
            used = "loop"
        else:
            why.append("loop: mkfs.ext4 or mount -o loop failed")
    if used is None:
        if mechanism not in ("auto", "rlimit"):
            raise RuntimeError(f"cannot use {mechanism}: {'; '.join(why)}")
        used = "rlimit"
    try:
        yield used, mnt, "; ".join(why)
    finally:
        if used in ("tmpfs", "loop"):
            _umount(mnt)


class Filler:
    """Takes the free space of a mounted file system away, and gives it back."""

    def __init__(self, mnt: Path) -> None:
        self.path = mnt / "filler.bin"

    def fill(self) -> int:
        """Write until the file system has not one byte left; the filler's size."""
        chunk = 1 << 20
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            while chunk:
                try:
                    os.write(fd, b"\0" * chunk)
                except OSError as exc:
                    if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                        raise
                    chunk //= 2
            os.fsync(fd)
        finally:
            os.close(fd)
        return self.path.stat().st_size

    def leave_free(self, nbytes: int) -> None:
        self.free()
        size = self.fill()
        os.truncate(self.path, max(0, size - nbytes))

    def free(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def describe(self) -> str:
        try:
            return f"filler {self.path.stat().st_size:,} bytes"
        except FileNotFoundError:
            return "no filler"


class RlimitFiller:
    """The stand-in: RLIMIT_FSIZE at the size of the store's largest file (this process only)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.soft, self.hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a killed process
        self.limit = self.soft

    def _largest(self) -> int:
        return max((p.stat().st_size for p in self.root.rglob("*") if p.is_file()), default=0)

    def fill(self) -> int:
        self.leave_free(0)
        return 0

    def leave_free(self, nbytes: int) -> None:
        self.limit = self._largest() + nbytes
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.limit, self.hard))

    def free(self) -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.soft, self.hard))
        self.limit = self.soft

    def describe(self) -> str:
        return f"RLIMIT_FSIZE {self.limit:,}"


# -- the run --------------------------------------------------------------------------


def note(i: int, *, tags: tuple[str, ...] = ("disk",), links: tuple[str, ...] = (), size: int = 200) -> str:
    body = " ".join(f"filler{i % 7}" for _ in range(max(1, size // 9)))
    head = f"---\ntitle: Note {i}\ntags: [{', '.join(tags)}]\n"
    if links:
        head += f"builds_on: [{', '.join(links)}]\n"
    return head + f"---\n\nd{i}k {body}\n"


class Run:
    """One disk-full run on *root* (a store folder on the small file system)."""

    def __init__(self, root: Path, filler: Any) -> None:
        import notewell

        self.root = root
        self.filler = filler
        self.store = notewell.open(root, watch=False, embedder=None)
        self.texts: dict[str, str] = {}  # sha -> every text this run tried to write
        self.expected: dict[str, str | None] = {}  # note id -> acked text (None: deleted)
        self.attempts: dict[str, bool] = {}  # attempt id -> ended (acked)
        self.log: list[dict[str, Any]] = []
        self.took_effect: list[str] = []
        self.problems: list[str] = []  # what must never happen (the run fails)
        self.read_failures: list[str] = []  # reads refused while space is short (reported, not failed)
        self.seq = 1000
        self.mutable: set[str] = set()  # notes not on an ended attempt, not deleted
        self.spare_attempt: str | None = None
        self.effect = False  # whether the last failed write's change shows in the folder anyway

    # a write, recorded
    def write(self, phase: str, op: str, fn: Callable[[], Any], undo_check: Callable[[], bool] | None) -> Any:
        """Run one write. Returns its result, or None when it raised a notewell error.
        *undo_check* says, later, whether a failed write's change shows anyway."""
        import notewell

        entry: dict[str, Any] = {"phase": phase, "op": op, "space": self.filler.describe()}
        self.effect = False
        try:
            result = fn()
        except notewell.NotewellError as exc:
            entry.update(outcome="failed", code=exc.code, message=exc.message[:160])
            # Checked at once, in the folder (the source of truth the next read indexes).
            if undo_check is not None and undo_check():
                self.effect = entry["took_effect"] = True
                self.took_effect.append(f"{phase}: {op} ({entry['space']}) raised {exc.code} but its change is there")
            self.log.append(entry)
            return None
        except Exception as exc:  # the one thing that must never happen
            entry.update(outcome="unhandled", code=type(exc).__name__, message=str(exc)[:300])
            self.problems.append(f"{phase} {op}: unhandled {type(exc).__name__}: {exc}")
            self.log.append(entry)
            return None
        entry["outcome"] = "ok"
        self.log.append(entry)
        return result

    def text(self, text: str) -> str:
        self.texts[sha(text)] = text
        return text

    def add(self, phase: str, size: int = 200, attempt: str | None = None) -> str | None:
        self.seq += 1
        text = self.text(note(self.seq, size=size, links=tuple(list(self.live())[:2])))
        got = self.write(
            phase,
            f"add_note({size}B)",
            lambda: self.store.add_note(text, attempt=attempt),
            lambda: self._has_text(text),
        )
        if got is not None:
            self.expected[got.id] = got.text
            return got.id
        return None

    def batch(self, phase: str) -> None:
        texts = []
        for _ in range(3):
            self.seq += 1
            texts.append(self.text(note(self.seq)))
        got = self.write(
            phase, "add_notes(3)", lambda: self.store.add_notes(texts), lambda: any(self._has_text(t) for t in texts)
        )
        for n in got or []:
            self.expected[n.id] = n.text

    def edit(self, phase: str, nid: str, size: int = 300) -> None:
        self.seq += 1
        text = self.text(note(self.seq, size=size))
        got = self.write(
            phase, f"edit_note({size}B)", lambda: self.store.edit_note(nid, text), lambda: self._holds(nid, text)
        )
        if got is not None or self.effect:
            self.expected[nid] = text

    def tag(self, phase: str, nid: str) -> None:
        from notewell.model.header_edit import with_tags

        self.seq += 1
        tag = f"t{self.seq}"
        new = self.text(with_tags(self.expected[nid] or "", [tag])[0])
        got = self.write(phase, "add_tag", lambda: self.store.add_tag(nid, tag), lambda: self._holds(nid, new))
        if got is not None or self.effect:
            self.expected[nid] = new

    def summarize(self, phase: str, nid: str) -> None:
        from notewell.model.header_edit import with_summary

        self.seq += 1
        summary = f"summary {self.seq}"
        new = self.text(with_summary(self.expected[nid] or "", summary))
        got = self.write(
            phase, "set_summary", lambda: self.store.set_summary(nid, summary), lambda: self._holds(nid, new)
        )
        if got is not None or self.effect:
            self.expected[nid] = new

    def delete(self, phase: str, nid: str) -> None:
        got = self.write(phase, "delete_note", lambda: self.store.delete_note(nid), lambda: not self._exists(nid))
        if got is not None or self.effect:
            self.expected[nid] = None

    def start(self, phase: str) -> str | None:
        self.seq += 1
        project = f"disk-{self.seq}"

        def appeared() -> bool:  # the journal record is the attempt (the next read indexes it)
            return f'"project":"{project}"' in self._journal()

        got = self.write(phase, "start_attempt", lambda: self.store.start_attempt(project, author="disk"), appeared)
        if got is not None:
            self.attempts[got.id] = False
            return got.id
        return None

    def end(self, phase: str, aid: str) -> None:
        self.seq += 1
        summary = self.text(f"---\ntitle: Summary {self.seq}\n---\n\nd{self.seq}k ended.\n")

        def ended() -> bool:
            return f'{{"op":"attempt_end","id":"{aid}"' in self._journal() or self._has_text(summary)

        got = self.write(
            phase, "end_attempt", lambda: self.store.end_attempt(aid, outcome="failed", summary=summary), ended
        )
        if got is not None:
            self.attempts[aid] = True
            if got.summary_note_id:
                self.expected[got.summary_note_id] = summary

    # what is there
    def live(self) -> list[str]:
        return [i for i, t in self.expected.items() if t is not None]

    def _journal(self) -> str:
        try:
            return (self.root / ".notewell-history" / "journal.jsonl").read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def _exists(self, nid: str) -> bool:
        return (self.root / f"{nid}.md").exists()

    def _holds(self, nid: str, text: str) -> bool:
        try:
            return (self.root / f"{nid}.md").read_text(encoding="utf-8") == text
        except FileNotFoundError:
            return False

    def _has_text(self, text: str) -> bool:
        crash = _crash_module()
        return any(d == text.encode("utf-8") for d in crash.note_files(self.root).values())

    def reads(self, phase: str) -> tuple[int, int]:
        """Read and search every note written so far; (ok, failed)."""
        import notewell

        ok = failed = 0
        for nid, text in list(self.expected.items()):
            if text is None:
                continue
            try:
                got = self.store.get_note(nid)
                word = f"d{got.title.split()[-1]}k"
                found = [c.id for c in self.store.search_notes(word, limit=5)]
                if got.text != text or nid not in found:
                    self.problems.append(f"{phase}: note {nid} reads back wrong or is not found by search")
                    failed += 1
                else:
                    ok += 1
            except notewell.NotewellError as exc:
                failed += 1
                message = f"{phase}: reading {nid} failed: {exc.code}: {exc.message}"
                # With space back every read must work; while it is short a clean refusal is reported.
                (self.problems if phase == "space back" else self.read_failures).append(message)
            except Exception as exc:
                self.problems.append(f"{phase}: reading {nid}: unhandled {type(exc).__name__}: {exc}")
                failed += 1
        return ok, failed

    def every_write(self, phase: str) -> None:
        live = [i for i in self.live() if i in self.mutable]
        self.add(phase)
        self.add(phase, size=200_000)
        self.batch(phase)
        self.edit(phase, live[0])
        self.edit(phase, live[1], size=100_000)
        self.tag(phase, live[2])
        self.summarize(phase, live[3])
        self.delete(phase, live[4])
        self.mutable.discard(live[4])
        aid = self.start(phase)
        if aid is None:
            aid, self.spare_attempt = self.spare_attempt, None
        if aid is not None:
            self.end(phase, aid)
        if self.spare_attempt is None:
            self.spare_attempt = self.start(phase)


def scenario(root: Path, filler: Any) -> dict[str, Any]:
    """The whole run; a dict of what happened (JSON-able)."""
    crash = _crash_module()
    figures: dict[str, Any] = {}
    t0 = time.perf_counter()
    run = Run(root, filler)
    try:
        attempt = run.start("setup")
        for i in range(30):
            run.add("setup", attempt=attempt if i % 5 == 0 else None)
        run.mutable = set(run.live())
        run.spare_attempt = run.start("setup")
        figures["setup_failures"] = [e for e in run.log if e["outcome"] != "ok"]
        figures["filler_bytes"] = filler.fill()
        figures["space_when_full"] = filler.describe()
        run.every_write("full")
        run.every_write("full")
        figures["reads_while_full"] = run.reads("full")
        sweep = []
        for free in SWEEP_FREE:
            filler.leave_free(free)
            before = len(run.log)
            nid = run.add(f"sweep {free}")
            if nid is not None:
                run.mutable.add(nid)
            run.edit(f"sweep {free}", sorted(run.mutable)[free % len(run.mutable)], size=2000)
            run.start(f"sweep {free}")
            sweep.append({"free": free, "outcomes": [(e["op"], e["outcome"], e.get("code")) for e in run.log[before:]]})
        figures["sweep"] = sweep
        figures["reads_at_sweep_end"] = run.reads("sweep")
        filler.free()
        before = len(run.log)
        run.every_write("space back")
        back = run.log[before:]
        figures["after_free"] = [(e["op"], e["outcome"], e.get("code")) for e in back]
        for e in back:
            if e["outcome"] != "ok":
                run.problems.append(f"space back: {e['op']} still fails: {e.get('code')}: {e.get('message')}")
        figures["reads_after_free"] = run.reads("space back")
    finally:
        run.store.close()
        filler.free()
    # The folder and the index.
    r = crash.Round()
    known = set(run.texts)
    for path, data in crash.note_files(root).items():
        if hashlib.sha256(data).hexdigest() not in known:
            r.problems.append(f"torn: {path} is no text this run wrote")
    import notewell

    store = notewell.open(root, watch=False, embedder=None)
    try:
        store.refresh()
        for nid, text in run.expected.items():
            try:
                got = store.get_note(nid).text
            except notewell.NotFoundError:
                got = None
            if got != text:
                r.problems.append(f"note {nid}: {'missing' if got is None else 'holds another text'}")
        for aid, ended in run.attempts.items():
            if ended and store.get_attempt(aid).ended_at is None:
                r.problems.append(f"attempt {aid} was ended but is running")
        if store.problems():
            r.problems.append(f"unreadable files: {store.problems()}")
    finally:
        store.close()
    rows = crash.check_index(root, r)
    crash.check_rebuild(root, rows, r)
    run.problems += r.problems
    counts: dict[str, int] = {}
    for e in run.log:
        key = e["outcome"] if e["outcome"] != "failed" else f"failed ({e['code']})"
        counts[f"{e['phase'].split()[0]}: {key}"] = counts.get(f"{e['phase'].split()[0]}: {key}", 0) + 1
    figures.update(
        writes=counts,
        full_log=[e for e in run.log if e["phase"] == "full"],
        took_effect=run.took_effect,
        read_failures=run.read_failures,
        problems=run.problems,
        index_checks=r.checks,
        notes_at_end=len(run.live()),
        seconds=time.perf_counter() - t0,
    )
    return figures


def run_disk_full(base: Path, mechanism: str = "auto") -> dict[str, Any]:
    """Mount (or fall back), run, unmount. The figures, with the mechanism used."""
    with small_fs(base, mechanism) as (used, mnt, why):
        if used == "rlimit":
            root = base / "store"
            out = subprocess.run(
                [sys.executable, str(HERE), "--rlimit-child", str(root)],
                capture_output=True,
                text=True,
                timeout=600,
                env=_crash_module()._writer_env(),
            )
            if out.returncode != 0:
                raise RuntimeError(f"the rlimit child failed: {out.stderr[-2000:]}")
            figures = json.loads(out.stdout.strip().splitlines()[-1])
        else:
            figures = scenario(mnt / "store", Filler(mnt))
        figures["mechanism"] = used
        figures["not_used"] = why
        return figures


def report(f: dict[str, Any], out: Any = sys.stdout) -> None:
    def p(s: str = "") -> None:
        print(s, file=out)

    mech = {
        "tmpfs": f"tmpfs, size={TMPFS_SIZE}",
        "loop": f"ext4 loop image of {LOOP_SIZE}",
        "rlimit": "RLIMIT_FSIZE in a child process (weaker stand-in: limits each file's size, not the space)",
    }[f["mechanism"]]
    p(f"disk full: {mech}" + (f"  [{f['not_used']}]" if f["not_used"] else ""))
    p(f"  store before filling          30 notes (6 on an attempt), 2 attempts; filler {f['filler_bytes']:,} bytes")
    p("  writes while full (each kind twice):")
    for e in f["full_log"]:
        detail = f"{e['code']}: {e['message'][:90]}" if e["outcome"] != "ok" else ""
        p(f"    {e['op']:22s}{e['outcome']:10s}{detail}")
    ok, bad = f["reads_while_full"]
    p(f"  reads + searches while full   {ok} ok, {bad} failed")
    p("  sweep (bytes left free: add_note, edit_note, start_attempt):")
    for s in f["sweep"]:
        shown = ", ".join(o if o == "ok" else f"{o}({c})" for _op, o, c in s["outcomes"])
        p(f"    {s['free']:>7,}   {shown}")
    ok, bad = f["reads_at_sweep_end"]
    p(f"  reads + searches after sweep  {ok} ok, {bad} failed")
    back_ok = sum(o == "ok" for _op, o, _c in f["after_free"])
    p(f"  after freeing the space       {back_ok}/{len(f['after_free'])} writes ok")
    ok, bad = f["reads_after_free"]
    p(f"  reads + searches at the end   {ok} ok, {bad} failed")
    p("  all writes by outcome:")
    for key, n in sorted(f["writes"].items()):
        p(f"    {key:40s}{n}")
    p(f"  reads refused while short of space  {len(f['read_failures'])}")
    for t in f["read_failures"][:3]:
        p(f"    {t}")
    p(f"  failed but took effect        {len(f['took_effect'])}")
    for t in f["took_effect"][:10]:
        p(f"    {t}")
    p(f"  index checks (integrity, FTS5, folder compare, rebuild compare)  {f['index_checks']} made")
    p(f"  problems                      {len(f['problems'])}")
    for x in f["problems"][:20]:
        p(f"    {x}")
    p(f"  time                          {f['seconds']:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mechanism", choices=["auto", "tmpfs", "loop", "rlimit"], default="auto")
    parser.add_argument("--dir", type=Path, help="work folder (default: a temporary one)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--rlimit-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rlimit_child:
        root = args.rlimit_child
        root.mkdir(parents=True, exist_ok=True)
        print(json.dumps(scenario(root, RlimitFiller(root)), default=str))
        return 0
    with contextlib.ExitStack() as stack:
        base = args.dir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="nw-disk-")))
        base.mkdir(parents=True, exist_ok=True)
        figures = run_disk_full(base, args.mechanism)
    if args.json:
        print(json.dumps(figures, default=str, indent=1))
    else:
        report(figures)
    return 1 if figures["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
