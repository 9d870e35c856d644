"""Attempts: notes written on a run, frozen when it ends, and all of it rebuilt from the folder."""

from __future__ import annotations

import shutil

import pytest

import notewell
from notewell import FrozenError, InvalidArgumentError, InvalidIdError, NotFoundError


def test_notes_on_a_running_attempt_change_and_freeze_when_it_ends(backend):
    store = backend
    att = store.start_attempt("SAT Solver", author="agent-7", model="m1", campaign="Hard Problems")
    assert att.id.startswith("att_") and len(att.id) == 14
    assert (att.project, att.campaign, att.running, att.notes) == ("sat-solver", "hard-problems", True, 0)
    note = store.add_note("# Phase saving helps\n\nOn the large fixture.", attempt=att.id)
    assert note.attempt_id == att.id and note.author == "agent-7" and note.model == "m1"
    assert note.attempt["project"] == "sat-solver" and note.note_kind == "note"
    edited = store.edit_note(note.id, "# Phase saving helps a lot\n\nOn the large fixture.")
    assert edited.attempt_id == att.id and edited.revision == 2
    outside = store.add_note("# Written outside any attempt")
    assert outside.attempt_id is None and outside.attempt is None

    ended = store.end_attempt(att.id, outcome="succeeded", summary="Phase saving is the win; restarts did not matter.")
    assert (ended.running, ended.outcome, ended.notes) == (False, "succeeded", 2)
    summary = store.get_note(ended.summary_note_id)
    assert summary.note_kind == "summary" and summary.attempt_id == att.id
    assert summary.title == "Summary: sat-solver, succeeded"
    assert summary.body.strip() == "Phase saving is the win; restarts did not matter."

    before = store.get_note(note.id).text
    with pytest.raises(FrozenError) as err:
        store.edit_note(note.id, "changed after the end")
    assert err.value.code == "frozen" and att.id in err.value.message
    with pytest.raises(FrozenError):
        store.delete_note(note.id)
    with pytest.raises(FrozenError):
        store.add_note("late", attempt=att.id)
    with pytest.raises(FrozenError):
        store.end_attempt(att.id, outcome="failed")
    assert store.get_note(note.id).text == before
    assert store.get_note(note.id).revision == 2
    store.edit_note(outside.id, "# Still editable")  # no attempt: never frozen


@pytest.mark.slow
def test_cards_carry_the_attempt_and_scope_the_search(backend):
    a = backend.start_attempt("alpha", author="ann", campaign="c1")
    b = backend.start_attempt("beta", author="bob")
    na = backend.add_note("kiwi on alpha", attempt=a.id)
    nb = backend.add_note("kiwi on beta", attempt=b.id)
    free = backend.add_note("kiwi nowhere")
    backend.end_attempt(b.id, outcome="abandoned")
    cards = {c.id: c for c in backend.search_notes("kiwi")}
    assert set(cards) == {na.id, nb.id, free.id}
    assert (cards[na.id].project, cards[na.id].campaign, cards[na.id].attempt_outcome) == ("alpha", "c1", None)
    assert (cards[nb.id].attempt_outcome, cards[nb.id].attempt_ended_at is not None) == ("abandoned", True)
    assert cards[free.id].project is None and cards[free.id].note_kind == "note"
    assert [c.id for c in backend.search_notes("kiwi", project="Alpha")] == [na.id]
    assert [c.id for c in backend.search_notes("kiwi", campaign="c1")] == [na.id]
    assert [c.id for c in backend.search_notes("kiwi", attempt_id=b.id)] == [nb.id]
    assert [c.id for c in backend.list_notes(project="beta")] == [nb.id]
    assert [c.id for c in backend.list_notes(attempt_id=a.id)] == [na.id]
    assert backend.search_notes("kiwi", project="nobody") == []
    with pytest.raises(InvalidIdError):
        backend.search_notes("kiwi", attempt_id="att_bad")
    with pytest.raises(InvalidArgumentError):
        backend.list_notes(project="!!!")


