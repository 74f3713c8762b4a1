"""Duck Soup: its rules page says a seat can infer nothing beyond counting cards. Checked
here: the hidden cards are exactly the unseen ones, on true states and samples, and a
play never narrows them (`tests/games/fact_checks.py`)."""

from __future__ import annotations

import random

import pytest

import games
from example_bots.duck_soup import DuckSoupHeuristic
from games.cards import deck_52
from tests.games.fact_checks import Fact, check_facts, positions

GAME = games.get("duck-soup")


def facts(view: dict) -> list[Fact]:
    """The other hand and the stock hold exactly the cards this seat has not seen."""
    seen = set(view["hand"]) | {p["card"] for p in view["trick"]}
    seen |= {p["card"] for h in view["history"] for p in h["cards"]}
    unseen = {str(c) for c in deck_52()} - seen
    other = 1 - view["seat"]
    return [("the other hand and the stock hold the unseen cards",
             lambda s: {str(c) for c in [*s.hands[other], *s.deck[s.top:]]} == unseen)]


@pytest.mark.parametrize("edition", ["fr", "de"])
@pytest.mark.parametrize("bot", [None, DuckSoupHeuristic()], ids=["random", "heuristic"])
def test_the_hidden_cards_are_the_unseen_ones_in_the_true_state_and_in_every_sample(edition, bot):
    rng, checked = random.Random(31), 0
    for state, seat in positions(GAME, 2, {"deal_only": True, "edition": edition}, 3, bot, every=3):
        checked += check_facts(GAME, state, seat, facts(state.view(seat)), 2, rng)
    assert checked > 20
