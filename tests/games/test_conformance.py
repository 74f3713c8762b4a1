"""Every registered game passes one generic check: what it declares is what it does.

Like PettingZoo's `api_test(env)` and OpenSpiel's `random_sim_test`, this
needs nothing from a game but its registration (`games.base.Game`): it reads
the facts a game declares — seat range, options, `decisions`, `result_keys` —
and plays seeded random matches at every seat count to hold the engine to
them and to the contract of `games.base.State`. A new game is parameterised
here by being registered (docs/add-a-game.md); the toy game of
tests/server/toygame.py, registered through `games.register` by the `game`
fixture, runs the whole check too (the `[toy-high]` cases).

What only a game knows (which cards a seat may not see, how it scores) stays
in its own tests; the generic checks live in tests/games/engine_checks.py.
"""

from __future__ import annotations

import copy
import functools
import json
import random
import time

import pytest

import games
from games.base import RESULT, canonical
from tests.games.engine_checks import (
    assert_all_illegal_rejected,
    assert_illegal_rejected,
    assert_json_safe,
    assert_replays_identically,
    assert_result_shape,
    play_random,
)
from tests.server import toygame

#: every registered game, and the toy game (registered by the `game` fixture if need be)
NAMES = sorted({*games.names(), toygame.NAME})
#: seeded random matches per seat count and option set…
SEEDS = 2
#: …cut short once a game's checks have taken this long (long games at many seats)
BUDGET_S = 4.0
#: the deeper checks (every legal action applied, samples drawn) at every n-th decision
DEEP_EVERY = 9


@pytest.fixture(params=NAMES)
def game(request):
    """The game under test; the toy game is registered for the test if it is not already."""
    name = request.param
    added = name == toygame.NAME and name not in games.names()
    if added:
        games.register(toygame.GAME)
    yield games.get(name)
    if added:
        games.unregister(name)


def option_sets(game: games.Game) -> list[dict]:
    """The defaults, and every option set a declared decision needs to come up."""
    out = [{}]
    for decision in game.decisions:
        if dict(decision.options) not in out:
            out.append(dict(decision.options))
    return out


def tables(game: games.Game):
    """(seats, options, seed) for every seat count and option set, a few seeds each."""
    for seats in range(game.min_seats, game.max_seats + 1):
        for options in option_sets(game):
            for seed in range(SEEDS):
                yield seats, options, 1000 * seats + seed


def random_matches(game: games.Game, on_step):
    """Play the seeded random matches of `tables`, calling `on_step(state, step)` at every
    decision and once over; returns (seats, options, seed, actions) per match played."""
    played, start = [], time.monotonic()
    for seats, options, seed in tables(game):
        if played and time.monotonic() - start > BUDGET_S and seats > game.min_seats + 1:
            continue  # enough of this game: the smallest tables are always played
        state = game.new(seats, seed, copy.deepcopy(options))
        rng = random.Random(seed)
        actions = play_random(state, rng, numbered(on_step), choose=functools.partial(patient, rng=rng))
        played.append((seats, options, seed, actions))
    return played


def patient(legal: list[dict], rng: random.Random) -> dict:
    """Half the time any listed action, half the time one of the first three (bench/digest.py's
    policy): auctions and payments run their course instead of ending at the first over-bid."""
    return rng.choice(legal) if rng.random() < 0.5 else legal[rng.randrange(min(3, len(legal)))]


def numbered(on_step):
    """`on_step(state, step)` as `play_random`'s `on_step(state)`: the step counted from 0."""
    steps = iter(range(10**9))
    return lambda state: on_step(state, next(steps))


# -- the declared facts -----------------------------------------------------------


def test_the_spec_facts_are_well_formed(game):
    assert isinstance(game.name, str) and game.name and game.title
    assert 1 <= game.min_seats <= game.max_seats
    assert game.rules == f"{game.name}.md", "the rules page is docs/rules/<name>.md"
    kinds = [decision.kind for decision in game.decisions]
    assert kinds and len(set(kinds)) == len(kinds), "declare each decision kind once"
    assert all(decision.meaning for decision in game.decisions)
    assert not set(game.result_keys) & set(RESULT), "declare only the keys beyond games.base.RESULT"
    described = game.describe()
    assert_json_safe(described)
    assert described["options"] == game.defaults


def test_every_option_default_is_valid_and_a_wrong_value_is_invalid_options(game):
    state = game.new(game.min_seats, 1, {})
    assert set(state.options) == set(game.defaults)
    for option in game.options:
        option.check(option.name, copy.deepcopy(option.default))
        with pytest.raises(games.InvalidOptions):
            game.new(game.min_seats, 1, {option.name: {"not": "valid"}})
    with pytest.raises(games.InvalidOptions):
        game.new(game.min_seats, 1, {"no_such_option": 1})


