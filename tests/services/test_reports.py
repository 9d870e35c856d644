"""Progress reports (services/reports.py) on every backend: which notes each section takes, the
window, what closes a blocker, determinism, and what a viewer's report leaves out."""

from __future__ import annotations

import json
import time

import pytest

import notewell
from notewell import Viewer
from notewell.model.timestamps import now_iso
from notewell.services.report_pages import render_html, render_markdown
from notewell.services.reports import build_report


def _note(store, title, kind=None, *, attempt=None, tags=(), builds_on=(), supersedes=(), author="agent-7"):
    header = [f"title: {title}"]
    if kind:
        header.append(f"kind: {kind}")
    if tags:
        header.append(f"tags: [{', '.join(tags)}]")
    if builds_on:
        header.append(f"builds_on: [{', '.join(builds_on)}]")
    if supersedes:
        header.append(f"supersedes: [{', '.join(supersedes)}]")
    text = "---\n" + "\n".join(header) + f"\n---\n{title} in a sentence.\n"
    return store.add_note(text, attempt=attempt, author=author).id


def _tick() -> str:
    """A time strictly between the notes written before and after it."""
    time.sleep(0.002)
    moment = now_iso()
    time.sleep(0.002)
    return moment


@pytest.fixture
def work(backend):
    """A week's work on project sat: every kind of note a section takes, and the ones it leaves."""
    store = backend
    old = _note(store, "Old finding", "finding")
    old_blocker = _note(store, "Old blocker still open", "blocker")
    since = _tick()
    run = store.start_attempt("sat", author="agent-7")
    ids = {
        "old": old,
        "old_blocker": old_blocker,
        "finding": _note(store, "Phase saving helps", "finding", attempt=run.id),
        "decision": _note(store, "Use Luby restarts", "decision", attempt=run.id),
        "dead_end": _note(store, "VSIDS decay 0.5 stalls", "dead_end", attempt=run.id),
        "blocker": _note(store, "Proof checker times out", "blocker", attempt=run.id),
        "action": _note(store, "Rerun the 40k fixture", "action", attempt=run.id),
        "done_action": _note(store, "Bump the timeout", "action", attempt=run.id, tags=("done",)),
        "closed": _note(store, "Flaky CI", "blocker", attempt=run.id),
        "reference": _note(store, "The CDCL paper", "reference", attempt=run.id),
    }
    ids["closer"] = _note(store, "CI fixed by pinning", "finding", attempt=run.id, builds_on=(ids["closed"],))
    ids["digest"] = _note(store, "Week digest", "digest", attempt=run.id, builds_on=(ids["blocker"],))
    failed = store.start_attempt("sat", author="agent-8")
    ids["failed_note"] = _note(store, "Tried the GPU", "finding", attempt=failed.id, author="agent-8")
    store.end_attempt(failed.id, outcome="failed", summary="The GPU port is slower.")
    until = _tick()
    ids["late"] = _note(store, "Written after the report", "decision")
    ids["late_closer"] = _note(store, "Late fix", "finding", builds_on=(ids["old_blocker"],))
    return store, ids, since, until, failed.id


@pytest.mark.slow  # a week's notes: 0.5 s on SQLite
def test_each_section_takes_its_notes_in_time_order(work):
    store, ids, since, until, failed = work
    report = build_report(store, project="sat", since=since, until=until)
    assert [line.ref for line in report.done] == [ids["finding"], ids["closer"], ids["failed_note"]]
    assert [line.ref for line in report.decisions] == [ids["decision"]]
    # a blocker before an action; the digest citing a blocker does not close it; a tag or a later
    # note building on one does; a blocker written before the window is still open
    assert [line.ref for line in report.open] == [ids["blocker"], ids["action"]]
    assert [line.ref for line in report.ruled_out] == [ids["dead_end"], failed]
    attempt_line = report.ruled_out[1]
    assert attempt_line.kind == "attempt failed" and attempt_line.author == "agent-8"
    assert attempt_line.note_id is not None and attempt_line.note_id != failed
    assert attempt_line.title == "The GPU port is slower."  # the untitled summary, by its first line
    # notes of sat only (the old ones are on no project), written in the window
    assert report.written == 12 and dict(report.other_kinds) == {"action": 1, "blocker": 1, "reference": 1, "digest": 1}
    md = render_markdown(report)
    assert md.startswith("# Progress report: project sat\n")
    assert ids["late"] not in md and ids["old"] not in md


