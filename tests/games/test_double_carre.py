"""Le double carré: one scenario per rule of `docs/rulings/double-carre.md`, with chosen decks."""

from __future__ import annotations

import pytest

import games
from games.cards import deck_32
from games.double_carre import pattern, points, strength
from games.errors import IllegalAction, InvalidOptions
from tests.games.engine_checks import json_strings

GAME = games.get("double-carre")


def make_deck(hand0: list[str], hand1: list[str], stock: list[str] = ()) -> list[str]:
    """A deck dealing `hand0` to seat 0 and `hand1` to seat 1, `stock` on top of the rest.

    The deal goes one card at a time, seat 0 first, so the hands interleave.
    """
    dealt = [c for pair in zip(hand0, hand1, strict=True) for c in pair]
    chosen = dealt + list(stock)
    rest = [str(c) for c in deck_32() if c not in chosen]
    return chosen + rest


def play_keeping_dealt_hands(state) -> None:
    """Each turn, take the first two revealed cards, then each seat discards what it took.

    So both seats end with the hands they were dealt: the comparison alone decides.
    """
    while not state.is_over:
        view = state.view(state.to_act)
        if view["pending"] == "take":
            state.apply({"take": view["revealed"][:2]})
        else:
            state.apply({"discard": view["taken"][-1]["cards"][state.to_act]})


def finish(hand0: list[str], hand1: list[str]) -> dict:
    state = GAME.new(seed=0, options={"deck": make_deck(hand0, hand1)})
    play_keeping_dealt_hands(state)
    result = state.result()
    assert sorted(result["hands"][0]) == sorted(hand0)
    assert sorted(result["hands"][1]) == sorted(hand1)
    return result


FOUR_SEVENS = ["7S", "7H", "7D", "7C", "8S", "9S", "10S", "JS"]
THREE_THREE_TWO_HIGH = ["AS", "AH", "AD", "KS", "KH", "KD", "QS", "QH"]


def test_pattern_4_1_1_1_1_beats_3_3_2_whatever_the_points():
    assert pattern(FOUR_SEVENS) == [4, 1, 1, 1, 1]
    assert pattern(THREE_THREE_TWO_HIGH) == [3, 3, 2]
    assert points(FOUR_SEVENS) < points(THREE_THREE_TWO_HIGH)
    result = finish(THREE_THREE_TWO_HIGH, FOUR_SEVENS)
    assert result["scores"] == [0, 1] and result["ranks"] == [2, 1]
    assert result["patterns"] == [[3, 3, 2], [4, 1, 1, 1, 1]]


def test_pattern_3_3_2_beats_3_3_1_1():
    low = ["7S", "7H", "7D", "8S", "8H", "8D", "9S", "9H"]
    high = ["AS", "AH", "AD", "KS", "KH", "KD", "JS", "9D"]
    assert pattern(high) == [3, 3, 1, 1]
    result = finish(low, high)
    assert result["scores"] == [1, 0] and result["ranks"] == [1, 2]
    assert result["patterns"] == [[3, 3, 2], [3, 3, 1, 1]]


def test_sevens_and_tens_against_eights_and_nines_is_a_perfect_tie():
    a = ["7S", "7H", "7D", "7C", "10S", "10H", "10D", "10C"]
    b = ["8S", "8H", "8D", "8C", "9S", "9H", "9D", "9C"]
    result = finish(a, b)
    assert result["points"] == [3, 3]
    assert result["scores"] == [0.5, 0.5] and result["ranks"] == [1, 1]


def test_equal_patterns_more_points_wins():
    # The rule book's worked example: 4 sevens, 3 kings, a queen (11 points)
    # against 4 aces, 3 eights, a nine (10): the sentence "le plus de points" rules.
    a = ["7S", "7H", "7D", "7C", "KS", "KH", "KD", "QS"]
    b = ["AS", "AH", "AD", "AC", "8S", "8H", "8D", "9S"]
    assert strength(a) == ([4, 3, 1], 11) and strength(b) == ([4, 3, 1], 10)
    assert finish(b, a)["scores"] == [0, 1]
    assert finish(a, b)["scores"] == [1, 0]


def test_points_count_each_rank_once():
    assert points(["AS", "AH", "AD", "AC", "7S", "7H", "7D", "7C"]) == 7
    assert points(["8S", "9S", "10S", "JS", "QS", "KS", "AS", "7S"]) == sum(range(8))


