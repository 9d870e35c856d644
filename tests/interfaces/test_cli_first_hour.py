"""What a newcomer meets on the command line: edits that keep the header, clear errors for a
bad port or an empty argument, real sizes, deletions in the history, and next steps."""

from __future__ import annotations

import json
import os
import socket
import sys

import pytest

import notewell
from tests.interfaces.cli_harness import run, run_process


def js(p):
    return json.loads(p.stdout.decode())


def _note(store, text="---\ntitle: Cache plan\nkind: decision\ntags: [cache]\n---\nfirst body\n"):
    with notewell.open(store, watch=False, embedder=None) as s:
        return s.add_note(text).id


@pytest.mark.slow
def test_edit_text_replaces_the_body_and_keeps_the_header(tmp_path):
    store = tmp_path / "s"
    nid = _note(store)
    out = run(["edit", nid, "--text", "second body\n"], store).stdout.decode()
    assert f"{nid} now at revision 2" in out
    note = js(run(["get", nid, "--json"], store))
    assert note["text"] == "---\ntitle: Cache plan\nkind: decision\ntags: [cache]\n---\nsecond body\n"
    assert (note["title"], note["kind"], note["tags"]) == ("Cache plan", "decision", ["cache"])
    # The whole text, header included, is an explicit choice.
    run(["edit", nid, "--full-text", "# Other\n\nall new\n"], store)
    assert js(run(["get", nid, "--json"], store))["text"] == "# Other\n\nall new\n"


def test_an_edit_that_changes_nothing_says_so_and_makes_no_revision(tmp_path):
    store = tmp_path / "s"
    nid = _note(store)
    out = run(["edit", nid, "--text", "first body\n"], store).stdout.decode()
    assert "unchanged" in out and "still revision 1" in out
    assert [h["revision"] for h in js(run(["history", nid, "--json"], store))["revisions"]] == [1]


def test_edit_refuses_an_empty_argument_and_two_texts(tmp_path):
    store = tmp_path / "s"
    nid = _note(store)
    done = run(["edit", nid, ""], store, check=False)
    assert done.returncode == 2 and b"the FILE argument is empty" in done.stderr
    assert done.stderr.decode().count("\n") == 1
    both = run(["edit", nid, "--text", "a", "--full-text", "b"], store, check=False)
    assert both.returncode == 2 and b"one way" in both.stderr


