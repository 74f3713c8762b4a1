"""Le double carré: the facts of its rules page's "What a seat can infer", checked on
true states and on samples (`tests/games/fact_checks.py`)."""

from __future__ import annotations

import math
import random
from collections import Counter
from itertools import combinations

import pytest

import games
from example_bots.double_carre import DoubleCarreHeuristic
from tests.games.fact_checks import Fact, check_facts, positions
from tests.games.test_sample_uniformity import P_MIN, chi_square_p

GAME = games.get("double-carre")


def facts(view: dict) -> list[Fact]:
    """What the view proves about hidden cards, from the rules alone."""
    other = 1 - view["seat"]
    taken = [(t["turn"], seat, c) for t in view["taken"] for seat in (0, 1) for c in t["cards"][seat]]
    revealed = {c for _, _, c in taken} | set(view["revealed"])
    out: list[Fact] = []
    for card in {c for pair in view["draw"] for c in pair} - revealed:
        out.append((f"{card} of the draw is in the stock", lambda s, c=card: c in s.stock))
    for card in revealed:
        out.append((f"{card}, revealed, left the stock", lambda s, c=card: c not in s.stock))
    last = {c: (seat, turn) for turn, seat, c in taken}
    for card, (seat, turn) in last.items():
        if seat == other:
            def held(s, c=card, t=turn):
                piles = [*s.hands[other], *s.out[other], *(x for p in s.set_aside[other] for x in p)]
                return c in piles or (s.pending == "take" and c in s.revealed)
            out.append((f"{card}, taken by {other} on turn {turn}, is among its cards", held))
    return out


@pytest.mark.parametrize("advanced", [False, True])
@pytest.mark.parametrize("bot", [None, DoubleCarreHeuristic()], ids=["random", "heuristic"])
def test_the_facts_hold_in_the_true_state_and_in_every_sample(advanced, bot):
    rng, checked, draws = random.Random(31), 0, 0
    for state, _ in positions(GAME, 2, {"advanced": advanced}, 12, bot):
        for seat in (0, 1):
            found = facts(state.view(seat))
            draws += any("draw" in name for name, _ in found)
            checked += check_facts(GAME, state, seat, found, 4, rng)
    assert checked > 500 and draws > 50


def test_the_draw_cards_stay_in_the_stock_and_the_rest_of_it_is_uniform():
    """Turn 3, after the take: the stock holds its 4 cards. The draw's cards never
    revealed must be among them; the other places go to the cards never revealed,
    each set equally often (every such set leaves as many ways to fill the rest)."""
    for seed in range(500):
        state = GAME.new(seed=seed)
        rng = random.Random(seed)
        while not (state.turn == 3 and state.pending == "discard"):
            state.apply(rng.choice(state.legal_actions()))
        view = state.view(state.to_act)
        seen = {c for t in view["taken"] for cards in t["cards"] for c in cards}
        forced = {c for pair in view["draw"] for c in pair} - seen
        if len(forced) >= 2:
            break
    else:
        raise AssertionError("no deal keeps two draw cards in the stock until turn 3")
    mine = set(view["hand"]) | set(view["discards"])
    free = [str(c) for c in GAME.new(seed=0).deck if str(c) not in mine | seen | forced]
    k = 4 - len(forced)
    cells = math.comb(len(free), k)
    n = 60 * cells
    observed = Counter(frozenset(GAME.sample(view, i).stock) for i in range(n))
    assert all(forced <= cell for cell in observed)
    expected = {frozenset(forced | set(rest)): 1 / cells for rest in combinations(free, k)}
    assert chi_square_p(observed, expected, n) > P_MIN