@pytest.mark.parametrize("seats", ["below", "above", "2", 2.0])
def test_a_seat_count_outside_the_range_is_invalid_options(game, seats):
    seats = {"below": game.min_seats - 1, "above": game.max_seats + 1}.get(seats, seats)
    with pytest.raises(games.InvalidOptions):
        game.new(seats, 1, {})


def test_the_deck_option_deals_the_results_deck_again_and_refuses_another(game):
    if "deck" not in game.defaults:
        pytest.skip(f"{game.name} takes no deck option")
    for seats in range(game.min_seats, game.max_seats + 1):
        state = game.new(seats, 7, {})
        hands = [state.view(seat).get("hand") for seat in range(seats)]
        play_random(state, random.Random(7))
        deck = state.result()["decks"][0]
        again = game.new(seats, 7, {"deck": list(deck)})
        assert [again.view(seat).get("hand") for seat in range(seats)] == hands, seats
        for wrong in (deck[:-1], deck + deck[:1], deck[:-1] + ["ZZ"]):  # short, long, no card
            with pytest.raises(games.InvalidOptions):
                game.new(seats, 7, {"deck": wrong})


# -- random matches ----------------------------------------------------------------


def test_random_matches_show_only_declared_decisions_and_json(game):
    declared = {decision.kind for decision in game.decisions}

    def check(state, step):
        views = [state.view(seat) for seat in range(state.seats)] + [state.view(None)]
        assert_json_safe(views)
        for view in views:
            assert "pending" in view, "every view says which decision is pending"
            assert view["pending"] in declared | {None}, f"undeclared decision {view['pending']!r}"
        if state.is_over:
            assert all(view["pending"] is None for view in views)
        else:
            assert views[state.to_act]["pending"] in declared

    random_matches(game, check)


def test_every_listed_action_is_accepted_and_an_unlisted_one_changes_nothing(game):
    def check(state, step):
        if state.is_over:
            assert_illegal_rejected(state, {})
            return
        if step % DEEP_EVERY:
            return
        legal = state.legal_actions()
        for action in legal:
            copy.deepcopy(state).apply(json.loads(json.dumps(action)))
        assert_all_illegal_rejected(state, ({**legal[0], "unlisted": 1}, {}, "play", None, [legal[0]]))

    random_matches(game, check)


def test_the_same_seed_and_actions_replay_the_same_views_and_result(game):
    for seats, options, seed, actions in random_matches(game, lambda state, step: None):
        def new(seats=seats, seed=seed, options=options):
            return game.new(seats, seed, copy.deepcopy(options))

        assert_replays_identically(new, actions)


def test_the_result_holds_the_declared_keys_ranked_best_first_with_ties_sharing(game):
    def check(state, step):
        if not state.is_over:
            with pytest.raises(ValueError, match="not over"):
                state.result()
            return
        result = state.result()
        assert set(result) == set(RESULT) | set(game.result_keys), "result() holds exactly the declared keys"
        assert_result_shape(result, state.seats)
        assert all(type(score) in (int, float) for score in result["scores"])
        assert all(isinstance(deck, list) and all(isinstance(card, str) for card in deck)
                   for deck in result["decks"])

    random_matches(game, check)


@pytest.mark.parametrize("seat", ["after the last", -1, True, "0", 0.0])
def test_a_view_of_a_seat_not_in_the_match_is_a_value_error(game, seat):
    state = game.new(game.min_seats, 1, {})
    seat = state.seats if seat == "after the last" else seat
    with pytest.raises(ValueError, match="no seat"):
        state.view(seat)


def test_the_spectator_never_sees_a_hand(game):
    """No `hand` shows in the spectator's view; and where the game can sample, a world
    drawn for any seat shows the spectator the same table: its view depends on no card
    hidden from a seat (a hand made only of public cards, a bought lot, is no leak)."""

    def check(state, step):
        spectator = state.view(None)
        assert not any(d.get("hand") for d in dicts_in(spectator)), "a hand is its seat's alone"
        if game.sampler is None or step % DEEP_EVERY:
            return
        for seat in range(state.seats):
            sample = game.sample(state.view(seat), step, copy.deepcopy(state.options))
            assert sample.view(None) == spectator, f"the spectator sees a card hidden from seat {seat}"

    random_matches(game, check)


def dicts_in(value) -> list[dict]:
    """Every dict inside a JSON value, itself included."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def test_a_sample_shows_its_seat_exactly_its_view_and_the_same_choices(game):
    if game.sampler is None:
        pytest.skip(f"{game.name} has no sampler")

    def check(state, step):
        if step % DEEP_EVERY:
            return
        for seat in range(state.seats):
            view = state.view(seat)
            sample = game.sample(view, step, copy.deepcopy(state.options))
            assert sample.view(seat) == view
            if seat == state.to_act:
                assert sorted(map(canonical, sample.legal_actions())) == sorted(map(canonical, state.legal_actions()))

    random_matches(game, check)
