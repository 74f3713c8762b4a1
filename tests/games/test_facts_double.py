"""DOUBLE: the facts of its rules page's "What a seat can infer" (voids), checked on
true states and on samples (`tests/games/fact_checks.py`)."""

from __future__ import annotations

import random

import pytest

import games
from example_bots.double import DoubleHeuristic
from tests.games.fact_checks import Fact, check_facts, positions

GAME = games.get("double")
SUITS = "SHDC"


def suits(card: str) -> set[str]:
    """The suits on a card's two halves, read from its text ("KS/4H" -> {S, H})."""
    return {half[-1] for half in str(card).split("/") if half not in ("POPE", "IDIOT")}


def facts(view: dict) -> list[Fact]:
    """A seat that played a normal motif of another suit than the led one holds no card
    with the led suit on either half (written from the rules, not from the sampler)."""
    me, out = view["seat"], []
    tricks = [*view["history"], {"plays": view["trick"]}]
    for trick in tricks:
        plays = trick["plays"]
        if not plays or plays[0]["motif"] in ("POPE", "IDIOT"):
            continue
        led = plays[0]["motif"][-1]
        for play in plays[1:]:
            motif = play["motif"]
            if motif not in ("POPE", "IDIOT") and motif[-1] != led and play["seat"] != me:
                seat = play["seat"]
                out.append((f"seat {seat} did not follow {led}: it holds none",
                            lambda s, seat=seat, led=led: all(led not in suits(c) for c in s.hands[seat])))
    return out


@pytest.mark.parametrize("seats", [3, 5, 8])
@pytest.mark.parametrize("bot", [None, DoubleHeuristic()], ids=["random", "heuristic"])
def test_the_voids_hold_in_the_true_state_and_in_every_sample(seats, bot):
    rng, checked = random.Random(31), 0
    for state, seat in positions(GAME, seats, {"rounds": [5, 4, 3]}, 6, bot, every=2):
        if state.pending == "play":
            checked += check_facts(GAME, state, seat, facts(state.view(seat)), 3, rng)
    assert checked > 10