def test_attempts_survive_a_rebuild_from_the_folder(store_dir):
    s = notewell.open(store_dir)
    att = s.start_attempt("gamma", author="cy")
    n = s.add_note("# on gamma", attempt=att.id)
    s.end_attempt(att.id, outcome="Failed", summary="# Why it failed\n\nThe fixture was wrong.")
    s.close()
    shutil.rmtree(store_dir / ".notewell")
    s = notewell.open(store_dir)
    again = s.get_attempt(att.id)
    assert (again.project, again.outcome, again.notes, again.running) == ("gamma", "failed", 2, False)
    assert s.get_note(n.id).attempt_id == att.id
    summary = s.get_note(again.summary_note_id)
    assert summary.note_kind == "summary" and summary.title == "Why it failed"
    with pytest.raises(FrozenError):
        s.edit_note(n.id, "no")
    s.reindex()
    assert s.search_notes("gamma", attempt_id=att.id)[0].attempt_outcome == "failed"
    s.close()


def test_listing_and_bad_input(backend):
    a = backend.start_attempt("p1", author="x")
    b = backend.start_attempt("p2", author="y")
    backend.end_attempt(a.id, outcome="succeeded")
    assert [x.id for x in backend.list_attempts()] == [b.id, a.id]
    assert [x.id for x in backend.list_attempts(project="p1")] == [a.id]
    assert [x.id for x in backend.list_attempts(running=True)] == [b.id]
    assert [x.id for x in backend.list_attempts(running=False)] == [a.id]
    with pytest.raises(NotFoundError):
        backend.get_attempt("att_0000000000")
    with pytest.raises(NotFoundError):
        backend.add_note("x", attempt="att_0000000000")
    for bad in ("../x", "att_", "nte_0000000000", 3):
        with pytest.raises(InvalidIdError):
            backend.get_attempt(bad)
    with pytest.raises(InvalidArgumentError):
        backend.start_attempt("p", author="  ")
    with pytest.raises(InvalidArgumentError):
        backend.start_attempt("???", author="a")
    with pytest.raises(InvalidArgumentError):
        backend.end_attempt(b.id, outcome="two words")
    assert backend.get_attempt(b.id).running


def test_private_projects_are_seen_by_their_owner_only(backend):
    from notewell import Viewer

    pub = backend.start_attempt("open-work", author="ann")
    sec = backend.start_attempt("bob:secret-work", author="bob")
    n_pub = backend.add_note("# plum public", attempt=pub.id)
    n_sec = backend.add_note("# plum secret", attempt=sec.id)
    n_free = backend.add_note("# plum loose")
    got = backend.set_project("Bob:Secret Work", private=True, owner="bob")
    assert got == {
        "name": "bob:secret-work",
        "private": True,
        "owner": "bob",
        "campaign": None,
        "attempts": 1,
        "notes": 1,
    }
    everyone = {n_pub.id, n_sec.id, n_free.id}
    ann, bob, admin = Viewer("ann"), Viewer("bob"), Viewer("root", admin=True)

    def ids(**kw):
        return {c.id for c in backend.search_notes("plum", **kw)}

    assert ids() == everyone  # no identity: the backend's owner sees everything
    assert ids(viewer=ann) == {n_pub.id, n_free.id}
    assert ids(viewer=Viewer()) == {n_pub.id, n_free.id}
    assert ids(viewer=bob) == everyone and ids(viewer=admin) == everyone
    assert ids(viewer=bob, project="bob:secret-work") == {n_sec.id}
    assert ids(viewer=ann, project="bob:secret-work") == set()
    assert {c.id for c in backend.list_notes(viewer=ann)} == {n_pub.id, n_free.id}
    assert backend.get_note(n_sec.id, viewer=bob).id == n_sec.id
    with pytest.raises(NotFoundError):
        backend.get_note(n_sec.id, viewer=ann)
    with pytest.raises(NotFoundError):
        backend.get_attempt(sec.id, viewer=ann)
    with pytest.raises(NotFoundError):
        backend.get_project("bob:secret-work", viewer=ann)
    assert [a.id for a in backend.list_attempts(viewer=ann)] == [pub.id]
    backend.set_project("bob:secret-work", private=False)
    assert ids(viewer=ann) == everyone


