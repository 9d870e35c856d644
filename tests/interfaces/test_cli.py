"""The command line, run in the test process through ``main(argv)`` (see cli_harness).

Real-process tests (``run_process``), each marked where it stands: the ``python -m notewell``
entry point and its exit status, and what a real stdout encodes.
"""

from __future__ import annotations

import json
import sys

import pytest

import notewell
from notewell.model.ids import is_note_id
from notewell.search.embedders import HashEmbedder
from tests.conftest import CARD_KEYS
from tests.interfaces.cli_harness import run, run_process  # run is imported from here by other test modules


def js(p):
    return json.loads(p.stdout)


@pytest.fixture(params=["folder", pytest.param("database", marks=pytest.mark.postgres)])
def place(request, tmp_path):
    """Where a command's store is: a notes folder, then a fresh PostgreSQL database."""
    return tmp_path / "s" if request.param == "folder" else request.getfixturevalue("pg_url")


@pytest.mark.slow
def test_full_cycle(tmp_path, place):
    store = place
    folder = not str(store).startswith("postgresql://")
    assert "store ready" in (run(["init", str(store)]) if folder else run(["init"], store)).stdout.decode()
    src = tmp_path / "n.md"
    src.write_bytes(b"---\r\ntitle: From a file\r\ntags: [cli]\r\n---\r\nbody text\r\n")
    nid = run(["add", str(src), "--author", "me"], store).stdout.decode().strip()
    assert is_note_id(nid)
    assert run(["get", nid, "--raw"], store).stdout == src.read_bytes()
    got = js(run(["get", nid, "--json"], store))
    with notewell.open(store) as s:
        assert got == s.get_note(nid).to_dict()
    nid2 = js(
        run(
            [
                "add",
                "--title",
                "Typed # title",
                "--kind",
                "Decision",
                "--tag",
                "a",
                "--tag",
                "b c",
                "--text",
                "chose X",
                "--json",
            ],
            store,
        )
    )["id"]
    n2 = js(run(["get", nid2, "--json"], store))
    assert n2["title"] == "Typed # title" and n2["kind"] == "decision" and n2["tags"] == ["a", "b-c"]
    nid3 = run(["add", "-"], store, input=b"from stdin about otters").stdout.decode().strip()
    cards = js(run(["search", "otters", "--json"], store))["cards"]
    assert [c["id"] for c in cards] == [nid3]
    assert set(cards[0]) == CARD_KEYS
    human = run(["search", "otters"], store).stdout.decode()
    assert nid3 in human and "**otters**" in human
    assert [c["id"] for c in js(run(["list", "--json", "--kind", "decision"], store))["cards"]] == [nid2]
    assert js(run(["search", "chose", "--tag", "a", "--json"], store))["cards"][0]["id"] == nid2
    assert js(run(["summary", "--json"], store))["total_notes"] == 3
    assert {t["tag"] for t in js(run(["tags", "--json"], store))["tags"]} == {"cli", "a", "b-c"}
    run(["edit", nid3, "--text", "edited about badgers"], store)
    edit_file = tmp_path / "e.md"
    edit_file.write_text("edited again about badgers")
    run(["edit", nid3, str(edit_file)], store)
    hist = js(run(["history", nid3, "--json"], store))["revisions"]
    assert [h["revision"] for h in hist] == [1, 2, 3]
    assert js(run(["get", nid3, "--revision", "1", "--json"], store))["text"] == "from stdin about otters"
    # Words only revision 1 had still find the note, saying so.
    assert [(c["id"], c["matched_revision"]) for c in js(run(["search", "otters", "--json"], store))["cards"]] == [
        (nid3, 1)
    ]
    assert "matched in revision 1" in run(["search", "otters"], store).stdout.decode()
    assert "r3" in run(["history", nid3], store).stdout.decode()
    if folder:
        assert js(run(["reindex", "--json"], store))["total_notes"] == 3
    else:
        refused = run(["reindex"], store, check=False)
        assert refused.returncode == 2 and "works on a notes folder" in refused.stderr.decode()
    assert js(run(["rm", nid3, "--json"], store))["deleted"] is True
    assert len(js(run(["list", "--json"], store))["cards"]) == 2


@pytest.mark.slow
def test_editor(tmp_path, place):
    store = place
    nid = run(["add", "--text", "old words"], store).stdout.decode().strip()
    editor = tmp_path / "ed.py"
    editor.write_text("import sys\np=sys.argv[1]\nt=open(p).read()\nopen(p,'w').write(t.replace('old','new'))\n")
    run(["edit", nid], store, env_extra={"EDITOR": f"{sys.executable} {editor}"})
    assert run(["get", nid, "--raw"], store).stdout == b"new words\n"  # --text ends its line


