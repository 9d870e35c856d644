"""The note API behaves the same on the embedded store and on PostgreSQL.

Each test runs twice: on a folder with its SQLite index, and on a fresh database of a real
PostgreSQL server (started by scripts/pg-server; skipped, saying why, when none can be).
"""

from __future__ import annotations

import threading

import pytest

import notewell
from notewell.backends.postgres.db import MIGRATIONS, PgDatabase
from notewell.model.visibility import Viewer

NOTE = (
    "---\ntitle: Cache stampede\nkind: blocker\ntags: [cache, redis]\n---\nEvery worker refills the cache at once.\r\n"
)


def test_a_note_comes_back_byte_for_byte(backend):
    note = backend.add_note(NOTE, author="ada", model="m1")
    got = backend.get_note(note.id)
    assert got.text == NOTE
    assert (got.title, got.kind, got.tags, got.author, got.revision) == (
        "Cache stampede",
        "blocker",
        ["cache", "redis"],
        "ada",
        1,
    )
    assert got.model == "m1"


def test_edits_keep_earlier_revisions(backend):
    note = backend.add_note(NOTE)
    backend.edit_note(note.id, NOTE.replace("at once", "together"), author="bo")
    now = backend.get_note(note.id)
    assert now.revision == 2 and "together" in now.body and now.author is None  # the author wrote it first
    assert backend.get_note(note.id, revision=1).text == NOTE
    history = backend.history(note.id)
    assert [h["revision"] for h in history] == [1, 2]
    assert [h["current"] for h in history] == [False, True]
    assert history[1]["author"] == "bo" and history[1]["op"] == "edit"


def test_tags_and_summary_change_only_the_header(backend):
    note = backend.add_note(NOTE)
    tagged = backend.add_tag(note.id, "Hot Path")
    assert tagged.tags == ["cache", "redis", "hot-path"]
    assert tagged.body == backend.get_note(note.id, revision=1).body
    summed = backend.set_summary(note.id, "refills stampede")
    assert summed.summary == "refills stampede" and summed.revision == 3


def test_a_deleted_note_is_gone_but_its_text_stays_readable(backend):
    note = backend.add_note(NOTE)
    out = backend.delete_note(note.id)
    assert out["deleted"] and out["title"] == "Cache stampede"
    with pytest.raises(notewell.NotFoundError):
        backend.get_note(note.id)
    assert backend.get_note(note.id, revision=1).text == NOTE
    assert backend.search_notes("stampede") == []
    with pytest.raises(notewell.NotFoundError):
        backend.delete_note(note.id)


def test_keyword_search_weighs_the_title_and_fills_up_with_some_words(backend):
    body_only = backend.add_note("---\ntitle: Worker pool\n---\nthe stampede happened in the pool\n")
    titled = backend.add_note("---\ntitle: Stampede\n---\nnothing else here\n")
    cards = backend.search_notes("stampede")
    assert [c.id for c in cards] == [titled.id, body_only.id]
    assert "**stampede**" in cards[1].snippet
    partial = backend.search_notes("stampede giraffe")  # no note has both: notes with either
    assert {c.id for c in partial} == {titled.id, body_only.id}


def test_filters_narrow_search_and_list(backend):
    a = backend.add_note("---\nkind: blocker\ntags: [a, b]\n---\nshared word\n", author="ada")
    b = backend.add_note("---\nkind: decision\ntags: [b]\n---\nshared word\n", author="bo")
    assert [c.id for c in backend.search_notes("shared", kind="blocker")] == [a.id]
    assert {c.id for c in backend.search_notes("shared", tags="b")} == {a.id, b.id}
    assert [c.id for c in backend.search_notes("shared", tags=["a", "b"], tag_mode="all")] == [a.id]
    assert [c.id for c in backend.list_notes(author="bo")] == [b.id]
    assert [c.id for c in backend.list_notes()] == [b.id, a.id]  # newest first
    assert [c.id for c in backend.list_notes(limit=1, offset=1)] == [a.id]


def test_chinese_text_is_found(backend):
    note = backend.add_note("---\ntitle: 缓存\n---\n缓存击穿导致数据库过载\n")
    assert [c.id for c in backend.search_notes("数据库")] == [note.id]


def test_backlinks_follow_builds_on(backend):
    base = backend.add_note("# base\n")
    child = backend.add_note(f"---\nbuilds_on: [{base.id}]\n---\nmore\n")
    assert [b["id"] for b in backend.get_note(base.id).backlinks] == [child.id]
    assert [c.id for c in backend.list_notes(builds_on=base.id)] == [child.id]


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda s: s.get_note("nope"), notewell.InvalidIdError),
        (lambda s: s.get_note("nte_0000000000"), notewell.NotFoundError),
        (lambda s: s.search_notes("   "), notewell.InvalidQueryError),
        (lambda s: s.add_note("x" * 2_000_000), notewell.NoteTooLargeError),
        (lambda s: s.add_note("a\x00b"), notewell.InvalidNoteError),
        (lambda s: s.list_notes(limit=0), notewell.InvalidArgumentError),
        (lambda s: s.list_notes(colour="red"), notewell.InvalidArgumentError),
    ],
)
def test_bad_input_gets_the_same_typed_error(backend, call, error):
    with pytest.raises(error):
        call(backend)


