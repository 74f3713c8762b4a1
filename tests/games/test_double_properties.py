"""DOUBLE: properties of random matches across 2 to 10 seats, with one set or two."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games.double.cards import ONE_SET, DoubleCard
from tests.examples import examples
from tests.games.engine_checks import (
    assert_illegal_rejected,
    assert_replays_identically,
    assert_result_shape,
    json_strings,
    play_random,
)

GAME = games.get("double")
CARD_TEXTS = set(ONE_SET)


@st.composite
def matches(draw, rounds=st.sampled_from([[1], [1, 2], [2, 1], [3], [5, 4]])):
    """(seats, seed, options, play seed): mostly short matches, so many fit in the time."""
    seats = draw(st.integers(2, 10))
    options = {"rounds": draw(rounds)}
    if seats <= 5 and draw(st.booleans()):
        options["decks"] = 2
    return seats, draw(st.integers(0, 2**40)), options, draw(st.integers(0, 2**20))


FEW = settings(max_examples=examples(120), deadline=None)
FULL = st.just(list(range(1, 6)) + list(range(5, 0, -1)))


def played(state) -> list[str]:
    """The cards played so far this round: the trick on the table and the completed ones."""
    cards = [p.card for p in state.trick]
    return cards + [p["card"] for h in state.history for p in h["plays"]]


def check_conserved(state) -> None:
    """Hands + played + trump card + undealt = this round's deck, copy for copy."""
    deck = state.decks[state.round]
    dealt = state.rounds[state.round] * state.seats
    zones = [c for hand in state.hands for c in hand] + played(state)
    zones += [state.trump_card] + deck[dealt + 1:]
    assert Counter(zones) == Counter(deck)
    sizes = {len(h) + sum(p.seat == s for p in state.trick) for s, h in enumerate(state.hands)}
    assert len(sizes) == 1, "every seat holds the same number of cards between tricks"


def check_views(state) -> None:
    """A view shows no card copy its seat may not know (counts matter with two sets)."""
    public = Counter(played(state)) + Counter([state.trump_card])
    for seat in [*range(state.seats), None]:
        view = state.view(seat)
        known = public + (Counter(state.hands[seat]) if seat is not None else Counter())
        shown = Counter({c: n for c, n in json_strings(view).items() if c in CARD_TEXTS})
        assert not shown - known, (seat, shown - known)
        if seat is not None:
            assert Counter(view["hand"]) == Counter(state.hands[seat])
        else:
            assert view["hand"] is None


def check_illegal(state) -> None:
    """Everything not listed is refused and changes nothing."""
    legal = state.legal_actions()
    if state.pending == "bid":
        top = max(a["bid"] for a in legal)
        for bad in ({"bid": top + 1}, {"bid": -1}, {"bid": float(top)}, {"bid": True}):
            assert_illegal_rejected(state, bad)
        return
    listed = {(a["play"], a["motif"]) for a in legal}
    assert len(listed) == len(legal), "no duplicate actions, even with two identical cards"
    hand = state.hands[state.to_act]
    for card in set(hand):
        for m in DoubleCard(card).motifs:
            if (card, m) not in listed:
                assert_illegal_rejected(state, {"play": card, "motif": m})
    absent = next(c for c in ONE_SET if c not in hand)
    assert_illegal_rejected(state, {"play": absent, "motif": absent.high})
    assert_illegal_rejected(state, {"play": legal[0]["play"]})


@FEW
@given(matches())
def test_cards_are_conserved_and_views_hide_every_other_hand_and_the_undealt_cards(match):
    seats, seed, options, play_seed = match
    state = GAME.new(seats=seats, seed=seed, options=options)

    def step(s):
        if not s.is_over:
            check_conserved(s)
        check_views(s)

    play_random(state, random.Random(play_seed), on_step=step)
    assert_result_shape(state.result(), seats)


@settings(max_examples=examples(80), deadline=None)
@given(matches())
def test_illegal_actions_are_rejected_and_change_nothing(match):
    seats, seed, options, play_seed = match
    state = GAME.new(seats=seats, seed=seed, options=options)
    rng = random.Random(play_seed)
    play_random(state, rng, on_step=lambda s: None if s.is_over or rng.random() > 0.3
                else check_illegal(s))


@settings(max_examples=examples(15), deadline=None)
@given(matches(rounds=FULL))
def test_full_matches_replay_identically_and_deals_never_depend_on_the_actions(match):
    seats, seed, options, play_seed = match
    state = GAME.new(seats=seats, seed=seed, options=options)
    actions = play_random(state, random.Random(play_seed))
    assert_result_shape(state.result(), seats)
    assert_replays_identically(lambda: GAME.new(seats=seats, seed=seed, options=options), actions)
    other = GAME.new(seats=seats, seed=seed, options=options)
    play_random(other, random.Random(play_seed + 1))
    assert other.result()["decks"] == state.result()["decks"]
    for rnd, cards in zip(state.result()["rounds"], options["rounds"], strict=True):
        assert sum(rnd["tricks"]) == cards


@settings(max_examples=examples(10), deadline=None)
@given(matches())
def test_the_result_deck_replays_the_first_round(match):
    seats, seed, options, play_seed = match
    state = GAME.new(seats=seats, seed=seed, options=options)
    actions = play_random(state, random.Random(play_seed))
    again = GAME.new(seats=seats, seed=seed, options={**options, "deck": state.result()["decks"][0]})
    for action in actions:
        again.apply(action)
    assert again.result() == state.result()
