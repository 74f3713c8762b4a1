"""`BoundedDeal`: deals uniform among those within value bounds, by either method."""

from __future__ import annotations

from collections import Counter
from itertools import permutations

import pytest

from games.rng import Rng
from games.soupe_gertrude.bounded import BoundedDeal, Unbounded, _Exact
from tests.games.test_sample_uniformity import P_MIN, chi_square_p

VALUES = {"x": 1, "y": 5, "z": 2}
CARDS = ["x", "x", "y", "z", "z", "z"]
#: zones 0-1 a bounded pair (any card), zone 2 a single card that is x or z, zone 3 the rest
SIZES, ALLOWED = [1, 1, 1, 3], [None, None, {"x", "z"}, None]
BOUNDS = [([0, 1], 6, None), ([2], 0, 1)]


def outcome(zones) -> tuple:
    return tuple(sorted(zones[0] + zones[1])), zones[2][0]


def exact_odds() -> dict:
    """Every deal of the six (labelled) cards, counted by brute force."""
    counts: Counter = Counter()
    for order in permutations(range(6)):
        cards = [CARDS[i] for i in order]
        pair, single = cards[:2], cards[2]
        if single in ALLOWED[2] and sum(VALUES[c] for c in pair) >= 6 and VALUES[single] <= 1:
            counts[tuple(sorted(pair)), single] += 1
    total = sum(counts.values())
    return {k: n / total for k, n in counts.items()}


@pytest.mark.parametrize("method", ["rejection", "exact"])
def test_both_methods_draw_each_deal_within_the_bounds_equally_often(method):
    deal = BoundedDeal(CARDS, SIZES, ALLOWED, BOUNDS, VALUES)
    draw = deal.draw if method == "rejection" else _Exact(deal).draw
    expected, n = exact_odds(), 4000
    observed = Counter(outcome(draw(Rng(i, "test"))) for i in range(n))
    assert chi_square_p(observed, expected, n) > P_MIN


def test_bounds_no_deal_meets_are_refused():
    with pytest.raises(Unbounded):
        BoundedDeal(CARDS, SIZES, ALLOWED, [([0, 1], 11, None)], VALUES).draw(Rng(0, "test"))


def test_a_seed_draws_the_same_deal_whatever_was_drawn_before():
    """The exact method, once built for one draw's fallback, must not change the next."""
    bounds = [([0, 1], 7, None)]  # only y + z: 1 pair in 5 fits, 32 misses in a row are rare
    shared = BoundedDeal(CARDS, SIZES, ALLOWED, bounds, VALUES)
    assert not shared.exact_first
    seed = 0
    while not shared._exact:  # draw until a fallback has built the exact method
        shared.draw(Rng(seed, "t"))
        seed += 1
        assert seed < 100_000
    seeds = range(seed, seed + 100)
    fresh = [BoundedDeal(CARDS, SIZES, ALLOWED, bounds, VALUES).draw(Rng(i, "t")) for i in seeds]
    assert [shared.draw(Rng(i, "t")) for i in seeds] == fresh
