"""Soupe & Gertrude: set-up, the draw, the auction and payment, with chosen decks.

One test per rule of `docs/rulings/soupe-gertrude.md`; special cards and winning are
in `test_soupe_gertrude_play.py`.
"""

from __future__ import annotations

from collections import Counter

import pytest

from games.errors import IllegalAction, InvalidOptions
from games.soupe_gertrude.cards import COUNTS, MONEY, VALUES, full_deck, total_value
from tests.games.test_soupe_gertrude_support import GAME, PURSE, act, events, make_deck, new, sell


def test_the_card_set_has_the_pages_counts_and_totals():
    assert len(full_deck(False)) == 42 and len(full_deck(True)) == 44
    assert total_value(False) == 156 and total_value(True) == 161
    assert sum(COUNTS[c] for c in MONEY) == 27


def test_seeded_set_up_deals_four_money_cards_and_is_recorded_as_the_deck():
    state = GAME.new(seats=4, seed=9)
    for seat in range(4):
        hand = state.view(seat)["hand"]
        assert len(hand) == 4 and all(c in MONEY for c in hand)
    deck = state.decks[0]  # the deck as dealt (result() shows it once the match is over)
    assert sorted(deck) == sorted(full_deck(False))
    again = GAME.new(seats=4, seed=3, options={"deck": deck})
    assert [again.view(s)["hand"] for s in range(4)] == [state.view(s)["hand"] for s in range(4)]
    assert again.pile == state.pile


def test_deck_option_deals_four_at_a_time_and_keeps_the_pile_order():
    deck = make_deck(2, top=["patate", "souris", "oseille-5"],
                     hands=[["oseille-5"] * 2 + ["oseille-1"] * 2, PURSE])
    state = GAME.new(seats=2, options={"deck": deck})
    assert state.view(0)["hand"] == ["oseille-1", "oseille-1", "oseille-5", "oseille-5"]
    assert state.view(1)["hand"] == sorted(PURSE, key=list(COUNTS).index)
    assert state.pile[:3] == ["patate", "souris", "oseille-5"]


@pytest.mark.parametrize("bad", [
    lambda d: d[:-1],                      # a card short
    lambda d: d[:-1] + ["oseille-1"],      # one too many money cards
    lambda d: ["patate"] + d[1:-1] + [d[0]] if d[-1] == "patate" else None,
])
def test_a_deck_that_is_not_the_full_deck_is_refused(bad):
    deck = bad(make_deck(3))
    with pytest.raises(InvalidOptions):
        GAME.new(seats=3, options={"deck": deck})


def test_a_deck_must_open_with_money_for_every_seat():
    deck = make_deck(3)
    deck[5], deck[-1] = deck[-1], deck[5]  # a vegetable among the dealt cards
    with pytest.raises(InvalidOptions, match="money"):
        GAME.new(seats=3, options={"deck": deck})


def test_the_variant_deck_holds_the_turnip_and_the_fly():
    with pytest.raises(InvalidOptions):
        GAME.new(seats=3, options={"deck": make_deck(3), "navet_mouche": True})
    GAME.new(seats=3, options={"deck": make_deck(3, variant=True), "navet_mouche": True})


@pytest.mark.parametrize("options", [{"first": 3}, {"manches": 2}, {"navet_mouche": 1}, {"first": -1}])
def test_bad_options_are_refused(options):
    with pytest.raises(InvalidOptions):
        GAME.new(seats=3, options=options)


def test_the_first_seat_is_always_asked_for_a_special_card_even_without_one():
    state = new(first=2)
    assert (state.to_act, state.pending) == (2, "special")
    assert state.legal_actions() == [{"pass": True}]


def test_the_drawer_takes_three_cards_and_only_it_sees_the_hidden_ones():
    state = new(top=["patate", "oseille-5", "souris"])
    act(state, 0, {"pass": True})
    assert state.pending == "face_up"
    assert state.view(0)["lot"]["cards"] == ["patate", "oseille-5", "souris"]
    act(state, 0, {"face_up": "souris"})
    for seat in (1, 2, None):
        assert state.view(seat)["lot"] == {"face_up": "souris", "count": 3}
    assert state.view(0)["pile"] == len(state.pile)


