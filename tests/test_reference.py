"""The error table covers every error, every interface reads it, and docs/reference.md is current."""

from __future__ import annotations

import pathlib

import pytest

import notewell.errors as errors
from notewell.errors import ERROR_KINDS, NotewellError
from notewell.interfaces.cli.app import EXIT_CODES
from notewell.interfaces.cli.reference import reference_markdown
from notewell.interfaces.http.app import STATUS

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
    from notewell.interfaces.mcp.results import failure

    for cls in _error_classes():
        result = failure(cls("why", 1.0) if cls is errors.RateLimitedError else cls("why"))
        assert result.is_error and result.content[0].text == f"{cls.code}: why"
        assert result.structured_content == {"error": {"code": cls.code, "message": "why"}}


def test_the_reference_is_current():
    written = (ROOT / "docs" / "reference.md").read_text()
    assert written == reference_markdown(), "run: python -m notewell.interfaces.cli.reference > docs/reference.md"


def test_every_notewell_variable_is_a_setting_read_through_the_registry():
    import re

    from notewell.settings import SETTINGS

    names = {s.name for s in SETTINGS}
    used, direct = set(), []
    for path in (ROOT / "src" / "notewell").rglob("*.py"):
        text = path.read_text()
        used |= set(re.findall(r"NOTEWELL_[A-Z_]*[A-Z]", text))
        if path.name != "settings.py":
            reads = re.compile(r"""(environ|getenv|env)\s*(\.get\(|\[|\()\s*["']NOTEWELL_""")
            direct += [f"{path.name}: {line.strip()}" for line in text.splitlines() if reads.search(line)]
    assert used <= names, f"not in notewell.settings.SETTINGS: {sorted(used - names)}"
    assert names <= used, f"registered but never read: {sorted(names - used)}"
    assert direct == [], "read NOTEWELL_* through notewell.settings.setting"


def test_a_setting_is_stripped_and_an_unknown_name_refused():
    import pytest

    from notewell.settings import effective_settings, setting

    assert setting("NOTEWELL_STORE", {"NOTEWELL_STORE": "  notes  "}) == "notes"
    assert setting("NOTEWELL_STORE", {"NOTEWELL_STORE": " "}) is None
    with pytest.raises(KeyError):
        setting("NOTEWELL_NO_SUCH", {})
    rows = {
        r["name"]: r
        for r in effective_settings({"NOTEWELL_DATABASE": "postgresql://u:pw@db/n", "NOTEWELL_CHAT_KEY": "sk"})
    }
    assert rows["NOTEWELL_DATABASE"] == {
        "name": "NOTEWELL_DATABASE",
        "value": "postgresql://***@db/n",
        "source": "environment",
    }
    assert rows["NOTEWELL_CHAT_KEY"]["value"] == "***" and rows["NOTEWELL_STORE"]["source"] == "default"
    shown = {  # a credential in any URL-shaped value is masked, whichever the setting
        "NOTEWELL_STORE": "postgresql://alice:s3cret@db/notes",
        "NOTEWELL_DATABASE": "postgresql://db/notes?password=s3cret&application_name=a@b",
        "NOTEWELL_EMBED_URL": "https://user:s3cret@embed.example/v1",
        "NOTEWELL_CHAT_URL": "https://x.example/v1?api-key=s3cret",
    }
    values = " ".join(str(r["value"]) for r in effective_settings(shown))
    assert "s3cret" not in values and "postgresql://***@db/notes" in values and "api-key=***" in values
    odd = {  # a password libpq takes with ? or # in it; a secret holding ://; a token as the user; a fragment
        "NOTEWELL_DATABASE": "postgresql://alice:s3cr?et#pw@db.example/notes",
        "NOTEWELL_EMBED_KEY": "sk-s3cret://x",
        "NOTEWELL_EMBED_URL": "https://ghp_s3cretTOKEN@embed.example/v1",
        "NOTEWELL_CHAT_URL": "https://chat.example/v1?pw=s3cret&code=s3cret#access_token=s3cret",
    }
    values = " ".join(str(r["value"]) for r in effective_settings(odd))
    assert "s3cret" not in values and "postgresql://***@db.example/notes" in values
    assert effective_settings({"NOTEWELL_CHAT_URL": "https://c.example/v1?a=\udcff"})  # an undecodable byte: shown


@pytest.mark.slow
def test_notewell_config_prints_each_setting_and_never_a_secret(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, NOTEWELL_EMBED_KEY="sk-verysecret", NOTEWELL_AUTHOR="alice")
    out = subprocess.run(
        [sys.executable, "-m", "notewell", "config", "--json"], env=env, capture_output=True, text=True, check=True
    ).stdout
    import json

    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["NOTEWELL_AUTHOR"] == {"name": "NOTEWELL_AUTHOR", "value": "alice", "source": "environment"}
    assert "verysecret" not in out
    text = subprocess.run(
        [sys.executable, "-m", "notewell", "config"], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "NOTEWELL_AUTHOR" in text and "alice  [environment]" in text and "verysecret" not in text


def test_masking_stays_linear_on_the_longest_value():
    import time

    from notewell.settings import effective_settings

    value = "https://x.example/v1?" + "pass" * 32_000  # 128 KB, an environment variable's usual limit
    began = time.perf_counter()
    effective_settings({"NOTEWELL_CHAT_URL": value})
    assert time.perf_counter() - began < 1.0  # 16 s when a regex backtracked over the parameter's name


def _named_in_architecture() -> tuple[list[str], list[str]]:
    """The files and names docs/architecture.md points to: (paths, `module` `NAME` pairs)."""
    import re

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    paths = sorted(set(re.findall(r"`([\w/]+(?:\.py|/))`", text)) | set(re.findall(r"\b([\w/]+\.py)\b", text)))
    tables = re.findall(r"`([\w/]+\.py)` `([A-Z_]+)`", text)
    return paths, [f"{module}:{name}" for module, name in tables]


def _resolve(path: str) -> pathlib.Path | None:
    pkg = ROOT / "src" / "notewell"
    if path.startswith("tests/"):
        return ROOT / path if (ROOT / path).exists() else None
    for base in [pkg, *pkg.rglob("*/")]:  # a bare name is found in any layer (`watching.py`)
        if (base / path).exists():
            return base / path
    return None


@pytest.mark.slow
def test_architecture_md_names_only_what_exists():
    paths, tables = _named_in_architecture()
    assert len(paths) > 30 and len(tables) >= 6
    assert [p for p in paths if _resolve(p) is None] == []
    for entry in tables:
        module, name = entry.split(":")
        resolved = _resolve(module)
        assert resolved is not None and f"\n{name}" in resolved.read_text(encoding="utf-8"), entry