@pytest.mark.slow  # a week's notes: 0.5 s on SQLite
def test_the_whole_store_and_what_closes_a_blocker_as_of_until(work):
    store, ids, since, until, _ = work
    report = build_report(store, since=since, until=until)
    # without a project the notes on no attempt count too; the old blocker is open at *until*
    # (the note that builds on it came later) ...
    assert [line.ref for line in report.open] == [ids["old_blocker"], ids["blocker"], ids["action"]]
    assert report.open[0].project is None and report.open[1].project == "sat"
    # ... and closed once the report reaches it
    later = build_report(store, since=since)
    assert ids["old_blocker"] not in [line.ref for line in later.open]
    assert ids["late"] in [line.ref for line in later.decisions]


def test_a_succeeded_attempt_is_done_and_closes_its_blockers(backend):
    run = backend.start_attempt("sat", author="agent-7")
    blocker = _note(backend, "Needs a bigger box", "blocker", attempt=run.id)
    backend.end_attempt(run.id, outcome="succeeded", summary="# It works\n\nDone.")
    report = build_report(backend, project="sat", since="1d")
    assert [(line.ref, line.title, line.kind) for line in report.done] == [(run.id, "It works", "attempt succeeded")]
    assert report.open == [] and dict(report.other_kinds) == {"blocker": 1}
    ended = backend.get_attempt(run.id).ended_at
    before = build_report(backend, project="sat", since="1d", until=ended)  # it had not ended yet
    assert [line.ref for line in before.open] == [blocker] and before.done == []


def test_a_superseded_blocker_is_closed_as_briefs_and_stale_say_from_when_it_was(backend):
    # A correction supersedes the blocker: the briefing and stale no longer call it open, and
    # the report did (it read only builds_on). As of a time before the correction, it is open.
    blocker = _note(backend, "Proof checker times out", "blocker")
    action = _note(backend, "Rerun the fixture", "action")
    before = _tick()
    fix = backend.add_note(f"---\ntitle: Checker fixed\nkind: finding\nsupersedes: [{blocker}]\n---\nFixed.\n").id
    after = _tick()
    assert backend.get_note(blocker).superseded_by == [fix]
    assert [line.ref for line in build_report(backend, since="1d", until=after).open] == [action]
    assert [line.ref for line in build_report(backend, since="1d", until=before).open] == [blocker, action]
    assert [line.ref for line in build_report(backend, since="1d").open] == [action]


def test_a_hidden_correction_leaves_a_visible_blocker_open(backend):
    backend.set_project("alice:secret", private=True, owner="alice")
    blocker = _note(backend, "Public blocker", "blocker", author="bob")
    secret = backend.start_attempt("alice:secret", author="alice")
    text = f"---\ntitle: Secret fix\nkind: finding\nsupersedes: [{blocker}]\n---\nFixed.\n"
    backend.add_note(text, attempt=secret.id, author="alice")
    assert [line.ref for line in build_report(backend, since="1d", viewer=Viewer("bob")).open] == [blocker]
    assert build_report(backend, since="1d").open == []  # closed for those who see why


def test_the_window(backend):
    first = _note(backend, "First", "decision")
    middle = _tick()
    second = _note(backend, "Second", "decision")
    end = _tick()
    assert [ln.ref for ln in build_report(backend, since=middle, until=end).decisions] == [second]
    assert [ln.ref for ln in build_report(backend, since="2000-01-01", until=middle).decisions] == [first]
    # a relative since counts back from until: 1h before a time long past finds nothing
    assert build_report(backend, since="1h", until="2001-01-01").decisions == []
    assert build_report(backend, since="1h", until=end).since < middle
    bad = (("2026-12-02", "2026-12-01"), ("2026-12-01", "2026-12-01"), ("not a date", None), ("7d", "soon"))
    for since, until in bad:
        with pytest.raises(notewell.InvalidArgumentError) as err:
            build_report(backend, since=since, until=until)
        assert "\n" not in str(err.value)
    with pytest.raises(notewell.NotFoundError, match="no project nowhere"):
        build_report(backend, project="nowhere")