def test_env_store(tmp_path):
    store = tmp_path / "envstore"
    nid = run(["add", "--text", "hi env"], env_extra={"NOTEWELL_STORE": str(store)}).stdout.decode().strip()
    assert (store / f"{nid}.md").exists()


def test_header_command(tmp_path):
    text = "---\ntitle: T\nowner: x\n---\nbody\n"
    out = js(run(["header", "-", "--json"], input=text.encode()))
    assert out == {"header": {"title": "T"}, "extra": ["owner: x"], "body": "body\n"}
    f = tmp_path / "h.md"
    f.write_text(text)
    assert js(run(["header", str(f), "--json"])) == out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "stdin", "env", "code", "needle"),
    [
        (["get", "nte_zzzzzzzzzz"], None, None, 3, "not_found"),
        (["get", "../x"], None, None, 2, "invalid_id"),
        (["rm", "../../etc/passwd"], None, None, 2, "invalid_id"),
        (["add", "-"], b"\xff\xfe", None, 4, "UTF-8"),
        (["add", "-"], b"a\x00b", None, 4, "NUL"),
        (["add", "-"], b"   ", None, 4, "empty"),
        (["add", "-"], b"x" * 50, {"NOTEWELL_MAX_BYTES": "10"}, 4, "too_large"),
        (["add", "--title", "two\nlines", "--text", "x"], None, None, 4, "one line"),
        (["search", "???"], None, None, 5, "invalid_query"),
        (["search", "x", "--limit", "0"], None, None, 2, "invalid_argument"),
        (["search", "x", "--created-after", "someday"], None, None, 2, "invalid_argument"),
        (["add", "/no/such/file.md"], None, None, 2, "cannot read"),
    ],
)
def test_errors_are_one_line(place, args, stdin, env, code, needle):
    store = place
    run(["init"], store)
    p = run(args, store, input=stdin, env_extra=env, check=False)
    err = p.stderr.decode()
    assert p.returncode == code, err
    assert needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    with notewell.open(store) as s:
        assert s.summary()["total_notes"] == 0


# Real process: the status `python -m notewell` exits with is main()'s, through SystemExit.
@pytest.mark.slow
def test_missing_store_is_an_error(tmp_path):
    p = run_process(["search", "x"], tmp_path / "nope", check=False)
    assert p.returncode == 3 and "notewell init" in p.stderr.decode()


def test_reindex_progress_bar(tmp_path):
    store = tmp_path / "s"
    with notewell.open(store) as s:
        s.add_notes([f"note {i}" for i in range(50)])
    p = run(["reindex", "--progress"], store)
    assert "indexing [" in p.stderr.decode() and "50/50" in p.stderr.decode()


@pytest.mark.slow
def test_reindex_says_which_vectors_it_kept(tmp_path):
    store = tmp_path / "s"
    env = {"NOTEWELL_EMBEDDER": "hash", "NOTEWELL_AUTOWATCH": "off"}
    with notewell.open(store, embedder=HashEmbedder()) as s:
        s.add_notes([f"# note {i}\n\nplum orchard row {i}" for i in range(4)])
        s.embed_pending()
        s.add_note("# late\n\nnot embedded yet")
    p = run(["reindex"], store, env_extra=env)
    assert "kept the vectors of 4 notes; 1 wait for `notewell embed`" in p.stdout.decode()
    got = json.loads(run(["reindex", "--json"], store, env_extra=env).stdout)
    assert (got["vectors_kept"], got["to_embed"]) == (4, 1)


@pytest.mark.slow
def test_a_search_by_meaning_says_on_stdout_when_it_left_new_notes_out(tmp_path):
    store = tmp_path / "s"
    env = {"NOTEWELL_EMBEDDER": "hash", "NOTEWELL_AUTOWATCH": "off"}
    run(["add", "--text", "# fig\n\nfig tree pruning"], store, env_extra=env)
    p = run(["search", "fig pruning", "--mode", "semantic"], store, env_extra=env)
    assert p.stdout.decode().strip() == "no notes match among those embedded (1 not embedded yet: notewell embed)"
    assert "1 note(s) not embedded yet, so not searched by meaning" in p.stderr.decode()
    both = run(["search", "nothing like it", "--mode", "both"], store, env_extra=env).stdout.decode()
    assert both.splitlines() == ["== keyword", "no notes match", "== semantic", both.splitlines()[-1]]
    assert "1 not embedded yet" in both.splitlines()[-1]
    run(["embed"], store, env_extra=env)
    assert "fig" in run(["search", "fig pruning", "--mode", "semantic"], store, env_extra=env).stdout.decode()


