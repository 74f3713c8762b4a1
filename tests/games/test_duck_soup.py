"""Duck Soup: one scenario per rule of `docs/rulings/duck-soup.md`, with chosen decks.

Every rule's scenario deals a chosen first deck (``options["deck"]``) and plays
a scripted sequence of actions. Scenarios that need a second deal choose it
too, through the `later_decks` fixture, which replaces the seed's shuffle of
deals 1, 2, … (that later deals come from the seed alone is tested here once
and by the property tests). Options, the deal cap and the deck errors use
seeded deals.
"""

from __future__ import annotations

import json
import re

import pytest

import games
from games import duck_soup
from games.cards import RANKS_52, Card, deck_52
from games.duck_soup import state as duck_soup_state
from games.errors import IllegalAction, InvalidOptions
from tests.games.engine_checks import assert_illegal_rejected, assert_json_safe, json_strings

GAME = games.get("duck-soup")
ALL = [str(c) for c in deck_52()]
STOCK = ["KD", "QD", "JD", "10D", "8D", "6D"]


def rank(card: str) -> str:
    return card[:-1]


def make_deck(hand0=(), hand1=(), stock=(), dealer: int = 1) -> list[str]:
    """A deck giving seat 0 `hand0` and seat 1 `hand1` (filled up to 13 with unused
    cards), with `stock` on top of the stock. The non-dealer gets the even indexes."""
    used = [*hand0, *hand1, *stock]
    assert len(set(used)) == len(used)
    spare = [c for c in ALL if c not in used]
    hands = [list(hand0), list(hand1)]
    for hand in hands:
        while len(hand) < 13:
            hand.append(spare.pop(0))
    first, second = hands[1 - dealer], hands[dealer]
    return [c for pair in zip(first, second, strict=True) for c in pair] + list(stock) + spare


def new(deck: list[str], **options):
    return GAME.new(seed=0, options={"deck": deck, **options})


def hand(state, seat: int) -> list[str]:
    return sorted(state.view(seat)["hand"])


def plain_trick(state, keep=()) -> int:
    """The leader plays a card not in `keep`, the follower one of another rank, of
    another suit if it can (so the leader usually wins). Returns the winner."""
    leader = state.to_act
    lead = next(c for c in state.view(leader)["hand"] if c not in keep)
    state.apply({"play": lead})
    free = [c for c in state.view(1 - leader)["hand"] if c not in keep and rank(c) != rank(lead)]
    off_suit = [c for c in free if c[-1] != lead[-1]]
    state.apply({"play": (off_suit or free)[0]})
    return state.view(None)["history"][-1]["winner"]


SEVENS = ["7S", "7D", "7H", "7C"]


def coin_deck() -> list[str]:
    """Seat 0 (the non-dealer, who leads) holds 7S 7D 9S; seat 1 7H 7C 2D 9C 9D.

    Seat 0 has no other nine; the stock's top cards are STOCK (KD QD JD 10D …).
    """
    return make_deck(["7S", "7D", "9S", "KS"], ["7H", "7C", "2D", "9C", "9D"], STOCK)


# -- dealing -------------------------------------------------------------------
def test_seat_1_deals_one_card_at_a_time_non_dealer_first_and_the_rest_is_the_stock():
    deck = ALL[::-1]
    state = new(deck)
    view = state.view(0)
    assert view["dealer"] == 1 and view["deal"] == 1 and view["set"] == 1
    assert hand(state, 0) == sorted(deck[0:26:2])
    assert hand(state, 1) == sorted(deck[1:26:2])
    assert view["stock"] == 26 and view["hand_sizes"] == [13, 13]
    assert state.to_act == 0 and view["pending"] == "lead" and view["phase"] == "low"
    # the stock's top is deck[26]: the first trick's winner draws it
    winner = plain_trick(state)
    assert deck[26] in hand(state, winner) and deck[27] in hand(state, 1 - winner)


