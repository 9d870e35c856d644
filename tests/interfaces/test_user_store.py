"""``--user-store``: the person's own store, the same from every folder ($NOTEWELL_STORE, else
~/notes), which the shipped plugin and extension run every command with; it never makes
``./notes`` in the folder a command runs in."""

from __future__ import annotations

import json

import pytest

from tests.interfaces.cli_harness import call

QUIET = ("NOTEWELL_STORE", "NOTEWELL_DATABASE", "NOTEWELL_PROJECT")


@pytest.fixture
def place(tmp_path):
    home, work = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    work.mkdir()
    return home, work


def nw(place, *argv, env=None, stdin=None):
    home, work = place
    return call(argv, env={"HOME": str(home), **(env or {})}, unset=QUIET, cwd=work, input=stdin, text=True)


def test_the_user_store_is_home_notes_before_or_after_the_command_and_never_here(place):
    home, work = place
    added = nw(place, "--user-store", "add", "--title", "Kestrel", "--text", "It hovers.", "--json")
    assert added.returncode == 0, added.stderr
    nid = json.loads(added.stdout)["id"]
    assert (home / "notes" / f"{nid}.md").is_file() and list(work.iterdir()) == []
    listed = nw(place, "list", "--user-store", "--json")
    assert listed.returncode == 0 and nid in listed.stdout
    found = nw(place, "search", "kestrel", "--user-store", "--json")
    assert found.returncode == 0 and nid in found.stdout
    assert list(work.iterdir()) == []


def test_notewell_store_chooses_the_user_store_when_set(place, tmp_path):
    chosen = tmp_path / "mine"
    added = nw(place, "--user-store", "add", "--text", "Chosen.", "--json", env={"NOTEWELL_STORE": str(chosen)})
    assert added.returncode == 0, added.stderr
    assert (chosen / f"{json.loads(added.stdout)['id']}.md").is_file() and not (place[0] / "notes").exists()


def test_store_and_user_store_together_are_one_line_refused_and_make_nothing(place, tmp_path):
    for argv, code in ((["list"], 2), (["hook", "session-start", "--runtime", "codex"], 1)):
        refused = nw(place, "--store", str(tmp_path / "other"), "--user-store", *argv, stdin="{}")
        assert refused.returncode == code and refused.stdout == ""  # a hook's mistakes exit 1, never 2
        assert (
            "--user-store" in refused.stderr and "not both" in refused.stderr and len(refused.stderr.splitlines()) == 1
        )
    assert not (tmp_path / "other").exists() and not (place[0] / "notes").exists()


def test_a_hook_on_a_user_store_not_made_yet_says_how_to_begin_and_makes_nothing(place):
    home, work = place
    done = nw(place, "hook", "session-start", "--runtime", "gemini", "--user-store", stdin='{"session_id": "s"}')
    assert done.returncode == 0 and done.stderr == "", done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("notewell: no notes yet") and "add_note" in context
    assert not (home / "notes").exists() and list(work.iterdir()) == []


@pytest.mark.slow
def test_a_home_notes_folder_of_ones_own_is_never_taken_over(place):
    """~/notes that already holds someone's files and no store: the default is refused in one
    line saying what to do (a hook's exit 1: a non-blocking error), and nothing is indexed there."""
    home, work = place
    mine = home / "notes"
    mine.mkdir()
    (mine / "diary.md").write_text("# Tuesday\n\nprivate thoughts\n")
    for argv, code in ((["list"], 2), (["mcp"], 2), (["hook", "session-start", "--runtime", "claude-code"], 1)):
        refused = nw(place, "--user-store", *argv, stdin="{}")
        assert refused.returncode == code and refused.stdout == "", (argv, refused.stderr)
        assert "NOTEWELL_STORE" in refused.stderr and "notewell init" in refused.stderr
        assert len(refused.stderr.splitlines()) == 1
    assert sorted(p.name for p in mine.iterdir()) == ["diary.md"] and list(work.iterdir()) == []
    assert nw(place, "init", str(mine)).returncode == 0  # made a store on purpose: taken from then on
    listed = nw(place, "--user-store", "list", "--json")
    assert listed.returncode == 0 and "Tuesday" in listed.stdout
    (home / "empty").mkdir()
    chosen = nw(place, "--user-store", "list", env={"NOTEWELL_STORE": str(home / "empty")})
    assert chosen.returncode == 0, chosen.stderr