def test_an_all_vegetable_draw_is_shown_shuffled_back_and_drawn_again():
    top = ["tomate", "carotte", "poireau"]
    state = new(top=top)
    act(state, 0, {"pass": True})
    shown = events(state.view(2), "redraw")
    assert shown and sorted(shown[0]["cards"]) == sorted(top) and shown[0]["seat"] == 0
    assert not all(c in ("tomate", "carotte", "poireau", "patate") for c in state.lot)
    twin = new(top=top)
    act(twin, 0, {"pass": True})
    assert twin.lot == state.lot  # the reshuffle is seeded


def test_a_pile_of_nothing_but_vegetables_is_kept_as_drawn():
    state = new()
    vegetables = [c for c in state.pile if c in ("tomate", "carotte", "poireau", "patate")]
    state.out.extend(c for c in state.pile if c not in vegetables)
    state.pile = vegetables
    act(state, 0, {"pass": True})
    assert state.lot == vegetables[:3] and not events(state.view(1), "redraw")


def test_the_auction_runs_from_the_drawers_left_and_passing_is_not_final():
    state = new()
    act(state, 0, {"pass": True})
    act(state, 0, state.legal_actions()[0])
    assert {"pass": True} not in state.legal_actions()  # an opening is a bid
    act(state, 0, {"bid": 1})
    act(state, 1, {"pass": True})
    act(state, 2, {"bid": 2})
    act(state, 0, {"pass": True})  # the drawer is asked too
    act(state, 1, {"bid": 3})      # seat 1 passed before, and still may raise
    assert {"bid": 3} not in state.legal_actions() and {"bid": 4} in state.legal_actions()
    act(state, 2, {"pass": True})
    act(state, 0, {"pass": True})
    assert (state.pending, state.to_act) == ("pay", 1)
    assert state.view(2)["high_bid"] == 3 and state.view(2)["high_bidder"] == 1
    assert {a["to"] for a in state.legal_actions()} == {0, 2}


def test_bids_are_offered_up_to_the_value_of_every_card():
    state = new()
    act(state, 0, {"pass": True})
    act(state, 0, state.legal_actions()[0])
    assert state.legal_actions() == [{"bid": n} for n in range(157)]
    with pytest.raises(IllegalAction):
        state.apply({"bid": 157})
    with pytest.raises(IllegalAction):
        state.apply({"bid": 1.0})


def test_payment_must_reach_every_other_seat_before_it_may_end():
    state = new(seats=4)
    act(state, 0, {"pass": True})
    act(state, 0, state.legal_actions()[0])
    act(state, 0, {"bid": 1})
    for seat in (1, 2, 3):
        act(state, seat, {"pass": True})
    act(state, 0, {"give": "oseille-4", "to": 1})  # the bid is met, two seats still wait
    assert {"done": True} not in state.legal_actions()
    act(state, 0, {"give": "oseille-3", "to": 1})  # allowed: 3 cards left for 2 waiting seats
    assert {t for a in state.legal_actions() for t in [a.get("to")]} == {2, 3}  # 2 left, 2 waiting
    act(state, 0, {"give": "oseille-3", "to": 2})
    act(state, 0, {"give": "oseille-1", "to": 3})
    assert state.pending != "pay" and state.view(3)["hand_sizes"][0] == 3  # the lot's 3 cards
    gives = events(state.view(None), "give")
    assert [(g["to"], g["card"]) for g in gives] == [
        (1, "oseille-4"), (1, "oseille-3"), (2, "oseille-3"), (3, "oseille-1")]


def test_done_needs_the_bid_met_and_then_ends_the_payment():
    state = new()
    act(state, 0, {"pass": True})
    act(state, 0, state.legal_actions()[0])
    act(state, 0, {"bid": 8})
    act(state, 1, {"pass": True})
    act(state, 2, {"pass": True})
    act(state, 0, {"give": "oseille-1", "to": 1})
    act(state, 0, {"give": "oseille-3", "to": 2})
    assert {"done": True} not in state.legal_actions()  # 4 of 8 given
    act(state, 0, {"give": "oseille-4", "to": 2})
    act(state, 0, {"done": True})
    assert [len(h) for h in state.hands] == [1 + 3, 5, 6]