# -- a trick -------------------------------------------------------------------
@pytest.mark.parametrize(("lead", "follow", "winner", "points"), [
    ("5S", "3S", 1, 1),   # same suit: the lower card wins, 1 point
    ("5S", "KS", 0, 1),
    ("2S", "AS", 1, 1),   # the ace is the lowest, so the best, in the low phase
    ("5S", "2H", 0, 2),   # another suit never wins: the leader takes 2
    ("AS", "KH", 0, 2),
])
def test_low_phase_trick_lowest_of_the_led_suit_wins(lead, follow, winner, points):
    state = new(make_deck([lead], [follow], STOCK))
    state.apply({"play": lead})
    assert state.view(1)["pending"] == "follow"
    # no need to follow suit: every card of the hand is playable
    plain = [a["play"] for a in state.legal_actions() if set(a) == {"play"}]
    assert sorted(plain) == hand(state, 1)
    state.apply({"play": follow})
    view = state.view(None)
    assert view["history"] == [{
        "phase": "low", "winner": winner, "points": points, "case": None,
        "cards": [{"seat": 0, "card": lead, "call": None},
                  {"seat": 1, "card": follow, "call": None}],
    }]
    expected = [0, 0]
    expected[winner] = points
    assert view["points"] == {"low": expected, "high": [0, 0]}
    assert state.to_act == winner and view["pending"] == "lead" and view["leader"] == winner


def reach_high_phase(state, keep) -> int:
    """Play plain tricks until the stock is empty; returns who leads the high phase."""
    winner = None
    while state.view(None)["stock"]:
        winner = plain_trick(state, keep)
    return winner


@pytest.mark.parametrize(("lead", "follow", "lead_wins", "points"), [
    ("5S", "9S", False, 1),   # same suit: the higher card wins
    ("9S", "5S", True, 1),
    ("KS", "AS", False, 1),   # the ace is the highest, so the best, in the high phase
    ("2S", "AH", True, 2),    # another suit never wins
])
def test_high_phase_trick_highest_of_the_led_suit_wins(lead, follow, lead_wins, points):
    state = new(make_deck([lead], [follow], STOCK))
    leader = reach_high_phase(state, keep=[lead, follow])
    assert leader == 0  # seat 0 led every low trick and won it: it leads the high phase
    before = state.view(None)["points"]
    state.apply({"play": lead})
    state.apply({"play": follow})
    view = state.view(None)
    winner = leader if lead_wins else 1 - leader
    assert view["history"][-1]["phase"] == "high" and view["history"][-1]["winner"] == winner
    assert view["points"]["low"] == before["low"]
    assert view["points"]["high"][winner] == before["high"][winner] + points
    assert view["stock"] == 0 and view["hand_sizes"] == [12, 12]  # no drawing


# -- coin: the follower plays the leader's rank ----------------------------------
def test_A_fr_the_matching_rank_without_a_call_is_a_normal_trick_the_leader_wins_2():
    state = new(coin_deck())
    state.apply({"play": "7S"})
    legal = state.legal_actions()
    assert {"play": "7H"} in legal and {"play": "7H", "call": "coin"} in legal
    state.apply({"play": "7H"})
    view = state.view(None)
    assert view["history"][-1]["winner"] == 0 and view["history"][-1]["points"] == 2
    assert view["history"][-1]["case"] == "A"
    assert view["points"]["low"] == [2, 0]
    assert "KD" in hand(state, 0) and "QD" in hand(state, 1)  # the winner draws first
    assert state.to_act == 0 and view["pending"] == "lead"


def test_A_de_a_card_of_the_led_rank_is_listed_and_accepted_only_with_coin():
    state = new(coin_deck(), edition="de")
    state.apply({"play": "7S"})
    legal = state.legal_actions()
    assert {"play": "7H", "call": "coin"} in legal and {"play": "7H"} not in legal
    assert {"play": "9C"} in legal and {"play": "9C", "call": "coin"} not in legal
    with pytest.raises(IllegalAction, match="coin"):
        state.apply({"play": "7H"})
    assert_illegal_rejected(state, {"play": "7C"})


@pytest.mark.parametrize("edition", ["fr", "de"])
def test_a_call_on_a_card_of_another_rank_or_on_the_lead_is_illegal(edition):
    state = new(coin_deck(), edition=edition)
    assert_illegal_rejected(state, {"play": "7S", "call": "coin"})
    assert_illegal_rejected(state, {"call": "soupe"})
    state.apply({"play": "7S"})
    assert_illegal_rejected(state, {"play": "9C", "call": "coin"})
    assert_illegal_rejected(state, {"play": "7H", "call": "coin-coin"})
    assert_illegal_rejected(state, {"play": "7H", "call": "soupe-aux-canards"})
    assert_illegal_rejected(state, {"play": "7H", "call": "coin", "extra": 1})