@pytest.mark.slow  # a week's notes: 0.5 s on SQLite
def test_the_same_notes_and_dates_give_the_same_bytes(work):
    store, ids, since, until, _ = work
    first = build_report(store, since=since, until=until)
    again = build_report(store, since=since, until=until)
    assert render_markdown(first) == render_markdown(again)
    assert render_html(first) == render_html(again)
    assert json.dumps(first.to_dict()) == json.dumps(again.to_dict())
    assert f"to {until[:16].replace('T', ' ')} UTC" in render_markdown(first)
    # no clock in the output but the window asked for: without --until it says "now"
    assert "to now." in render_markdown(build_report(store, since=since))


@pytest.mark.slow  # a store written, its index removed and rebuilt
def test_the_same_bytes_after_the_index_is_rebuilt(tmp_path):
    store = notewell.open(tmp_path / "notes")
    run = store.start_attempt("sat", author="a")
    for i in range(30):  # more than one note per kind, some written in the same tick
        _note(store, f"Note {i:02d}", ("finding", "decision", "blocker", "dead_end", None)[i % 5], attempt=run.id)
    until = _tick()
    before = render_markdown(build_report(store, since="2000-01-01", until=until))
    store.close()
    import shutil

    shutil.rmtree(tmp_path / "notes" / ".notewell")
    with notewell.open(tmp_path / "notes") as again:
        again.reindex()
        assert render_markdown(build_report(again, since="2000-01-01", until=until)) == before


def test_a_viewer_s_report_leaves_hidden_work_out_entirely(backend):
    store = backend
    store.set_project("alice:secret", private=True, owner="alice")
    public = store.start_attempt("shared", author="bob")
    secret = store.start_attempt("alice:secret", author="alice")
    since = _tick()
    blocker = _note(store, "Public blocker", "blocker", attempt=public.id, author="bob")
    finding = _note(store, "Public finding", "finding", attempt=public.id, author="bob")
    hidden = [
        _note(store, "Secret finding", "finding", attempt=secret.id, author="alice"),
        _note(store, "Secret blocker", "blocker", attempt=secret.id, author="alice"),
        # a hidden note building on the public blocker must not close it for bob
        _note(store, "Secret fix", "finding", attempt=secret.id, author="alice", builds_on=(blocker,)),
    ]
    until = _tick()
    bob = build_report(store, since=since, until=until, viewer=Viewer("bob"))
    alice = build_report(store, since=since, until=until, viewer=Viewer("alice"))
    owner = build_report(store, since=since, until=until)
    assert [line.ref for line in bob.done] == [finding]
    assert [line.ref for line in bob.open] == [blocker] and bob.written == 2
    assert {line.ref for line in alice.done} == {finding, hidden[0], hidden[2]}
    assert [line.ref for line in owner.open] == [hidden[1]]  # the public blocker is closed for those who see why
    for text in (render_markdown(bob), render_html(bob), json.dumps(bob.to_dict())):
        assert not any(nid in text for nid in hidden) and "Secret" not in text and "alice" not in text
        assert secret.id not in text
    # the report of bob's own, public work reads as if the secret project did not exist
    shown = render_markdown(bob)
    assert "2 notes written in the window; each is listed above." in shown
    with pytest.raises(notewell.NotFoundError) as hidden_project:
        build_report(store, project="alice:secret", viewer=Viewer("bob"))
    with pytest.raises(notewell.NotFoundError) as no_project:
        build_report(store, project="alice:nothing", viewer=Viewer("bob"))
    assert str(hidden_project.value).replace("secret", "X") == str(no_project.value).replace("nothing", "X")


