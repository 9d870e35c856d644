"""The error table covers every error, every interface reads it, and docs/reference.md is current."""

from __future__ import annotations

import pathlib

import notewell.errors as errors
from notewell.errors import ERROR_KINDS, NotewellError
from notewell.interfaces.cli import EXIT_CODES
from notewell.interfaces.http_app import STATUS
from notewell.interfaces.reference import reference_markdown

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _error_classes() -> list[type[NotewellError]]:
    return [getattr(errors, name) for name in errors.__all__ if name.endswith("Error") and name != "NotewellError"]


def test_every_error_has_one_row_and_every_row_an_error():
    codes = [kind.code for kind in ERROR_KINDS]
    assert len(codes) == len(set(codes))
    assert {cls.code for cls in _error_classes()} == set(codes)


def test_every_interface_maps_every_code_from_the_table():
    for kind in ERROR_KINDS:
        assert EXIT_CODES[kind.code] == kind.exit_code and kind.exit_code not in (0, 1, 70)
        assert STATUS[kind.code] == kind.http_status and 400 <= kind.http_status < 600


def test_the_mcp_form_says_the_code():
    import pytest

    pytest.importorskip("mcp")
    from notewell.interfaces.mcp_results import failure

    for cls in _error_classes():
        result = failure(cls("why", 1.0) if cls is errors.RateLimitedError else cls("why"))
        assert result.is_error and result.content[0].text == f"{cls.code}: why"
        assert result.structured_content == {"error": {"code": cls.code, "message": "why"}}


def test_the_reference_is_current():
    written = (ROOT / "docs" / "reference.md").read_text()
    assert written == reference_markdown(), "run: python -m notewell.interfaces.reference > docs/reference.md"
