"""What every backend must do alike, asked of the Backend directly (not through the service):
SQLite beside a folder, PostgreSQL, and the in-memory fake the service's policy tests run on.

Each test holds the three to one behaviour of :class:`~notewell.backends.backend.Backend`: a
snapshot's reads, a write turn's writes seen by its own reads, notes inserted (under chosen
ids too), edited through *make*, deleted, found by path, loaded, searched, embedded, closed."""

from __future__ import annotations

import pytest

from notewell.errors import ConflictError, FrozenError, InvalidQueryError, NotewellError, NotFoundError
from notewell.model.ids import new_attempt_id, new_note_id
from notewell.model.timestamps import now_iso
from notewell.search.filters import Filters
from notewell.search.request import SearchRequest

np = pytest.importorskip("numpy")

from notewell.search.embedders import HashEmbedder  # noqa: E402 - after numpy's check

_BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres), "memory"]


def _open(kind: str, request: pytest.FixtureRequest, tmp_path, embedder):
    if kind == "sqlite":
        from notewell.backends.sqlite.backend import SqliteBackend

        return SqliteBackend(tmp_path / "notes", embedder=embedder)
    if kind == "postgres":
        from notewell.backends.postgres.backend import PostgresBackend

        return PostgresBackend(request.getfixturevalue("pg_store_url"), embedder=embedder, pool_size=2)
    from tests.fakes import MemoryBackend

    return MemoryBackend(embedder=embedder)


@pytest.fixture(params=_BACKENDS)
def raw(request, tmp_path):
    """A backend of each kind, with the hash embedder."""
    b = _open(request.param, request, tmp_path, HashEmbedder())
    yield b
    b.close()


@pytest.fixture(params=_BACKENDS)
def bare(request, tmp_path):
    """A backend of each kind without an embedder."""
    b = _open(request.param, request, tmp_path, None)
    yield b
    b.close()


def _add(b, *texts, attempt=None, author="alice", chosen=None, batch=100):
    return b.insert_notes([(t, t.encode()) for t in texts], author, None, attempt, "note", None, batch, chosen)


def _attempt(b, project="garden", author="bob"):
    aid = new_attempt_id()
    with b.write_turn() as c:
        assert c.insert_attempt(aid, project=project, campaign=None, author=author, model="m1", at=now_iso())
    return aid


def _end(b, aid):
    with b.write_turn() as c:
        c.end_attempt(aid, outcome="failed", at=now_iso(), summary_id=None)


def _load(b, nid, revision=None):
    return b.reading_note(lambda _records, load: load(nid, revision))


def test_a_snapshot_reads_the_notes_and_their_links(raw):
    base = _add(raw, "---\nkind: finding\ntags: [db]\n---\n# base\n\nthe pool")[0]
    top = _add(raw, f"---\nbuilds_on: [{base.id}]\n---\n# on base\n\nbuilds on it")[0]
    with raw.snapshot() as r:
        assert r.count(Filters()) == 2 and r.count(Filters(kind="finding")) == 1
        assert [c.id for c in r.cards(limit=10, offset=0, filters=Filters())] == [top.id, base.id]  # newest first
        assert r.tag_counts(Filters()) == [("db", 1)] and r.kind_counts(Filters()) == [(None, 1), ("finding", 1)]
        assert r.builds_on(top.id) == [base.id] and r.built_on_by(base.id) == [top.id]
        assert r.linked_note(base.id).title == "base" and r.linked_note(new_note_id()) is None
        assert r.live_revision(base.id) == 1 and [x.op for x in r.revisions(base.id, 1)] == ["add"]
        assert r.note_project(base.id) is None and r.problems() == []


