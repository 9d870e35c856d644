"""The ranking rule for superseded notes (services/superseding.py), on cards alone: every ordering
of corrections, and the worst list within the limits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.model.note import Card
from notewell.services.superseding import successors_first


def _card(i: int, later: list[int]) -> Card:
    return Card(
        id=f"nte_{i:010d}",
        title=str(i),
        kind=None,
        tags=[],
        builds_on=[],
        model=None,
        author=None,
        created_at="",
        updated_at="",
        snippet="",
        score=None,
        superseded_by=[f"nte_{j:010d}" for j in later],
    )


# A card's successors are later notes (higher numbers): the relation has no rings, as the store's.
lists = st.integers(0, 30).flatmap(
    lambda n: st.tuples(
        st.permutations(range(n)),
        st.lists(st.lists(st.integers(0, 40), max_size=3), min_size=n, max_size=n),
    )
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(lists)
def test_each_card_comes_after_its_successors_in_the_list_and_the_rest_keep_their_order(given_lists):
    order, links = given_lists
    cards = [_card(i, sorted({j for j in links[i] if j > i})) for i in order]
    out = successors_first(cards)
    assert sorted(c.id for c in out) == sorted(c.id for c in cards)  # the same cards, each once
    at = {c.id: k for k, c in enumerate(out)}
    for c in cards:
        for s in c.superseded_by:
            if s in at:
                assert at[s] < at[c.id]
    free = [c.id for c in cards if not any(s in at for s in c.superseded_by)]
    assert [c.id for c in out if c.id in set(free)] == free
    if not any(c.superseded_by for c in cards):
        assert out == cards


def test_right_after_its_correction():
    cards = [_card(0, [2]), _card(1, []), _card(2, []), _card(3, [])]
    assert [c.title for c in successors_first(cards)] == ["1", "2", "0", "3"]
    chain = [_card(0, [1]), _card(1, [2]), _card(2, [])]
    assert [c.title for c in successors_first(chain)] == ["2", "1", "0"]


@pytest.mark.slow
def test_a_chain_of_a_thousand_in_reverse_is_linear():
    # Every card waits for the next: all are held until the last, then each frees one.
    # (The first version scanned every held card at each step: quadratic.)
    from tests.conftest import cpu_seconds

    def timed(n: int) -> float:
        cards = [_card(i, [i + 1] if i + 1 < n else []) for i in range(n)]
        out = successors_first(cards)
        assert [c.title for c in out] == [str(i) for i in reversed(range(n))]
        return cpu_seconds(lambda: successors_first(cards))

    small, large = timed(1000), timed(10_000)
    assert large < 0.5 and large < 30 * max(small, 1e-3)
