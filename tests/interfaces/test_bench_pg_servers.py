"""benchmarks/bench_pg_servers.py in miniature: two real servers on the ``pg_url`` database."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("uvicorn")

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_pg_servers.py"


def _script() -> ModuleType:
    if "bench_pg_servers" in sys.modules:
        return sys.modules["bench_pg_servers"]
    spec = importlib.util.spec_from_file_location("bench_pg_servers", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


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
