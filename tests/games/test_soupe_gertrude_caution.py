"""Soupe & Gertrude: the bids a page marks before a person picks them (`Game.caution`).

The mark is judged from the bidder's own view; these check that it names exactly
the bids the engine eliminates the bidder for, in every auction of seeded matches,
and that it needs nothing but that view.
"""

from __future__ import annotations

import copy
import random

import games

GAME = games.get("soupe-gertrude")


def auctions(seeds: range):
    """(state, seat) at each bid decision of seeded matches played with random actions."""
    for seed in seeds:
        state, rng, turns = GAME.new(2 + seed % 4, seed, {}), random.Random(seed), 0
        while not state.is_over and turns < 400:
            if state.view(state.to_act)["pending"] == "bid":
                yield state, state.to_act
            state.apply(rng.choice(state.legal_actions()))
            turns += 1


def test_a_bid_is_marked_exactly_when_the_engine_eliminates_its_bidder():
    checked = 0
    for state, seat in auctions(range(12)):
        view = state.view(seat)
        for action in state.legal_actions()[::7] + state.legal_actions()[-1:]:
            after = copy.deepcopy(state)
            after.apply(action)
            eliminated = seat in after.view(None)["eliminated"] and seat not in view["eliminated"]
            assert (GAME.caution(view, action) is not None) == eliminated, (action, view["hand_value"])
            checked += 1
    assert checked > 100


def test_the_mark_reads_the_bidders_own_view_only():
    state, seat = next(auctions(range(1)))
    view = state.view(seat)
    worth = view["hand_value"]
    assert GAME.caution({"hand_value": worth}, {"bid": worth}) is None
    assert "eliminated" in GAME.caution({"hand_value": worth}, {"bid": worth + 1})
    assert GAME.caution(state.view(None), {"bid": worth + 1}) is None  # no hand, no mark
    assert GAME.caution(view, {"pass": True}) is None