@pytest.mark.slow  # 2,700 files indexed: about 3 s
def test_every_note_once_across_pages_and_tied_times(tmp_path):
    """More notes than a page, 1,200 of them changed in the same microsecond (files put in the
    folder with one modification time), are each read once."""
    import calendar
    import os

    folder = tmp_path / "notes"
    folder.mkdir()
    groups = {"2026-12-03": 1200, "2026-12-04": 900}
    names = []
    for day, count in groups.items():
        for i in range(count):
            path = folder / f"{day}-{i:04d}.md"
            path.write_text(f"---\ntitle: {day} {i}\nkind: {('finding', 'blocker')[i % 2]}\n---\nx\n")
            moment = calendar.timegm(time.strptime(day + " 12", "%Y-%m-%d %H"))
            os.utime(path, (moment, moment))
            names.append(path.name)
    for i in range(600):  # and times of their own
        (folder / f"own-{i:04d}.md").write_text(f"---\ntitle: own {i}\nkind: decision\n---\nx\n")
    with notewell.open(folder, embedder=None) as store:
        report = build_report(store, since="2026-12-01", until="2100-01-01")
        every = [line.ref for line in report.done + report.open + report.decisions]
        assert len(every) == len(set(every)) == 2700 and report.written == 2700
        assert report.open == sorted(report.open, key=lambda line: (line.date, line.ref))  # by time, then id
        assert report.open[0].date == "2026-12-03T12:00:00.000000Z"


def test_the_same_bytes_from_sqlite_and_postgresql(tmp_path, pg_url):
    """The same notes (a folder loaded into a database keeps ids, authors and times) and the same
    dates give the same report from both stores, to a viewer too."""
    folder = tmp_path / "notes"
    with notewell.open(folder) as embedded:
        embedded.set_project("alice:secret", private=True, owner="alice")
        run = embedded.start_attempt("sat", author="agent-7")
        hidden = embedded.start_attempt("alice:secret", author="alice")
        blocker = _note(embedded, "Checker times out", "blocker", attempt=run.id)
        written = [
            _note(embedded, f"Note {i}", kind, attempt=run.id)
            for i, kind in enumerate(("finding", "decision", "dead_end", "action", "reference", None) * 3)
        ]
        _note(embedded, "Secret fix", "finding", attempt=hidden.id, builds_on=(blocker,), author="alice")
        # corrections: one of two notes at once, one corrected twice, one the viewer may not see
        _note(embedded, "Both were wrong", "decision", attempt=run.id, supersedes=(written[1], written[3]))
        _note(embedded, "Again", None, attempt=run.id, supersedes=(written[1], written[0]))
        _note(embedded, "Secret correction", "finding", attempt=hidden.id, supersedes=(written[2],), author="alice")
        embedded.end_attempt(run.id, outcome="failed", summary="Too slow.")
        until = _tick()
        reports = {
            who: build_report(embedded, since="2000-01-01", until=until, viewer=viewer)
            for who, viewer in (("owner", None), ("bob", Viewer("bob")))
        }
    with notewell.open(pg_url) as db:
        db.import_folder(folder)
        for who, viewer in (("owner", None), ("bob", Viewer("bob"))):
            again = build_report(db, since="2000-01-01", until=until, viewer=viewer)
            assert render_markdown(again) == render_markdown(reports[who])
            assert render_html(again) == render_html(reports[who])
    assert render_markdown(reports["owner"]) != render_markdown(reports["bob"])  # the hidden fix closes it for one
    assert [len(line.superseded_by) for line in reports["owner"].superseded] == [1, 2, 1, 1]
    assert [len(line.superseded_by) for line in reports["bob"].superseded] == [1, 2, 1]


def _refs(lines):
    return [line.ref for line in lines]


