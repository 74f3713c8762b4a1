"""The engine core: cards, seeds, options and the generic apply()."""

from __future__ import annotations

import pytest

import games
from games.base import Game, State, canonical
from games.cards import Card, deck_32, deck_52
from games.errors import IllegalAction, InvalidOptions, UnknownGame
from games.options import Option, boolean, check_deck, integer, one_of
from games.rng import Rng, derive_seed


def test_card_text_round_trips_and_is_interned():
    for card in deck_52():
        assert Card.parse(str(card)) is card
    assert Card("10H").rank == "10" and Card("10H").suit == "H"
    assert Card("QS").symbol == "Q♠"
    assert repr(Card("AD")) == "Card('AD')"


@pytest.mark.parametrize("bad", ["1H", "10X", "", "H10", None, "qs"])
def test_bad_card_text_is_a_value_error_that_shows_the_notation(bad):
    with pytest.raises(ValueError, match="rank then suit"):
        Card(bad)


def test_decks_have_the_right_cards():
    assert len(set(deck_52())) == 52
    assert len(set(deck_32())) == 32
    assert {c.rank for c in deck_32()} == {"7", "8", "9", "10", "J", "Q", "K", "A"}


def test_rng_is_deterministic_and_streams_are_independent():
    a = Rng(7, "deal", 0).shuffled(range(52))
    assert a == Rng(7, "deal", 0).shuffled(range(52))
    assert a != Rng(7, "deal", 1).shuffled(range(52))
    assert sorted(a) == list(range(52))
    assert Rng(1, "x").shuffled(range(10)) == Rng(1, "x").shuffled(list(range(10)))


def test_derived_seeds_keep_their_golden_values():
    """Literal values, computed once: every stored match replays only if these never change."""
    assert derive_seed(1, "deal", 0) == 2165004477744313609
    assert derive_seed(0) == 3456079177858693020
    assert derive_seed(2**63 - 1, "x", "y", 3) == 6410233077448790254


def test_seeded_draws_keep_their_golden_values():
    """The same seed must deal the same cards on every machine and Python version."""
    assert Rng(1, "x").shuffled(range(10)) == [6, 1, 5, 8, 3, 4, 9, 7, 2, 0]
    assert Rng(7, "deal", 0).shuffled(range(52)) == [
        12, 0, 22, 1, 40, 31, 6, 19, 18, 48, 10, 32, 37, 42, 17, 16, 35, 47, 21, 27, 4, 8, 49, 39, 5, 26,
        23, 36, 11, 28, 45, 44, 34, 7, 20, 3, 24, 33, 38, 43, 29, 13, 51, 41, 25, 46, 9, 15, 50, 30, 2, 14]
    rng = Rng(3, "b")
    assert [rng.below(n) for n in (1, 2, 3, 7, 52, 1000)] == [0, 0, 2, 5, 20, 444]
    assert rng.sample(range(10), 3) == [7, 6, 8]
    assert rng.choice("abcdef") == "b"


def test_check_deck_names_what_is_wrong():
    full = [str(c) for c in deck_32()]
    assert check_deck("deck", full[::-1], full) == full[::-1]
    with pytest.raises(InvalidOptions, match="32 cards, not 31"):
        check_deck("deck", full[1:], full)
    with pytest.raises(InvalidOptions, match="too many of: '8S'"):
        check_deck("deck", ["8S"] + full[1:], full)
    with pytest.raises(InvalidOptions, match="not cards of this game: '2S'"):
        check_deck("deck", ["2S"] + full[1:], full)


def test_canonical_keeps_json_types_apart_and_ignores_list_order():
    assert canonical(True) != canonical(1)
    assert canonical(2) != canonical(2.0)
    assert canonical({"take": ["AS", "9D"]}) == canonical({"take": ["9D", "AS"]})
    assert canonical(Card("AS")) == canonical("AS")


class _Counter(State):
    """A toy game: add 1 or 2 until the total reaches 5."""

    def __init__(self, *args):
        super().__init__(*args)
        self.total = 0
        self._to_act = 0

    def _legal_actions(self):
        return [{"add": 1}, {"add": 2}]

    def _apply(self, action):
        self.total += action["add"]
        self._to_act = None if self.total >= 5 else self.total % self.seats

    def _view(self, seat):
        return {"total": self.total}

    def _result(self):
        return {"scores": [0] * self.seats, "ranks": [1] * self.seats, "decks": []}


TOY = Game("toy", "Toy", 2, 3, [Option("fast", False, boolean()), Option("n", 1, integer(1, 3)),
                                 Option("mode", "a", one_of("a", "b"))], _Counter)


def test_apply_accepts_listed_actions_and_refuses_others_unchanged():
    state = TOY.new(seats=2, seed=1)
    with pytest.raises(IllegalAction, match="not a legal action"):
        state.apply({"add": True})  # true is not 1
    with pytest.raises(IllegalAction):
        state.apply({"add": 1.0})
    with pytest.raises(IllegalAction):
        state.apply({"add": 1, "extra": None})
    assert state.total == 0
    state.apply({"add": 2})
    state.apply({"add": 2})
    state.apply({"add": 1})
    assert state.is_over and state.legal_actions() == []
    with pytest.raises(IllegalAction, match="over"):
        state.apply({"add": 1})


@pytest.mark.parametrize("seats, seed, options, message", [
    (1, 0, {}, "2 to 3 seats"),
    (4, 0, {}, "2 to 3 seats"),
    (2, "7", {}, "seed"),
    (2, 0, {"fast": 1}, "'fast' must be true or false"),
    (2, 0, {"n": 9}, "'n' must be from 1 to 3"),
    (2, 0, {"mode": "c"}, "'mode' must be one of 'a', 'b'"),
    (2, 0, {"colour": "red"}, "unknown option 'colour'"),
    (2, 0, ["fast"], "options must be an object"),
])
def test_new_refuses_bad_seats_seed_and_options_with_a_clear_message(seats, seed, options, message):
    with pytest.raises(InvalidOptions, match=message):
        TOY.new(seats=seats, seed=seed, options=options)


def test_unknown_game_is_a_key_error_naming_the_games():
    with pytest.raises(UnknownGame) as info:
        games.get("chess")
    assert isinstance(info.value, KeyError)
    assert "chess" in str(info.value)


def test_describe_lists_defaults_as_json():
    assert TOY.describe()["options"] == {"fast": False, "n": 1, "mode": "a"}


def test_derived_seeds_are_valid_match_seeds():
    """A derived seed can seed a match itself: Game.new takes seeds below 2**63."""
    seeds = [derive_seed(s, "deal", d) for s in range(50) for d in range(20)]
    assert all(0 <= x < 2**63 for x in seeds)
    assert max(seeds) >= 2**62  # all 63 bits are used, not fewer


def test_a_default_option_is_never_shared_between_matches():
    game = games.get("double")
    first = game.new(seats=3, seed=1)
    rounds = first.options["rounds"]
    assert isinstance(rounds, list)
    rounds.append(99)
    assert game.new(seats=3, seed=1).options["rounds"] == rounds[:-1]
    described = game.describe()["options"]
    described.clear()
    assert game.describe()["options"]
