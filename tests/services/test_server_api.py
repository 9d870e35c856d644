"""The one API every interface calls: the local owner (the CLI, MCP over stdio) and token callers."""

from __future__ import annotations

import pytest

from notewell import ForbiddenError, InvalidArgumentError, UnauthorizedError
from notewell.model.access_tokens import Token
from notewell.services.server_api import MAX_LIMIT, Caller, ServerAPI

OWNER = Caller(local=True)
ALICE = Caller(token=Token("alice"))
READER = Caller(token=Token("rita", read_only=True))


def test_the_local_owner_names_the_author_and_a_token_writes_under_its_own(backend):
    api = ServerAPI(backend)
    assert api.add_note(OWNER, "# a\n\nx", author="ada")["author"] == "ada"
    assert api.add_note(ALICE, "# b\n\ny")["author"] == "alice"
    assert api.add_note(ALICE, "# c\n\nz", author="alice")["author"] == "alice"
    with pytest.raises(ForbiddenError, match="its own name"):
        api.add_note(ALICE, "# d\n\nw", author="bob")
    with pytest.raises(ForbiddenError):
        api.add_note(READER, "# e\n\nv")
    with pytest.raises(UnauthorizedError):
        api.add_note(Caller(), "# f\n\nu")


def test_the_owner_has_the_stores_bounds_and_a_remote_caller_the_servers(backend):
    api = ServerAPI(backend)
    api.add_note(OWNER, "# pool\n\nconnection pool")
    assert api.search_notes(OWNER, "pool", limit=MAX_LIMIT + 1)["cards"]
    with pytest.raises(InvalidArgumentError, match="limit"):
        api.search_notes(ALICE, "pool", limit=MAX_LIMIT + 1)
    long_query = "pool " * 250  # 1,250 characters: over the servers' bound, under the store's
    assert api.search_notes(OWNER, long_query)["cards"]
    with pytest.raises(Exception, match="characters"):
        api.search_notes(ALICE, long_query)


def test_project_settings_and_the_embedding_backlog_are_the_owners(backend):
    api = ServerAPI(backend)
    assert api.set_project(OWNER, "alice:infra", private=True, owner="alice")["private"] is True
    with pytest.raises(ForbiddenError):
        api.set_project(ALICE, "alice:infra", private=False)
    with pytest.raises(ForbiddenError):
        api.embed_pending(ALICE)


def test_summary_history_and_reads_through_the_api(backend):
    api = ServerAPI(backend)
    note = api.add_note(OWNER, "# t\n\none")
    api.edit_note(OWNER, note["id"], "# t\n\ntwo", author="ada")
    assert [r["revision"] for r in api.history(OWNER, note["id"])["revisions"]] == [1, 2]
    assert api.set_summary(OWNER, note["id"], "the second text")["summary"] == "the second text"
    attempt = api.start_attempt(OWNER, "alice:infra", author="ada")
    api.get_note(OWNER, note["id"], working_attempt_id=attempt["id"])
    assert [r["note_id"] for r in api.attempt_reads(OWNER, attempt["id"])["reads"]] == [note["id"]]
    assert api.resolve(OWNER, note["id"]) == note["id"]


@pytest.mark.slow
def test_the_not_embedded_count_is_kept_from_a_viewer_kept_from_a_private_project(backend):
    api = ServerAPI(backend)
    api.set_project(OWNER, "owen:secret", private=True, owner="owen")
    attempt = api.start_attempt(OWNER, "owen:secret", author="owen")
    api.add_note(OWNER, "# hidden\n\nprivate work in progress", attempt_id=attempt["id"])
    # The store-wide count would tell anyone how much is being written in the private project.
    assert "not_embedded" not in api.search_notes(Caller(), "work", mode="semantic")
    assert "not_embedded" not in api.search_notes(ALICE, "work", mode="hybrid")
    assert api.search_notes(OWNER, "work", mode="semantic")["not_embedded"] == 1
    owen = Caller(token=Token("owen"))
    assert api.search_notes(owen, "work", mode="semantic")["not_embedded"] == 1  # sees every project


def test_a_filter_names_a_bounded_number_of_kinds_or_tags(backend):
    from notewell.search.filters import MAX_FILTER_VALUES

    assert backend.list_notes(kind=["finding"] * MAX_FILTER_VALUES) == []
    for name in ("kind", "tags"):
        with pytest.raises(InvalidArgumentError, match="at most"):
            backend.search_notes("x", **{name: ["a"] * (MAX_FILTER_VALUES + 1)})


def test_a_note_embedded_while_the_search_ran_is_still_counted_as_not_seen(tmp_path, monkeypatch):
    # Two servers on one database: one embeds a note while the other searches. The search did
    # not see the note; counted only after it, the answer said nothing was missed.
    import notewell
    from notewell.search.embedders import HashEmbedder
    from notewell.services.searching import search

    with notewell.open(tmp_path / "notes", embedder=HashEmbedder()) as store:
        store.add_note("# lark\n\nsings at dawn")
        real = store.search_notes

        def racing(*args, **kwargs):
            cards = real(*args, **kwargs)
            store.embed_pending()  # the vector lands just after the search looked
            return cards

        monkeypatch.setattr(store, "search_notes", racing)
        answer = search(store, "lark", mode="semantic")
        assert answer.cards == [] and answer.not_embedded == 1
        assert search(store, "lark", mode="semantic").not_embedded == 0  # seen now: nothing missed


def test_several_writes_are_checked_at_once_and_none_spent(backend):
    from notewell import RateLimitedError
    from notewell.services.server_api import WriteLimiter

    api = ServerAPI(backend, limiter=WriteLimiter(rate=0.001, burst=10))
    api.check_writes(ALICE, 10)  # spends nothing: all ten still there
    for i in range(4):
        api.add_note(ALICE, f"# n{i}\n\nx")
    with pytest.raises(RateLimitedError, match="7 at once, retry in"):
        api.check_writes(ALICE, 7)
    api.check_writes(ALICE, 6)
    with pytest.raises(InvalidArgumentError, match="at most 10 at once"):
        api.check_writes(ALICE, 11)
    with pytest.raises(ForbiddenError):
        api.check_writes(READER, 2)
    api.check_writes(OWNER, 1000)  # the local owner has no rate


def test_a_remote_caller_may_ask_for_a_few_reports_at_once_and_then_one_every_few_seconds(backend):
    # A report reads every note the caller may see: anonymous callers together, and each token,
    # get REPORT_BURST at once; the local owner is never counted.
    from notewell.errors import RateLimitedError
    from notewell.services.server_api import REPORT_BURST, REPORT_RATE

    api = ServerAPI(backend)
    for _ in range(REPORT_BURST):
        api.report(Caller(), since="7d")
    with pytest.raises(RateLimitedError) as refused:
        api.report(Caller(), since="7d")
    assert "too many store-wide reads from 'anonymous callers'" in refused.value.message
    with pytest.raises(RateLimitedError):
        api.stale(Caller())  # stale work reads the whole store too: the same bucket
    assert 0 < refused.value.retry_after <= 1 / REPORT_RATE
    api.report(ALICE, since="7d")  # a token's own bucket
    for _ in range(3 * REPORT_BURST):
        api.report(OWNER, since="7d")