def test_a_superseded_note_is_closed_and_listed_with_its_correction(backend):
    store = backend
    old_blocker = _note(store, "Old blocker", "blocker")
    since = _tick()
    first = _note(store, "Use Luby restarts, unit 512", "decision")
    blocker = _note(store, "Checker times out", "blocker")
    action = _note(store, "Rerun the fixture", "action")
    second = _note(store, "Unit 256 is faster", "decision", supersedes=(first,))
    fix = _note(store, "The checker was the wrong one", "finding", supersedes=(blocker, old_blocker))
    until = _tick()
    late = _note(store, "The fixture is gone", None, supersedes=(action,))
    report = build_report(store, since=since, until=until)
    # a superseded blocker is closed, one before the window too; one superseded after until is not
    assert _refs(report.open) == [action]
    # the correction is the live decision; what it corrects is not listed as one
    assert _refs(report.decisions) == [second] and _refs(report.done) == [fix]
    assert [(line.ref, _refs(line.superseded_by)) for line in report.superseded] == [
        (old_blocker, [fix]),
        (first, [second]),
        (blocker, [fix]),
    ]
    assert report.superseded[1].title == "Use Luby restarts, unit 512" and report.superseded[1].kind == "decision"
    assert report.written == 5 and report.other_kinds == []
    md = render_markdown(report)
    section = md[md.index("## Superseded") : md.index("## In numbers")]
    assert f"**Use Luby restarts, unit 512** · `{first}` · `decision` · by agent-7" in section
    assert f"superseded by **Unit 256 is faster** `{second}` (" in section
    assert section.count(f"`{fix}`") == 2 and late not in md
    html_page = render_html(report)
    assert f'superseded by <a href="/?note={second}">Unit 256 is faster</a>' in html_page
    shaped = json.loads(json.dumps(report.to_dict()))
    assert [fix_["ref"] for fix_ in shaped["superseded"][1]["superseded_by"]] == [second]
    assert "superseded_by" not in shaped["decisions"][0]  # the other sections' lines keep their shape
    # once the report reaches the late correction, the action is closed and listed too
    later = build_report(store, since=since)
    assert later.open == [] and _refs(later.superseded) == [old_blocker, first, blocker, action]
    assert _refs(later.superseded[-1].superseded_by) == [late]


def test_a_correction_across_projects_is_in_both_projects_reports(backend):
    store = backend
    sat, web = store.start_attempt("sat", author="a"), store.start_attempt("web", author="b")
    since = _tick()
    sat_decision = _note(store, "Luby restarts", "decision", attempt=sat.id)
    web_decision = _note(store, "Cache for a day", "decision", attempt=web.id)
    web_fix = _note(store, "Luby hurts the web solver too", "finding", attempt=web.id, supersedes=(sat_decision,))
    sat_fix = _note(store, "Cache for an hour", "decision", attempt=sat.id, supersedes=(web_decision,))
    until = _tick()
    on_sat = build_report(store, project="sat", since=since, until=until)
    # sat's decision is superseded (by web's note, which sat's report names), and sat's note that
    # corrects web's decision is sat's live decision, citing what it corrects
    assert _refs(on_sat.decisions) == [sat_fix] and on_sat.done == []
    assert [(ln.ref, _refs(ln.superseded_by)) for ln in on_sat.superseded] == [
        (sat_decision, [web_fix]),
        (web_decision, [sat_fix]),
    ]
    assert on_sat.superseded[1].project == "web" and on_sat.written == 2 and on_sat.other_kinds == []


def test_a_viewer_sees_no_trace_of_a_correction_they_may_not_see(backend):
    store = backend
    store.set_project("alice:secret", private=True, owner="alice")
    public = store.start_attempt("shared", author="bob")
    secret = store.start_attempt("alice:secret", author="alice")
    since = _tick()
    decision = _note(store, "Public decision", "decision", attempt=public.id, author="bob")
    blocker = _note(store, "Public blocker", "blocker", attempt=public.id, author="bob")
    hidden_note = _note(store, "Secret blocker", "blocker", attempt=secret.id, author="alice")
    hidden_fix = _note(
        store, "Secret correction", "decision", attempt=secret.id, author="alice", supersedes=(decision, blocker)
    )
    # a public note naming a hidden one in supersedes: the hidden one is never named to bob
    public_fix = _note(
        store, "Public correction", "finding", attempt=public.id, author="bob", supersedes=(hidden_note,)
    )
    until = _tick()
    bob = build_report(store, since=since, until=until, viewer=Viewer("bob"))
    # for bob the old notes are live: the decision is a decision, the blocker open
    assert _refs(bob.decisions) == [decision] and _refs(bob.open) == [blocker]
    assert _refs(bob.done) == [public_fix] and bob.superseded == [] and bob.written == 3
    for text in (render_markdown(bob), render_html(bob), json.dumps(bob.to_dict())):
        assert hidden_fix not in text and hidden_note not in text and "Secret" not in text
        assert "superseded by" not in text and "superseded_by" not in text
    owner = build_report(store, since=since, until=until)
    assert [(ln.ref, _refs(ln.superseded_by)) for ln in owner.superseded] == [
        (decision, [hidden_fix]),
        (blocker, [hidden_fix]),
        (hidden_note, [public_fix]),
    ]
    assert owner.open == [] and _refs(owner.decisions) == [hidden_fix]