@pytest.mark.parametrize("edition", ["fr", "de"])
def test_BA_the_leader_says_soupe_and_the_follower_wins_2_and_leads(edition):
    state = new(coin_deck(), edition=edition)
    state.apply({"play": "7S"})
    state.apply({"play": "7H", "call": "coin"})
    view = state.view(0)
    assert view["pending"] == "answer-coin" and state.to_act == 0
    assert view["trick"] == [{"seat": 0, "card": "7S", "call": None},
                             {"seat": 1, "card": "7H", "call": "coin"}]
    assert state.legal_actions() == [{"call": "soupe"}, {"play": "7D", "call": "coin-coin"}]
    state.apply({"call": "soupe"})
    view = state.view(None)
    assert view["history"] == [{
        "phase": "low", "winner": 1, "points": 2, "case": "BA",
        "cards": [{"seat": 0, "card": "7S", "call": None},
                  {"seat": 1, "card": "7H", "call": "coin"}],
    }]
    assert view["points"]["low"] == [0, 2] and view["trick"] == []
    assert "KD" in hand(state, 1) and "QD" in hand(state, 0)  # the follower won: it draws first
    assert view["hand_sizes"] == [13, 13] and view["stock"] == 24
    assert state.to_act == 1 and view["pending"] == "lead" and view["leader"] == 1


@pytest.mark.parametrize("edition", ["fr", "de"])
def test_answer_coin_without_a_third_card_the_leader_can_only_concede(edition):
    state = new(coin_deck(), edition=edition)
    state.apply({"play": "9S"})
    state.apply({"play": "9D", "call": "coin"})
    assert state.legal_actions() == [{"call": "soupe"}]
    assert_illegal_rejected(state, {"play": "KS", "call": "coin-coin"})
    assert_illegal_rejected(state, {"play": "KS"})  # no silent play: concede or coin-coin
    with pytest.raises(IllegalAction, match="soupe"):
        state.apply({"play": "9C", "call": "coin-coin"})  # not in the leader's hand


def coin_coin(state) -> None:
    """7S led, 7H coin, 7D coin-coin: the follower (seat 1) must answer."""
    state.apply({"play": "7S"})
    state.apply({"play": "7H", "call": "coin"})
    state.apply({"play": "7D", "call": "coin-coin"})


@pytest.mark.parametrize("edition", ["fr", "de"])
def test_BBA_soupe_aux_canards_the_follower_wins_both_tricks_2_each_and_draws_2_first(edition):
    state = new(coin_deck(), edition=edition)
    coin_coin(state)
    view = state.view(1)
    assert view["pending"] == "answer-coin-coin" and state.to_act == 1
    assert [p["card"] for p in view["trick"]] == ["7S", "7H", "7D"]
    assert {"play": "7C", "call": "soupe-aux-canards"} in state.legal_actions()
    state.apply({"play": "7C", "call": "soupe-aux-canards"})
    view = state.view(None)
    assert [(h["cards"][0]["card"], h["cards"][1]["card"], h["winner"], h["points"], h["case"])
            for h in view["history"]] == [("7S", "7H", 1, 2, "BBA"), ("7D", "7C", 1, 2, "BBA")]
    assert view["history"][1]["cards"] == [{"seat": 0, "card": "7D", "call": "coin-coin"},
                                           {"seat": 1, "card": "7C",
                                            "call": "soupe-aux-canards"}]
    assert view["points"]["low"] == [0, 4]
    assert {"KD", "QD"} <= set(hand(state, 1)) and {"JD", "10D"} <= set(hand(state, 0))
    assert view["hand_sizes"] == [13, 13] and view["stock"] == 22
    assert state.to_act == 1 and view["pending"] == "lead"


@pytest.mark.parametrize("edition", ["fr", "de"])
@pytest.mark.parametrize(("answer", "second_points"), [
    ("2D", 1),  # same suit as the coin-coin card: 1, even though 2D is lower than 7D
    ("9C", 2),  # another suit: 2
])
def test_BBB_any_other_card_the_leader_wins_both_the_second_by_its_suits(
        edition, answer, second_points):
    state = new(coin_deck(), edition=edition)
    coin_coin(state)
    state.apply({"play": answer})
    view = state.view(None)
    assert [(h["winner"], h["points"], h["case"]) for h in view["history"]] == [
        (0, 2, "BBB"), (0, second_points, "BBB")]
    assert view["points"]["low"] == [2 + second_points, 0]
    assert {"KD", "QD"} <= set(hand(state, 0)) and {"JD", "10D"} <= set(hand(state, 1))
    assert view["stock"] == 22 and state.to_act == 0


