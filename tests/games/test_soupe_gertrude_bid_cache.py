"""Soupe & Gertrude: the bid actions a match builds once and lists again (`_every_bid`).

The cache has no invalidation (the bids depend on `max_bid` alone), so these
check what could go wrong: a list that drifts from the rule's bids after
raises, a void opening or a new turn, and one list's edits reaching the next.
"""

from __future__ import annotations

from tests.games.test_soupe_gertrude_support import act, new, sell


def expected_bids(state) -> list[dict]:
    """The auction's actions built from scratch, as the rules page lists them."""
    high, top = state.auction["high"], state.max_bid
    if high is None:
        return [{"bid": n} for n in range(top + 1)]
    return [{"pass": True}] + [{"bid": n} for n in range(high + 1, top + 1)]


def test_bid_lists_match_the_rule_through_raises_a_void_opening_and_a_new_turn():
    state = new(seats=3, top=["tomate", "oseille-1", "oseille-5"])
    act(state, 0, {"pass": True})
    act(state, 0, state.legal_actions()[0])
    assert state.legal_actions() == expected_bids(state)
    act(state, 0, {"bid": 2})
    assert state.legal_actions() == expected_bids(state)
    act(state, 1, {"bid": 5})
    assert state.legal_actions() == expected_bids(state)
    act(state, 2, {"bid": state.max_bid})  # above its hand: void, and seat 2 is out
    assert 2 in state.eliminated
    assert state.legal_actions() == expected_bids(state)
    act(state, 0, {"pass": True})
    while state.pending == "pay":
        state.apply(state.legal_actions()[0])
    while state.pending != "bid" and not state.is_over:
        state.apply(state.legal_actions()[0])
    assert state.legal_actions() == expected_bids(state)  # the next turn opens afresh


def test_a_void_opening_lists_the_opening_again_for_the_next_seat():
    state = new(seats=3, top=["tomate", "oseille-1", "oseille-5"])
    sell(state, winner=1, bid=1)
    drawer = state.drawer
    act(state, drawer, {"pass": True})
    act(state, drawer, state.legal_actions()[0])
    first = state.legal_actions()
    act(state, drawer, {"bid": state.max_bid})  # void: the next seat opens
    assert state.auction["high"] is None
    again = state.legal_actions()
    assert again == first == expected_bids(state)
    again[0] = {"bid": -1}  # a caller's own list is its own
    assert state.legal_actions() == expected_bids(state)
