"""Collusion does not pay (docs/api.md, the ladder), even when colluders know each other.

The attack as filed: throwaway bots on other accounts lose every deal to a weak "farmer" they
recognise (by its id, or by a signature in its play) and play their best against everyone
else; with the platform's matchmaker and ratings 24 of them lifted a strength-1 bot to #1.
Here a small version plays on the platform's store, matchmaker, rating worker and settling
(each rotation's winner drawn from the bots' strengths, Bradley–Terry; bench/collusion.py runs
the full size over many seeds): the farmer's pairs of accounts are flagged, their deals leave
the ratings, the farmer ends below the honest median, and no honest account is flagged.
"""

from __future__ import annotations

import random
import statistics

import pytest

from core import collusion
from tests.worker.ladder_helpers import house_bot, play_pairings
from worker.matchmaker import Candidate, Matchmaker, choose_tables

GAME = "duck-soup"
CYCLES = 70


@pytest.mark.slow
def test_throwaways_that_lose_only_to_a_farmer_are_flagged_and_their_deals_leave_the_ratings(store, counted_ids):
    strength: dict[str, float] = {}
    honest = [house_bot(store, f"honest{i}", GAME, owner=f"acct_honest{i}") for i in range(8)]
    strength.update(zip(honest, (0.5, 0.7, 1.4, 2.0, 2.8, 4.0, 5.6, 8.0), strict=True))
    farmer = house_bot(store, "farmer", GAME, owner="acct_farmer")
    strength[farmer] = 1.0
    throwaways = [house_bot(store, f"throwaway{i}", GAME, owner=f"acct_helper{i % 2}") for i in range(12)]
    strength.update((t, (2.0, 2.8, 4.0, 5.6)[i % 4]) for i, t in enumerate(throwaways))
    rng = random.Random(38)

    def outcome(seats: list[str]) -> list[int]:
        a, b = seats
        if farmer in seats and (a in throwaways or b in throwaways):
            return [1, 2] if a == farmer else [2, 1]  # the accomplice throws the rotation
        return [1, 2] if rng.random() < strength[a] / (strength[a] + strength[b]) else [2, 1]

    matchmaker = Matchmaker(store, per_game=8, game_names=[GAME], rng=random.Random(7))
    for _ in range(CYCLES):
        matchmaker.cycle()
        play_pairings(store, GAME, outcome)
    flags = store.collusion_flags(GAME)
    flagged = {a for key in flags for a in key.split("|")}
    assert {"acct_farmer|acct_helper0", "acct_farmer|acct_helper1"} <= set(flags), flags
    assert not {a for a in flagged if a.startswith("acct_honest")}, flags
    ordinal = {row["bot"]: row["rating"]["ordinal"] for row in store.rankings(GAME)}
    assert ordinal.get(farmer, 0.0) < statistics.median(ordinal[b] for b in honest), ordinal
    # the flagged pairs are never seated together again
    matchmaker.cycle()
    for pairing in store.pairings_in_play(GAME):
        assert not (farmer in pairing["bots"] and set(pairing["bots"]) & set(throwaways))


def test_a_pair_flagged_is_never_seated_together_and_a_crowding_account_waits():
    focus = Candidate("f", "acct_f", 25.0, 1.0, 0)
    helper = Candidate("h", "acct_h", 25.0, 1.0, 1)
    other = Candidate("o", "acct_o", 10.0, 1.0, 1)
    apart = frozenset({collusion.pair_key("acct_f", "acct_h")})
    for seed in range(20):
        assert choose_tables([focus, helper, other], 2, 1, random.Random(seed), apart)[0] == ("f", "o")
    crowded = Candidate("f", "acct_f", 25.0, 1.0, 0, crowded=frozenset({"acct_h"}))
    for seed in range(20):
        assert choose_tables([crowded, helper, other], 2, 1, random.Random(seed))[0] == ("f", "o")


def test_crowding_bounds_any_one_accounts_share_of_a_bots_deals():
    account_of = {"h1": "acct_h", "h2": "acct_h", "x": "acct_x", "y": "acct_y"}
    met = {"h1": [1, 1.0], "h2": [1, 1.0], "x": [10, 4.0], "y": [10, 5.0]}
    assert collusion.crowding(met, account_of, accounts=21) == frozenset({"acct_x", "acct_y"})
    assert collusion.crowding(met, account_of, accounts=4) == frozenset()  # half is an even share of 3
    assert collusion.crowding({"h1": [2, 2.0]}, account_of, accounts=21) == frozenset()  # the floor


def test_a_pair_whose_deals_the_rest_of_the_ladder_contradicts_is_flagged_and_an_even_one_is_not():
    beta = 25 / 6
    account_of = {"f": "A", "t": "B", "h": "C", "g": "D"}
    ratings = {"f": (25.0, 1.0), "t": (30.0, 1.0), "h": (30.0, 1.0), "g": (20.0, 1.0)}
    # f loses to h (rated like t) and beats g a little less than evenly; t beats h half the time
    met = {"f": {"t": [20, 20.0], "h": [20, 2.0], "g": [20, 9.0]},
           "t": {"f": [20, 0.0], "h": [20, 10.0]}}
    thrown = collusion.pair_test("A|B", {"f|t": [20, 20.0]}, account_of, met, ratings, beta)
    assert thrown.flagged and thrown.z > collusion.Z_FLAG
    fair = collusion.pair_test("A|D", {"f|g": [20, 9.0]}, account_of, {**met, "g": {"f": [20, 11.0]}},
                               ratings, beta)
    assert not fair.flagged
