"""Le double carré: properties of random matches, in both versions."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games.cards import deck_32
from tests.examples import examples
from tests.games.engine_checks import (
    assert_all_illegal_rejected,
    assert_illegal_rejected,
    assert_replays_identically,
    assert_result_shape,
    json_strings,
    play_random,
)

GAME = games.get("double-carre")
ALL_CARDS = {str(c) for c in deck_32()}

seeds = st.integers(min_value=0, max_value=2**40)
matches = st.tuples(seeds, st.booleans(), st.sampled_from(["draw", 0, 1]), seeds)
FEW = settings(max_examples=examples(60), deadline=None)


def new_state(seed: int, advanced: bool, first):
    return GAME.new(seed=seed, options={"advanced": advanced, "first": first})


def zones(state) -> list[str]:
    """Every card where it lies now: hands, stock, set aside, out, revealed and not yet taken."""
    cards = [c for hand in state.hands for c in hand] + list(state.stock)
    cards += [c for pile in state.set_aside for pair in pile for c in pair]
    cards += [c for out in state.out for c in out]
    if state.pending == "take":
        cards += state.revealed
    return cards


def public_cards(view: dict) -> set[str]:
    """Cards everyone has seen face up: this turn's, every past turn's, the draw's."""
    seen = set(view["revealed"])
    seen |= {c for turn in view["taken"] for cards in turn["cards"] for c in cards}
    seen |= {c for pair in view["draw"] for c in pair}
    return seen


def check_views(state) -> None:
    """No view holds a card its seat may not know; the spectator's holds none private."""
    for seat in (0, 1, None):
        view = state.view(seat)
        known = public_cards(view)
        if seat is not None:
            mine = list(state.hands[seat]) + list(state.out[seat])
            mine += [c for pair in state.set_aside[seat] for c in pair]
            assert sorted(view["hand"]) == sorted(state.hands[seat])
            known |= set(mine)
        shown = {s for s in json_strings(view) if s in ALL_CARDS}
        assert shown <= known, (seat, shown - known)
        assert view["stock"] == len(state.stock)


@FEW
@given(matches)
def test_the_32_cards_are_conserved_at_every_step(match):
    seed, advanced, first, play_seed = match
    state = new_state(seed, advanced, first)

    def conserved(s):
        assert Counter(zones(s)) == Counter(ALL_CARDS)
        sizes = [len(hand) for hand in s.hands]
        if s.pending == "discard":  # the active seat discards first
            assert sizes[s.to_act] == 10
            assert sizes[1 - s.to_act] == (10 if s.to_act == s.active else 8)
        else:
            assert sizes == [8, 8]

    play_random(state, random.Random(play_seed), on_step=conserved)
    out = sum(len(o) for o in state.out)
    assert out == 16 and not state.stock and not any(state.set_aside)


@FEW
@given(matches)
def test_no_view_shows_a_hidden_card(match):
    seed, advanced, first, play_seed = match
    state = new_state(seed, advanced, first)
    play_random(state, random.Random(play_seed), on_step=check_views)


def illegal_variants(state, rng: random.Random) -> list:
    """Actions near a legal one that the rules forbid now."""
    legal = state.legal_actions()
    verb = state.pending
    other = "discard" if verb == "take" else "take"
    pool = state.revealed if verb == "take" else state.hands[state.to_act]
    outside = sorted(ALL_CARDS - set(pool))
    a, b = rng.choice(legal)[verb]
    return [
        {verb: [a, rng.choice(outside)]},
        {verb: [a, a]},
        {verb: [a]},
        {verb: [a, b, rng.choice(outside)]},
        {other: [a, b]},
        {verb: [a, b], "extra": True},
        {verb: a},
        {},
        None,
        [a, b],
    ]


@FEW
@given(matches)
def test_legal_actions_are_accepted_and_illegal_ones_change_nothing(match):
    seed, advanced, first, play_seed = match
    state = new_state(seed, advanced, first)
    rng = random.Random(play_seed)

    def probe(s):
        if not s.is_over:
            assert_all_illegal_rejected(s, rng.sample(illegal_variants(s, rng), 3))

    actions = play_random(state, rng, on_step=probe)
    assert len(actions) == (24 if advanced else 12)
    assert_result_shape(state.result(), 2)
    assert_illegal_rejected(state, {"take": ["AS", "AH"]})


@FEW
@given(matches)
def test_a_match_is_deterministic_and_replays_from_its_deck(match):
    seed, advanced, first, play_seed = match
    state = new_state(seed, advanced, first)
    actions = play_random(state, random.Random(play_seed))
    assert_replays_identically(lambda: new_state(seed, advanced, first), actions)
    result = state.result()
    assert sorted(result["decks"][0]) == sorted(ALL_CARDS)
    replay = GAME.new(seed=seed + 1, options={
        "advanced": advanced, "deck": result["decks"][0], "first": result["first"]})
    for action in actions:
        replay.apply(action)
    again = replay.result()
    for key in ("scores", "ranks", "decks", "first", "hands", "patterns", "points"):
        assert again[key] == result[key]
    winner = result["scores"].index(max(result["scores"]))
    strengths = [(result["patterns"][s], result["points"][s]) for s in (0, 1)]
    assert strengths[winner] == max(strengths)