# Real process: non-ASCII output through the interpreter's own stdout, not the harness's.
@pytest.mark.slow
def test_demo(tmp_path):
    p = run_process(["demo"], tmp_path / "demo")
    out = p.stdout.decode()
    assert "Clause learning stalls" in out and "缓存" in out


@pytest.mark.slow
def test_attempt_commands(place):
    store = place
    started = js(run(["attempt", "start", "SAT solver", "--author", "agent-1", "--campaign", "hard", "--json"], store))
    att = started["id"]
    assert started["project"] == "sat-solver" and started["running"] is True
    plain = run(["attempt", "start", "other", "--author", "p"], store)
    assert plain.stdout.decode().startswith("att_") and b"NOTEWELL_ATTEMPT" in plain.stderr
    env = {"NOTEWELL_ATTEMPT": att}
    added = run(["add", "--text", "kiwi found on the run", "--title", "Kiwi"], store, env_extra=env)
    nid = added.stdout.decode().strip()
    card = js(run(["search", "kiwi", "--project", "sat-solver", "--json"], store))["cards"][0]
    assert set(card) == CARD_KEYS and card["id"] == nid and card["attempt_id"] == att and card["campaign"] == "hard"
    assert "sat-solver/" + att in run(["search", "kiwi"], store).stdout.decode()
    shown = js(run(["attempt", "show", att, "--json"], store))
    assert [n["id"] for n in shown["notes"]] == [nid] and shown["notes"] and shown["running"]
    ended = js(run(["attempt", "end", att, "--outcome", "succeeded", "--summary", "kiwi it is", "--json"], store))
    assert ended["outcome"] == "succeeded" and ended["summary_note_id"]
    out = run(["attempt", "show", att], store).stdout.decode()
    assert "succeeded" in out and "[summary]" in out and nid in out
    listed = js(run(["attempt", "list", "--state", "ended", "--json"], store))["attempts"]
    assert [a["id"] for a in listed] == [att]
    frozen = run(["edit", nid, "--text", "no"], store, check=False)
    assert frozen.returncode == 8 and frozen.stderr.decode().startswith("notewell: frozen:")
    late = run(["add", "--text", "late"], store, env_extra=env, check=False)
    assert late.returncode == 8
    missing = run(["attempt", "show", "att_0000000000"], store, check=False)
    assert missing.returncode == 3 and b"Traceback" not in missing.stderr
    bad = run(["attempt", "end", "nonsense", "--outcome", "ok"], store, check=False)
    assert bad.returncode == 2 and b"not an attempt id" in bad.stderr
    none = run(["attempt"], store, check=False)
    assert none.returncode == 2 and b"start|end|show|list" in none.stderr


@pytest.mark.slow
def test_project_and_read_commands(place):
    store = place
    worker = run(["attempt", "start", "w:omega", "--author", "w"], store).stdout.decode().strip()
    writer = run(["attempt", "start", "w:omega", "--author", "v"], store).stdout.decode().strip()
    nid = run(["add", "--text", "# plum", "--attempt", writer], store).stdout.decode().strip()
    run(["get", nid, "--working-attempt", worker], store)
    shown = js(run(["attempt", "show", worker, "--json"], store))
    assert [r["note_id"] for r in shown["reads"]] == [nid]
    assert f"read {nid}" in run(["attempt", "show", worker], store).stdout.decode()
    got = js(run(["project", "set", "w:omega", "--private", "--owner", "w", "--json"], store))
    assert got["private"] is True and got["owner"] == "w" and got["attempts"] == 2 and got["notes"] == 1
    assert "private (owner w)" in run(["project", "show", "w:omega"], store).stdout.decode()
    assert "public" in run(["project", "set", "w:omega", "--public"], store).stdout.decode()
    shared = run(["project", "set", "omega", "--private", "--owner", "w"], store, check=False)
    assert shared.returncode == 2 and b"'w:omega'" not in shared.stderr and b"namespace" in shared.stderr
    assert len(shared.stderr.decode().strip().splitlines()) == 1
    gone = run(["project", "show", "???"], store, check=False)
    assert gone.returncode == 2 and b"Traceback" not in gone.stderr


