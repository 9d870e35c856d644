"""benchmarks/bench_pg_servers.py in miniature: two real servers on the ``pg_url`` database."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import load_script

pytest.importorskip("uvicorn")

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_pg_servers.py"


def _script() -> ModuleType:
    return load_script("bench_pg_servers", SCRIPT)


def test_two_servers_lose_no_acknowledged_write(pg_url, capsys):
    assert _script().main(["--database", pg_url, "--clients", "1", "--ops", "20"]) == 0
    out = capsys.readouterr().out
    assert "HTTP errors: none" in out
    assert "0 missing, 0 stale texts, 0 lost tags, 0 duplicates" in out
    assert out.splitlines()[-1].startswith("OK: 40 ops")


def test_the_shared_note_gets_19_tags_spread_over_the_clients():
    slots = _script().tag_slots(8, 1000)
    assert sum(len(s) for s in slots) == 19 and all(s <= {3, 7, 11} for s in slots)
    assert _script().tag_slots(2, 5) == [{3}, {3}]  # only position 3 fits in 5 operations