@pytest.mark.slow
def test_serve_refuses_a_bad_port_and_a_port_in_use_in_one_line(tmp_path):
    store = tmp_path / "s"
    bad = run_process(["serve", "--port", "99999"], store, check=False)
    assert bad.returncode == 2 and bad.stdout == b""
    assert bad.stderr.decode().strip() == (
        "notewell: invalid_argument: --port must be a whole number from 1 to 65535 (or 0: any free port), got 99999"
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = run_process(["serve", "--port", str(port)], store, check=False)
    assert busy.returncode != 0 and b"serving" not in busy.stdout  # no success line before the bind
    said = busy.stderr.decode().strip()
    assert said == f"notewell: unavailable: cannot listen on 127.0.0.1:{port}: the port is in use"


def test_an_oversized_file_is_reported_with_its_real_size(tmp_path):
    store = tmp_path / "s"
    _note(store)
    (store / "huge.md").write_bytes(b"x" * 5_242_937)
    problems = js(run(["reindex", "--json"], store))["problems"]
    assert any("5242937 bytes" in p["error"] for p in problems), problems


@pytest.mark.slow
def test_history_of_a_deleted_note_shows_the_deletion(tmp_path):
    store = tmp_path / "s"
    nid = _note(store)
    run(["rm", nid], store)
    hist = js(run(["history", nid, "--json"], store))["revisions"]
    assert [(h["revision"], h["op"]) for h in hist] == [(1, "add"), (1, "delete")] and hist[1]["at"]
    text = run(["history", nid], store).stdout.decode()
    assert "deleted" in text and "--revision 1" in text


def test_demo_ends_with_what_to_try_next(tmp_path):
    out = run(["demo"], tmp_path / "demo").stdout.decode()
    tail = out[out.rindex("next:") :]
    for words in ("notewell embed", "notewell serve", "http://127.0.0.1:8765/", "notewell mcp"):
        assert words in tail


@pytest.mark.slow
def test_demo_never_fills_the_store_the_environment_names(tmp_path):
    from tests.interfaces.cli_harness import call

    mine = tmp_path / "my-notes"  # the store a person's agents use, new and empty
    notewell.open(mine, watch=False, embedder=None).close()
    here = tmp_path / "here"
    here.mkdir()
    for env in ({"NOTEWELL_STORE": str(mine)}, {"NOTEWELL_DATABASE": "postgresql://nobody@127.0.0.1:1/none"}):
        done = call(["demo"], env=env, unset=("NOTEWELL_STORE", "NOTEWELL_DATABASE"), cwd=here)
        assert done.returncode == 0, done.stderr
        assert f"store: {here / 'notewell-demo'}" in done.stdout.decode()
        assert "--store notewell-demo" in done.stdout.decode()  # the next steps name it too
    with notewell.open(mine, watch=False, embedder=None) as s:
        assert s.list_notes() == []  # before issue 40: the four sample notes and a digest
    with notewell.open(here / "notewell-demo", watch=False, embedder=None) as s:
        assert len(s.list_notes()) == 5
    other = tmp_path / "elsewhere"
    assert run(["demo"], other).returncode == 0 and (other / ".notewell").is_dir()  # --store: there


@pytest.mark.slow
def test_an_editor_edit_that_meets_a_conflict_keeps_the_text_typed(tmp_path):
    store = tmp_path / "s"
    nid = _note(store)
    editor = tmp_path / "editor.py"
    # The "editor" writes the user's text, and meanwhile another writer edits the note.
    editor.write_text(
        "import sys, notewell\n"
        f"s = notewell.open({str(store)!r}, watch=False, embedder=None)\n"
        f"s.edit_note({nid!r}, 'an agent edit\\n')\n"
        "s.close()\n"
        "open(sys.argv[1], 'w').write('what I typed\\n')\n"
    )
    done = run_process(["edit", nid], store, env_extra={"EDITOR": f"{sys.executable} {editor}"}, check=False)
    assert done.returncode == 12, done.stderr
    said = done.stderr.decode().strip()
    assert "changed since revision 1" in said and "your text is kept in " in said
    kept = said.rsplit("your text is kept in ", 1)[1]
    with open(kept, encoding="utf-8") as fh:
        assert fh.read() == "what I typed\n"
    os.unlink(kept)


def test_edit_text_keeps_the_heading_a_note_is_titled_by(tmp_path):
    store = tmp_path / "s"
    nid = _note(store, "# Go tips\n\nuse gofmt\n")
    run(["edit", nid, "--text", "use go vet too\n"], store)
    note = js(run(["get", nid, "--json"], store))
    assert note["text"] == "# Go tips\n\nuse go vet too\n" and note["title"] == "Go tips"


@pytest.mark.slow
def test_a_mistyped_command_line_is_one_line_too(tmp_path):
    store = tmp_path / "s"
    for args in (["search", "--mode", "fuzzy", "x"], ["get"], ["nosuch"], ["attempt", "start"]):
        done = run_process(args, store, check=False)
        said = done.stderr.decode()
        assert done.returncode == 2 and said.count("\n") == 1 and said.startswith("notewell: invalid_argument: "), args
        assert "usage:" not in said


def test_search_without_words_lists_a_projects_recent_notes(tmp_path):
    store = tmp_path / "s"
    with notewell.open(store, watch=False, embedder=None) as s:
        run_ = s.start_attempt("demo", author="a")
        nid = s.add_note("# In demo\n\nbody", attempt=run_.id).id
    assert [c["id"] for c in js(run(["search", "--project", "demo", "--json"], store))["cards"]] == [nid]
    empty = run(["search"], store, check=False)
    assert empty.returncode == 5 and b"invalid_query" in empty.stderr


@pytest.mark.slow
def test_text_typed_on_the_command_line_ends_with_a_newline(tmp_path):
    store = tmp_path / "s"
    nid = run(["add", "--title", "T", "--text", "one line"], store).stdout.decode().strip()
    assert js(run(["get", nid, "--json"], store))["text"].endswith("one line\n")
    run(["edit", nid, "--text", "another line"], store)
    assert js(run(["get", nid, "--json"], store))["text"].endswith("another line\n")


def test_get_says_the_attempt_a_note_is_on_and_whether_it_is_frozen(tmp_path):
    store = tmp_path / "s"
    with notewell.open(store, watch=False, embedder=None) as s:
        attempt = s.start_attempt("demo", author="a")
        nid = s.add_note("# On demo\n\nbody", attempt=attempt.id).id
        s.end_attempt(attempt.id, outcome="failed")
    out = run(["get", nid], store).stdout.decode()
    assert f"on attempt {attempt.id} of demo (ended failed, frozen)" in out and "(written just now)" in out
