"""The builds_on graph and project briefs, on both stores."""

from __future__ import annotations

import pytest

from notewell import InvalidArgumentError, InvalidIdError, NotFoundError, Viewer


def _note(store, title, *, builds_on=(), kind=None, attempt=None):
    head = [f"title: {title}"]
    if kind:
        head.append(f"kind: {kind}")
    if builds_on:
        head.append("builds_on: [" + ", ".join(builds_on) + "]")
    return store.add_note("---\n" + "\n".join(head) + "\n---\nbody of " + title, attempt=attempt)


def test_links_both_ways_to_a_depth_without_loops(backend):
    att = backend.start_attempt("graph", author="g")
    a = _note(backend, "A")
    b = _note(backend, "B", builds_on=[a.id, att.id, "nte_0000000000"])
    c = _note(backend, "C", builds_on=[b.id])
    # A loop made by hand: A now builds on C.
    backend.edit_note(a.id, f"---\ntitle: A\nbuilds_on: [{c.id}]\n---\nbody")
    one = backend.links(b.id)
    assert [n["id"] for n in one["builds_on"]] == [a.id, att.id, "nte_0000000000"]
    assert one["builds_on"][1]["kind"] == "attempt" and one["builds_on"][2]["missing"] is True
    assert [n["id"] for n in one["built_on_by"]] == [c.id] and "built_on_by" not in one["built_on_by"][0]
    deep = backend.links(b.id, depth=5)
    up = deep["builds_on"][0]  # A -> C -> B (again)
    assert up["builds_on"][0]["id"] == c.id
    assert up["builds_on"][0]["builds_on"][0] == {"id": b.id, "title": "B", "kind": None, "again": True}
    down = deep["built_on_by"][0]  # C <- A <- B (again)
    assert down["id"] == c.id and down["built_on_by"][0]["id"] == a.id
    assert down["built_on_by"][0]["built_on_by"][0]["again"] is True
    with pytest.raises(NotFoundError):
        backend.links("nte_0000000000")
    with pytest.raises(InvalidIdError):
        backend.links("../etc")
    with pytest.raises(InvalidArgumentError):
        backend.links(b.id, depth=0)


def test_brief_puts_the_newest_digest_first_and_lists_what_it_misses(backend):
    att = backend.start_attempt("p:Big Project", author="p")
    old = [_note(backend, f"finding {i}", attempt=att.id) for i in range(3)]
    digest = _note(backend, "Where we are", kind="digest", builds_on=[n.id for n in old[:2]], attempt=att.id)
    late = _note(backend, "late finding", attempt=att.id)
    _note(backend, "elsewhere")
    brief = backend.brief("p:big-project", recent=3)
    assert brief["project"]["name"] == "p:big-project" and brief["project"]["notes"] == 5
    assert brief["digest"]["id"] == digest.id
    assert [c["id"] for c in brief["recent"]] == [late.id, old[2].id, old[1].id]
    assert {c["id"] for c in brief["uncovered"]} == {late.id, old[2].id} and brief["uncovered_count"] == 2
    backend.set_project("p:big-project", private=True, owner="p")
    with pytest.raises(NotFoundError):
        backend.brief("p:big-project", viewer=Viewer("someone"))
    assert backend.brief("p:big-project", viewer=Viewer("p"))["digest"]["id"] == digest.id
    with pytest.raises(NotFoundError):
        backend.brief("no-such-project")
    empty = backend.start_attempt("quiet", author="q")
    got = backend.brief("quiet")
    assert got["digest"] is None and got["recent"] == [] and got["uncovered"] == [] and empty.id


def test_shared_ancestors_are_expanded_once(backend):
    import time

    notes = []
    for i in range(24):
        notes.append(_note(backend, f"N{i}", builds_on=[n.id for n in notes]))
    started = time.monotonic()
    graph = backend.links(notes[-1].id, depth=10)
    assert time.monotonic() - started < 5

    def count(nodes):
        return sum(1 + count(n.get("builds_on", [])) for n in nodes)

    expanded = []

    def walk(nodes):
        for n in nodes:
            if "builds_on" in n:
                expanded.append(n["id"])
                walk(n["builds_on"])

    walk(graph["builds_on"])
    assert len(expanded) == len(set(expanded)) == 23
    assert count(graph["builds_on"]) < 24 * 24


def test_an_id_the_viewer_may_not_see_looks_like_one_nothing_answers_to(backend):
    # Hidden ids were dropped from builds_on while ids nothing answers to were marked missing,
    # so bob, naming both in a note of his, told alice's private note apart from no note at all.
    from notewell.model.visibility import Viewer

    bob = Viewer(handle="bob")
    backend.set_project("alice:secret", private=True, owner="alice")
    attempt = backend.start_attempt("alice:secret", author="alice")
    secret = backend.add_note("# plan\n\nprivate", attempt=attempt.id).id
    nowhere = "nte_zzzzzzzzzz"
    mine = backend.add_note(f"---\ntitle: mine\nbuilds_on: [{secret}, {nowhere}, {attempt.id}]\n---\nb").id
    tree = backend.links(mine, viewer=bob)
    assert tree["builds_on"] == [
        {"id": secret, "missing": True},
        {"id": nowhere, "missing": True},
        {"id": attempt.id, "missing": True},
    ]
    # What builds on a note is not named in its text: a hidden note there is left out, not marked.
    base = backend.add_note("# base\n\npublic").id
    backend.add_note(f"---\ntitle: on base\nbuilds_on: [{base}]\n---\nx", attempt=attempt.id)
    assert backend.links(base, viewer=bob)["built_on_by"] == []
    assert [n["id"] for n in backend.links(base)["built_on_by"]] != []  # the owner sees it


def test_a_tree_stops_at_max_links_ends_and_says_it_was_cut(backend):
    # A note naming 50,000 notes it builds on made a tree of 50,000 ends (0.9 s, 2 MB to send),
    # each looked up. Now at most MAX_LINKS ends, half each way, and the root says it was cut.
    from notewell.services import links as links_module

    ids = [f"nte_{i:010d}" for i in range(3 * links_module.MAX_LINKS)]
    big = backend.add_note("---\ntitle: big\nbuilds_on: [" + ", ".join(ids) + "]\n---\nb").id
    tree = backend.links(big)
    assert len(tree["builds_on"]) == links_module.MAX_LINKS // 2 and tree["truncated"] is True
    assert [n["id"] for n in tree["builds_on"]] == ids[: links_module.MAX_LINKS // 2]
    small = backend.add_note(f"---\ntitle: small\nbuilds_on: [{big}]\n---\nb").id
    assert "truncated" not in backend.links(small)  # depth 1: big is one end, not walked
