"""Farming does not pay (docs/api.md §6, issue 29).

The attack as filed: one bot reached #1 (24–0) by beating 24 throwaway bots of another account,
its owner choosing the opponents. Now the matchmaker chooses them. Here an attacker has four
accounts: a weak farmer bot, and 24 throwaway bots spread over three other accounts that lose
every match to everybody (as a bot built to lose does). Four honest bots of four accounts are
stronger than the farmer. The ladder plays on (the platform's matchmaker, ratings and settling;
each match's winner drawn from the bots' true strengths), and the farmer ends below every honest
bot: throwaways that lose to everybody lift everybody alike, and once the farmer climbs, its
opponents are the bots near it — the honest ones.
"""

from __future__ import annotations

import random

import pytest

from tests.worker.ladder_helpers import house_bot, play_pairings
from worker.matchmaker import Matchmaker

GAME = "duck-soup"
#: the matchmaker's cycles: enough deals that the ratings settle (with 60, the weakest honest bot,
#: 3 to 1 over the farmer, ended below it in about 1 run in 6 by chance alone)
CYCLES = 150


@pytest.mark.slow
def test_an_attacker_with_many_accounts_and_throwaway_bots_cannot_lift_a_weak_bot_above_honest_ones(store, counted_ids):
    strength: dict[str, float] = {}
    honest = [house_bot(store, f"honest{i}", GAME, owner=f"acct_honest{i}") for i in range(4)]
    strength.update({b: s for b, s in zip(honest, (6.0, 5.0, 4.0, 3.0), strict=True)})
    farmer = house_bot(store, "farmer", GAME, owner="acct_attacker")
    strength[farmer] = 1.0  # beats every throwaway, loses 3 in 4 to the weakest honest bot
    throwaways = [house_bot(store, f"throwaway{i}", GAME, owner=f"acct_attacker{i % 3}") for i in range(24)]
    strength.update(dict.fromkeys(throwaways, 0.0))
    rng = random.Random(29)

    def outcome(seats: list[str]) -> list[int]:
        a, b = (strength[s] for s in seats)
        if a == b == 0.0:
            return [1, 2] if rng.random() < 0.5 else [2, 1]
        return [1, 2] if rng.random() < a / (a + b) else [2, 1]  # Bradley–Terry

    matchmaker = Matchmaker(store, per_game=8, game_names=[GAME], rng=random.Random(7))
    farmer_opponents: list[str] = []
    for _ in range(CYCLES):
        matchmaker.cycle()
        farmer_opponents += [b for p in store.pairings_in_play(GAME) if farmer in p["bots"]
                             for b in p["bots"] if b != farmer]
        play_pairings(store, GAME, outcome)
    order = [row["bot"] for row in store.rankings(GAME)]
    assert all(order.index(b) < order.index(farmer) for b in honest), order
    # the matchmaker, not the attacker, chose the farmer's opponents: honest bots among them
    assert set(honest) & set(farmer_opponents)
    assert not any(store.get_bot(b)["owner"] == "acct_attacker" for b in farmer_opponents)