def test_a_write_turn_sees_its_own_writes_and_later_reads_see_them(raw):
    aid, at = new_attempt_id(), now_iso()
    note = _add(raw, "# read me\n\nsomething")[0]
    with raw.write_turn() as c:
        assert c.insert_attempt(aid, project="alice:vault", campaign="winter", author="alice", model=None, at=at)
        assert not c.insert_attempt(aid, project="other", campaign=None, author="x", model=None, at=at)  # taken
        assert c.attempt(aid).running and c.lock_attempt(aid, "share").project == "alice:vault"
        c.update_project("alice:vault", {"private": True, "owner": "alice"}, at)
        assert c.private_projects() == [("alice:vault", "alice")] and c.project("alice:vault").private
        c.record_read(aid, note.id, at)
        assert c.reads(aid) == [(note.id, "read me", at)]
        c.end_attempt(aid, outcome="succeeded", at=at, summary_id=None)
        assert c.attempt(aid).outcome == "succeeded"
    with raw.snapshot() as r:
        assert not r.attempt(aid).running and list(r.campaign_members("winter")) == ["alice:vault"]
        row = r.project("alice:vault")
        assert (row.private, row.owner, row.campaign, row.attempts) == (True, "alice", "winter", 1)


def test_a_summary_added_in_a_write_turn_is_a_note_on_the_attempt(raw):
    aid = _attempt(raw)
    with raw.write_turn() as c:
        sid = c.add_summary("# Summary\n\nit went well", c.lock_attempt(aid, "update"))
        c.end_attempt(aid, outcome="succeeded", at=now_iso(), summary_id=sid)
    note = _load(raw, sid)
    assert note.note_kind == "summary" and note.attempt_id == aid and note.author == "bob"
    assert note.attempt["summary_note_id"] == sid and note.attempt["notes"] == 1


def test_notes_are_inserted_on_a_running_attempt_credited_to_it(raw):
    aid = _attempt(raw)
    seen = []
    notes = raw.insert_notes(
        [("# a\n\nx", b""), ("# b\n\ny", b"")], None, None, aid, "note", lambda d, t: seen.append((d, t)), 1
    )
    assert [(n.title, n.author, n.model, n.attempt_id) for n in notes] == [
        ("a", "bob", "m1", aid),
        ("b", "bob", "m1", aid),
    ]
    assert seen == [(1, 2), (2, 2)] and all(n.path == f"{n.id}.md" and n.revision == 1 for n in notes)
    _end(raw, aid)
    with pytest.raises(FrozenError):
        _add(raw, "late", attempt=aid)
    with pytest.raises(NotFoundError):
        _add(raw, "nowhere", attempt=new_attempt_id())


def test_a_chosen_id_is_taken_once_and_a_used_one_refuses_its_batch(raw):
    nid, later = new_note_id(), new_note_id()
    assert _add(raw, f"---\nid: {nid}\n---\nmine", chosen=[nid])[0].id == nid
    with pytest.raises(ConflictError, match="has used the id"):
        _add(raw, "again", chosen=[nid])
    raw.delete(nid)
    with pytest.raises(ConflictError):  # a deleted note's revisions keep its id
        _add(raw, "again", chosen=[nid])
    first, second = new_note_id(), new_note_id()
    with pytest.raises(ConflictError):
        _add(raw, "one", "two", "three", chosen=[first, second, nid], batch=2)  # the second batch holds nid
    with raw.snapshot() as r:
        assert r.live_revision(first) == 1 and r.live_revision(second) == 1  # the batch before it landed
    assert _add(raw, "free", chosen=[later])[0].id == later