def test_with_too_few_cards_the_winner_gives_one_each_until_its_hand_runs_out():
    state = new(seats=6)
    act(state, 0, {"pass": True})
    act(state, 0, state.legal_actions()[0])
    act(state, 0, {"bid": 2})
    for seat in (1, 2, 3, 4, 5):
        act(state, seat, {"pass": True})
    for to in (1, 2, 3, 4):
        legal = state.legal_actions()
        assert {"done": True} not in legal
        assert all(a["to"] not in range(1, to) for a in legal)  # no seat gets two while one waits
        act(state, 0, [a for a in legal if a["to"] == to][0])
    assert state.hands[5] == PURSE and len(state.hands[0]) == 3  # paid nothing, then bought the lot


def test_in_a_two_seat_game_only_the_highest_card_given_reaches_the_other_seat():
    state = new(seats=2, hands=[["oseille-5", "oseille-3", "oseille-1", "oseille-4"], PURSE])
    act(state, 0, {"pass": True})
    act(state, 0, state.legal_actions()[0])
    act(state, 0, {"bid": 8})
    act(state, 1, {"pass": True})
    act(state, 0, {"give": "oseille-3", "to": 1})
    act(state, 0, {"give": "oseille-5", "to": 1})
    assert len(state.hands[1]) == 4  # nothing reaches it before the payment ends
    act(state, 0, {"done": True})
    assert Counter(state.hands[1]) == Counter(PURSE + ["oseille-5"])
    assert state.out == ["oseille-3"]
    view = state.view(1)
    assert events(view, "received")[0] == {"event": "received", "seat": 1, "card": "oseille-5"}
    assert events(view, "discarded")[0]["cards"] == ["oseille-3"]


def test_a_bid_the_bidder_cannot_pay_eliminates_it_and_the_auction_goes_on():
    state = new()
    act(state, 0, {"pass": True})
    act(state, 0, state.legal_actions()[0])
    act(state, 0, {"bid": 1})
    before = Counter(state.hands[1])
    act(state, 1, {"bid": 12})  # a purse of 11
    assert state.eliminated == [1] and state.hands[1] == [] and Counter(state.out) == before
    view = state.view(2)
    assert view["high_bid"] == 1 and view["high_bidder"] == 0
    assert "oseille-4" not in str(events(view, "eliminated"))  # its cards leave unseen
    act(state, 2, {"pass": True})  # the only other seat passed: sold at the bid before
    assert (state.pending, state.to_act, state.payment["bid"]) == ("pay", 0, 1)
    assert {a["to"] for a in state.legal_actions()} == {2}


def test_a_void_opening_bid_lets_the_next_seat_open():
    state = new()
    act(state, 0, {"pass": True})
    act(state, 0, state.legal_actions()[0])
    act(state, 0, {"bid": 50})
    assert (state.to_act, state.pending, state.eliminated) == (1, "bid", [0])
    assert {"pass": True} not in state.legal_actions()
    act(state, 1, {"bid": 0})
    act(state, 2, {"pass": True})
    assert state.pending == "pay"
    assert state.payment["winner"] == 1


def test_a_void_bid_does_not_break_a_run_of_passes():
    state = new(seats=4)
    act(state, 0, {"pass": True})
    act(state, 0, state.legal_actions()[0])
    act(state, 0, {"bid": 2})
    act(state, 1, {"pass": True})
    act(state, 2, {"bid": 100})
    act(state, 3, {"pass": True})
    assert (state.pending, state.payment["winner"]) == ("pay", 0)


def test_the_last_seat_left_wins_and_eliminated_seats_rank_last_in_reverse_order():
    state = new(seats=4)
    act(state, 0, {"pass": True})
    act(state, 0, state.legal_actions()[0])
    act(state, 0, {"bid": 100})
    act(state, 1, {"bid": 100})
    act(state, 2, {"bid": 100})
    assert state.is_over
    result = state.result()
    assert result["scores"] == [0, 0, 0, 1]
    assert result["ranks"] == [4, 3, 2, 1]


def test_the_next_drawer_is_left_of_the_drawer_not_the_auctions_winner():
    state = new(top=["oseille-1"] * 3)
    sell(state, winner=2, bid=1)
    assert (state.drawer, state.to_act, state.pending) == (1, 1, "special")
    assert VALUES["oseille-1"] == 1