def test_BBB_fr_the_fourth_card_without_its_call_loses_both_tricks():
    state = new(coin_deck())
    coin_coin(state)
    assert {"play": "7C"} in state.legal_actions()
    state.apply({"play": "7C"})
    view = state.view(None)
    assert [(h["winner"], h["points"], h["case"]) for h in view["history"]] == [
        (0, 2, "BBB"), (0, 2, "BBB")]
    assert view["points"]["low"] == [4, 0] and state.to_act == 0


def test_de_the_fourth_card_after_coin_coin_only_with_soupe_aux_canards():
    state = new(coin_deck(), edition="de")
    coin_coin(state)
    legal = state.legal_actions()
    assert {"play": "7C"} not in legal and {"play": "7C", "call": "soupe-aux-canards"} in legal
    with pytest.raises(IllegalAction, match="soupe-aux-canards"):
        state.apply({"play": "7C"})
    assert_illegal_rejected(state, {"play": "9C", "call": "soupe-aux-canards"})
    assert_illegal_rejected(state, {"call": "soupe"})


# -- drawing and the phases -------------------------------------------------------
def test_after_a_single_trick_each_draws_one_winner_first():
    deck = make_deck(["5S"], ["3S"], STOCK)
    state = new(deck)
    state.apply({"play": "5S"})
    state.apply({"play": "3S"})  # seat 1 wins with the lower spade
    assert "KD" in hand(state, 1) and "QD" in hand(state, 0)
    assert state.view(None)["stock"] == 24 and state.view(None)["hand_sizes"] == [13, 13]


def test_coin_coin_with_two_cards_left_draws_one_each_winner_the_top_then_high_phase():
    deck = make_deck(["7S", "7D"], ["7H", "7C"])
    state = new(deck)
    while state.view(None)["stock"] > 2:
        plain_trick(state, keep=SEVENS)
    assert state.view(None)["stock"] == 2 and state.view(None)["phase"] == "low"
    leader = state.to_act
    mine = [c for c in SEVENS if c in hand(state, leader)]
    theirs = [c for c in SEVENS if c in hand(state, 1 - leader)]
    low_before = state.view(None)["points"]["low"]
    state.apply({"play": mine[0]})
    state.apply({"play": theirs[0], "call": "coin"})
    state.apply({"play": mine[1], "call": "coin-coin"})
    state.apply({"play": theirs[1], "call": "soupe-aux-canards"})
    view = state.view(None)
    winner = 1 - leader
    assert deck[50] in hand(state, winner) and deck[51] in hand(state, leader)
    assert view["stock"] == 0 and view["hand_sizes"] == [12, 12]
    assert view["points"]["low"][winner] == low_before[winner] + 4
    # the last card is drawn: the high phase starts, led by the winner of the last trick
    assert view["phase"] == "high" and state.to_act == winner and view["pending"] == "lead"


def test_the_low_phase_ends_when_the_last_card_is_drawn_and_its_points_are_kept():
    state = new(make_deck(["5S", "9S"], ["KS"]))
    for _ in range(12):
        plain_trick(state, keep=["5S", "9S", "KS"])
        assert state.view(None)["phase"] == "low"
    last = plain_trick(state, keep=["5S", "9S", "KS"])
    view = state.view(None)
    assert view["phase"] == "high" and view["stock"] == 0 and view["hand_sizes"] == [13, 13]
    assert state.to_act == last == 0  # seat 0 won every plain trick: it leads the high phase
    assert view["points"] == {"low": [26, 0], "high": [0, 0]}
    assert [h["phase"] for h in view["history"]] == ["low"] * 13
    state.apply({"play": "9S"})
    state.apply({"play": "KS"})  # the higher spade wins now
    view = state.view(None)
    assert view["points"] == {"low": [26, 0], "high": [0, 1]}
    assert view["history"][-1]["phase"] == "high" and state.to_act == 1
    assert view["hand_sizes"] == [12, 12]


def test_coin_coin_in_the_high_phase_scores_high_points_and_draws_nothing():
    state = new(coin_deck())
    assert reach_high_phase(state, keep=SEVENS) == 0
    before = state.view(None)["points"]
    coin_coin(state)
    state.apply({"play": "7C", "call": "soupe-aux-canards"})
    view = state.view(None)
    assert view["points"]["low"] == before["low"]
    assert view["points"]["high"] == [before["high"][0], before["high"][1] + 4]
    assert view["hand_sizes"] == [11, 11] and state.to_act == 1
    assert [h["case"] for h in view["history"][-2:]] == ["BBA", "BBA"]