def test_an_edit_runs_make_on_the_current_text_and_a_frozen_note_is_refused(raw):
    note = _add(raw, "# plan\n\nfirst")[0]
    edited = raw.edit(note.id, lambda current: current.replace("first", "second"), "carol")
    assert (edited.text, edited.revision, edited.author) == ("# plan\n\nsecond", 2, "alice")
    text = "# plan\n\nthird"
    assert raw.edit(note.id, lambda _c: (text, text.encode()), None).revision == 3  # checked text as it is
    assert raw.edit(note.id, lambda current: current, "dave").revision == 3  # the same text writes nothing
    with pytest.raises(ConflictError):
        raw.edit(note.id, lambda _c: (_ for _ in ()).throw(ConflictError("changed meanwhile")), None)
    assert _load(raw, note.id).text == text
    with raw.snapshot() as r:
        assert [(x.revision, x.author) for x in r.revisions(note.id, 3)] == [(1, "alice"), (2, "carol"), (3, None)]
    aid = _attempt(raw)
    frozen = _add(raw, "# on attempt\n\nx", attempt=aid)[0]
    _end(raw, aid)
    called = []
    with pytest.raises(FrozenError):
        raw.edit(frozen.id, lambda current: called.append(current) or "changed", None)
    assert called == []
    with pytest.raises(FrozenError):
        raw.delete(frozen.id)
    with pytest.raises(NotFoundError):
        raw.edit(new_note_id(), lambda current: current, None)


def test_a_deleted_note_is_gone_and_its_revisions_stay_readable(raw):
    note = _add(raw, "# gone soon\n\nv1")[0]
    raw.edit(note.id, lambda _c: "# gone soon\n\nv2", None)
    assert raw.delete(note.id) == {
        "id": note.id,
        "title": "gone soon",
        "path": note.path,
        "deleted": True,
        "revision": 2,
    }
    with pytest.raises(NotFoundError, match="deleted"):
        _load(raw, note.id)
    assert _load(raw, note.id, 1).text == "# gone soon\n\nv1" and _load(raw, note.id, 2).text == "# gone soon\n\nv2"
    with raw.snapshot() as r:
        assert r.live_revision(note.id) is None and r.deleted_at(note.id) is not None
        assert [x.revision for x in r.revisions(note.id, None)] == [1, 2] and r.count(Filters()) == 0
    with pytest.raises(NotFoundError):
        raw.delete(note.id)


def test_note_at_knows_the_paths_of_live_notes(raw):
    note = _add(raw, "# here\n\nx")[0]
    assert raw.note_at(f"{note.id}.md") == note.id == raw.note_at(f"./{note.id}.md")
    for missing in (f"{new_note_id()}.md", "/nowhere/at/all.md"):
        with pytest.raises(NotFoundError):
            raw.note_at(missing)
    raw.delete(note.id)
    with pytest.raises(NotFoundError):
        raw.note_at(f"{note.id}.md")


def test_reading_note_runs_the_body_with_the_records_and_a_loader(raw):
    aid = _attempt(raw)
    base = _add(raw, "# base\n\nv1", attempt=aid)[0]
    raw.edit(base.id, lambda _c: "# base\n\nv2", None)
    top = _add(raw, f"---\nbuilds_on: [{base.id}]\n---\n# top\n\nx")[0]

    def body(records, load):
        return records.note_project(base.id), load(base.id, None), load(base.id, 1)

    project, now, first = raw.reading_note(body)
    assert project == "garden" and (now.revision, now.revisions, first.revision, first.text) == (
        2,
        2,
        1,
        "# base\n\nv1",
    )
    assert [b["id"] for b in now.backlinks] == [top.id] and now.attempt["id"] == aid and now.attempt["notes"] == 1
    for ref, revision in ((base.id, 3), (new_note_id(), None)):
        with pytest.raises(NotFoundError):
            _load(raw, ref, revision)


def _search(b, query, limit=5, **filters):
    request = SearchRequest.make(query, mode="keyword", limit=limit, wait=False, filters=filters)
    with b.searching(request) as (_records, engines):
        return [c.id for c in engines.keyword(query, limit, request.filters)]


