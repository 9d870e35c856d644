"""basic-memory (PyPI ``basic-memory``, 0.24.1) as a leg of bench_vs_fts5.py, where it is installed.

It needs Python >= 3.12 and its own web, MCP and embedding stack, so it lives in a venv of its own
(``scripts/install-basic-memory`` makes ``.bench/basic-memory``) and is never imported here: a helper
script runs under that venv's interpreter and answers JSON lines on a pipe. One long-lived helper,
because a cold ``basic-memory`` process spends about 8 s importing its stack before any query.

Everything it writes stays in a temporary folder (HOME and its config folder are pointed there), and it
indexes a copy of the notes: it rewrites each file it indexes (it adds a ``permalink:`` line).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["BasicMemory", "find_basic_memory", "installed_version"]

_INSTALLED = Path(__file__).resolve().parent.parent / ".bench" / "basic-memory" / "bin" / "basic-memory"

# Runs in basic-memory's venv: the calls behind `basic-memory reindex --search` and
# `basic-memory tool search-notes`, without a process start each time.
_HELPER = r"""
import asyncio, json, os, sys, time

# Semantic search cannot be switched off in 0.24; where sqlite-vec loads, indexing fetches an embedding
# model (nothing may download here). Unloadable, it falls back to keyword search, which is compared.
sys.modules["sqlite_vec"] = None
answer = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)  # its logging prints to stdout: keep that for the answers

from basic_memory import db
from basic_memory.cli.commands.db import _reindex  # private, pinned by the install script's version
from basic_memory.config import ConfigManager
from basic_memory.mcp.tools import search_notes


async def serve():
    for line in sys.stdin:
        req = json.loads(line)
        try:
            began = time.perf_counter()
            if req["op"] == "index":
                await _reindex(ConfigManager().config, search=True, embeddings=False, full=False, project="main")
                out = {}
            else:
                got = await search_notes(query=req["q"], project="main", search_type="text",
                                         output_format="json", page_size=req["limit"])
                if isinstance(got, str):  # the tool reports a failure as text
                    raise RuntimeError(got[:300])
                out = {"paths": [r.get("file_path") for r in got.get("results", [])]}
            out["seconds"] = time.perf_counter() - began
        except BaseException as exc:  # typer.Exit too: report it and go on serving
            out = {"error": f"{type(exc).__name__}: {exc}"}
        answer.write(json.dumps(out) + "\n")
    await db.shutdown_db()

asyncio.run(serve())
"""


def find_basic_memory() -> Path | None:
    """The basic-memory executable: $NOTEWELL_BENCH_BASIC_MEMORY, the install script's, or on PATH."""
    for found in (os.environ.get("NOTEWELL_BENCH_BASIC_MEMORY"), _INSTALLED, shutil.which("basic-memory")):
        if found and os.access(found, os.X_OK):
            return Path(found)
    return None


def _venv_python(exe: Path) -> str:
    """The interpreter of the venv that owns *exe* (its shebang, as pip writes it)."""
    with open(exe, "rb") as fh:
        first = fh.readline().decode(errors="replace").strip()
    if first.startswith("#!") and "python" in first:
        return first[2:].split()[0]
    return str(exe.parent / "python")


def installed_version(exe: Path) -> str:
    """The basic-memory version in *exe*'s venv (without importing its stack)."""
    code = "from importlib.metadata import version; print(version('basic-memory'))"
    return subprocess.run([_venv_python(exe), "-c", code], capture_output=True, text=True, check=True).stdout.strip()


class BasicMemory:
    """One throw-away basic-memory: its config, database and a copy of the notes, in a temporary folder."""

    def __init__(self, exe: Path) -> None:
        self.exe = exe
        self.dir = Path(tempfile.mkdtemp(prefix="nw-bench-bm-"))
        self.notes = self.dir / "notes"
        self.config = self.dir / "config"
        (self.dir / "home").mkdir()
        self.env = dict(
            os.environ,
            HOME=str(self.dir / "home"),  # never the real ~/.basic-memory or ~/basic-memory
            BASIC_MEMORY_CONFIG_DIR=str(self.config),  # its config and memory.db
            BASIC_MEMORY_HOME=str(self.notes),  # the "main" project's folder
            BASIC_MEMORY_AUTO_UPDATE="false",
            BASIC_MEMORY_DEFAULT_SEARCH_TYPE="text",
            BASIC_MEMORY_LOG_LEVEL="WARNING",
            HF_HUB_OFFLINE="1",
        )
        self._errors = open(self.dir / "helper.stderr", "w")  # noqa: SIM115 - open for the helper's life
        script = self.dir / "helper.py"
        script.write_text(_HELPER, encoding="utf-8")
        self._proc = subprocess.Popen(
            [_venv_python(exe), str(script)],
            env=self.env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
        )

    def _call(self, **req: Any) -> dict[str, Any]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(req) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the basic-memory helper stopped: see {self.dir / 'helper.stderr'}")
        out = json.loads(line)
        if "error" in out:
            raise RuntimeError(f"basic-memory: {out['error']}")
        return out

    def index(self, folder: Path) -> float:
        """Index a copy of the .md files in *folder*; the seconds its indexing pass took (it returns when
        every file is searchable)."""
        shutil.rmtree(self.notes, ignore_errors=True)
        shutil.copytree(folder, self.notes)
        return self._call(op="index")["seconds"]

    def search(self, query: str, limit: int = 10) -> tuple[list[str], float]:
        """The file stems of its best matches, best first, and the seconds the search took."""
        got = self._call(op="search", q=query, limit=limit)
        return [Path(p).stem for p in got["paths"] if p], got["seconds"]

    def cold_search(self, query: str) -> float:
        """Seconds of one `basic-memory tool search-notes` process, start to end."""
        began = time.perf_counter()
        subprocess.run(
            [str(self.exe), "tool", "search-notes", query, "--json", "--page-size", "10", "--project", "main"],
            env=self.env,
            capture_output=True,
            check=True,
        )
        return time.perf_counter() - began

    def disk_bytes(self) -> int:
        """Its database, the log files beside it included."""
        return sum(p.stat().st_size for p in self.config.glob("memory.db*"))

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        self._errors.close()
        shutil.rmtree(self.dir, ignore_errors=True)
