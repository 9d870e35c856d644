"""``stale``, on every backend: the open blockers and actions left untouched for a while that no
later note builds on or supersedes, newest first, as the viewer may see them."""

from __future__ import annotations

import pytest

import notewell
from notewell.model.visibility import Viewer


def _note(kind: str, title: str, *, tags: str = "", builds_on: str = "", supersedes: str = "") -> str:
    lines = [f"title: {title}", f"kind: {kind}"]
    lines += [f"tags: [{tags}]"] if tags else []
    lines += [f"builds_on: [{builds_on}]"] if builds_on else []
    lines += [f"supersedes: [{supersedes}]"] if supersedes else []
    return "---\n" + "\n".join(lines) + "\n---\nbody\n"


def test_stale_lists_what_is_still_open_and_untouched(backend):
    a = backend.add_note(_note("blocker", "A open"))
    b = backend.add_note(_note("action", "B open"))
    c = backend.add_note(_note("blocker", "C resolved", tags="resolved"))
    d = backend.add_note(_note("blocker", "D superseded"))
    e = backend.add_note(_note("blocker", "E built on"))
    f = backend.add_note(_note("action", "F cited by a digest only"))
    backend.add_note(_note("finding", "G not open work"))
    backend.add_note(_note("finding", "D again", supersedes=d.id))
    backend.add_note(_note("finding", "E worked around", builds_on=e.id))
    backend.add_note(_note("digest", "digest", builds_on=f.id))
    assert [x.id for x in backend.stale(older_than="now")] == [f.id, b.id, a.id]
    assert backend.stale() == []  # the default: not updated for 14 days
    assert [x.id for x in backend.stale(older_than="now", limit=1)] == [f.id]
    assert c.id not in [x.id for x in backend.stale(older_than="now")]
    # Touching one makes it fresh: an edit is work on it.
    cut = backend.get_note(f.id).updated_at
    backend.edit_note(a.id, _note("blocker", "A open, still"))
    assert [x.id for x in backend.stale(older_than=cut)] == [b.id]  # updated before f's update: b only


def test_stale_respects_visibility(backend):
    open_one = backend.add_note(_note("blocker", "public blocker"))
    secret = backend.start_attempt("owner-1:vault", author="owner-1")
    backend.set_project("owner-1:vault", private=True, owner="owner-1")
    private_blocker = backend.add_note(_note("blocker", "private blocker"), attempt=secret.id)
    backend.add_note(_note("finding", "private fix", builds_on=open_one.id), attempt=secret.id)
    stranger, owner = Viewer(handle="someone"), Viewer(handle="owner-1")
    # The stranger sees neither the private blocker nor that a private note settled the public one.
    assert [x.id for x in backend.stale(older_than="now", viewer=stranger)] == [open_one.id]
    assert [x.id for x in backend.stale(older_than="now", viewer=owner)] == [private_blocker.id]
    assert [x.id for x in backend.stale(older_than="now", project="owner-1:vault", viewer=stranger)] == []


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        ({"older_than": "fortnight"}, "older_than: 'fortnight' is not a date"),
        ({"older_than": "x" * 100_000}, "older_than: 'xxxx"),
        ({"limit": 0}, "limit"),
        ({"project": ""}, "project"),
    ],
)
def test_stale_refuses_bad_arguments_in_one_line(backend, kwargs, said):
    with pytest.raises(notewell.InvalidArgumentError) as refused:
        backend.stale(**kwargs)
    assert said in refused.value.message and "\n" not in refused.value.message
    assert len(refused.value.message) < 300


@pytest.mark.slow  # 2,400 notes
def test_stale_reads_both_kinds_across_pages_in_time_order(tmp_path):
    # Each kind is read on its own, page by page, and the two merged: the order and the cut are
    # those of one list, newest updated first, across page ends.
    with notewell.open(tmp_path / "notes", embedder=None) as store:
        texts = [_note(("blocker", "action")[i % 3 == 0], f"n{i}", tags="done" if i % 4 else "") for i in range(2400)]
        notes = store.add_notes(texts)
        cut = notewell.model.timestamps.now_iso()
        open_ones = sorted((n for n in notes if "done" not in n.tags), key=lambda n: (n.updated_at, n.id))
        found = store.stale(older_than=cut, limit=500)
        assert [c.id for c in found] == [n.id for n in reversed(open_ones)][:500]
        times = [c.updated_at for c in found]
        assert len(open_ones) == 600 and times == sorted(times, reverse=True)


@pytest.mark.slow  # 15,000 notes written
def test_stale_reads_its_candidates_in_linear_time(tmp_path):
    # 20,000 settled candidates cost 10 times 5,000 (1.5 s of CPU): the store sorted every
    # candidate of both kinds for each page, and walked past the pages before it.
    from tests.conftest import cpu_seconds

    def cost(count: int) -> float:
        with notewell.open(tmp_path / f"notes-{count}", embedder=None) as store:
            store.add_notes([_note(("blocker", "action")[i % 2], f"n{i}", tags="done") for i in range(count)])
            cut = notewell.model.timestamps.now_iso()
            assert store.stale(older_than=cut) == []
            return cpu_seconds(lambda: store.stale(older_than=cut))

    small, large = cost(2_500), cost(12_500)
    assert large < 9 * small + 0.05, (small, large)  # five times the candidates; quadratic was 15-25