def test_two_servers_editing_one_note_lose_no_edit(pg_url):
    first, second = notewell.open(pg_url), notewell.open(pg_url)
    try:
        note = first.add_note("---\ntitle: shared\n---\nbody\n")
        errors: list[BaseException] = []

        def tag(store, prefix):
            try:
                for i in range(8):
                    store.add_tag(note.id, f"{prefix}{i}")
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=tag, args=(s, p)) for s, p in ((first, "a"), (second, "b"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        final = first.get_note(note.id)
        assert sorted(final.tags) == sorted([f"a{i}" for i in range(8)] + [f"b{i}" for i in range(8)])
        assert final.revision == 17
    finally:
        first.close()
        second.close()


def test_the_schema_is_versioned_and_upgraded_once(pg_url):
    db = PgDatabase(pg_url)
    try:
        assert db.schema_version() == 0
        with pytest.raises(notewell.StorageError, match="notewell db upgrade"):
            db.check_schema()
        assert db.upgrade() == list(range(1, len(MIGRATIONS) + 1))
        assert db.upgrade() == []
        assert db.schema_version() == len(MIGRATIONS)
    finally:
        db.close()


def test_an_unreachable_database_is_a_clear_error():
    with pytest.raises(notewell.UnavailableError, match="cannot connect"):
        notewell.open("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2", pool_size=1)


def _snapshot(store, ids):
    """What must survive a move: each note's text, metadata and every kept revision."""
    out = {}
    for nid in ids:
        try:
            note = store.get_note(nid)
            current = (note.text, note.path, note.author, note.model, note.created_at, note.updated_at, note.revision)
            last = note.revision
        except notewell.NotFoundError:
            current, last = None, len([h for h in store.history(nid) if h["op"] != "delete"])
        revisions = [store.get_note(nid, revision=r).text for r in range(1, last + 1)]
        history = [(h["revision"], h["author"], h["at"]) for h in store.history(nid)]
        out[nid] = (current, revisions, history)
    out["attempts"] = [a.to_dict() for a in store.list_attempts()]
    out["projects"] = [(p["name"], p["private"], p["owner"], p["campaign"], p["notes"]) for p in store.list_projects()]
    out["stranger sees"] = sorted(c.id for c in store.list_notes(viewer=Viewer(handle="stranger")))
    return out


def _fill(store):
    a = store.add_note("---\ntitle: Alpha\ntags: [x]\n---\nfirst text\r\n", author="ada", model="m1")
    store.edit_note(a.id, "---\ntitle: Alpha\ntags: [x]\n---\nsecond text\n", author="bo")
    store.add_tag(a.id, "y")
    b = store.add_note(f"---\nbuilds_on: [{a.id}]\n---\n缓存 builds on alpha\n", author="cy")
    c = store.add_note("# doomed\n\nto be deleted\n", author="di")
    store.edit_note(c.id, "# doomed\n\nstill to be deleted\n")
    store.delete_note(c.id)
    run = store.start_attempt("agent:vault", author="agent", model="m3", campaign="spring")
    store.set_project("agent:vault", private=True, owner="agent")
    d = store.add_note("# secret finding\n", attempt=run.id)
    store.end_attempt(run.id, outcome="succeeded", summary="it worked")
    return [a.id, b.id, c.id, d.id]


def test_folder_to_database_and_back_loses_nothing(tmp_path, pg_url):
    folder = tmp_path / "notes"
    with notewell.open(folder) as embedded:
        ids = _fill(embedded)
        before = _snapshot(embedded, ids)
    with notewell.open(pg_url) as db:
        assert db.import_folder(folder) == {"notes": 4, "revisions": 8, "deleted": 1}
        assert _snapshot(db, ids) == before
        assert [c.id for c in db.search_notes("alpha")][:1] == [ids[0]]
        back = tmp_path / "back"
        assert db.export_folder(back) == {"notes": 4, "revisions": 8, "deleted": 1}
        with pytest.raises(notewell.FrozenError):
            db.edit_note(ids[3], "changed after the attempt ended")
    assert (back / f"{ids[0]}.md").read_bytes() == (folder / f"{ids[0]}.md").read_bytes()
    with notewell.open(back) as again:
        assert _snapshot(again, ids) == before
        assert [c.id for c in again.list_notes()][-2:] == [ids[1], ids[0]]
        with pytest.raises(notewell.FrozenError):
            again.edit_note(ids[3], "changed after the attempt ended")


def test_database_to_folder_and_back_loses_nothing(tmp_path, pg_url, pg_server):
    with notewell.open(pg_url) as db:
        ids = _fill(db)
        before = _snapshot(db, ids)
        db.export_folder(tmp_path / "out")
        with pytest.raises(notewell.InvalidArgumentError, match="already holds notes"):
            db.export_folder(tmp_path / "out")
        with pytest.raises(notewell.InvalidArgumentError, match="already holds notes"):
            db.import_folder(tmp_path / "out")
    with notewell.open(tmp_path / "out") as embedded:
        assert _snapshot(embedded, ids) == before
    import psycopg

    other = pg_url + "_2"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {other.rpartition('/')[2]}")
    try:
        with notewell.open(other) as second:
            second.import_folder(tmp_path / "out")
            assert _snapshot(second, ids) == before
    finally:
        with psycopg.connect(pg_server, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {other.rpartition('/')[2]} WITH (FORCE)")


def test_an_ended_attempt_freezes_its_notes(backend):
    attempt = backend.start_attempt("Solver Speed", author="agent-1", model="m2")
    assert attempt.project == "solver-speed" and attempt.running
    note = backend.add_note("# tried restarts\n\nno gain\n", attempt=attempt.id)
    assert (note.attempt_id, note.author, note.model) == (attempt.id, "agent-1", "m2")
    ended = backend.end_attempt(attempt.id, outcome="failed", summary="restarts did not help")
    assert not ended.running and ended.outcome == "failed" and ended.notes == 2
    summary = backend.get_note(ended.summary_note_id)
    assert summary.note_kind == "summary" and summary.title == "Summary: solver-speed, failed"
    for call in (
        lambda: backend.edit_note(note.id, "changed"),
        lambda: backend.add_tag(note.id, "late"),
        lambda: backend.delete_note(note.id),
        lambda: backend.add_note("late", attempt=attempt.id),
        lambda: backend.end_attempt(attempt.id, outcome="succeeded"),
    ):
        with pytest.raises(notewell.FrozenError):
            call()
    assert backend.get_note(note.id).revision == 1
    assert [a.id for a in backend.list_attempts(project="solver-speed")] == [attempt.id]
    assert backend.list_attempts(running=True) == []
    with pytest.raises(notewell.NotFoundError):
        backend.get_attempt("att_0000000000")


def test_a_note_racing_the_end_of_its_attempt_lands_before_it_or_is_refused(pg_url):
    first, second = notewell.open(pg_url), notewell.open(pg_url)
    try:
        for _round in range(5):
            attempt = first.start_attempt("race", author="a")
            landed, refused = [], []

            def write(store=second, attempt=attempt, landed=landed, refused=refused):
                for i in range(20):
                    try:
                        landed.append(store.add_note(f"# n{i}\n", attempt=attempt.id).id)
                    except notewell.FrozenError:
                        refused.append(i)

            t = threading.Thread(target=write)
            t.start()
            ended = first.end_attempt(attempt.id, outcome="abandoned")
            t.join()
            final = first.get_attempt(attempt.id)
            assert final.notes == len(landed)  # every acknowledged note is on it, none after
            assert len(landed) + len(refused) == 20
            assert not ended.running
    finally:
        first.close()
        second.close()


def test_private_projects_are_hidden_from_other_viewers(backend):
    secret = backend.start_attempt("owner-1:vault", author="owner-1")
    backend.set_project("owner-1:vault", private=True, owner="owner-1")
    hidden = backend.add_note("# classified plan\n\nkeyword zeppelin\n", attempt=secret.id)
    public = backend.add_note("# open plan\n\nkeyword zeppelin\n")
    stranger, owner, admin = Viewer(handle="someone"), Viewer(handle="owner-1"), Viewer(handle="x", admin=True)
    assert [c.id for c in backend.search_notes("zeppelin", viewer=stranger)] == [public.id]
    assert {c.id for c in backend.search_notes("zeppelin", viewer=owner)} == {public.id, hidden.id}
    assert {c.id for c in backend.list_notes(viewer=admin)} == {public.id, hidden.id}
    assert [c.id for c in backend.list_notes(viewer=stranger)] == [public.id]
    for call in (
        lambda: backend.get_note(hidden.id, viewer=stranger),
        lambda: backend.get_attempt(secret.id, viewer=stranger),
        lambda: backend.get_project("owner-1:vault", viewer=stranger),
        lambda: backend.history(hidden.id, viewer=stranger),
    ):
        with pytest.raises(notewell.NotFoundError):
            call()
    assert backend.get_note(hidden.id, viewer=owner).id == hidden.id
    assert [p["name"] for p in backend.list_projects(viewer=stranger)] == []
    assert backend.get_project("owner-1:vault", viewer=owner) | {"notes": 1} == {
        "name": "owner-1:vault",
        "private": True,
        "owner": "owner-1",
        "campaign": None,
        "attempts": 1,
        "notes": 1,
    }
    assert backend.list_attempts(viewer=stranger) == []
    summary = backend.summary(viewer=stranger)
    assert summary["total_notes"] == 1 and [c["id"] for c in summary["recent_notes"]] == [public.id]
    assert [c.id for c in backend.list_notes(project="owner-1:vault", viewer=owner)] == [hidden.id]


def test_a_campaign_gathers_its_projects(backend):
    a = backend.start_attempt("alpha", author="x", campaign="spring")
    backend.start_attempt("beta", author="x")
    backend.set_project("beta", campaign="spring")
    gamma = backend.start_attempt("gamma", author="x")
    in_a = backend.add_note("# a\n\nshared term\n", attempt=a.id)
    backend.add_note("# g\n\nshared term\n", attempt=gamma.id)
    assert [c.id for c in backend.search_notes("shared", campaign="spring")] == [in_a.id]
    assert backend.get_project("beta")["campaign"] == "spring"


def test_tags_are_counted_and_listed_per_note(backend):
    a = backend.add_note("---\ntags: [cache, redis]\nsummary: about caches\n---\nx\n")
    b = backend.add_note("---\ntags: [cache]\n---\ny\n")
    assert backend.list_tags() == [{"tag": "cache", "count": 2}, {"tag": "redis", "count": 1}]
    listed = backend.note_tags()
    assert [n["id"] for n in listed] == [b.id, a.id]
    assert listed[1] == {"id": a.id, "title": a.title, "tags": ["cache", "redis"], "summary": "about caches"}


def test_links_and_briefs(backend):
    attempt = backend.start_attempt("graph", author="x")
    base = backend.add_note("# base\n\nfirst\n", attempt=attempt.id)
    mid = backend.add_note(f"---\nbuilds_on: [{base.id}]\n---\n# mid\n", attempt=attempt.id)
    top = backend.add_note(f"---\nbuilds_on: [{mid.id}, {attempt.id}, nte_zzzzzzzzzz]\n---\n# top\n")
    tree = backend.links(top.id, depth=2)
    assert [n["id"] for n in tree["builds_on"]] == [mid.id, attempt.id, "nte_zzzzzzzzzz"]
    assert tree["builds_on"][0]["builds_on"][0]["id"] == base.id
    assert tree["builds_on"][2] == {"id": "nte_zzzzzzzzzz", "missing": True}
    assert [n["id"] for n in backend.links(base.id, depth=3)["built_on_by"]] == [mid.id]
    digest = backend.add_note(f"---\nkind: digest\nbuilds_on: [{base.id}]\n---\n# digest\n", attempt=attempt.id)
    brief = backend.brief("graph")
    assert brief["digest"]["id"] == digest.id
    assert [c["id"] for c in brief["uncovered"]] == [mid.id] and brief["uncovered_count"] == 1
    with pytest.raises(notewell.InvalidArgumentError):
        backend.links(top.id, depth=0)


def test_an_edit_that_changes_the_model_header_moves_the_note_between_model_filters(backend):
    note = backend.add_note("---\nmodel: m1\n---\nbody\n")
    backend.edit_note(note.id, "---\nmodel: m2\n---\nbody\n")
    assert [c.id for c in backend.list_notes(model="m2")] == [note.id]
    assert backend.list_notes(model="m1") == []


def test_many_servers_opening_a_new_database_at_once(pg_url):
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            notewell.open(pg_url, pool_size=1).close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_the_database_password_is_never_shown(pg_url):
    with_password = pg_url.replace("postgres@", "postgres:s3cret@", 1)  # the test server trusts 127.0.0.1
    assert "s3cret" in with_password
    with notewell.open(with_password) as store:
        assert "s3cret" not in repr(store) and repr(store).startswith("<notewell.PgStore postgres@127.0.0.1:")
    with pytest.raises(notewell.InvalidArgumentError, match="not watch"):
        notewell.open(pg_url, watch=False)


def test_a_read_on_a_running_attempt_is_recorded(backend):
    run = backend.start_attempt("reading", author="agent")
    public = backend.add_note("# background\n\nwhat others found\n")
    doomed = backend.add_note("# soon gone\n")
    assert backend.get_note(public.id, working_attempt_id=run.id).id == public.id
    backend.get_note(doomed.id, working_attempt_id=run.id)
    backend.delete_note(doomed.id)
    reads = backend.attempt_reads(run.id)
    assert [(r["note_id"], r["title"]) for r in reads] == [(public.id, "background"), (doomed.id, None)]
    assert reads[0]["at"] <= reads[1]["at"]
    with pytest.raises(notewell.NotFoundError):
        backend.get_note(public.id, working_attempt_id="att_0000000000")
    with pytest.raises(notewell.InvalidIdError):
        backend.get_note(public.id, working_attempt_id="not an attempt")
    backend.end_attempt(run.id, outcome="succeeded")
    assert backend.get_note(public.id, working_attempt_id=run.id).id == public.id  # served, not recorded
    assert len(backend.attempt_reads(run.id)) == 2


def test_reads_follow_what_the_viewer_may_see(backend):
    vault = backend.start_attempt("owner-1:vault", author="owner-1")
    backend.set_project("owner-1:vault", private=True, owner="owner-1")
    secret = backend.add_note("# classified\n", attempt=vault.id)
    open_run = backend.start_attempt("open", author="owner-1")
    backend.get_note(secret.id, working_attempt_id=open_run.id)
    public = backend.add_note("# public\n")
    stranger, owner = Viewer(handle="someone"), Viewer(handle="owner-1")
    backend.get_note(public.id, working_attempt_id=open_run.id, viewer=stranger)
    with pytest.raises(notewell.NotFoundError):  # an attempt the viewer may not see takes no record
        backend.get_note(public.id, working_attempt_id=vault.id, viewer=stranger)
    with pytest.raises(notewell.NotFoundError):
        backend.attempt_reads(vault.id, viewer=stranger)
    assert backend.attempt_reads(vault.id, viewer=owner) == []
    assert [r["note_id"] for r in backend.attempt_reads(open_run.id, viewer=stranger)] == [public.id]
    assert [r["note_id"] for r in backend.attempt_reads(open_run.id, viewer=owner)] == [secret.id, public.id]


def test_a_note_carries_the_attempt_it_was_written_on(backend):
    run = backend.start_attempt("carry", author="agent-7", model="m9")
    note = backend.add_note("# on the run\n", attempt=run.id)
    assert note.attempt["author"] == "agent-7" and note.attempt["id"] == run.id and note.attempt["running"]
    assert backend.get_note(note.id).attempt == backend.get_attempt(run.id).to_dict()
    assert backend.add_tag(note.id, "x").attempt["project"] == "carry"
    assert backend.edit_note(note.id, "# on the run\n\nmore\n").attempt["notes"] == 1
    assert backend.add_note("# loose\n").attempt is None
    backend.end_attempt(run.id, outcome="failed")
    ended = backend.get_note(note.id).attempt
    assert ended["outcome"] == "failed" and not ended["running"]


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_an_attempt_summary_obeys_the_store_size_limit(kind, request, tmp_path):
    where = tmp_path / "notes" if kind == "sqlite" else request.getfixturevalue("pg_url")
    with notewell.open(where, max_bytes=1000) as store:
        run = store.start_attempt("small", author="a")
        with pytest.raises(notewell.NoteTooLargeError):
            store.end_attempt(run.id, outcome="done", summary="x" * 1500)
        assert store.get_attempt(run.id).running
        assert store.end_attempt(run.id, outcome="done", summary="x" * 900).outcome == "done"


def test_postgresql_search_refuses_an_unknown_mode(pg_url):
    with notewell.open(pg_url) as store:
        note = store.add_note("# heron\n\nnest by the weir\n")
        assert [c.id for c in store.search_notes("heron", wait=True)] == [note.id]
        with pytest.raises(notewell.InvalidArgumentError, match="mode must be one of"):
            store.search_notes("heron", mode="fuzzy")


def test_reads_move_with_the_store_both_ways(tmp_path, pg_url):
    with notewell.open(tmp_path / "notes") as folder:
        run = folder.start_attempt("moving", author="a")
        note = folder.add_note("# read me\n")
        folder.get_note(note.id, working_attempt_id=run.id)
        before = folder.attempt_reads(run.id)
    with notewell.open(pg_url) as db:
        db.import_folder(tmp_path / "notes")
        assert db.attempt_reads(run.id) == before
        db.export_folder(tmp_path / "back")
    with notewell.open(tmp_path / "back") as again:
        assert again.attempt_reads(run.id) == before


def test_a_version_1_database_gains_reads_and_tokens_by_upgrade(pg_url, monkeypatch):
    from notewell.backends.postgres import db as pg

    db = PgDatabase(pg_url)
    try:
        monkeypatch.setattr(pg, "MIGRATIONS", MIGRATIONS[:1])  # the schema as the first release made it
        assert db.upgrade() == [1]
        monkeypatch.undo()
        with pytest.raises(notewell.StorageError, match="notewell db upgrade"):
            notewell.open(pg_url)
        assert db.upgrade() == list(range(2, len(MIGRATIONS) + 1))
    finally:
        db.close()
    with notewell.open(pg_url) as store:
        run = store.start_attempt("after", author="a")
        note = store.add_note("# x\n")
        store.get_note(note.id, working_attempt_id=run.id)
        assert [r["note_id"] for r in store.attempt_reads(run.id)] == [note.id]
        assert store.token_book().create("eve")[0].name == "eve"


# -- keyword search reads a query alike on both stores --------------------------------------------

SEARCH_NOTES = {
    "stampede": "---\ntitle: Cache stampede\n---\nEvery worker refills the cache at once.\n",
    "redis": "---\ntitle: Redis caching\n---\nthe redis layer caches sessions; a stampede happened twice\n",
    "phrase": "---\ntitle: Fox\n---\nthe quick brown fox jumps over the lazy dog\n",
    "cpp": "---\ntitle: C++ tips\n---\nwhat? templates in C++ are hard\n",
    "zh": "---\ntitle: 缓存\n---\n缓存击穿导致数据库过载 redis\n",
    "zh_only": "---\ntitle: 数据库\n---\n数据库过载\n",
}


def _search_names(store, query, **kwargs):
    """The SEARCH_NOTES names *query* finds, best first (the notes are added on first use)."""
    if not store.list_notes(limit=1):
        for text in SEARCH_NOTES.values():
            store.add_note(text)
    by_title = {text.split("\n")[1].removeprefix("title: "): name for name, text in SEARCH_NOTES.items()}
    return [by_title[c.title] for c in store.search_notes(query, **kwargs)]


def test_plain_words_must_all_appear_then_any_fills_up(backend):
    assert _search_names(backend, "cache redis", limit=1) == ["redis"]  # the one note with both
    assert _search_names(backend, "cache redis") == ["redis", "stampede", "zh"]  # then either word
    assert _search_names(backend, "what is the stampede") == ["stampede", "redis"]  # stop words not required


def test_a_rare_word_outweighs_common_ones_in_a_loose_query(backend):
    # No note holds every word of the question: the note that shares its rare words must
    # lead, not those that share more of its common ones (BM25's idf on both stores).
    backend.add_notes(
        [
            f"# Release {i}\n\nThe nightly build did fail after upgrading the runner, build {i} fail again"
            for i in range(30)
        ]
    )
    target = backend.add_note("# Signing\n\nThe iOS archive broke with Xcode 16: provisioning profile expired.")
    cards = backend.search_notes("why does the iOS CI build fail after upgrading Xcode?", limit=5)
    assert cards[0].id == target.id


@pytest.mark.slow
@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("cache AND redis", {"redis"}),
        ("stampede OR templates", {"stampede", "redis", "cpp"}),
        ("stampede NOT redis", {"stampede"}),
        ('"quick brown"', {"phrase"}),
        ("NEAR(quick fox, 2)", {"phrase"}),
        ('"brown quick"', set()),
        ("templ*", {"cpp"}),
        ("(worker OR templates) AND hard", {"cpp"}),
        ("cache AND OR stampede", {"stampede", "redis"}),  # FTS5 refuses it: its plain words
        ("C++", {"cpp"}),
        ("what?", {"cpp"}),  # a stop word, alone, is looked for
        ("数据库 AND redis", {"zh"}),
        ("数据库 NOT redis", {"zh_only"}),
    ],
)
def test_fts5_syntax_finds_the_same_notes(backend, query, found):
    assert set(_search_names(backend, query, limit=20)) == found


def test_cjk_and_latin_words_are_both_required(backend):
    assert _search_names(backend, "数据库 redis", limit=1) == ["zh"]
    assert _search_names(backend, "数据库 redis") == ["zh", "zh_only", "redis"]  # then either
    assert _search_names(backend, "库过") == ["zh_only", "zh"]  # a substring of a word


def test_a_nul_in_a_filter_value_matches_nothing(backend):
    backend.add_note("---\nkind: finding\ntags: [a]\nmodel: m1\n---\nshared word\n", author="ada")
    for name in ("author", "model", "kind", "tags", "project", "campaign"):
        assert backend.search_notes("shared", **{name: "ada\x00"}) == []
        assert backend.list_notes(**{name: "m1\x00"}) == []
    assert len(backend.list_notes(author="ada")) == 1


def test_a_filter_value_has_a_length_bound(backend):
    # 100 tags of 20,000 characters each took 0.8 s to slug before any was found wanting.
    import time

    from notewell.search.filters import MAX_FILTER_CHARS

    backend.add_note("---\ntitle: t\ntags: [cache]\n---\nbody")
    started = time.perf_counter()
    for name, value in (("tags", ["é" * 20_000] * 100), ("kind", "k" * 20_000), ("author", "a" * 20_000)):
        with pytest.raises(notewell.InvalidArgumentError, match=f"at most {MAX_FILTER_CHARS} characters"):
            backend.list_notes(**{name: value})
    assert time.perf_counter() - started < 5
    assert len(backend.list_notes(tags=["cache", "x" * MAX_FILTER_CHARS])) == 1  # up to the bound: fine


def test_an_offset_past_a_64_bit_integer_is_an_invalid_argument(backend):
    backend.add_note("# one\n")
    assert backend.list_notes(offset=2**63 - 1) == []
    with pytest.raises(notewell.InvalidArgumentError, match="offset"):
        backend.list_notes(offset=2**63)


def test_a_lone_surrogate_is_a_typed_error(backend):
    backend.add_note("# café\n\nbody")
    with pytest.raises(notewell.InvalidQueryError, match="surrogate"):
        backend.search_notes("caf\udce9")
    for name in ("author", "model"):
        with pytest.raises(notewell.InvalidArgumentError, match="surrogate"):
            backend.list_notes(**{name: "x\udce9"})


def test_a_query_of_many_prefix_terms_is_refused_at_once(backend):
    # 333 × "k*" took 30 s on 300 notes that share a vocabulary (each prefix merges the lists of
    # every word it begins); now more than MAX_PREFIX_TERMS is an invalid_query, on both stores.
    from notewell.search.query import MAX_PREFIX_TERMS

    nid = backend.add_note("# kilo kappa\n\nkarma kelvin 中文笔记").id
    stems = ["ka", "ki", "ke", "kap", "kar", "kil", "kel", "kapp", "karm"]
    allowed = " OR ".join(f"{stem}*" for stem in stems[:MAX_PREFIX_TERMS])
    assert [c.id for c in backend.search_notes(allowed)] == [nid]
    for query in (
        " OR ".join(f"k{a}{b}*" for a in "aeiou" for b in "lmnpr"),
        " OR ".join(f"{stem}*" for stem in stems[: MAX_PREFIX_TERMS + 1]),
        "(" * 3 + " AND ".join(f'"ki lo"* NEAR(k* ka*, 3) x{i}' for i in range(4)) + ")" * 3,
    ):
        with pytest.raises(notewell.InvalidQueryError, match="too many prefix terms"):
            backend.search_notes(query)
    assert [c.id for c in backend.search_notes("ki* kilo")] == [nid]  # a few are fine
    # One letter begins too many words (t* alone: 0.28 s on 30,000 notes): two at least, or a CJK
    # one; a query with a shorter one is read as its plain words ("A* heuristic": the algorithm).
    from notewell.search.query import compile_query

    assert compile_query("kilo k*").raw is False and compile_query("kilo ki*").raw is True
    assert [c.id for c in backend.search_notes("kilo k*")] == [nid]
    assert [c.id for c in backend.search_notes("中*")] == [nid]
    # One phrase written over and over: FTS5 weighed it once per copy, at a cost growing with the
    # square of the copies (200 plain "kaaaa": 40 s on 4 notes holding it often). Plain words are
    # said once; in FTS5 syntax, at most MAX_REPEATS copies.
    assert [c.id for c in backend.search_notes(" ".join(["kilo"] * 200))] == [nid]
    with pytest.raises(notewell.InvalidQueryError, match="written 5 times"):
        backend.search_notes(" ".join(['"kilo"'] * 5))


def test_a_viewers_scores_never_move_when_notes_they_cannot_see_change(backend, monkeypatch):
    # BM25 weighed each word by how many notes hold it, hidden ones too: bob, writing one public
    # note per guessed word, saw his score for a word fall (3.87 -> 1.86) after alice wrote three
    # private notes with it, and so learned what her private project holds. Now a viewer's
    # figures (notes, their length, notes holding each word) are those of the notes they may see.
    from notewell.backends.postgres import rank
    from notewell.model.visibility import Viewer

    monkeypatch.setattr(rank, "SIZE_TTL", 0.0)  # PostgreSQL's counts are kept for seconds: count anew
    monkeypatch.setattr(rank, "COUNTS_TTL", 0.0)
    bob = Viewer(handle="bob")
    backend.set_project("alice:secret", private=True, owner="alice")
    attempt = backend.start_attempt("alice:secret", author="alice").id
    for i in range(12):
        backend.add_note(f"# filler {i}\n\nordinary words about gardens and weather {i}")
    backend.add_note("# zebra\n\nzebra crossing notes")
    backend.add_note("# walrus tusks\n\nthe walrus and the zebra")

    def scores(viewer, query):
        return [(c.id, c.score) for c in backend.search_notes(query, limit=20, viewer=viewer)]

    queries = ("zebra", "walrus zebra", "zebra OR walrus", "zebra unicorn")
    before = {q: scores(bob, q) for q in queries}
    owner_before = scores(None, "zebra")
    assert before["zebra"] and before["walrus zebra"]
    hidden = [
        backend.add_note(f"# zebra plan {i}\n\nzebra zebra walrus secret {i}", attempt=attempt).id for i in range(3)
    ]
    backend.add_notes(["long private text " * 200 + "zebra"] * 5, attempt=attempt)
    assert {q: scores(bob, q) for q in queries} == before
    backend.edit_note(hidden[0], "# zebra\n\nzebra walrus walrus rewritten")
    backend.delete_note(hidden[1])
    assert {q: scores(bob, q) for q in queries} == before
    assert scores(None, "zebra") != owner_before  # the owner sees them: their figures moved
    # Once alice's project is public, bob's figures count her notes too.
    backend.set_project("alice:secret", private=False)
    assert scores(bob, "zebra") != before["zebra"]


# -- semantic search behaves alike on both stores (the deterministic hash embedder) ----------------


def test_semantic_search_finds_the_nearest_note_with_its_passage(sbackend):
    from tests.conftest import CARD_KEYS

    near = sbackend.add_note(NOTE)
    far = sbackend.add_note("# Restart policy\n\nLuby restarts beat geometric ones on the medium fixtures.")
    assert sbackend.pending_embeddings() == 2
    assert sbackend.search_notes("worker refills cache", mode="semantic") == []  # not embedded yet
    assert sbackend.embed_pending() == {"embedded": 2, "pending": 0, "revisions": 0}
    cards = sbackend.search_notes("worker refills cache", mode="semantic")
    assert [c.id for c in cards] == [near.id, far.id]
    assert cards[0].mode == "semantic" and 0 < cards[0].score <= 1 and cards[0].score > cards[1].score
    assert cards[0].snippet == "Every worker refills the cache at once." and cards[0].tags == ["cache", "redis"]
    assert set(cards[0].to_dict()) == CARD_KEYS


def test_semantic_search_obeys_filters_and_private_projects(sbackend):
    run = sbackend.start_attempt("owner-1:alpha", author="owner-1")
    inside = sbackend.add_note("---\nkind: blocker\n---\nkiwi orchard frost damage", attempt=run.id)
    outside = sbackend.add_note("---\nkind: finding\n---\nkiwi orchard frost report")
    sbackend.embed_pending()
    assert [c.id for c in sbackend.search_notes("kiwi frost", mode="semantic", kind="blocker")] == [inside.id]
    assert [c.id for c in sbackend.search_notes("kiwi frost", mode="semantic", project="owner-1:alpha")] == [inside.id]
    sbackend.set_project("owner-1:alpha", private=True, owner="owner-1")
    for mode in ("semantic", "hybrid"):
        hidden = sbackend.search_notes("kiwi frost", mode=mode, viewer=Viewer(handle="someone"))
        assert [c.id for c in hidden] == [outside.id]
        seen = sbackend.search_notes("kiwi frost", mode=mode, viewer=Viewer(handle="owner-1"))
        assert {c.id for c in seen} == {inside.id, outside.id}
    both = sbackend.search_notes("kiwi frost", mode="both", limit=5)
    assert [c.mode for c in both] == ["keyword", "keyword", "semantic", "semantic"]


def test_an_edited_note_is_embedded_again_and_its_old_vectors_are_gone(sbackend):
    edited = sbackend.add_note("# plan\n\nzeppelin mooring mast")
    other = sbackend.add_note("# hangar\n\nzeppelin hangar doors")
    sbackend.embed_pending()
    assert sbackend.search_notes("zeppelin mooring mast", mode="semantic")[0].id == edited.id
    sbackend.edit_note(edited.id, "# plan\n\nsubmarine dive depth")
    assert sbackend.pending_embeddings() == 1
    assert sbackend.search_notes("zeppelin mooring mast", mode="semantic")[0].id == edited.id  # old vectors, still
    sbackend.embed_pending()
    cards = {c.id: c.score for c in sbackend.search_notes("zeppelin mooring mast", mode="semantic")}
    assert max(cards, key=cards.get) == other.id and cards[edited.id] < 0.2
    assert sbackend.search_notes("submarine dive depth", mode="semantic")[0].id == edited.id


def test_a_deleted_note_leaves_semantic_search(sbackend):
    gone = sbackend.add_note("# mango\n\nmango chutney")
    kept = sbackend.add_note("# mango too\n\nmango lassi")
    sbackend.embed_pending()
    assert {c.id for c in sbackend.search_notes("mango", mode="semantic")} == {gone.id, kept.id}
    sbackend.delete_note(gone.id)
    assert [c.id for c in sbackend.search_notes("mango", mode="semantic")] == [kept.id]
    assert sbackend.pending_embeddings() == 0


def test_hybrid_fuses_the_keyword_and_semantic_lists(sbackend):
    both = sbackend.add_note("# walnut harvest\n\nwalnut harvest in october")
    words = sbackend.add_note("# walnut\n\nthe walnut shell is hard")
    other = sbackend.add_note("# chestnut roast\n\nharvest festival in october")
    sbackend.embed_pending()
    cards = sbackend.search_notes("walnut harvest october", mode="hybrid", limit=3)
    assert [c.mode for c in cards] == ["hybrid"] * len(cards)
    assert cards[0].id == both.id and {c.id for c in cards} <= {both.id, words.id, other.id}
    assert cards[0].score == 1.0  # first in both lists: each engine's best scales to 1
    assert cards[0].score > cards[-1].score >= 0
    assert "**" in cards[0].snippet  # the keyword card (with its highlights) when both found it
    assert sbackend.search_notes("walnut harvest", mode="hybrid", kind="nothing") == []
    # No note has both words: the loose keyword hits count by their coverage (half the words each).
    loose = sbackend.search_notes("walnut gamma", mode="hybrid")
    assert {c.id for c in loose[:2]} == {both.id, words.id}


def test_the_pending_count_falls_to_zero_and_wait_embeds_first(sbackend):
    notes = [sbackend.add_note(f"# n{i}\n\nplum {i}") for i in range(5)]
    assert sbackend.pending_embeddings() == 5
    assert sbackend.embed_pending(limit=2) == {"embedded": 2, "pending": 3, "revisions": 0}
    assert sbackend.embed_pending() == {"embedded": 3, "pending": 0, "revisions": 0}
    sbackend.add_note("# n5\n\nplum 5 quince")
    assert sbackend.search_notes("plum 5 quince", mode="semantic", wait=True)[0].title == "n5"
    assert sbackend.pending_embeddings() == 0 and len(notes) == 5


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def kind_and_where(request, tmp_path):
    return tmp_path / "notes" if request.param == "sqlite" else request.getfixturevalue("pg_store_url")


def test_semantic_modes_without_an_embedder_are_unavailable_on_both_stores(kind_and_where):
    with notewell.open(kind_and_where, embedder=None) as store:
        store.add_note("# heron\n\nnest by the weir\n")
        assert [c.mode for c in store.search_notes("heron", wait=True)] == ["keyword"]
        for mode in ("semantic", "both", "hybrid"):
            with pytest.raises(notewell.UnavailableError, match="without an embedder"):
                store.search_notes("heron", mode=mode)
        with pytest.raises(notewell.InvalidArgumentError, match="mode must be one of"):
            store.search_notes("heron", mode="fuzzy")


@pytest.mark.slow
def test_hybrid_makes_keyword_snippets_only_for_the_cards_it_returns(backend, monkeypatch):
    from notewell.backends.postgres import keyword as pg_search
    from notewell.backends.sqlite import keyword
    from notewell.search import snippets

    for i in range(12):
        backend.add_note(f"# pool note {i}\n\nthe connection pool ran dry on host {i}")
    made = []
    real = snippets.make_snippet

    def counted(*args, **kwargs):
        made.append(1)
        return real(*args, **kwargs)

    for module in (keyword, pg_search, snippets):
        monkeypatch.setattr(module, "make_snippet", counted)
    cards = backend.search_notes("connection pool", mode="hybrid", limit=3)
    assert len(cards) == 3 and all("**" in c.snippet for c in cards)
    assert len(made) == 3  # not one for each of the pool's 12 keyword cards


def test_every_mode_refuses_a_query_keyword_search_refuses(sbackend):
    # A semantic search took a query without words, or with a NUL, that the other modes refuse.
    sbackend.add_note("# heron\n\nwading bird")
    for query, why in (("???", "no words"), ("bird\x00", "NUL"), ("x" * 2001, "limit"), ("   ", "empty")):
        for mode in ("keyword", "semantic", "both", "hybrid"):
            with pytest.raises(notewell.InvalidQueryError, match=why):
                sbackend.search_notes(query, mode=mode, wait=True)


def test_a_note_may_be_added_under_an_id_chosen_beforehand_once(backend):
    # The text can then name its own id (a NoteTool header's id:), in one write, on both stores.
    nid = notewell.new_note_id()
    note = backend.add_note(f"---\nid: {nid}\ntitle: chosen\n---\nbody", note_id=nid)
    assert note.id == nid and note.path == f"{nid}.md" and backend.get_note(nid).title == "chosen"
    with pytest.raises(notewell.ConflictError, match="has used the id"):
        backend.add_note("again", note_id=nid)
    backend.delete_note(nid)
    with pytest.raises(notewell.ConflictError):  # a deleted note's revisions keep its id
        backend.add_note("again", note_id=nid)
    with pytest.raises(notewell.InvalidIdError):
        backend.add_note("x", note_id="note_20250101_000000_0")


def test_many_notes_may_be_added_under_ids_chosen_beforehand_batch_by_batch(backend):
    ids = [notewell.new_note_id() for _ in range(5)]
    notes = backend.add_notes([f"# chosen {i}\n\nbody {i}" for i in range(5)], note_ids=ids, batch=2)
    assert [n.id for n in notes] == ids and [backend.get_note(i).title for i in ids] == [
        f"chosen {i}" for i in range(5)
    ]
    fresh = [notewell.new_note_id() for _ in range(4)]
    with pytest.raises(notewell.ConflictError, match=f"has used the id {ids[1]}"):
        backend.add_notes(["a", "b", "c", "d"], note_ids=[fresh[0], fresh[1], ids[1], fresh[2]], batch=2)
    assert [backend.get_note(i).id for i in fresh[:2]] == fresh[:2]  # the batch before the used id went in
    with pytest.raises(notewell.NotFoundError):
        backend.get_note(fresh[2])  # the used id's batch did not
    for texts, chosen, said in ((["a", "b"], [fresh[3]], "one per text"), (["a", "b"], [fresh[3]] * 2, "differ")):
        with pytest.raises(notewell.InvalidArgumentError, match=said):
            backend.add_notes(texts, note_ids=chosen)
    with pytest.raises(notewell.InvalidIdError):
        backend.add_notes(["a"], note_ids=["nope"])


def test_a_note_is_found_by_its_path_or_file_name_and_a_hidden_one_is_not(backend):
    # The Day-5 tutorial's tools name notes by file name (go-tips.md); notewell took only ids.
    from notewell import Viewer

    note = backend.add_note("# go tips\n\nerrors are values")
    name = note.path.rsplit("/", 1)[-1]
    assert backend.resolve(note.path) == note.id and backend.resolve(name) == note.id
    run = backend.start_attempt("alice:vault", author="alice")
    hidden = backend.add_note("# plan\n\nsecret", attempt=run.id)
    backend.set_project("alice:vault", private=True)
    assert backend.resolve(hidden.path, viewer=Viewer("alice")) == hidden.id
    for ref in (hidden.path, "nothing-here.md"):
        with pytest.raises(notewell.NotFoundError) as missing:
            backend.resolve(ref, viewer=Viewer("bob"))
        assert str(missing.value) == f"no note at {ref}"  # the same words for hidden and absent


def test_two_databases_writers_racing_on_one_chosen_id_make_one_note(pg_url):
    # The loser met the primary key and was told "storage: duplicate key value ...".
    import threading

    stores = [notewell.open(pg_url) for _ in range(2)]
    nid, barrier, out = notewell.new_note_id(), threading.Barrier(2), []

    def add(store):
        barrier.wait()
        try:
            out.append(store.add_note("# raced\n\nx", note_id=nid).id)
        except notewell.NotewellError as exc:
            out.append(exc.code)

    try:
        threads = [threading.Thread(target=add, args=(s,)) for s in stores]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for s in stores:
            s.close()
    assert sorted(out) == sorted([nid, "conflict"])