# -- whole deals, scripted trick by trick ----------------------------------------
def scheduled_deck(low_winners: list[int], dealer: int) -> list[str]:
    """A deck for a deal whose low tricks go to `low_winners` in order.

    Seat 0 is dealt the spades and always draws hearts; seat 1 the diamonds and
    clubs. The two never hold a common suit, so every trick is worth 2 and is
    won by the leader, unless the follower calls coin and the leader concedes.
    After low trick i the winner draws first, so the stock's pair i is ordered
    by its winner. Both draws of pair i are rank i, so both hands keep ranks in
    common for the coins.
    """
    hands = {0: [r + "S" for r in RANKS_52], 1: [r + "D" for r in RANKS_52]}
    stock = []
    for i, w in enumerate(low_winners):
        draws = {0: RANKS_52[i] + "H", 1: RANKS_52[i] + "C"}
        stock += [draws[w], draws[1 - w]]
    dealt = [c for pair in zip(hands[1 - dealer], hands[dealer], strict=True) for c in pair]
    return dealt + stock


def schedule(low0: int, high0: int) -> tuple[list[int], list[int]]:
    """Trick winners: seat 0 takes its `low0` low tricks first and its `high0` high
    tricks last (a follower can only win by a coin, and the last tricks' few cards
    may share no rank)."""
    return [0] * low0 + [1] * (13 - low0), [1] * (13 - high0) + [0] * high0


def play_trick_to(state, want: int) -> None:
    """One trick, won by seat `want` (the scheduled deck makes this possible)."""
    leader, follower = state.to_act, 1 - state.to_act
    deal = state.view(None)["deal"]
    mine, theirs = state.hands[leader], state.hands[follower]
    if want == follower:  # coin, and the leader concedes
        lead = next(c for c in mine if any(rank(d) == rank(c) for d in theirs))
        state.apply({"play": lead})
        state.apply({"play": next(d for d in theirs if rank(d) == rank(lead)), "call": "coin"})
        state.apply({"call": "soupe"})
    else:  # the follower plays another suit: keep ranks in common for later coins
        their_ranks = {rank(d) for d in theirs}
        lead = next((c for c in mine if rank(c) not in their_ranks), mine[0])
        my_ranks = {rank(c) for c in mine}
        follow = next((d for d in theirs if rank(d) not in my_ranks), None)
        follow = follow or next((d for d in theirs if rank(d) != rank(lead)), theirs[0])
        state.apply({"play": lead})
        state.apply({"play": follow})  # fr: the same rank in silence is case A, still 2
    view = state.view(None)
    if view["deal"] == deal:  # (after a deal's last trick a new deal may have started)
        assert view["history"][-1]["winner"] == want


def play_deal(state, low0: int, high0: int) -> None:
    lows, highs = schedule(low0, high0)
    deal = state.view(None)["deal"]
    for want in lows:
        assert state.view(None)["phase"] == "low"
        play_trick_to(state, want)
    for want in highs:
        assert state.view(None)["phase"] == "high" and state.view(None)["deal"] == deal
        play_trick_to(state, want)


@pytest.fixture
def later_decks(monkeypatch):
    """A list the test fills with the decks of deals 1, 2, … (deal 0 is options["deck"])."""
    decks: list[list[str]] = []
    real = duck_soup.deal_deck

    def chosen(seed, options, k):
        if 0 < k <= len(decks):
            return [Card(c) for c in decks[k - 1]]
        return real(seed, options, k)

    monkeypatch.setattr(duck_soup_state, "deal_deck", chosen)
    return decks


def scripted_match(later_decks, deals: list[tuple[int, int]], **options):
    """A match whose deal k gives seat 0 deals[k] = (low tricks, high tricks)."""
    lows = [schedule(*d)[0] for d in deals]
    later_decks[:] = [scheduled_deck(lows[k], dealer=(1 + k) % 2) for k in range(1, len(deals))]
    return GAME.new(seed=0, options={"deck": scheduled_deck(lows[0], dealer=1), **options})


