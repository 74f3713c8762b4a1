"""`sample()` draws every consistent placement of the unseen cards equally often (docs/api.md §5).

Small positions, where the consistent placements can be counted here by
hand, independently of the samplers: a chi-square test compares how often
each outcome is drawn with its exact probability. Where the rules reveal
nothing beyond card counting the outcomes are equally likely; where they do
(a suit not followed, revealed cards that cannot be in the stock) the
expected frequencies come from counting the placements each outcome allows.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from itertools import combinations, permutations

import games
from games.cards import deck_32, deck_52
from games.double.cards import SUITS_OF, double_sets, suit_of
from games.soupe_gertrude.cards import MONEY, full_deck

#: a fixed-seed test is deterministic; this only says how far from the expected counts
#: a sampler may be before the test calls it biased
P_MIN = 1e-4


def chi_square_p(observed: Counter, expected: dict, n: int) -> float:
    """The p-value of observed counts against expected probabilities (Wilson–Hilferty)."""
    assert set(observed) <= set(expected), f"drawn but impossible: {set(observed) - set(expected)}"
    stat = sum((observed[k] - n * p) ** 2 / (n * p) for k, p in expected.items())
    df = len(expected) - 1
    z = ((stat / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    return 0.5 * math.erfc(z / math.sqrt(2))


def draws(game, view, n: int, outcome) -> Counter:
    return Counter(outcome(game.sample(view, seed)) for seed in range(n))


def test_duck_soup_deals_the_other_hand_and_the_stock_uniformly():
    game = games.get("duck-soup")
    state = game.new(seed=3, options={"deal_only": True})
    while state.view(0)["stock"] > 2:  # late in the low phase: two cards left to draw
        state.apply(state.legal_actions()[0])
    seat = state.to_act
    view = state.view(seat)
    seen = set(view["hand"]) | {p["card"] for h in view["history"] for p in h["cards"]}
    seen |= {p["card"] for p in view["trick"]}
    unseen = [c for c in deck_52() if c not in seen]
    cells = list(permutations(unseen, 2))  # the stock, top first; the rest is the other hand
    n = 40 * len(cells)
    observed = draws(game, view, n, lambda s: tuple(s.deck[s.top:]))
    assert chi_square_p(observed, {c: 1 / len(cells) for c in cells}, n) > P_MIN


def double_voids(view: dict) -> dict[int, set[str]]:
    """Suits a seat did not follow with a normal motif (rules: it holds none)."""
    voids: dict[int, set[str]] = {s: set() for s in range(view["seats"])}
    for trick in view["history"]:
        for play in trick["plays"][1:]:
            suit = suit_of(play["motif"])
            if trick["led_suit"] is not None and suit is not None and suit != trick["led_suit"]:
                voids[play["seat"]].add(trick["led_suit"])
    return voids


def test_double_respects_the_suits_not_followed_and_is_uniform_otherwise():
    game = games.get("double")
    for seed in range(2000):  # the first seeded deal where two seats showed different voids
        state, rng = game.new(3, seed, {"rounds": [3]}), random.Random(seed)
        while len(state.view(0)["history"]) < 2:
            state.apply(rng.choice(state.legal_actions()))
        view = state.view(state.to_act)
        voids = double_voids(view)
        others = [s for s in range(3) if s != view["seat"]]
        if all(voids[s] for s in others) and voids[others[0]] != voids[others[1]]:
            break
    else:
        raise AssertionError("no position with two different voids")
    seen = [*view["hand"], view["trump_card"], *(p["card"] for h in view["history"] for p in h["plays"])]
    unseen = list(double_sets(1))
    for card in seen:
        unseen.remove(card)
    cells = [(a, b) for a in unseen for b in unseen if a != b
             and not SUITS_OF[a] & voids[others[0]] and not SUITS_OF[b] & voids[others[1]]]
    assert len(cells) < len(unseen) * (len(unseen) - 1)  # the voids rule placements out
    n = 40 * len(cells)
    observed = draws(game, view, n, lambda s: (s.hands[others[0]][0], s.hands[others[1]][0]))
    assert chi_square_p(observed, {c: 1 / len(cells) for c in cells}, n) > P_MIN


def test_double_carre_weighs_the_other_discards_by_the_placements_they_leave():
    """Turn 1, the other seat (active) has discarded. The two cards it took cannot be
    in the stock, so they lie in its hand or its discards, and a discard pair holding
    k of them leaves C(18 + k, 6 + k) ways to fill the rest of its hand."""
    game = games.get("double-carre")
    state = game.new(seed=4, options={"deck": [str(c) for c in deck_32()], "first": 1})
    state.apply(state.legal_actions()[0])  # seat 1 takes two
    state.apply(state.legal_actions()[0])  # and discards two
    view = state.view(0)
    assert view["pending"] == "discard" and view["to_act"] == 0
    taken = set(view["taken"][0]["cards"][1])
    unplaced = [c for c in deck_32() if c not in set(view["hand"])]
    weight = {frozenset(p): math.comb(18 + len(taken & set(p)), 6 + len(taken & set(p)))
              for p in combinations(unplaced, 2)}
    total = sum(weight.values())
    n = 12_000
    observed = draws(game, view, n, lambda s: frozenset(s.out[1]))
    assert chi_square_p(observed, {k: w / total for k, w in weight.items()}, n) > P_MIN
    assert observed[frozenset(taken)] > observed.most_common()[-1][1]


def test_soupe_gertrude_deals_the_other_purse_from_the_money_left():
    """At the first decision the other seat's four cards are money: each multiset comes
    up as often as the copies left allow (a hypergeometric draw)."""
    game = games.get("soupe-gertrude")
    state = game.new(2, 8)
    view = state.view(0)
    left = Counter(c for c in full_deck(False) if c in MONEY) - Counter(view["hand"])
    size = sum(left.values())
    cells = {}
    for hand in set(combinations(sorted(left.elements()), 4)):
        ways = math.prod(math.comb(left[c], k) for c, k in Counter(hand).items())
        cells[hand] = ways / math.comb(size, 4)
    assert math.isclose(sum(cells.values()), 1.0)
    n = 4000
    observed = draws(game, view, n, lambda s: tuple(sorted(s.hands[1])))
    assert chi_square_p(observed, cells, n) > P_MIN