def _two_notes_read_on_delta(s, project="delta"):
    """Two attempts on project delta: eve's writes two notes, dee's reads them."""
    worker = s.start_attempt(project, author="dee")
    other = s.start_attempt(project, author="eve")
    first = s.add_note("# first on delta", attempt=other.id)
    second = s.add_note("# second on delta", attempt=other.id)
    s.get_note(first.id, working_attempt_id=worker.id)
    s.get_note(second.id, working_attempt_id=worker.id)
    return worker, other, first, second


def test_reads_on_an_attempt_and_scoped_recent_notes(backend):
    s = backend
    worker, other, first, second = _two_notes_read_on_delta(s)
    assert [r["note_id"] for r in s.attempt_reads(worker.id)] == [first.id, second.id]
    assert s.attempt_reads(other.id) == []
    # Without search words: a project's (or an attempt's) recent notes; broader scopes need words.
    assert [c.id for c in s.search_notes("", project="delta")] == [second.id, first.id]
    assert [c.id for c in s.search_notes(" ", attempt_id=other.id)] == [second.id, first.id]
    with pytest.raises(notewell.InvalidQueryError):
        s.search_notes("")
    s.end_attempt(worker.id, outcome="succeeded")
    assert s.get_note(first.id, working_attempt_id=worker.id).id == first.id  # served, not recorded
    assert len(s.attempt_reads(worker.id)) == 2


def test_reads_and_privacy_survive_a_rebuild_from_the_folder(store_dir):
    s = notewell.open(store_dir)
    worker, other, first, second = _two_notes_read_on_delta(s, "dee:delta")
    s.close()
    shutil.rmtree(store_dir / ".notewell")
    s = notewell.open(store_dir)
    assert [r["note_id"] for r in s.attempt_reads(worker.id)] == [first.id, second.id]
    s.set_project("dee:delta", private=True, owner="dee")
    s.close()
    shutil.rmtree(store_dir / ".notewell")
    s = notewell.open(store_dir)
    assert s.get_project("dee:delta")["private"] is True
    assert s.search_notes("delta", viewer=notewell.Viewer("eve")) == []
    s.close()


def test_summaries_tags_and_history_hide_private_work_too(backend):
    from notewell import Viewer

    sec = backend.start_attempt("owner:vault", author="owner")
    hidden = backend.add_note("---\ntitle: hidden\nkind: secret\ntags: [classified]\n---\nx", attempt=sec.id)
    shown = backend.add_note("---\ntitle: shown\ntags: [open]\n---\ny")
    backend.set_project("owner:vault", private=True, owner="owner")
    guest = Viewer("guest")
    got = backend.summary(viewer=guest)
    assert got["total_notes"] == 1 and [c["id"] for c in got["recent_notes"]] == [shown.id]
    assert [k["kind"] for k in got["by_kind"]] == [None]
    assert backend.summary()["total_notes"] == 2
    assert backend.list_tags(viewer=guest) == [{"tag": "open", "count": 1}]
    assert {t["tag"] for t in backend.list_tags()} == {"open", "classified"}
    assert [n["id"] for n in backend.note_tags(viewer=guest)] == [shown.id]
    with pytest.raises(NotFoundError):
        backend.history(hidden.id, viewer=guest)
    assert backend.history(hidden.id, viewer=Viewer("owner"))
    backend.set_project("owner:vault", private=False)
    backend.delete_note(hidden.id)
    backend.set_project("owner:vault", private=True)
    with pytest.raises(NotFoundError):
        backend.get_note(hidden.id, revision=1, viewer=guest)  # a deleted note's kept revisions too
    assert backend.get_note(hidden.id, revision=1).title == "hidden"


def test_a_query_cannot_escape_its_filters(backend):
    from notewell import Viewer

    sec = backend.start_attempt("alice:secret", author="alice")
    pub = backend.start_attempt("pub", author="bob")
    hidden = backend.add_note("# zebra secret", attempt=sec.id)
    shown = backend.add_note("---\ntitle: giraffe public\nkind: x\n---\ngiraffe", attempt=pub.id)
    other = backend.add_note("---\ntitle: giraffe other\nkind: y\n---\ngiraffe")
    backend.set_project("alice:secret", private=True, owner="alice")
    bob = Viewer("bob")
    # Unpaired parentheses run as plain words; the third pairs up (its ") OR (" is a quoted
    # phrase to FTS5), so it is searched as written and matches nothing.
    for query, kind_x in (
        ("zebra) OR (giraffe", {shown.id}),
        ("zebra)) OR ((giraffe", {shown.id}),
        ('zebra") OR ("giraffe', set()),
        ("(zebra OR giraffe", {shown.id}),
    ):
        assert hidden.id not in {c.id for c in backend.search_notes(query, viewer=bob)}, query
        assert {c.id for c in backend.search_notes(query, kind="x")} == kind_x, query
    assert {c.id for c in backend.search_notes("(zebra OR giraffe)", viewer=bob)} == {shown.id, other.id}