def test_deal_score_is_low_points_times_high_points(later_decks):
    state = scripted_match(later_decks, [(4, 7)], deal_only=True)
    play_deal(state, 4, 7)
    assert state.is_over
    assert state.view(None)["points"] == {"low": [8, 18], "high": [14, 12]}
    result = state.result()
    assert result["deals"] == [{"low": [8, 18], "high": [14, 12], "score": [112, 216],
                                "pond": 1}]
    # deal_only: the scores are the deal scores, and no set is decided
    assert result["scores"] == [112, 216] and result["ranks"] == [2, 1]
    assert result["set_points"] == [0, 0] and result["totals"] == [[112, 216]]
    assert len(result["decks"]) == 1


def test_a_phase_with_no_points_makes_the_deal_score_zero(later_decks):
    state = scripted_match(later_decks, [(13, 0)], deal_only=True)
    play_deal(state, 13, 0)
    result = state.result()
    assert result["deals"][0] == {"low": [26, 0], "high": [0, 26], "score": [0, 0],
                                  "pond": None}
    assert result["scores"] == [0, 0] and result["ranks"] == [1, 1]


def test_pond_a_deal_score_of_pond_or_more_wins_the_set_at_once_for_2(later_decks):
    state = scripted_match(later_decks, [(13, 13)])
    play_deal(state, 13, 13)
    assert state.is_over
    result = state.result()
    assert result["deals"] == [{"low": [26, 0], "high": [26, 0], "score": [676, 0], "pond": 0}]
    assert result["scores"] == [2, 0] and result["ranks"] == [1, 2]
    assert result["totals"] == [[676, 0]]


def test_pond_reached_by_both_the_higher_deal_score_wins_it(later_decks):
    state = scripted_match(later_decks, [(7, 7)], target=10_000)
    play_deal(state, 7, 7)
    result = state.result()
    assert result["deals"] == [{"low": [14, 12], "high": [14, 12], "score": [196, 144],
                                "pond": 0}]
    assert result["scores"] == [2, 0]


def test_pond_equal_deal_scores_win_nothing_and_equal_totals_need_another_deal(later_decks):
    # 168 = 168: nobody wins by the pond; both totals reach the target of 150 but are
    # equal, so a second deal is played and added to the totals.
    state = scripted_match(later_decks, [(7, 6), (2, 12)], target=150)
    play_deal(state, 7, 6)
    view = state.view(None)
    assert not state.is_over
    assert view["deals"] == [{"low": [14, 12], "high": [12, 14], "score": [168, 168],
                              "pond": None}]
    assert view["deal"] == 2 and view["set"] == 1 and view["dealer"] == 0
    assert view["set_totals"] == [168, 168] and view["set_points"] == [0, 0]
    assert view["points"] == {"low": [0, 0], "high": [0, 0]} and view["history"] == []
    assert state.to_act == 1  # the new non-dealer leads
    play_deal(state, 2, 12)
    result = state.result()
    assert result["deals"][1]["score"] == [96, 44]
    # 264 against 212: the loser is not in the soup (212 >= 125): 1 set point
    assert result["totals"] == [[264, 212]] and result["scores"] == [1, 0]


def test_target_the_loser_below_pond_is_in_the_soup_and_the_winner_gets_2(later_decks):
    state = scripted_match(later_decks, [(13, 2)] * 3)
    for k in range(3):
        assert state.view(None)["set_totals"] == [104 * k, 0]
        play_deal(state, 13, 2)
    result = state.result()
    assert [d["score"] for d in result["deals"]] == [[104, 0]] * 3
    assert result["totals"] == [[312, 0]] and result["scores"] == [2, 0]


def test_target_a_higher_total_reaching_it_wins_1_set_point(later_decks):
    # 120 + 96 + 96 = 312 against 120 + 44 + 44 = 208 (>= pond 125): 1 set point
    state = scripted_match(later_decks, [(3, 10), (2, 12), (2, 12)])
    play_deal(state, 3, 10)
    assert state.view(None)["set_totals"] == [120, 120]
    play_deal(state, 2, 12)
    assert not state.is_over and state.view(None)["set_totals"] == [216, 164]
    play_deal(state, 2, 12)
    result = state.result()
    assert result["totals"] == [[312, 208]] and result["scores"] == [1, 0]
    assert result["ranks"] == [1, 2] and len(result["decks"]) == 3


