"""The README's set-up commands, CI and the test lock say the same thing: CI runs the README's
command 2, and the lock pins every test requirement at a version pyproject.toml admits, by hash."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^ ;\\]+)\s*(?:;([^\\]*))?")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _quickstart_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _lock() -> dict[str, list[tuple[str, str | None]]]:
    """Package -> its pins, each (version, marker or None); a package may be pinned per Python."""
    pins: dict[str, list[tuple[str, str | None]]] = {}
    for line in (ROOT / "requirements" / "test.txt").read_text(encoding="utf-8").splitlines():
        if m := PIN.match(line):
            pins.setdefault(_norm(m[1]), []).append((m[2], m[3].strip() if m[3] else None))
    return pins


def test_ci_runs_the_readmes_command_2_exactly():
    commands = _quickstart_commands()
    assert len(commands) == 2, commands  # exactly two set-up commands
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert ci[-1] == commands[1]


def test_the_lock_pins_every_test_requirement_at_a_version_pyproject_admits():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = _lock()
    # notewell itself goes in with --no-deps: what it needs must come from the lock too
    for text in [*project["dependencies"], *project["optional-dependencies"]["test"]]:
        req = Requirement(text)
        assert _norm(req.name) in pins, f"{req.name} is not in requirements/test.txt: run scripts/update-locks --keep"
        for version, _marker in pins[_norm(req.name)]:
            assert req.specifier.contains(version, prereleases=True), f"{req.name}=={version} is outside {req}"


def test_every_pin_is_exact_and_carries_hashes():
    text = (ROOT / "requirements" / "test.txt").read_text(encoding="utf-8")
    entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])  # after the two header lines
    assert len(entries) > 50
    for entry in entries:
        assert PIN.match(entry), entry.splitlines()[0]
        assert "--hash=sha256:" in entry, entry.splitlines()[0]


@pytest.mark.parametrize("script", ["install-test-deps", "update-locks", ".ci/run", "check-latest"])
def test_the_scripts_it_names_are_there_and_parse(script):
    path = ROOT / script if script.startswith(".") else ROOT / "scripts" / script
    assert path.is_file() and path.stat().st_mode & 0o111, path
    if path.read_text(encoding="utf-8").startswith("#!/usr/bin/env bash"):
        checked = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    else:
        checked = subprocess.run([sys.executable, str(path), "--help"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_the_test_packages_go_only_into_a_virtual_environment(tmp_path):
    """Outside a venv, install-test-deps refuses before installing anything (the lock's exact
    versions would replace the system's)."""
    outside = os.path.join(sys.base_prefix, "bin", "python3")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python").symlink_to(outside)  # `python` is the system's, as in a shell with no venv
    done = subprocess.run(
        [str(ROOT / "scripts" / "install-test-deps")],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{fake}{os.pathsep}/usr/bin:/bin"},
    )
    assert done.returncode == 2 and "not in a virtual environment" in done.stderr
