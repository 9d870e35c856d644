"""`notewell import SOURCE [PATH]` from the command line: a summary line, errors one per line on
stderr with exit 1, JSON with --json, Claude Code's own folder by default."""

from __future__ import annotations

import json
import zipfile

import pytest

from tests.interfaces.cli_harness import call
from tests.services.conversation_fixtures import write_chatgpt_zip, write_claude_code, write_codex, write_gemini


def nw(tmp_path, *args, env=None, unset_codex=False):
    unset = ("NOTEWELL_STORE", "CODEX_HOME") if unset_codex else ("NOTEWELL_STORE",)
    return call(["--store", str(tmp_path / "notes"), *args], env=env, unset=unset, text=True)


@pytest.mark.slow
def test_import_prints_what_it_did_and_again_adds_nothing(tmp_path):
    write_chatgpt_zip(tmp_path / "export.zip", conversations=3, turns=2)
    done = nw(tmp_path, "import", "chatgpt", str(tmp_path / "export.zip"))
    assert done.returncode == 0, done.stderr
    assert "3 conversation(s)" in done.stdout and "3 new" in done.stdout and "on project chatgpt" in done.stdout
    again = json.loads(nw(tmp_path, "--json", "import", "chatgpt", str(tmp_path / "export.zip")).stdout)
    assert again["unchanged"] == 3 and again["notes"] == 0 and again["errors"] == []
    listed = nw(tmp_path, "list", "--project", "chatgpt").stdout
    assert listed.count("[conversation]") == 3


def test_claude_codes_folder_is_the_default_and_a_bad_file_exits_1(tmp_path):
    config = tmp_path / "claude-config"
    paths = write_claude_code(config / "projects", sessions=2, turns=1)
    paths[0].write_text("{broken\n" + paths[0].read_text())
    done = nw(tmp_path, "import", "claude-code", "--project", "sessions", env={"CLAUDE_CONFIG_DIR": str(config)})
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and f"not imported: {paths[0]}: line 1 is not JSON" in done.stderr
    assert "1 new" in done.stdout and "on project sessions" in done.stdout


@pytest.mark.slow
def test_codex_and_gemini_come_from_their_own_folders_and_a_bad_file_exits_1(tmp_path):
    home = tmp_path / "home"
    write_codex(home / ".codex" / "sessions", sessions=2, turns=1)
    paths = write_gemini(home / ".gemini" / "tmp", sessions=2, turns=1)
    paths[0].write_text(paths[0].read_text()[:-40])  # cut short
    env = {"HOME": str(home)}
    done = nw(tmp_path, "import", "codex", env=env, unset_codex=True)
    assert done.returncode == 0, done.stderr
    assert "codex: 2 file(s), 2 conversation(s)" in done.stdout and "on project codex" in done.stdout
    done = nw(tmp_path, "import", "gemini", env=env, unset_codex=True)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert f"not imported: {paths[0]}: not JSON (cut short?)" in done.stderr and "1 new" in done.stdout
    listed = nw(tmp_path, "list", "--tag", "gemini").stdout
    assert listed.count("[conversation]") == 1


@pytest.mark.slow
def test_mistakes_are_one_line(tmp_path):
    missing = nw(tmp_path, "import", "claude", str(tmp_path / "nope.zip"))
    assert missing.returncode != 0 and len(missing.stderr.splitlines()) == 1 and "no such file" in missing.stderr
    no_path = nw(tmp_path, "import", "chatgpt")
    assert no_path.returncode != 0 and "give the chatgpt export" in no_path.stderr
    folder = nw(tmp_path, "import", "some-folder", "extra")
    assert folder.returncode != 0 and "SOURCE is one of claude-code, chatgpt, claude" in folder.stderr
    no_db = nw(tmp_path, "import", str(tmp_path))  # a notes folder goes to a database
    assert no_db.returncode != 0 and "--database" in no_db.stderr and len(no_db.stderr.splitlines()) == 1


def test_names_from_an_export_cannot_fake_lines_or_move_the_cursor(tmp_path):
    export = tmp_path / "odd.zip"
    with zipfile.ZipFile(export, "w") as z:
        z.writestr("conversations-\n[notewell] all imported\x1b[2J.json", "not json")
    done = nw(tmp_path, "import", "chatgpt", str(export))
    assert done.returncode == 1
    errors = done.stderr.splitlines()
    assert len(errors) == 1 and "\x1b" not in done.stderr and "\\n[notewell] all imported\\x1b[2J" in errors[0]


def test_two_different_conversations_under_one_id_are_not_dropped_without_a_word(tmp_path):
    from tests.services.conversation_fixtures import write_claude_zip

    convs = write_claude_zip(tmp_path / "c.zip", conversations=2, turns=1)
    twin = dict(convs[1], uuid=convs[0]["uuid"])  # another conversation, under the first one's id
    with zipfile.ZipFile(tmp_path / "twins.zip", "w") as z:
        z.writestr("conversations.json", json.dumps([convs[0], convs[0], twin]))
    done = nw(tmp_path, "import", "claude", str(tmp_path / "twins.zip"))
    assert done.returncode == 1 and "a second conversation with the id" in done.stderr
    assert len(done.stderr.splitlines()) == 1  # the exact repeat is not reported