def test_a_match_of_several_sets_new_sets_from_0_and_the_dealer_alternates_across_sets(
        later_decks):
    deals = [(13, 13), (0, 0), (13, 2), (13, 13)]
    state = scripted_match(later_decks, deals, sets=3)
    seen = []
    for low0, high0 in deals:
        view = state.view(None)
        seen.append((view["set"], view["deal"], view["dealer"], state.to_act,
                     view["set_totals"], view["set_points"]))
        play_deal(state, low0, high0)
    assert seen == [
        (1, 1, 1, 0, [0, 0], [0, 0]),    # seat 1 deals first, the non-dealer leads
        (2, 2, 0, 1, [0, 0], [2, 0]),    # seat 0 won set 1 by the pond; a new set from 0
        (3, 3, 1, 0, [0, 0], [2, 2]),    # seat 1 won set 2 by the pond (0 x 0 against 26 x 26)
        (3, 4, 0, 1, [104, 0], [2, 2]),  # 104 is below pond and target: the set goes on
    ]
    assert state.is_over
    result = state.result()
    assert [d["score"] for d in result["deals"]] == [[676, 0], [0, 676], [104, 0], [676, 0]]
    assert [d["pond"] for d in result["deals"]] == [0, 1, None, 0]
    assert result["totals"] == [[676, 0], [0, 676], [780, 0]]
    assert result["scores"] == [4, 2] and result["ranks"] == [1, 2]
    assert result["decks"] == [scheduled_deck(schedule(*d)[0], (1 + k) % 2)
                               for k, d in enumerate(deals)]


# -- the match's bounds and its deals ------------------------------------------------
def test_a_match_ends_after_max_deals_as_it_stands(monkeypatch):
    monkeypatch.setattr(duck_soup_state, "MAX_DEALS", 2)
    state = GAME.new(seed=5, options={"target": 10_000, "pond": 10_000})
    while not state.is_over:
        state.apply(state.legal_actions()[0])
    result = state.result()
    assert len(result["deals"]) == 2 and result["capped"] is True
    assert result["scores"] == [0, 0] and result["ranks"] == [1, 1]
    assert len(result["totals"]) == 1 and result["totals"][0] == [
        sum(d["score"][s] for d in result["deals"]) for s in (0, 1)]


def test_later_deals_are_shuffled_from_the_seed_not_from_the_deck_option():
    deck = ALL[::-1]
    a = GAME.new(seed=11, options={"deck": deck, "target": 10_000, "pond": 10_000})
    b = GAME.new(seed=11, options={"target": 10_000, "pond": 10_000})
    for state in (a, b):
        while state.view(None)["deal"] < 3:
            state.apply(state.legal_actions()[-1])
    assert a.decks[0] == deck and b.decks[0] != deck
    assert a.decks[1:] == b.decks[1:] == [duck_soup.deal_deck(11, b.options, k) for k in (1, 2)]
    assert a.decks[1] != a.decks[2]


# -- options -------------------------------------------------------------------------
def test_options_defaults():
    state = GAME.new(seed=0)
    assert state.options == {"edition": "fr", "target": 250, "pond": 125, "sets": 1,
                             "deal_only": False, "deck": None}
    assert GAME.min_seats == GAME.max_seats == 2
    with pytest.raises(InvalidOptions, match="2 seats"):
        GAME.new(seats=3)


@pytest.mark.parametrize(("deck", "message"), [
    (ALL[:51], "52 cards, not 51"),
    (ALL[:51] + ["AS"], "too many of: 'AS'"),
    (ALL[:51] + ["1S"], "not cards of this game: '1S'"),
    (ALL[:51] + ["AS"], "missing: 'KC'"),
    ([c.lower() for c in ALL], "not cards of this game: '10c'"),
    ("AS 2S", "list of card names"),
    ([1] * 52, "list of card names"),
    ([], "52 cards, not 0"),
])
def test_a_deck_that_is_not_the_52_cards_is_refused(deck, message):
    with pytest.raises(InvalidOptions, match=message):
        GAME.new(seed=0, options={"deck": deck})


@pytest.mark.parametrize("options", [
    {"edition": "en"}, {"edition": None}, {"target": 0}, {"target": 250.0}, {"pond": True},
    {"sets": 0}, {"sets": 10}, {"deal_only": 1}, {"decks": []},
])
def test_bad_options_are_refused(options):
    with pytest.raises(InvalidOptions):
        GAME.new(seed=0, options=options)


# -- what a seat sees --------------------------------------------------------------
VIEW_KEYS = {"edition", "phase", "hand", "stock", "trick", "pending", "points", "set_totals",
             "set_points", "dealer", "history"}


def hidden_from(state, seat):
    """The cards `seat` may not know: the other hand and the stock (or both hands)."""
    secret = set(state.deck[state.top:])
    for s in (0, 1):
        if s != seat:
            secret |= set(state.hands[s])
    return secret


