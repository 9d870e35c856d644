"""Search spans all revisions (spec 002): a word or a meaning only an older revision has finds
its note, after every current match, on a card naming the revision; both stores alike."""

from __future__ import annotations

import pytest

import notewell
from notewell.model.visibility import Viewer


@pytest.fixture
def store(sbackend):
    return sbackend  # both stores, the hash embedder (conftest)


def _ids(cards):
    return [(c.id, c.matched_revision) for c in cards]


def test_a_word_only_an_older_revision_has_finds_the_note_after_current_matches(store):
    edited = store.add_note("# Cache plan\n\nThe quokka cache sits in front of redis.")
    current = store.add_note("# Quokka facts\n\nA quokka is a small marsupial.")
    store.edit_note(edited.id, "# Cache plan\n\nThe cache sits in front of memcached.")
    cards = store.search_notes("quokka")
    assert _ids(cards) == [(current.id, None), (edited.id, 1)]
    old = cards[1]
    assert "**quokka**" in old.snippet and old.score is None and old.title == "Cache plan"
    assert old.to_dict()["matched_revision"] == 1
    # The current text's words come back as current matches, never as the older revision.
    assert _ids(store.search_notes("memcached")) == [(edited.id, None)]
    assert _ids(store.search_notes("cache")) == [(edited.id, None)]
    # A second edit: the newest revision holding the word is the one named.
    store.edit_note(edited.id, "# Cache plan\n\nquokka again, then gone.")
    store.edit_note(edited.id, "# Cache plan\n\nno animals here.")
    assert _ids(store.search_notes("quokka")) == [(current.id, None), (edited.id, 3)]
    assert _ids(store.search_notes("redis")) == [(edited.id, 1)]
    # A full limit of current matches leaves no place for older ones.
    assert _ids(store.search_notes("quokka", limit=1)) == [(current.id, None)]


def test_older_revisions_obey_filters_privacy_and_deletes(store):
    run = store.start_attempt("owner-1:vault", author="owner-1")
    hidden = store.add_note("# secret\n\nplatypus migration notes", attempt=run.id)
    store.edit_note(hidden.id, "# secret\n\nnothing to see")
    store.set_project("owner-1:vault", private=True, owner="owner-1")
    public = store.add_note("---\nkind: finding\n---\n# open\n\nplatypus sightings")
    store.edit_note(public.id, "---\nkind: finding\n---\n# open\n\nsightings")
    assert _ids(store.search_notes("platypus", viewer=Viewer(handle="someone"))) == [(public.id, 1)]
    assert {c.id for c in store.search_notes("platypus", viewer=Viewer(handle="owner-1"))} == {hidden.id, public.id}
    assert _ids(store.search_notes("platypus", kind="finding")) == [(public.id, 1)]
    assert store.search_notes("platypus", kind="blocker") == []
    store.delete_note(public.id)
    assert _ids(store.search_notes("platypus", viewer=Viewer(handle="someone"))) == []


def test_the_meaning_of_an_older_revision_finds_the_note_after_current_ones(store):
    edited = store.add_note("# plan\n\nzeppelin mooring mast")
    store.embed_pending()
    store.edit_note(edited.id, "# plan\n\nsubmarine dive depth")
    store.embed_pending()  # its old vectors are kept as revision 1's
    other = store.add_note("# airship\n\nzeppelin mooring towers")
    store.embed_pending()
    cards = store.search_notes("zeppelin mooring mast", mode="semantic", limit=5)
    # The hash embedder has no floor: every current note is a match first.
    assert [c.matched_revision for c in cards] == [None, None]
    assert {c.id for c in cards} == {edited.id, other.id}


