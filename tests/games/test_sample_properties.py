"""`game.sample(view, seed)` (docs/api.md §5) over thousands of positions of every game and seat count.

At seeded positions of seeded matches, for the seat to act and for another seat:

* the sample shows that seat exactly its view, and offers the same legal
  actions (duck-soup lists a hand in the order it was dealt, which no view
  shows: there the same actions, in any order);
* the same seed gives the same state (every seat's view, the spectator's, the
  legal actions), another seed may not;
* the sample's cards add up to the game's cards, and it plays on to the end;
* the true state is one of the placements the sampler draws from (its facts
  never exclude what really happened), and so is the sample.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

import games
from games.cards import deck_32, deck_52
from games.double.cards import double_sets
from games.soupe_gertrude.cards import full_deck, hand_value
from games.soupe_gertrude.knowledge import Knowledge

#: (game, seats, options, matches): every seat count, the option sets that change what is hidden
CASES = [
    ("duck-soup", 2, {"deal_only": True}, 30),
    ("duck-soup", 2, {"deal_only": True, "edition": "de"}, 20),
    ("duck-soup", 2, {"target": 60}, 4),
    ("double-carre", 2, {}, 40),
    ("double-carre", 2, {"advanced": True}, 25),
    *[("double", seats, {}, 3) for seats in range(2, 11)],
    ("double", 4, {"rounds": [2, 5, 1]}, 6),
    *[("soupe-gertrude", seats, options, 8) for seats in range(2, 7)
      for options in ({}, {"navet_mouche": True})],
    *[("soupe-gertrude", seats, {"manches": 3, "navet_mouche": True}, 2) for seats in range(2, 7)],
]
#: check every n-th decision (long games: fewer, spread over more matches)
EVERY = {"duck-soup": 2, "double": 6, "soupe-gertrude": 4}


def dumps(value) -> str:
    return json.dumps(value, sort_keys=True)


def everything(state) -> str:
    """All a state holds that a seat may not see, and the legal actions."""
    if state.game.name == "soupe-gertrude":  # (its views repeat a long log: compare the cards)
        hidden = [state.hands, state.pile, state.lot, state.out, state.play]
    else:
        hidden = [[state.view(s) for s in range(state.seats)], state.view(None)]
    return dumps([hidden, state.legal_actions()])


def choose(state, legal: list[dict], rng: random.Random) -> dict:
    """A seeded policy that keeps games going: soupe-gertrude bids within its means."""
    if state.game.name == "soupe-gertrude" and state.pending == "bid":
        means = hand_value(state.hands[state.to_act])
        fair = [a for a in legal if "pass" in a or a.get("bid", 99) <= means]
        if fair and rng.random() < 0.97:
            return fair[rng.randrange(min(3, len(fair)))] if rng.random() < 0.5 else rng.choice(fair)
    if state.game.name == "soupe-gertrude" and {"done": True} in legal and rng.random() < 0.8:
        return {"done": True}
    return rng.choice(legal)


def cards_of(state) -> Counter:
    """Every card of a state, wherever it lies."""
    name = state.game.name
    if name == "duck-soup":
        return Counter(state.deck)
    if name == "double":
        return Counter(state.decks[state.round])
    if name == "double-carre":
        return Counter(state.deck)
    return state.cards_in_play()


def all_cards(state) -> Counter:
    name = state.game.name
    if name == "duck-soup":
        return Counter(deck_52())
    if name == "double":
        return Counter(double_sets(state.n_decks))
    if name == "double-carre":
        return Counter(deck_32())
    return Counter(full_deck(state.variant))


def fits(cards: list[str], slots: list[frozenset]) -> bool:
    """Whether every card can go to its own slot that may hold it (a bipartite matching)."""
    match: dict[int, int] = {}  # slot -> card index

    def place(i: int, seen: set[int]) -> bool:
        for j, slot in enumerate(slots):
            if cards[i] in slot and j not in seen:
                seen.add(j)
                if j not in match or place(match[j], seen):
                    match[j] = i
                    return True
        return False

    return all(place(i, set()) for i in range(len(cards)))


def soupe_admits(sampler, state) -> bool:
    """Soupe & Gertrude: the knowledge's facts hold in `state` (known cards are there, every
    other card fits a slot, the redrawn vegetables are in the pile or the lot)."""
    know: Knowledge = sampler.know
    for seat, hand in know.hands.items():
        if seat in state.eliminated:
            continue
        rest = Counter(state.hands[seat]) - hand.known
        if hand.known - Counter(state.hands[seat]) or sum(rest.values()) != len(hand.slots):
            return False
        if not fits(list(rest.elements()), hand.slots):
            return False
    hidden_lot = Counter(state.lot) - Counter(sampler.lot_known)
    return not (know.pile_known - Counter(sampler.lot_known)) - (Counter(state.pile) + hidden_lot) \
        and not know.out_known - Counter(state.out)


def admits(sampler, state) -> bool:
    if hasattr(sampler, "zones_of"):
        return sampler.deal.admits(sampler.zones_of(state))
    return soupe_admits(sampler, state)


def check_position(game, state, seat: int, rng: random.Random, play_out: bool) -> None:
    view = state.view(seat)
    sampler = game.sampler(game, view, None)
    assert admits(sampler, state), f"the true state is excluded by the sampler's facts ({seat=})"
    seed = rng.getrandbits(32)
    one, two = sampler.sample(seed), game.sample(view, seed)
    assert one.view(seat) == view
    assert everything(one) == everything(two), "the same seed must give the same state"
    assert admits(sampler, one)
    assert cards_of(one) == all_cards(one)
    if seat == state.to_act:
        if game.name == "duck-soup":
            assert sorted(map(dumps, one.legal_actions())) == sorted(map(dumps, state.legal_actions()))
        else:
            assert one.legal_actions() == state.legal_actions()
    if play_out:
        steps = 0
        while not one.is_over:
            one.apply(rng.choice(one.legal_actions()))
            steps += 1
            assert steps < 50_000
        assert len(one.result()["ranks"]) == state.seats


@pytest.mark.parametrize("name, seats, options, matches", CASES,
                         ids=[f"{c[0]}-{c[1]}-{dumps(c[2])}" for c in CASES])
def test_a_sample_agrees_with_the_view_and_plays_on(name, seats, options, matches):
    game = games.get(name)
    checked = 0
    for m in range(matches):
        rng = random.Random(f"sample:{name}:{seats}:{m}")
        state = game.new(seats, rng.getrandbits(40), options)
        every = EVERY.get(name, 1)
        step = 0
        while not state.is_over:
            if step % every == 0:
                check_position(game, state, state.to_act, rng, play_out=rng.random() < 0.15)
                other = rng.randrange(seats)
                if other != state.to_act:
                    check_position(game, state, other, rng, play_out=False)
                checked += 1
            state.apply(choose(state, state.legal_actions(), rng))
            step += 1
        check_position(game, state, rng.randrange(seats), rng, play_out=True)
    assert checked >= matches


@pytest.mark.parametrize("name", [name for name in games.names() if games.get(name).sampler])
def test_a_view_no_state_agrees_with_is_a_value_error(name):
    game = games.get(name)
    view = game.new(2, 3, {}).view(0)
    with pytest.raises(ValueError):
        game.sample(view | {"seat": None}, 1)
    with pytest.raises(ValueError):
        game.sample(view | {"hand": view["hand"] + view["hand"]}, 1)
    with pytest.raises(ValueError):
        game.sample("not a view", 1)


def test_different_seeds_draw_different_states():
    game = games.get("duck-soup")
    view = game.new(2, 5, {}).view(0)
    hidden = {dumps(game.sample(view, seed).view(1)["hand"]) for seed in range(20)}
    assert len(hidden) > 15
