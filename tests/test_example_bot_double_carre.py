"""DoubleCarreHeuristic: it builds groups, and beats RandomBot in duplicate play."""

from __future__ import annotations

import pytest

import games
from example_bots.double_carre import DoubleCarreHeuristic, base_value
from games.cards import deck_32
from games.double_carre import pattern
from sdk.play import run_matches

RANDOM = "example_bots.random:RandomBot"
HEURISTIC = "example_bots.double_carre:DoubleCarreHeuristic"


def test_base_value_orders_hands_like_the_rules():
    hands = [
        ["7S", "7H", "7D", "7C", "8S", "9S", "10S", "JS"],  # 4-1-1-1-1
        ["AS", "AH", "AD", "KS", "KH", "KD", "QS", "QH"],  # 3-3-2
        ["AS", "AH", "AD", "KS", "KH", "KD", "JS", "9D"],  # 3-3-1-1
        ["7S", "7H", "8S", "8H", "9S", "9H", "10S", "10H"],  # 2-2-2-2
    ]
    values = [base_value(h) for h in hands]
    assert values == sorted(values, reverse=True)
    assert [pattern(h) for h in hands][0] == [4, 1, 1, 1, 1]


def test_it_takes_the_pair_that_completes_a_group_and_discards_loose_cards():
    hand0 = ["7S", "7H", "7D", "8S", "9S", "10S", "JS", "QS"]
    hand1 = ["8H", "8D", "9H", "9D", "10H", "10D", "JH", "JD"]
    dealt = [c for pair in zip(hand0, hand1, strict=True) for c in pair]
    stock = ["KH", "7C", "AH", "QH"]
    rest = [str(c) for c in deck_32() if c not in dealt + stock]
    state = games.get("double-carre").new(options={"deck": dealt + stock + rest})
    bot = DoubleCarreHeuristic()
    take = bot.act(state.view(0), state.legal_actions())["take"]
    assert "7C" in take
    state.apply({"take": take})
    discard = bot.act(state.view(0), state.legal_actions())["discard"]
    assert not any(c.startswith("7") for c in discard)


@pytest.mark.parametrize("advanced", [False, True])
def test_it_beats_random_in_duplicate_play(advanced):
    # 500 deals measure 99% (see the report); 30 deals at 65% leave a wide margin
    records = run_matches("double-carre", [RANDOM, HEURISTIC], deals=30, seed=4,
                          options={"advanced": advanced})
    heuristic = records[1]
    assert heuristic.faults == 0
    assert heuristic.wins / heuristic.matches >= 0.65