@pytest.mark.slow
def test_tag_and_summary_commands(place):
    store = place
    nid = run(["add", "--text", "# Go tips\n\nErrors are values."], store).stdout.decode().strip()
    assert "#go #backend" in run(["tag", nid, "go", "Backend"], store).stdout.decode()
    assert "Errors as values" in run(["set-summary", nid, "--text", "Errors as values"], store).stdout.decode()
    got = js(run(["tags", "--notes", "--json"], store))
    assert got["notes"] == [{"id": nid, "title": "Go tips", "tags": ["go", "backend"], "summary": "Errors as values"}]
    assert "Errors as values" in run(["tags", "--notes"], store).stdout.decode()
    bad = run(["tag", nid, "!!!"], store, check=False)
    assert bad.returncode == 2 and bad.stderr.decode().startswith("notewell: invalid_argument:")


@pytest.mark.slow
def test_links_and_brief_commands(place):
    store = place
    att = run(["attempt", "start", "proj", "--author", "a"], store).stdout.decode().strip()
    env = {"NOTEWELL_ATTEMPT": att}
    a = run(["add", "--text", "first finding", "--title", "A"], store, env_extra=env).stdout.decode().strip()
    d = (
        run(
            ["add", "--text", "all of it", "--title", "Digest", "--kind", "digest", "--builds-on", a],
            store,
            env_extra=env,
        )
        .stdout.decode()
        .strip()
    )
    out = run(["links", a], store).stdout.decode()
    assert "built on by:" in out and d in out
    assert js(run(["links", d, "--depth", "2", "--json"], store))["builds_on"][0]["id"] == a
    brief = run(["brief", "proj"], store).stdout.decode()
    assert brief.index("read first") < brief.index(d) < brief.index("== recent")
    assert js(run(["brief", "proj", "--json"], store))["uncovered"] == []
    bad = run(["links", a, "--depth", "99"], store, check=False)
    assert bad.returncode == 2 and b"depth" in bad.stderr


def test_db_upgrade_and_status_on_a_real_database(pg_url):
    from notewell.backends.postgres.db import MIGRATIONS

    latest = len(MIGRATIONS)
    assert js(run(["db", "status", "--json", "--database", pg_url])) == {
        "version": 0,
        "latest": latest,
        "up_to_date": False,
        "pgvector": False,
    }
    first = run(["db", "upgrade", "--database", pg_url]).stdout.decode()
    assert first.startswith("applied 1 (") and f"the schema is at version {latest}; " in first
    assert first.rstrip().endswith("no pgvector on this server")  # Debian 12's PostgreSQL has none
    again = js(run(["db", "upgrade", "--json"], env_extra={"NOTEWELL_DATABASE": pg_url}))
    assert again["applied"] == [] and again["pgvector"] is False
    assert js(run(["db", "status", "--json", "--database", pg_url]))["up_to_date"] is True


def test_db_upgrade_enables_pgvector_where_the_server_has_it(pgvector_url):
    assert js(run(["db", "status", "--json", "--database", pgvector_url]))["pgvector"] is False
    assert "(notewell db upgrade enables it)" in run(["db", "status", "--database", pgvector_url]).stdout.decode()
    out = run(["db", "upgrade", "--database", pgvector_url]).stdout.decode()
    assert out.rstrip().endswith("semantic search uses pgvector")
    assert js(run(["db", "upgrade", "--json", "--database", pgvector_url]))["pgvector"] is True
    assert js(run(["db", "status", "--json", "--database", pgvector_url]))["pgvector"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["db", "status"], "give --database"),
        (["db", "status", "--database", "/tmp/x"], "must be a postgresql:// URL"),
        (["db", "status", "--database", "postgresql://nobody@127.0.0.1:1/none"], "cannot connect to the database"),
    ],
)
@pytest.mark.slow
def test_db_errors_are_one_line(args, message):
    p = run(args, check=False, env_extra={"NOTEWELL_DATABASE": ""})
    err = p.stderr.decode()
    assert p.returncode != 0 and message in err and len(err.strip().splitlines()) == 1, err


def test_export_and_import_through_the_command_line(tmp_path, pg_url):
    store = tmp_path / "s"
    nid = run(["add", "--text", "moved between stores", "--author", "me"], store).stdout.decode().strip()
    assert js(run(["import", str(store), "--json", "--database", pg_url])) == {"notes": 1, "revisions": 1, "deleted": 0}
    out = tmp_path / "out"
    assert "exported to" in run(["export", str(out), "--database", pg_url]).stdout.decode()
    assert (out / f"{nid}.md").read_bytes() == (store / f"{nid}.md").read_bytes()
    again = run(["import", str(store), "--database", pg_url], check=False)
    assert again.returncode != 0 and "already holds notes" in again.stderr.decode()


