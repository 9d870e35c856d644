"""Every backend gives the service the same records (the memory fake too): every member of the Protocol with its
parameters, and the same answers to the same questions about the same store."""

from __future__ import annotations

import inspect

import pytest

from notewell.backends.postgres.records import PgPooledSnapshot, PgSnapshot, PgWriteTurn
from notewell.backends.records import Snapshot, WriteTurn
from notewell.backends.sqlite.records import SqliteSnapshot, SqliteWriteTurn
from notewell.search.filters import Filters
from tests.fakes.memory_records import MemorySnapshot, MemoryWriteTurn


def _members(protocol: type) -> list[str]:
    return sorted(
        name
        for klass in protocol.__mro__
        if klass not in (object,) and klass.__name__ != "Protocol" and klass.__name__ != "Generic"
        for name, value in vars(klass).items()
        if not name.startswith("_") and callable(value)
    )


def _parameters(function) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


PAIRS = [
    (Snapshot, SqliteSnapshot),
    (Snapshot, PgSnapshot),
    (Snapshot, PgPooledSnapshot),
    (WriteTurn, SqliteWriteTurn),
    (WriteTurn, PgWriteTurn),
    (Snapshot, MemorySnapshot),
    (WriteTurn, MemoryWriteTurn),
]


@pytest.mark.parametrize(("protocol", "cls"), PAIRS, ids=lambda x: x.__name__)
def test_each_backend_has_every_member_of_the_protocol(protocol, cls):
    members = _members(protocol)
    assert len(members) >= (22 if protocol is Snapshot else 28)
    for name in members:
        got = getattr(cls, name, None)
        assert got is not None, f"{cls.__name__} has no {name}"
        assert _parameters(got) == _parameters(getattr(protocol, name)), f"{cls.__name__}.{name}"


def _answers(store) -> dict[str, object]:
    """What the records say about the store :func:`_fill` made (ids and times left out)."""
    with store.backend.snapshot() as records:
        attempt = records.attempts(project=None, running=None, hidden=(), limit=10)
        a_id = attempt[0].id
        notes = records.cards(limit=10, offset=0, filters=Filters())
        by_title = {c.title: c.id for c in notes}
        base, top = by_title["base"], by_title["on base"]
        hidden_note = by_title["secret work"]
        return {
            "private": records.private_projects(),
            "campaign": sorted(records.campaign_members("winter")),
            "attempt": (attempt[0].project, attempt[0].author, attempt[0].notes, attempt[0].running),
            "hidden attempts": len(records.attempts(project=None, running=None, hidden=("alice:vault",), limit=10)),
            "project": records.project("alice:vault"),
            "unknown project": records.project("nothing-here"),
            "activity": sorted(name for name, _last in records.project_activity()),
            "note project": (records.note_project(hidden_note), records.note_project(base)),
            "note attempt": records.note_attempt(hidden_note) == a_id,
            "notes in": records.notes_in(("alice:vault",), [hidden_note, base]) == {hidden_note},
            "reads": [(t, bool(at)) for _n, t, at in records.reads(a_id)],
            "linked": records.linked_note(top).title if records.linked_note(top) else None,
            "builds on": records.builds_on(top) == [base],
            "built on by": records.built_on_by(base) == [top],
            "supersedes": records.supersedes(by_title["base, corrected"]) == sorted([base, "nte_zzzzzzzzzz"]),
            "superseded by": records.superseded_by([base, top, base]) == {base: [by_title["base, corrected"]]},
            "nothing supersedes": (records.supersedes(base), records.superseded_by([]), records.superseded_by([top])),
            "count": records.count(Filters()),
            "hidden count": records.count(Filters(hidden_projects=("alice:vault",))),
            "kinds": records.kind_counts(Filters()),
            "tags": records.tag_counts(Filters()),
            "tags and summaries": sorted((t, tags, s) for _i, t, tags, s in records.tags_and_summaries(Filters())),
            "live revision": records.live_revision(base),
            "revisions": [(r.revision, r.op, r.kept) for r in records.revisions(base, records.live_revision(base))],
            "problems": records.problems(),
        }


def _fill(store) -> None:
    store.set_project("alice:vault", private=True, owner="alice", campaign="winter")
    attempt = store.start_attempt("alice:vault", author="alice")
    base = store.add_note("---\nkind: finding\ntags: [db, pool]\nsummary: the pool\n---\n# base\n\nthe pool")
    store.add_note(f"---\nkind: idea\nbuilds_on: [{base.id}]\n---\n# on base\n\nbuilds on the base note")
    secret = store.add_note("# secret work\n\nin the vault", attempt=attempt.id)
    store.add_note(f"---\nsupersedes: [{base.id}, nte_zzzzzzzzzz]\n---\n# base, corrected\n\nthe pool is 32")
    store.get_note(base.id, working_attempt_id=attempt.id)
    store.edit_note(base.id, "---\nkind: finding\ntags: [db, pool]\nsummary: the pool\n---\n# base\n\nthe pool, v2")
    assert secret.attempt_id == attempt.id


def test_both_backends_answer_the_same(backend, tmp_path):
    import notewell

    _fill(backend)
    with notewell.open(tmp_path / "other") as folder:
        _fill(folder)
        answers = _answers(backend)
        assert answers == _answers(folder)
        assert answers["supersedes"] and answers["superseded by"]