def test_campaign_of_a_project_and_private_backlinks_and_reads(backend):
    from notewell import Viewer

    pub = backend.start_attempt("proj", author="bob")
    base = backend.add_note("# kangaroo base", attempt=pub.id)
    backend.set_project("proj", campaign="Big Camp")
    assert [c.id for c in backend.search_notes("kangaroo", campaign="big-camp")] == [base.id]
    assert [c.id for c in backend.list_notes(campaign="big-camp")] == [base.id]
    assert backend.search_notes("kangaroo")[0].campaign == "big-camp"
    assert backend.search_notes("kangaroo", campaign="other") == []
    sec = backend.start_attempt("alice:vault", author="alice")
    secret = backend.add_note(f"---\ntitle: secret child\nbuilds_on: [{base.id}]\n---\nx", attempt=sec.id)
    backend.get_note(secret.id, working_attempt_id=pub.id)  # alice's note read on bob's public attempt
    backend.set_project("alice:vault", private=True, owner="alice")
    assert [b["id"] for b in backend.get_note(base.id).backlinks] == [secret.id]
    assert backend.get_note(base.id, viewer=Viewer("bob")).backlinks == []
    assert backend.attempt_reads(pub.id, viewer=Viewer("bob")) == []
    assert [r["note_id"] for r in backend.attempt_reads(pub.id)] == [secret.id]
    with pytest.raises(NotFoundError):
        backend.get_note(base.id, viewer=Viewer("bob"), working_attempt_id=sec.id)
    with pytest.raises(InvalidArgumentError):
        backend.search_notes("kangaroo", viewer="bob")
    with pytest.raises(notewell.InvalidNoteError):
        backend.end_attempt(pub.id, outcome="failed", summary=b"\xff")
    assert backend.get_attempt(pub.id).running


def test_a_private_projects_owner_is_matched_by_namespace(backend):
    # set_project("Alice:diary", private=True) takes the namespace, alice, as owner: the token
    # "Alice" (its handle slugs to alice) sees it, and no one else does.
    from notewell import Viewer

    run = backend.start_attempt("Alice:diary", author="Alice")
    note = backend.add_note("# diary\n\nquince", attempt=run.id)
    assert backend.set_project("Alice:diary", private=True)["owner"] == "alice"
    assert [c.id for c in backend.search_notes("quince", viewer=Viewer("Alice"))] == [note.id]
    assert backend.search_notes("quince", viewer=Viewer("bob")) == []


def test_a_project_made_private_under_a_shared_name_before_namespaces_may_still_change():
    # Written straight into the memory fake's tables, as an older store left it (the service
    # refuses to make it now): hidden as any private project, its owner and campaign may still
    # change, and it may be made public, but not private again under that name.
    from notewell import Viewer
    from notewell.services.service import NoteService
    from tests.fakes import MemoryBackend
    from tests.fakes.memory_records import Settings

    store = NoteService(MemoryBackend())
    store.start_attempt("legacy", author="x")
    with store.backend.tables() as tables:
        tables.projects["legacy"] = Settings(private=True, owner="x")
    with pytest.raises(NotFoundError):
        store.get_project("legacy", viewer=Viewer("bob"))
    assert store.set_project("legacy", owner="y")["owner"] == "y"
    assert store.set_project("legacy", campaign="winter")["campaign"] == "winter"
    assert store.get_project("legacy", viewer=Viewer("y"))["private"] is True
    assert store.set_project("legacy", private=False)["private"] is False
    with pytest.raises(InvalidArgumentError, match="namespace"):
        store.set_project("legacy", private=True)  # but not made private again under that name
    assert store.get_project("legacy", viewer=Viewer("bob"))["private"] is False
