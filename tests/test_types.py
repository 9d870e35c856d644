"""The core and the store contract pass `mypy --strict` (both stores checked against NoteStore,
and every backend, the memory fake too, against Backend: tests/fakes/protocol_check.py)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("mypy")

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "notewell"
# The service's contract and the policy both stores share; opening.py returns each store as a
# NoteStore, so mypy holds Store and PgStore to the Protocol there.
CORE = [
    "services/contract.py",
    "services/service.py",
    "backends/records.py",
    "backends/sqlite/records.py",
    "backends/postgres/records.py",
    "backends/sqlite/filters_sql.py",
    "backends/postgres/filters_sql.py",
    "services/opening.py",
    "services/searching.py",
    "services/links.py",
    "services/server_api.py",
    "backends/sqlite/notes.py",
    "backends/sqlite/note_writes.py",
    "backends/sqlite/guard.py",
    "backends/sqlite/watching.py",
    "backends/sqlite/tokens.py",
    "backends/postgres/tokens.py",
    "backends/postgres/meaning.py",
    "backends/backend.py",
    "backends/sqlite/backend.py",
    "backends/postgres/backend.py",
    "model/access_tokens.py",
    "search/request.py",
    "search/plan.py",
    "search/fusion.py",
    "search/filters.py",
    "search/embedder_slot.py",
    "search/passage_matrix.py",
    "model/numbers.py",
    "model/note.py",
    "model/visibility.py",
    "model/attempt.py",
    # Anthropic's memory tool: the protocol's core and the SDK's class over it
    "agents/memory_paths.py",
    "agents/memory_files.py",
    "agents/anthropic_memory.py",
    "services/reports.py",
    "services/report_pages.py",
    "model/redaction.py",
    "model/secrets.py",
    "model/personal_data.py",
]
# Typed test code: the memory backend, and the check that SqliteBackend, PostgresBackend and
# MemoryBackend each are a Backend (mypy follows it into tests/fakes/memory_*.py).
TYPED_TESTS = ["tests/fakes/protocol_check.py"]


@pytest.mark.slow
def test_the_core_passes_mypy_strict(tmp_path):
    files = [str(SRC / f) for f in CORE] + [str(ROOT / f) for f in TYPED_TESTS]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), *files],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