def test_the_engines_find_a_note_by_a_word_and_honour_filters(raw):
    walrus = _add(raw, "---\nkind: finding\ntags: [sea]\n---\n# walrus tusks\n\nthe walrus and the zebra")[0]
    zebra = _add(raw, "# zebra\n\nzebra crossing")[0]
    assert _search(raw, "walrus") == [walrus.id] and set(_search(raw, "zebra")) == {walrus.id, zebra.id}
    assert _search(raw, "zebra", kind="finding") == [walrus.id] and _search(raw, "zebra", tags="nothing") == []
    assert _search(raw, "walrus", kind="blocker") == []
    with raw.searching(SearchRequest.make("walrus", mode="keyword", limit=5, wait=False, filters={})) as (r, engines):
        assert r.count(Filters()) == 2
        assert engines.feedback_ids("walrus tusks", 3, Filters()) == [walrus.id]
        assert engines.feedback_ids("???", 3, Filters()) == []
        with pytest.raises(InvalidQueryError):
            engines.keyword("???", 5, Filters())
    raw.edit(walrus.id, lambda _c: "# tusks\n\nivory", None)
    with raw.searching(SearchRequest.make("walrus", mode="keyword", limit=5, wait=False, filters={})) as (_r, engines):
        older = engines.older_keyword("walrus", 5, Filters(), set())
        assert [(c.id, c.matched_revision, c.title) for c in older] == [(walrus.id, 1, "tusks")]
        assert engines.older_keyword("walrus", 5, Filters(), {walrus.id}) == []


def test_the_embedding_hooks_count_what_they_embed_and_semantic_search_finds_it(raw):
    model = HashEmbedder().model_id
    embedder = raw.embedders.get()
    notes = _add(raw, "# zeppelin\n\nzeppelin mooring mast", "# banana\n\nbanana bread", "# third\n\nsubmarine")
    assert raw.pending_count(model) == 3
    seen = []
    with raw.embedding_turn():
        assert raw.embed_some(embedder, 1, lambda done, total: seen.append((done, total))) == 1
        assert raw.pending_count(model) == 2
        assert raw.embed_some(embedder, None, None) == 2 and raw.pending_count(model) == 0
    assert seen[-1] == (1, 1)
    request = SearchRequest.make("zeppelin mooring", mode="semantic", limit=3, wait=False, filters={})
    with raw.searching(request) as (_r, engines):
        engines.require_model()
        assert engines.semantic("zeppelin mooring mast", 3, Filters(), [])[0].id == notes[0].id
    raw.edit(notes[1].id, lambda _c: "# banana\n\nbanana split", None)
    raw.edit(notes[1].id, lambda _c: "# banana\n\nbanana pie", None)
    assert raw.pending_count(model) == 1
    with raw.embedding_steps(embedder) as step:
        assert step(lambda: False) == 1 + 1  # the edited note, then revision 2 (revision 1 kept the vector it had)
        assert step(lambda: False) == 0
    assert raw.embed_older(embedder, None) == 0 and raw.pending_count(model) == 0
    raw.delete(notes[2].id)
    assert raw.pending_count(model) == 0


def test_without_an_embedder_the_engines_say_so(bare):
    _add(bare, "# lark\n\nsings at dawn")
    request = SearchRequest.make("lark", mode="semantic", limit=3, wait=False, filters={})
    with bare.searching(request) as (_r, engines):
        assert len(engines.keyword("lark", 3, Filters())) == 1
        with pytest.raises(NotewellError, match="without an embedder"):
            engines.require_model()
    assert bare.embedders.made is None


def test_the_rest_of_a_backend_and_close(raw):
    assert isinstance(raw.name, str) and raw.name and isinstance(raw.location, str) and raw.max_bytes > 0
    assert raw.guarded(lambda: 42) == 42
    book = raw.token_book()
    token, secret = book.create("alice")
    assert book.verify(secret) == token and [t.name for t in book.list()] == ["alice"]
    raw.close()
    raw.close()  # a second close is harmless
    with pytest.raises(NotewellError):
        with raw.snapshot() as r:
            r.count(Filters())
