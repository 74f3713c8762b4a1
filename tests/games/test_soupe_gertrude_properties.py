"""Soupe & Gertrude property tests: random games at 2–6 seats, both variants, 1 or 3 manches.

The random player bids mostly within its means (a uniform bid would eliminate
almost every seat in the first auction and leave the rest of the rules
unexercised) and now and then overbids, so eliminations happen too.
"""

from __future__ import annotations

import copy
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.soupe_gertrude.cards import COUNTS, VEGETABLES, full_deck, hand_value, sort_cards
from tests.examples import examples
from tests.games.engine_checks import (
    assert_all_illegal_rejected,
    assert_replays_identically,
    assert_result_shape,
    json_strings,
    play_random,
)
from tests.games.test_soupe_gertrude_support import GAME

#: events seen only by the seats they name (who may see each: the keys listed)
PRIVATE = {"shown": ("to",), "given_back": ("seat", "to"), "drawn": ("seat", "target"),
           "kept_card": ("seat", "target")}

matches = st.fixed_dictionaries({
    "seats": st.integers(2, 6),
    "seed": st.integers(0, 2**32),
    "variant": st.booleans(),
    "manches": st.sampled_from([1, 3]),
})


class SensiblyRandom:
    """A `random.Random` stand-in for `play_random` that bids mostly what it can pay."""

    def __init__(self, state, seed: int) -> None:
        self.state, self.rng = state, random.Random(seed)

    def choice(self, legal: list[dict]) -> dict:
        state, rng = self.state, self.rng
        if state.pending == "bid" and rng.random() > 0.03:
            means = hand_value(state.hands[state.to_act])
            high = state.auction["high"]
            if high is not None and rng.random() < 0.6:
                return {"pass": True}
            low = 0 if high is None else high + 1
            return rng.choice([a for a in legal if "bid" in a and a["bid"] <= min(means, low + 3)]
                              or legal)
        if state.pending == "pay" and {"done": True} in legal and rng.random() < 0.8:
            return {"done": True}
        return rng.choice(legal)


def new_state(m: dict):
    return GAME.new(seats=m["seats"], seed=m["seed"],
                    options={"navet_mouche": m["variant"], "manches": m["manches"]})


def check_views(state) -> None:
    """Each view holds its own hand, the lot only for the drawer, and private events only for the two."""
    card_ids = set(COUNTS)
    for seat in [*range(state.seats), None]:
        view = state.view(seat)
        if seat is not None:
            assert view["hand"] == sort_cards(state.hands[seat])
        assert ("cards" in view["lot"]) == (seat == state.drawer and bool(state.lot))
        allowed = Counter(view["hand"] or []) + Counter(view["lot"].get("cards", []))
        allowed[view["lot"]["face_up"]] += 1
        if view["play"]:  # the special card being played, and the vegetable a souris names
            allowed.update([view["play"]["card"], view["play"]["vegetable"]])
        rest = {k: v for k, v in view.items() if k not in ("log", "hand", "pending")}
        shown = Counter({c: n for c, n in json_strings(rest).items() if c in card_ids})
        assert not shown - allowed, (seat, shown - allowed)
        for event in view["log"]:
            if event["event"] in PRIVATE:
                assert seat is not None and seat in [event[k] for k in PRIVATE[event["event"]]]
    assert isinstance(state.view(0)["pile"], int)


@pytest.mark.slow
@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matches)
def test_random_games_end_conserve_cards_and_hide_what_they_must(m):
    state = new_state(m)
    deck = Counter(full_deck(m["variant"]))
    rng = random.Random(m["seed"])

    def on_step(s) -> None:
        assert s.cards_in_play() == deck
        if rng.random() < 0.1:
            check_views(s)
        if not s.is_over and rng.random() < 0.05:
            assert_all_illegal_rejected(s, illegal_actions(s))

    play_random(state, SensiblyRandom(state, m["seed"]), on_step=on_step, max_steps=20_000)
    result = state.result()
    assert_result_shape(result, m["seats"])
    assert len(result["decks"]) == m["manches"]
    check_views(state)


def illegal_actions(state) -> list:
    """Actions that must be refused now: wrong types, extra keys, cards not held, other decisions."""
    legal = state.legal_actions()
    first = dict(legal[0])
    bad = [{**first, "extra": 1}, {"bid": -1}, {"keep": "lapin"}, {"give": "tomate", "to": state.to_act},
           {"souris": "navet", "target": (state.to_act + 1) % state.seats}, [first], None]
    for key, value in first.items():
        if value is True:
            bad.append({**first, key: 1})
        elif type(value) is int:
            bad.append({**first, key: float(value)})
    if state.pending != "bid":
        bad.append({"bid": 0})
    return [a for a in bad if a not in legal]


@settings(max_examples=examples(4), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matches)
def test_the_same_seed_and_actions_replay_identically(m):
    state = new_state(m)
    actions = play_random(state, SensiblyRandom(state, m["seed"]))
    assert_replays_identically(lambda: new_state(m), actions)


@pytest.mark.slow
@settings(max_examples=examples(10), deadline=None)
@given(matches)
def test_every_listed_action_is_accepted(m):
    state = new_state(m)
    rng = random.Random(m["seed"])

    def probe(s) -> None:  # on a copy, every listed action of this decision is accepted
        if not s.is_over and rng.random() < 0.05:
            for action in s.legal_actions():
                copy.deepcopy(s).apply(action)

    play_random(state, SensiblyRandom(state, m["seed"]), on_step=probe)


def test_seeded_deals_do_not_depend_on_the_actions_played():
    a = GAME.new(seats=3, seed=5, options={"manches": 3})
    b = GAME.new(seats=3, seed=5, options={"manches": 3})
    play_random(a, random.Random(1))
    play_random(b, random.Random(2))
    decks_a, decks_b = a.result()["decks"], b.result()["decks"]
    assert decks_a == decks_b[: len(decks_a)] or decks_b == decks_a[: len(decks_b)]
    assert all(sorted(d) == sorted(full_deck(False)) for d in decks_a)
    assert VEGETABLES[0] == "tomate"
