"""The raw log: stored once, untouched, checked by hash; bounded recall."""

from __future__ import annotations

import os

import pytest

from notewell.agents.raw_log import RawLog, TamperedError
from notewell.errors import InvalidArgumentError, NotFoundError


def test_events_are_stored_exactly_and_numbered(tmp_path):
    log = RawLog(tmp_path / "raw")
    first = log.log(b"line one\r\nline two \xff\n", "a test run")
    second = log.log(b"second", "  another   output ")
    assert (first.id, second.id) == ("E0001", "E0002") and second.label == "another output"
    assert log.read("E0001") == b"line one\r\nline two \xff\n"
    assert log.ids() == {"E0001", "E0002"} and log.verify() == []


def test_tampering_is_detected_and_reported(tmp_path):
    log = RawLog(tmp_path / "raw")
    log.log(b"the original output", "run")
    path = tmp_path / "raw" / "E0001.txt"
    os.chmod(path, 0o644)
    path.write_bytes(b"the edited output")
    with pytest.raises(TamperedError, match="changed after it was logged"):
        log.read("E0001")
    assert log.verify() == ["raw event E0001 was changed after it was logged (sha256 differs)"]
    path.unlink()
    with pytest.raises(TamperedError, match="missing"):
        log.recall("E0001")


def test_recall_is_bounded_and_greps(tmp_path):
    log = RawLog(tmp_path / "raw")
    text = "".join(f"line {i}: {'ERROR timeout' if i == 70 else 'ok'}\n" for i in range(100))
    log.log(text.encode(), "long log")
    part = log.recall("E0001", limit=50)
    assert part.startswith("line 0: ok") and "more characters (recall E0001 --offset 50)" in part
    assert log.recall("E0001", offset=50, limit=20).startswith(text[50:70])
    assert log.recall("E0001", grep="error") == "71: line 70: ERROR timeout"
    assert "no line" in log.recall("E0001", grep="zebra")
    with pytest.raises(InvalidArgumentError):
        log.recall("E0001", limit=10**6)
    with pytest.raises(NotFoundError):
        log.recall("E0009")
    with pytest.raises(InvalidArgumentError):
        log.recall("F0001")
    with pytest.raises(InvalidArgumentError):
        log.log(b"x", " ")