def test_a_floor_leaves_room_for_older_meanings(store, monkeypatch):
    from notewell.search.embedders import HashEmbedder

    monkeypatch.setattr(HashEmbedder, "similarity_floor", 0.5, raising=False)
    edited = store.add_note("# plan\n\nzeppelin mooring mast")
    store.add_note("# unrelated\n\nbanana bread recipe")
    store.embed_pending()
    store.edit_note(edited.id, "# plan\n\nsubmarine dive depth")
    store.embed_pending()
    cards = store.search_notes("zeppelin mooring mast", mode="semantic")
    assert _ids(cards) == [(edited.id, 1)]
    # Scoreless: it comes after every current match, whatever its cosine.
    assert cards[0].mode == "semantic" and cards[0].score is None and "zeppelin" in cards[0].snippet
    assert _ids(store.search_notes("zeppelin mooring mast", mode="hybrid")) == [(edited.id, 1)]
    both = store.search_notes("zeppelin mooring mast", mode="both")
    # Side by side, as "both" lists every note: once in the keyword list, once in the semantic one.
    assert _ids(both) == [(edited.id, 1)] * 2 and [c.mode for c in both] == ["keyword", "semantic"]


def test_revisions_never_embedded_are_embedded_later(store, monkeypatch):
    from notewell.search.embedders import HashEmbedder

    monkeypatch.setattr(HashEmbedder, "similarity_floor", 0.5, raising=False)
    note = store.add_note("# plan\n\nzeppelin mooring mast")
    store.edit_note(note.id, "# plan\n\nsubmarine dive depth")  # revision 1 never embedded
    store.edit_note(note.id, "# plan\n\nbanana bread recipe")  # nor revision 2
    assert store.pending_embeddings() == 1
    assert store.embed_pending() == {"embedded": 1, "pending": 0, "revisions": 2}  # the note, then revisions 2 and 1
    assert _ids(store.search_notes("zeppelin mooring mast", mode="semantic")) == [(note.id, 1)]
    assert _ids(store.search_notes("submarine dive depth", mode="semantic")) == [(note.id, 2)]
    assert store.embed_pending() == {"embedded": 0, "pending": 0, "revisions": 0}


def test_a_rebuilt_index_keeps_older_revisions_searchable(tmp_path):
    with notewell.open(tmp_path / "notes") as s:
        note = s.add_note("# plan\n\nthe wombat burrow")
        s.edit_note(note.id, "# plan\n\nthe burrow")
        s.reindex()
        assert _ids(s.search_notes("wombat")) == [(note.id, 1)]
    # An index deleted outright is made again from the folder, revision files included.
    for f in (tmp_path / "notes" / ".notewell").glob("index.db*"):
        f.unlink()
    with notewell.open(tmp_path / "notes") as s:
        assert _ids(s.search_notes("wombat")) == [(note.id, 1)]


def test_an_edit_outside_notewell_keeps_the_old_text_searchable(tmp_path):
    with notewell.open(tmp_path / "notes", watch=False) as s:
        note = s.add_note("# plan\n\nthe echidna spines")
        path = tmp_path / "notes" / s.get_note(note.id).path
        path.write_text("# plan\n\nthe spines\n", encoding="utf-8")
        s.refresh()
        assert _ids(s.search_notes("echidna")) == [(note.id, 1)]
        moved = path.with_name("moved.md")
        path.rename(moved)
        s.refresh()
        assert _ids(s.search_notes("echidna")) == [(note.id, 1)]  # a move keeps its history


def test_chinese_in_an_older_revision(store):
    note = store.add_note("# 计划\n\n缓存用袋鼠方案")
    store.edit_note(note.id, "# 计划\n\n缓存用新的方案")
    assert _ids(store.search_notes("袋鼠")) == [(note.id, 1)]


@pytest.mark.slow
def test_one_note_edited_many_times_crowds_out_no_other(store):
    other = store.add_note("# B\n\nthe narwhal tusk")
    store.edit_note(other.id, "# B\n\nthe tusk")
    busy = store.add_note("# A\n\nnarwhal 0")
    for i in range(1, 420):  # more matching revisions than the ranking window holds
        store.edit_note(busy.id, f"# A\n\nnarwhal {i}")
    store.edit_note(busy.id, "# A\n\nnothing")
    found = _ids(store.search_notes("narwhal", limit=10))
    assert sorted(found) == sorted([(other.id, 1), (busy.id, 420)])