def test_views_hold_the_rule_pages_fields_and_never_the_other_hand_or_the_stock():
    state = new(coin_deck(), edition="de")
    pendings = []
    for action in ({"play": "7S"}, {"play": "7H", "call": "coin"},
                   {"play": "7D", "call": "coin-coin"}, {"play": "2D"}):
        for seat in (0, 1, None):
            view = state.view(seat)
            assert VIEW_KEYS <= set(view)
            assert_json_safe(view)
            assert view["edition"] == "de" and view["stock"] == len(state.deck) - state.top
            assert not set(json_strings(view)) & hidden_from(state, seat), seat
            if seat is None:
                assert view["hand"] is None
            else:
                assert sorted(view["hand"]) == sorted(state.hands[seat])
        pendings.append(state.view(None)["pending"])
        state.apply(action)
    assert pendings == ["lead", "follow", "answer-coin", "answer-coin-coin"]
    view = state.view(0)
    assert view["points"] == {"low": [3, 0], "high": [0, 0]}
    assert view["set_totals"] == [0, 0] and view["set_points"] == [0, 0] and view["dealer"] == 1
    assert len(view["history"]) == 2 and view["trick"] == []


def test_a_hand_is_shown_by_suit_best_card_first_in_each_phase():
    state = new(make_deck(["AS", "2S", "KS", "3H"], []))
    suits = [c[-1] for c in state.view(0)["hand"]]
    assert suits == sorted(suits, key="SHDC".index)
    low = [c for c in state.view(0)["hand"] if c[-1] == "S"]
    assert low[0] == "AS" and low[1] == "2S" and low[-1] == "KS"
    reach_high_phase(state, keep=["AS", "2S", "KS"])
    high = [c for c in state.view(0)["hand"] if c[-1] == "S"]
    assert high[0] == "AS" and high[1] == "KS" and high[-1] == "2S"


CARD_TOKEN = re.compile(r"\b(?:10|[2-9AJQK])[SHDC]\b")


def test_an_illegal_action_message_names_only_what_the_seat_knows():
    state = new(coin_deck())
    secret = hidden_from(state, 0)
    for action in ({"play": "7H"}, {"play": "KD"}, {"bid": 1}, "7S", {"play": "7S", "x": 1}):
        with pytest.raises(IllegalAction) as info:
            state.apply(action)
        named = set(CARD_TOKEN.findall(str(info.value))) - {"7H", "KD"}  # minus what was sent
        assert not named & secret, (action, str(info.value))
    assert "not in your hand" in _message(state, {"play": "7H"})


def _message(state, action) -> str:
    with pytest.raises(IllegalAction) as info:
        state.apply(action)
    return str(info.value)


def test_result_is_refused_before_the_end_and_json_safe_after():
    state = new(coin_deck(), deal_only=True)
    with pytest.raises(ValueError, match="not over"):
        state.result()
    while not state.is_over:
        state.apply(state.legal_actions()[0])
    result = state.result()
    assert json.loads(json.dumps(result)) == result
    assert result["decks"] == [coin_deck()]
    assert set(result) >= {"scores", "ranks", "totals", "decks", "deals"}
    assert state.legal_actions() == [] and state.to_act is None
    with pytest.raises(IllegalAction, match="over"):
        state.apply({"play": "7S"})


def test_apply_matches_the_listed_action_exactly():
    state = new(coin_deck())
    for action in ({"play": "7S", "call": None}, {"play": "7S", "extra": None}, {"play": None},
                   {"play": ["7S"]}, {"play": "7S", "call": ""}, {"call": None}, {}):
        assert_illegal_rejected(state, action)
    assert "no 'call' key" in _message(state, {"play": "7S", "call": None})
    state.apply({"play": Card("7S")})  # a Card is its notation
    stored = state.view(None)["trick"][0]["card"]
    assert stored == "7S" and type(stored) is Card  # the listed action's card is kept


def test_a_match_capped_as_a_set_ends_lists_only_the_sets_played(later_decks, monkeypatch):
    monkeypatch.setattr(duck_soup_state, "MAX_DEALS", 1)
    state = scripted_match(later_decks, [(13, 13)], sets=3)
    play_deal(state, 13, 13)
    assert state.is_over
    result = state.result()
    assert result["capped"] is True and result["totals"] == [[676, 0]]
    assert result["scores"] == [2, 0] and result["ranks"] == [1, 2]
