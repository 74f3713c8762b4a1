"""DOUBLE: one scenario per rule of `docs/rulings/double.md`, with chosen decks."""

from __future__ import annotations

import random
from collections import Counter

import pytest

import games
from games.double import DEFAULT_ROUNDS, score_round
from games.double.cards import ONE_SET, DoubleCard, double_sets
from games.errors import IllegalAction, InvalidOptions
from tests.games.engine_checks import assert_illegal_rejected, play_random

GAME = games.get("double")


def deck_with(hands: list[list[str]], trump: str, decks: int = 1) -> list[str]:
    """A round-1 deck that deals `hands` (seat 0 first: the last seat deals) and turns `trump`."""
    seats, n = len(hands), len(hands[0])
    top = [hands[k % seats][k // seats] for k in range(n * seats)] + [trump]
    rest = Counter(double_sets(decks)) - Counter(top)
    return top + sorted(rest.elements())


def new(hands: list[list[str]], trump: str, decks: int = 1, **options):
    """A one-round match dealing `hands`."""
    options = {"deck": deck_with(hands, trump, decks), "rounds": [len(hands[0])], **options}
    if decks == 2:
        options["decks"] = 2
    return GAME.new(seats=len(hands), seed=0, options=options)


def bid_all(state, *bids: int) -> None:
    for n in bids:
        state.apply({"bid": n})


def play(state, card: str, motif: str) -> None:
    state.apply({"play": card, "motif": motif})


def plays(state) -> set[tuple[str, str]]:
    return {(a["play"], a["motif"]) for a in state.legal_actions()}


# -- cards ---------------------------------------------------------------------
def test_the_set_holds_each_normal_motif_once_plus_pope_and_idiot():
    motifs = [m for card in ONE_SET for m in card.motifs]
    assert len(ONE_SET) == 27
    assert Counter(motifs) == Counter([r + s for r in
                                       "2 3 4 5 6 7 8 9 10 J Q K A".split() for s in "SHDC"]
                                      + ["POPE", "IDIOT"])


def test_a_card_is_its_high_slash_low_text_and_unknown_pairs_are_refused():
    card = DoubleCard("KS/4H")
    assert card == "KS/4H" and card.high == "KS" and card.low == "4H"
    assert DoubleCard.parse("POPE/8H").motifs == ("POPE", "8H")
    assert DoubleCard("KS/4H") is card
    with pytest.raises(ValueError):
        DoubleCard("4H/KS")


# -- options ---------------------------------------------------------------------
def test_decks_auto_is_one_set_up_to_five_seats_and_two_from_six():
    assert GAME.new(seats=5, seed=1).view(None)["decks"] == 1
    assert GAME.new(seats=6, seed=1).view(None)["decks"] == 2
    assert len(GAME.new(seats=6, seed=1, options={"rounds": [1]}).decks[0]) == 54


def test_one_set_is_refused_for_six_seats():
    with pytest.raises(InvalidOptions, match="at most 5 seats"):
        GAME.new(seats=6, seed=1, options={"decks": 1})


@pytest.mark.parametrize("rounds", [[], [0], [1, -2], [1.0], "12", [True], None])
def test_rounds_must_be_a_nonempty_list_of_positive_whole_numbers(rounds):
    with pytest.raises(InvalidOptions):
        GAME.new(seats=2, seed=1, options={"rounds": rounds})


def test_rounds_needing_more_cards_than_the_sets_hold_are_refused():
    GAME.new(seats=2, seed=1, options={"rounds": [13]})  # 2 x 13 + 1 = 27
    with pytest.raises(InvalidOptions, match="needs 28 cards"):
        GAME.new(seats=3, seed=1, options={"rounds": [9]})
    GAME.new(seats=10, seed=1)  # 10 x 5 + 1 = 51 fits 54
    with pytest.raises(InvalidOptions):
        GAME.new(seats=10, seed=1, options={"rounds": [6]})


def test_a_deck_must_be_a_permutation_of_the_sets_in_use():
    with pytest.raises(InvalidOptions, match="27 cards"):
        GAME.new(seats=3, seed=1, options={"deck": list(ONE_SET) * 2})
    with pytest.raises(InvalidOptions):
        GAME.new(seats=3, seed=1, options={"deck": list(ONE_SET[:-1]) + ["AS/2D"]})
    state = GAME.new(seats=6, seed=1, options={"deck": list(ONE_SET) * 2,
                                                      "rounds": [5]})
    assert state.view(0)["hand"] == [ONE_SET[0], ONE_SET[6], ONE_SET[12], ONE_SET[18],
                                     ONE_SET[24]]


# -- deal, trump, rotation ---------------------------------------------------------
def test_cards_are_dealt_one_at_a_time_from_the_top_starting_left_of_the_dealer():
    deck = list(ONE_SET)
    state = GAME.new(seats=3, seed=0, options={"deck": deck, "rounds": [2]})
    assert state.view(0)["dealer"] == 2
    assert state.view(0)["hand"] == [deck[0], deck[3]]
    assert state.view(1)["hand"] == [deck[1], deck[4]]
    assert state.view(2)["hand"] == [deck[2], deck[5]]
    assert state.view(None)["trump_card"] == deck[6]


def test_trump_is_the_suit_of_the_turned_cards_higher_motif():
    assert new([["AH/2C"], ["AC/2H"]], "KS/4H").trump == "S"
    assert new([["AH/2C"], ["AC/2H"]], "9C/8S").view(None)["trump"] == "C"


@pytest.mark.parametrize("turned", ["POPE/8H", "IDIOT/8C"])
def test_pope_or_idiot_turned_up_means_no_trump_for_the_round(turned):
    state = new([["10S/5C"], ["AH/2C"]], turned)
    assert state.view(0)["trump"] is None
    bid_all(state, 0, 0)
    play(state, "10S/5C", "5C")
    play(state, "AH/2C", "2C")  # must follow clubs with the 2C half
    assert state.tricks == [1, 0]


def test_the_turned_card_stays_out_of_play():
    state = new([["AH/2C"], ["AC/2H"]], "KS/4H")
    hands = state.view(0)["hand"] + state.view(1)["hand"]
    assert "KS/4H" not in hands


def test_the_deal_passes_left_each_round_and_left_of_the_dealer_bids_and_leads_first():
    state = GAME.new(seats=4, seed=3)
    for i in range(len(DEFAULT_ROUNDS)):
        dealer = (3 + i) % 4
        assert state.view(None)["dealer"] == dealer
        assert state.view(None)["cards_per_seat"] == DEFAULT_ROUNDS[i]
        assert state.to_act == (dealer + 1) % 4
        for _ in range(4):
            state.apply({"bid": 0})
        assert state.to_act == (dealer + 1) % 4 and state.pending == "play"
        while state.view(None)["round"] == i + 1 and not state.is_over:
            state.apply(state.legal_actions()[0])
    assert state.is_over


def test_the_winner_of_a_trick_leads_the_next():
    state = new([["AS/2D", "AH/2C"], ["KS/4H", "KH/4D"]], "QC/7H")
    bid_all(state, 0, 0)
    play(state, "AS/2D", "2D")
    play(state, "KH/4D", "4D")  # 4D beats 2D
    assert state.to_act == 1 and state.view(0)["leader"] == 1


# -- following suit --------------------------------------------------------------
def test_a_card_whose_other_half_has_the_led_suit_must_follow_with_that_half():
    state = new([["QS/7D"], ["AD/2S"]], "9C/8S")
    bid_all(state, 0, 0)
    play(state, "QS/7D", "QS")
    assert plays(state) == {("AD/2S", "2S")}
    assert_illegal_rejected(state, {"play": "AD/2S", "motif": "AD"})


def test_a_seat_holding_the_led_suit_cannot_play_another_card():
    state = new([["QS/7D", "AC/2H"], ["AD/2S", "KH/4D"]], "9C/8S")
    bid_all(state, 0, 0)
    play(state, "QS/7D", "QS")
    assert plays(state) == {("AD/2S", "2S")}
    with pytest.raises(IllegalAction, match="spades were led"):
        play(state, "KH/4D", "KH")


def test_a_void_seat_plays_any_card_with_either_motif():
    state = new([["QS/7D"], ["AH/2C"]], "9C/8S")
    bid_all(state, 0, 0)
    play(state, "QS/7D", "QS")
    assert plays(state) == {("AH/2C", "AH"), ("AH/2C", "2C")}


def test_pope_or_idiot_motif_may_be_played_while_able_to_follow():
    state = new([["QS/7D"], ["AS/2D"], ["POPE/8H"], ["IDIOT/8C"]], "9C/8S")
    bid_all(state, 0, 0, 0, 0)
    play(state, "QS/7D", "QS")
    play(state, "AS/2D", "AS")
    assert plays(state) == {("POPE/8H", "POPE"), ("POPE/8H", "8H")}  # void in spades
    play(state, "POPE/8H", "POPE")
    play(state, "IDIOT/8C", "IDIOT")
    assert state.tricks == [0, 0, 0, 1]


def test_the_normal_half_of_pope_and_idiot_follows_suit_like_any_motif():
    state = new([["AH/2C"], ["POPE/8H", "QS/7D"]], "9C/8S")
    bid_all(state, 0, 0)
    play(state, "AH/2C", "AH")
    assert plays(state) == {("POPE/8H", "8H"), ("POPE/8H", "POPE")}


def test_pope_beats_the_highest_trump_and_idiot_beats_pope():
    state = new([["AS/2D"], ["POPE/8H"], ["AC/2H"]], "9C/8S")  # clubs are trump
    bid_all(state, 0, 0, 0)
    play(state, "AS/2D", "AS")
    play(state, "POPE/8H", "POPE")
    play(state, "AC/2H", "AC")
    assert state.tricks == [0, 1, 0]


def test_the_highest_trump_beats_the_led_suit():
    state = new([["AS/2D"], ["KD/4C"], ["QD/7S"]], "9C/8S")
    bid_all(state, 0, 0, 0)
    play(state, "AS/2D", "AS")
    play(state, "KD/4C", "4C")
    play(state, "QD/7S", "7S")
    assert state.tricks == [0, 1, 0]


def test_idiot_led_leaves_no_led_suit_and_no_trump():
    state = new([["IDIOT/8C"], ["AC/2H"], ["POPE/8H"]], "9C/8S")  # clubs trump
    bid_all(state, 0, 0, 0)
    play(state, "IDIOT/8C", "IDIOT")
    assert state.view(1)["led_suit"] is None
    assert plays(state) == {("AC/2H", "AC"), ("AC/2H", "2H")}
    play(state, "AC/2H", "AC")
    play(state, "POPE/8H", "POPE")
    assert state.tricks == [1, 0, 0]


def test_pope_led_wins_over_trumps_played_after_it():
    state = new([["POPE/8H"], ["AC/2H"]], "9C/8S")
    bid_all(state, 0, 0)
    play(state, "POPE/8H", "POPE")
    play(state, "AC/2H", "AC")
    assert state.tricks == [1, 0]


# -- two sets --------------------------------------------------------------------
def test_two_identical_motifs_the_first_played_is_higher():
    hands = [["AS/2D"], ["AS/2D"], ["KH/4D"], ["KC/4S"], ["QC/7H"], ["JC/3D"]]
    state = new(hands, "9D/6C", decks=2)  # diamonds trump, none played
    bid_all(state, *[0] * 6)
    for card, motif in [("AS/2D", "AS"), ("AS/2D", "AS"), ("KH/4D", "KH"), ("KC/4S", "4S"),
                        ("QC/7H", "QC"), ("JC/3D", "JC")]:
        play(state, card, motif)
    assert state.tricks == [1, 0, 0, 0, 0, 0]


def test_two_identical_cards_in_one_hand_are_listed_once_and_both_can_be_played():
    hands = [["AS/2D", "AS/2D"], ["KH/4D", "KC/4S"], ["QC/7H", "JC/3D"], ["QC/7H", "JC/3D"],
             ["10S/5C", "10H/5S"], ["10D/5H", "10C/5D"]]
    state = new(hands, "9H/6D", decks=2)
    assert state.view(0)["hand"] == ["AS/2D", "AS/2D"]
    bid_all(state, *[0] * 6)
    assert state.legal_actions() == [{"play": "AS/2D", "motif": "AS"},
                                     {"play": "AS/2D", "motif": "2D"}]
    play(state, "AS/2D", "2D")
    assert state.view(0)["hand"] == ["AS/2D"]


# -- bids and points ----------------------------------------------------------------
def test_a_bid_is_capped_by_the_cards_in_hand_and_by_points():
    hands = [["AS/2D", "AH/2C", "AD/2S"], ["KS/4H", "KH/4D", "KD/4C"]]
    state = new(hands, "9C/8S", chips=2)
    assert state.legal_actions() == [{"bid": 0}, {"bid": 1}, {"bid": 2}]
    assert_illegal_rejected(state, {"bid": 3})
    state = new(hands, "9C/8S", chips=15)
    assert [a["bid"] for a in state.legal_actions()] == [0, 1, 2, 3]


def test_a_seat_at_zero_points_can_only_bid_zero():
    state = new([["AS/2D"], ["KS/4H"]], "9C/8S", chips=0)
    assert state.legal_actions() == [{"bid": 0}]
    with pytest.raises(IllegalAction, match="your points, 0"):
        state.apply({"bid": 1})


def test_bids_must_be_whole_numbers_with_exact_json_types():
    state = new([["AS/2D"], ["KS/4H"]], "9C/8S")
    for bad in ({"bid": True}, {"bid": 1.0}, {"bid": "1"}, {"bid": 1, "x": 0}, {"play": 1}):
        assert_illegal_rejected(state, bad)


def test_exact_bid_scores_5_plus_tricks_and_a_missed_bid_loses_it():
    state = new([["AS/2D", "AH/2C"], ["KS/4H", "KH/4D"]], "9C/8S", chips=15)
    bid_all(state, 2, 1)
    play(state, "AS/2D", "AS")
    play(state, "KS/4H", "KS")
    play(state, "AH/2C", "AH")
    play(state, "KH/4D", "KH")
    assert state.result()["scores"] == [15 + 5 + 2, 15 - 1]
    assert state.result()["rounds"] == [{"bids": [2, 1], "tricks": [2, 0], "points": [22, 14]}]


def test_a_missed_zero_costs_nothing_and_points_never_go_below_zero():
    assert score_round(3, 3, 0) == 0
    assert score_round(0, 0, 2) == 0
    assert score_round(2, 5, 1) == 0
    state = new([["AS/2D"], ["KS/4H"]], "9C/8S", chips=1)
    bid_all(state, 0, 1)
    play(state, "AS/2D", "AS")
    play(state, "KS/4H", "KS")
    assert state.result()["scores"] == [1, 0] and state.result()["ranks"] == [1, 2]


def test_a_full_match_points_add_up_round_by_round():
    state = GAME.new(seats=4, seed=11)
    play_random(state, random.Random(5))
    result = state.result()
    points = [15] * 4
    assert len(result["rounds"]) == 10 and len(result["decks"]) == 10
    for cards, rnd in zip(DEFAULT_ROUNDS, result["rounds"], strict=True):
        assert sum(rnd["tricks"]) == cards
        triples = zip(points, rnd["bids"], rnd["tricks"], strict=True)
        points = [score_round(p, b, t) for p, b, t in triples]
        assert rnd["points"] == points
    assert result["scores"] == points


def test_ties_share_a_rank():
    state = new([["AS/2D"], ["KS/4H"], ["QS/7D"]], "9C/8S")
    bid_all(state, 1, 0, 0)
    for card, m in [("AS/2D", "AS"), ("KS/4H", "KS"), ("QS/7D", "QS")]:
        play(state, card, m)
    assert state.result()["scores"] == [21, 20, 20]
    assert state.result()["ranks"] == [1, 2, 2]


def test_no_result_before_the_end():
    with pytest.raises(ValueError):
        GAME.new(seats=2, seed=0).result()


def test_an_illegal_play_explains_itself_without_changing_anything():
    state = new([["AS/2D"], ["KS/4H"]], "9C/8S")
    bid_all(state, 0, 0)
    with pytest.raises(IllegalAction, match="not in your hand"):
        play(state, "KS/4H", "KS")
    with pytest.raises(IllegalAction, match="not a half"):
        play(state, "AS/2D", "KS")
    assert_illegal_rejected(state, {"play": "AS/2D"})


@pytest.mark.parametrize("decks", [0, 3, True, 1.0, "two", None])
def test_decks_is_auto_1_or_2_with_exact_json_types(decks):
    with pytest.raises(InvalidOptions):
        GAME.new(seats=2, seed=1, options={"decks": decks})


def test_a_view_holds_every_field_the_rules_page_lists_and_the_spectator_no_hand():
    state = GAME.new(seats=3, seed=2)
    fields = {"round", "cards_per_seat", "dealer", "trump_card", "trump", "hand", "bids",
              "tricks", "trick", "led_suit", "points", "pending", "history"}
    assert fields <= set(state.view(0)) and state.view(None)["hand"] is None
    assert GAME.describe()["options"] == {"decks": "auto", "rounds": DEFAULT_ROUNDS,
                                          "chips": 15, "deck": None}