def test_one_shot_commands_on_a_database(tmp_path, pg_url):
    env = {"NOTEWELL_DATABASE": pg_url}
    nid = run(["add", "--text", "# Quince\n\nfound by path", "--author", "me"], env_extra=env).stdout.decode().strip()
    assert run(["get", f"{nid}.md", "--raw"], env_extra=env).stdout == b"# Quince\n\nfound by path\n"
    assert run(["get", f"./{nid}.md", "--json"], pg_url).stdout == run(["get", nid, "--json"], pg_url).stdout
    for ref, code in ((f"/abs/{nid}.md", 3), ("nowhere.md", 3), ("nte_../x", 2)):
        p = run(["get", ref], pg_url, check=False)
        assert p.returncode == code and len(p.stderr.decode().strip().splitlines()) == 1, p.stderr
    shown = run(["summary"], pg_url).stdout.decode()
    assert "1 note" in shown
    dbname = pg_url.rsplit("/", 1)[1]
    assert run(["init"], pg_url).stdout.decode().strip().endswith(f"/{dbname} (1 notes)")
    for args in (["watch"], ["reindex"]):
        p = run(args, pg_url, check=False)
        assert p.returncode == 2 and "works on a notes folder, not a database" in p.stderr.decode()
    both = run(["list", "--store", str(tmp_path / "s")], pg_url, check=False)
    assert both.returncode == 2 and "not both" in both.stderr.decode()
    assert not (tmp_path / "s").exists()


def test_a_semantic_search_on_a_database_is_answered_in_process(tmp_path, pg_url):
    env = {"NOTEWELL_EMBEDDER": "hash", "NOTEWELL_AUTOWATCH": "on"}
    nid = run(["add", "--text", "# Otters\n\notters hold hands while they sleep"], pg_url, env_extra=env).stdout
    nid = nid.decode().strip()
    found = js(run(["search", "--mode", "semantic", "--wait", "--json", "sleeping otters"], pg_url, env_extra=env))[
        "cards"
    ]
    assert [c["id"] for c in found] == [nid] and found[0]["mode"] == "semantic"
    with notewell.open(pg_url, embedder=HashEmbedder()) as s:
        assert [c.to_dict() for c in s.search_notes("sleeping otters", mode="semantic")] == found


@pytest.mark.slow
def test_commands_take_a_notes_file_name(tmp_path):
    store = tmp_path / "s"
    run(["init", str(store)])
    (store / "research").mkdir()
    (store / "research" / "go-tips.md").write_text("# Go tips\n\nerrors are values\n")
    assert "errors are values" in run(["get", "go-tips.md"], store).stdout.decode()
    assert "#backend" in run(["tag", "go-tips.md", "backend"], store).stdout.decode()
    (store / "other").mkdir()
    (store / "other" / "go-tips.md").write_text("# More Go tips\n")
    two = run(["get", "go-tips.md"], store, check=False)
    assert two.returncode == 2 and b"give its path (other/go-tips.md, research/go-tips.md)" in two.stderr


@pytest.mark.slow
def test_scores_read_as_two_decimals_and_json_keeps_them_whole(tmp_path):
    store = tmp_path / "s"
    env = {"NOTEWELL_EMBEDDER": "hash"}
    with notewell.open(store, embedder=HashEmbedder()) as s:
        # A word in every note: BM25 gives each about 1e-06 (printed "1.12e-06" before issue 40).
        s.add_notes(["# slow fixtures\n\none", "# fixtures\n\ntwo", "# three\n\nfixtures and more fixtures"])
        s.embed_pending()
    text = run(["search", "fixtures"], store, env_extra=env).stdout.decode()
    shown = [line.rsplit("score ", 1)[1] for line in text.splitlines() if " score " in line]
    assert shown == ["<0.01"] * 3
    cards = js(run(["search", "fixtures", "--json"], store, env_extra=env))["cards"]
    assert all(0 < c["score"] < 0.005 for c in cards)  # the number itself, unrounded
    both = run(["search", "--mode", "both", "slow fixtures"], store, env_extra=env).stdout.decode()
    scores = [line.rsplit("score ", 1)[1] for line in both.splitlines() if " score " in line]
    assert scores and all(s == "<0.01" or (len(s.split(".")[1]) == 2 and float(s) >= 0.005) for s in scores)