def test_active_seat_takes_two_the_other_gets_the_rest_and_both_discard_active_first():
    stock = ["AS", "AH", "KS", "KH", "QS", "QH", "JS", "JH"]
    hand0 = ["7S", "7H", "7D", "7C", "8S", "8H", "8D", "8C"]
    hand1 = ["9S", "9H", "9D", "9C", "10S", "10H", "10D", "10C"]
    state = GAME.new(seed=0, options={"deck": make_deck(hand0, hand1, stock), "first": 1})
    view = state.view(1)
    assert (state.to_act, view["active"], view["pending"], view["turn"]) == (1, 1, "take", 1)
    assert view["revealed"] == stock[:4] and view["stock"] == 12
    assert len(state.legal_actions()) == 6
    state.apply({"take": ["KS", "AS"]})  # any order
    assert sorted(state.view(1)["hand"]) == sorted(hand1 + ["AS", "KS"])
    assert sorted(state.view(0)["hand"]) == sorted(hand0 + ["AH", "KH"])
    assert state.view(None)["taken"] == [
        {"turn": 1, "active": 1, "cards": [["AH", "KH"], ["AS", "KS"]]}
    ]
    assert (state.to_act, state.view(1)["pending"]) == (1, "discard")
    assert len(state.legal_actions()) == 45  # any 2 of 10, the new cards included
    state.apply({"discard": ["AS", "9S"]})
    assert state.to_act == 0 and state.view(0)["pending"] == "discard"
    assert len(state.view(1)["hand"]) == 8
    state.apply({"discard": ["7S", "KH"]})
    view = state.view(0)
    assert (state.to_act, view["active"], view["pending"], view["turn"]) == (0, 0, "take", 2)
    assert view["revealed"] == stock[4:8] and view["stock"] == 8
    assert view["discards"] == ["7S", "KH"] and state.view(1)["discards"] == ["9S", "AS"]


def test_a_basic_match_is_four_turns_with_the_active_seat_alternating():
    state = GAME.new(seed=5, options={"first": 0})
    actives = []
    while not state.is_over:
        view = state.view(state.to_act)
        if view["pending"] == "take":
            actives.append(view["active"])
        state.apply(state.legal_actions()[0])
    assert actives == [0, 1, 0, 1]
    end = state.view(None)
    assert (end["pending"], end["active"], end["to_act"], end["turn"]) == (None, None, None, 4)
    assert end["stock"] == 0 and end["revealed"] == []
    assert state.result()["first"] == 0
    with pytest.raises(IllegalAction):
        state.apply(state.legal_actions()[0] if state.legal_actions() else {"take": []})


def test_advanced_sets_discards_aside_in_order_and_turn_4_plus_k_reveals_them():
    state = GAME.new(seed=11, options={"advanced": True, "first": 1})
    aside: list[list[list[str]]] = [[], []]
    actives = []
    for turn in range(1, 9):
        view = state.view(None)
        assert view["turn"] == turn and view["pending"] == "take"
        actives.append(view["active"])
        if turn >= 5:
            k = turn - 4
            assert view["revealed"] == aside[0][k - 1] + aside[1][k - 1]
            assert view["stock"] == 0
        state.apply(state.legal_actions()[turn % 6])
        for _ in range(2):
            seat = state.to_act
            action = state.legal_actions()[(7 * turn + seat) % 45]
            state.apply(action)
            if turn <= 4:
                aside[seat].append(action["discard"])
        for seat in range(2):
            mine = state.view(seat)
            popped = max(0, min(turn + 1, 8) - 4)  # turn 5+ starts by turning a pair over
            assert mine["set_aside"] == aside[seat][popped:]
            assert len(mine["discards"]) == 2 * max(0, turn - 4)
            assert "set_aside" not in state.view(None)
    assert state.is_over and actives == [1, 0] * 4
    assert state.view(None)["set_aside_sizes"] == [0, 0]


def test_advanced_set_aside_of_the_other_seat_is_never_shown():
    state = GAME.new(seed=2, options={"advanced": True})
    active = state.to_act
    dealt = state.view(active)["hand"]
    state.apply(state.legal_actions()[0])
    state.apply({"discard": dealt[:2]})
    assert state.view(active)["set_aside"] == [dealt[:2]]
    assert state.view(None)["set_aside_sizes"][active] == 2
    other = state.view(1 - active)
    assert other["set_aside"] == [] and other["set_aside_sizes"][1 - active] == 0
    assert not set(dealt[:2]) & set(json_strings(other)) and not set(dealt[:2]) & set(
        json_strings(state.view(None)))