@pytest.mark.slow
def test_older_results_are_ordered_without_figures_of_hidden_projects(tmp_path):
    def order(hidden_revisions):
        with notewell.open(tmp_path / f"s{hidden_revisions}", embedder=None) as s:
            for title, body in (("x", "alpha alpha alpha beta"), ("y", "alpha beta beta beta")):
                note = s.add_note(f"# {title}\n\n{body}")
                s.edit_note(note.id, f"# {title}\n\ngone")
            run = s.start_attempt("owner-1:vault", author="owner-1")
            for i in range(hidden_revisions):
                h = s.add_note(f"# h{i}\n\nbeta {i}", attempt=run.id)
                s.edit_note(h.id, f"# h{i}\n\nzzz {i}")
            s.set_project("owner-1:vault", private=True, owner="owner-1")
            return [c.title for c in s.search_notes("alpha beta", viewer=Viewer(handle="someone"))]

    assert order(0) == order(30)


def test_older_cards_are_scoreless_in_every_mode(store, monkeypatch):
    from notewell.search.embedders import HashEmbedder

    monkeypatch.setattr(HashEmbedder, "similarity_floor", 0.3, raising=False)
    edited = store.add_note("# plan\n\nzeppelin mooring mast")
    store.add_note("# other\n\nzeppelin hangar")
    store.embed_pending()
    store.edit_note(edited.id, "# plan\n\nsubmarine dive depth")
    store.embed_pending()
    for mode in ("keyword", "semantic", "both", "hybrid"):
        cards = store.search_notes("zeppelin mooring mast", mode=mode)
        older = [c for c in cards if c.matched_revision is not None]
        assert older and all(c.score is None for c in older), mode
        for found in ("keyword", "semantic", "hybrid"):  # "both": each list on its own
            listed = [c for c in cards if c.mode == found]
            assert [c.matched_revision is not None for c in listed] == sorted(
                c.matched_revision is not None for c in listed
            ), mode  # last in its list


def test_a_new_schema_version_keeps_the_vectors(tmp_path, monkeypatch):
    pytest.importorskip("numpy")
    from notewell.backends.sqlite import index as index_module
    from notewell.search.embedders import HashEmbedder

    with notewell.open(tmp_path / "notes", embedder=HashEmbedder()) as s:
        note = s.add_note("# plan\n\nzeppelin mooring mast")
        s.embed_pending()
        s.edit_note(note.id, "# plan\n\nsubmarine dive depth")
        s.embed_pending()
    monkeypatch.setattr(index_module, "SCHEMA_VERSION", index_module.SCHEMA_VERSION + 1)
    with notewell.open(tmp_path / "notes", embedder=HashEmbedder()) as s:
        assert s.pending_embeddings() == 0  # taken over, not embedded again
        assert s.last_sync.vectors_kept == 1
        assert s.embed_pending() == {"embedded": 0, "pending": 0, "revisions": 0}  # revision 1's too
        assert _ids(s.search_notes("zeppelin")) == [(note.id, 1)]


def test_reindex_keeps_older_revisions_vectors(tmp_path):
    pytest.importorskip("numpy")
    from notewell.search.embedders import HashEmbedder

    with notewell.open(tmp_path / "notes", embedder=HashEmbedder()) as s:
        note = s.add_note("# plan\n\nzeppelin mooring mast")
        for body in ("submarine dive", "banana bread", "walrus tusk"):
            s.edit_note(note.id, f"# plan\n\n{body}")
        assert s.embed_pending() == {"embedded": 1, "pending": 0, "revisions": 3}
        s.reindex()
        assert s.embed_pending() == {"embedded": 0, "pending": 0, "revisions": 0}


def test_a_search_that_waits_embeds_the_current_texts_only(store):
    note = store.add_note("# plan\n\nzeppelin mooring mast")
    store.edit_note(note.id, "# plan\n\nsubmarine dive depth")
    store.search_notes("submarine", mode="semantic", wait=True)
    assert store.pending_embeddings() == 0
    assert store.embed_pending()["revisions"] == 1  # revision 1 was left to the background