def test_the_draw_for_first_player_is_a_function_of_the_seed():
    starts = set()
    for seed in range(40):
        a, b = GAME.new(seed=seed), GAME.new(seed=seed)
        ra, rb = a.view(None), b.view(None)
        assert ra["first"] == rb["first"] and ra["draw"] == rb["draw"]
        draw = ra["draw"]
        ranks = [[games.Card(c).rank for c in pair] for pair in draw]
        assert all(r0 == r1 for r0, r1 in ranks[:-1]) and ranks[-1][0] != ranks[-1][1]
        higher = 0 if points([draw[-1][0]]) > points([draw[-1][1]]) else 1
        assert ra["first"] == higher
        starts.add(ra["first"])
        # the deal never depends on the draw: only the stock is reshuffled
        fixed = GAME.new(seed=seed, options={"first": 0})
        assert fixed.view(0)["hand"] == a.view(0)["hand"]
        assert sorted(fixed.stock + fixed.revealed) == sorted(a.stock + a.revealed)
        assert all(c in a.stock + a.revealed for pair in draw for c in pair)
    assert starts == {0, 1}


def test_a_match_replays_from_its_result_deck_and_first_seat():
    state = GAME.new(seed=9)
    actions = []
    while not state.is_over:
        actions.append(state.legal_actions()[len(actions) % 6])
        state.apply(actions[-1])
    result = state.result()
    assert len(result["draw"]) >= 1
    replay = GAME.new(seed=0, options={"deck": result["decks"][0], "first": result["first"]})
    for action in actions:
        replay.apply(action)
    again = replay.result()
    assert again["decks"] == result["decks"] and again["first"] == result["first"]
    for key in ("scores", "ranks", "hands", "patterns", "points"):
        assert again[key] == result[key]


def test_a_deck_with_the_draw_is_refused_and_a_deck_alone_starts_with_seat_0():
    deck = [str(c) for c in deck_32()]
    with pytest.raises(InvalidOptions, match="draw"):
        GAME.new(options={"deck": deck, "first": "draw"})
    state = GAME.new(options={"deck": deck})
    assert state.options["first"] == 0 and state.to_act == 0 and state.view(None)["draw"] == []
    assert GAME.new(options={"deck": deck, "first": 1}).to_act == 1
    assert GAME.new(options={"deck": None}).options["first"] == "draw"
    assert GAME.describe()["options"] == {"advanced": False, "first": "draw", "deck": None}


@pytest.mark.parametrize("options", [
    {"first": 2}, {"first": True}, {"first": "0"}, {"advanced": 1},
    {"deck": [str(c) for c in deck_32()][1:]}, {"deck": ["2S"] + [str(c) for c in deck_32()][1:]},
    {"colour": "red"},
])
def test_bad_options_are_invalid(options):
    with pytest.raises(InvalidOptions):
        GAME.new(options=options)


def test_three_seats_are_refused():
    with pytest.raises(InvalidOptions):
        GAME.new(seats=3)


@pytest.mark.parametrize("action, reason", [
    ({"take": ["AS", "AS"]}, "2 different"),
    ({"take": ["AS"]}, "2 different"),
    ({"take": ["AS", "7S"]}, "'7S' is not among the revealed cards"),
    ({"discard": ["AS", "AH"]}, "must take"),
    ({"take": ["AS", "AH"], "x": 1}, "must take"),
])
def test_an_illegal_action_says_which_rule_it_breaks(action, reason):
    hand0 = ["7S", "7H", "7D", "7C", "8S", "8H", "8D", "8C"]
    hand1 = ["9S", "9H", "9D", "9C", "10S", "10H", "10D", "10C"]
    state = GAME.new(options={"deck": make_deck(hand0, hand1, ["AS", "AH", "KS", "KH"])})
    with pytest.raises(IllegalAction, match=reason):
        state.apply(action)
    assert state.view(0)["pending"] == "take" and len(state.view(0)["hand"]) == 8


def test_discarding_a_card_not_in_hand_names_only_the_own_hand():
    hand0 = ["7S", "7H", "7D", "7C", "8S", "8H", "8D", "8C"]
    hand1 = ["9S", "9H", "9D", "9C", "10S", "10H", "10D", "10C"]
    state = GAME.new(options={"deck": make_deck(hand0, hand1, ["AS", "AH", "KS", "KH"])})
    state.apply({"take": ["AS", "AH"]})
    with pytest.raises(IllegalAction) as caught:
        state.apply({"discard": ["9S", "7S"]})
    message = str(caught.value)
    assert "'9S' is not among your hand" in message
    assert not any(c in message for c in hand1[1:] + ["KS", "KH"])  # only what it sent
