"""Soupe & Gertrude: special cards, winning, the turnip and the fly, the end, three manches."""

from __future__ import annotations

from collections import Counter

from games.soupe_gertrude.cards import MONEY, VEGETABLES, full_deck, soup_value
from tests.games.test_soupe_gertrude_support import PURSE, act, events, new, sell

O1, O3, O5 = "oseille-1", "oseille-3", "oseille-5"


def souris_ready(second_lot_card: str = O5, variant: bool = False, first_lot=(O1, O5)):
    """Seat 1 buys a tomate (and `first_lot`), then seat 0 buys a souris and is asked to play it."""
    state = new(top=["tomate", *first_lot, "souris", second_lot_card, O5], variant=variant)
    sell(state, winner=1, bid=1)
    sell(state, winner=0, bid=1, special_pass=False)
    assert (state.pending, state.to_act) == ("special", 0)
    return state


def test_souris_that_hits_takes_the_vegetable_and_gives_back_a_card_seen_by_the_two_only():
    state = souris_ready()
    act(state, 0, {"souris": "tomate", "target": 1})
    assert state.legal_actions() == [{"pass": True}]  # asked even without a Gertrude
    act(state, 1, {"pass": True})
    assert "tomate" in state.hands[0] and "tomate" not in state.hands[1]
    assert state.pending == "give-back"
    assert all(a["give"] != "tomate" for a in state.legal_actions())
    given = state.legal_actions()[0]["give"]
    before = Counter(state.hands[1])
    act(state, 0, {"give": given})
    assert Counter(state.hands[1]) - before == Counter([given])
    assert events(state.view(1), "given_back")[0]["card"] == given
    for seat in (2, None):
        view = state.view(seat)
        assert not events(view, "given_back")
        assert events(view, "souris_result")[0]["taken"] is True
    assert (state.drawer, state.pending) == (2, "special")


def test_souris_never_gives_back_the_fly():
    state = souris_ready(second_lot_card="mouche", variant=True)
    act(state, 0, {"souris": "tomate", "target": 1})
    act(state, 1, {"pass": True})
    assert {a["give"] for a in state.legal_actions()} & {"mouche", "tomate"} == set()


def test_souris_that_misses_shows_the_targets_hand_to_the_player_only():
    state = souris_ready()
    hands = [list(h) for h in state.hands]
    act(state, 0, {"souris": "patate", "target": 1})
    act(state, 1, {"pass": True})
    shown = events(state.view(0), "shown")
    assert shown and Counter(shown[0]["hand"]) == Counter(hands[1])
    for seat in (1, 2, None):
        assert not events(state.view(seat), "shown")
    assert state.hands[1] == hands[1] and "souris" in state.out
    assert events(state.view(2), "souris_result")[0]["taken"] is False


def test_souris_cancelled_by_a_gertrude_sends_both_cards_out():
    state = souris_ready(first_lot=("gertrude", O1))
    act(state, 0, {"souris": "tomate", "target": 1})
    assert state.legal_actions() == [{"pass": True}, {"cancel": True}]
    act(state, 1, {"cancel": True})
    assert Counter(state.out) == Counter(["souris", "gertrude"])
    assert "tomate" in state.hands[1] and state.pending == "special" and state.drawer == 2


def test_a_souris_that_completes_the_soup_wins_at_once():
    state = new(top=["tomate", "carotte", O1, "poireau", O5, O5, "souris", O3, O3])
    sell(state, winner=0, bid=0)  # seat 0: tomate, carotte
    sell(state, winner=2, bid=1)  # seat 2: poireau
    sell(state, winner=0, bid=1, special_pass=False)
    act(state, 0, {"souris": "poireau", "target": 2})
    act(state, 2, {"pass": True})
    assert state.pending == "give-back"
    act(state, 0, next(a for a in state.legal_actions() if a["give"] in MONEY))
    assert state.is_over and state.result()["scores"] == [1, 0, 0]
    assert events(state.view(None), "win")[0]["vegetables"] == ["tomate", "carotte", "poireau"]


def test_gertrude_draws_three_seeded_cards_and_the_player_keeps_one():
    state = new(top=["gertrude", O5, O5])
    sell(state, winner=0, bid=0, special_pass=False)
    act(state, 0, {"gertrude": 1})
    act(state, 1, {"pass": True})
    drawn = events(state.view(0), "drawn")[0]["cards"]
    assert len(drawn) == 3 and events(state.view(1), "drawn")[0]["cards"] == drawn
    assert not events(state.view(2), "drawn") and not events(state.view(None), "drawn")
    assert state.legal_actions() == [{"keep": c} for c in dict.fromkeys(drawn)]
    keep = drawn[-1]
    before = Counter(state.hands[0])
    act(state, 0, {"keep": keep})
    assert Counter(state.hands[0]) - before == Counter([keep])
    assert len(state.hands[1]) == 5 - 1  # 4 + the card paid to it, less the one kept
    assert events(state.view(2), "kept")[0]["taken"] is True
    twin = new(top=["gertrude", O5, O5])
    sell(twin, winner=0, bid=0, special_pass=False)
    act(twin, 0, {"gertrude": 1})
    act(twin, 1, {"pass": True})
    assert events(twin.view(0), "drawn")[0]["cards"] == drawn  # seeded


def test_gertrude_cancelled_by_the_targets_gertrude():
    state = new(top=["gertrude", O1, O1, "gertrude", O5, O5])
    sell(state, winner=1, bid=1)
    sell(state, winner=0, bid=1, special_pass=False)
    act(state, 0, {"gertrude": 1})
    act(state, 1, {"cancel": True})
    assert Counter(state.out) == Counter(["gertrude", "gertrude"])
    assert state.pending == "special" and state.drawer == 2


def test_a_seat_wins_when_a_payment_it_receives_completes_its_soup():
    state = new(top=["tomate", "carotte", O1, "poireau", O1, O1, O5, O5, O5])
    sell(state, winner=0, bid=0)
    sell(state, winner=1, bid=0)
    sell(state, winner=1, bid=1, gives=[("poireau", 0)])
    assert state.is_over
    assert state.result()["scores"] == [1, 0, 0] and state.result()["ranks"] == [1, 2, 2]
    assert "win" in [e["event"] for e in state.view(None)["log"]][-2:]


def navet_ready():
    """Seat 0 holds tomate and carotte, seat 2 the turnip; seat 0 then buys a poireau."""
    state = new(top=["tomate", "carotte", O1, "navet", O1, O1, "poireau", O3, O3], variant=True)
    sell(state, winner=0, bid=0)
    sell(state, winner=2, bid=1)
    sell(state, winner=0, bid=1)
    assert events(state.view(None), "soupe")[0]["seat"] == 0
    act(state, 1, {"pass": True})  # everyone is asked, turnip or not
    assert state.pending == "navet" and state.to_act == 2
    assert state.legal_actions() == [{"pass": True}] + [{"navet": v} for v in VEGETABLES]
    return state


def test_a_navet_on_a_vegetable_the_claimant_holds_spoils_the_soup():
    state = navet_ready()
    act(state, 2, {"navet": "poireau"})
    assert not state.is_over
    assert "poireau" not in state.hands[0] and Counter(state.out) >= Counter(["navet", "poireau"])
    assert (state.drawer, state.pending) == (0, "special")  # play goes on where it stood


def test_a_navet_on_a_vegetable_the_claimant_lacks_misses_and_the_claimant_wins():
    state = navet_ready()
    act(state, 2, {"navet": "patate"})
    assert state.is_over and state.result()["scores"] == [1, 0, 0]


def test_the_fly_blocks_a_win_until_it_is_given_away_in_a_payment():
    state = new(top=["tomate", "carotte", "mouche", "poireau", O1, O1, O3, O3, O3], variant=True)
    sell(state, winner=0, bid=0)
    sell(state, winner=0, bid=1)
    assert not events(state.view(None), "soupe") and state.pending == "special"
    sell(state, winner=0, bid=1, gives=[("mouche", 1)])
    assert events(state.view(None), "soupe")[0]["seat"] == 0
    act(state, 1, {"pass": True})
    act(state, 2, {"pass": True})
    assert state.is_over and state.result()["scores"] == [1, 0, 0]


def test_an_empty_pile_scores_the_different_vegetables_of_each_seat():
    plan = ["patate", "poireau", "carotte", "tomate", "poireau", "carotte", None, "patate", "tomate", None]
    non_vegetables = Counter(c for c in full_deck(False) if c not in VEGETABLES)
    fillers = list((non_vegetables - Counter(PURSE * 3)).elements())
    top = []
    for vegetable in plan:
        top += ([vegetable] if vegetable else []) + [fillers.pop() for _ in range(3 - bool(vegetable))]
    state = new(top=top)
    for turn in range(10):
        sell(state, winner=turn % 3, bid=0)
    assert state.pile == [] and (state.drawer, state.pending) == (1, "special")
    act(state, 1, {"pass": True})
    assert state.is_over
    assert state.result()["scores"] == [8 + 2, 6 + 8, 4 + 2]
    assert state.result()["ranks"] == [2, 1, 3]
    assert soup_value(["mouche", "patate", "tomate"]) == 0


def test_three_manches_deal_afresh_and_add_up_the_different_vegetables():
    state = new(seats=2, top=["tomate", "carotte", O1], manches=3)
    sell(state, winner=0, bid=0)
    act(state, 1, {"pass": True})
    act(state, 1, state.legal_actions()[0])
    act(state, 1, {"bid": 100})  # seat 1 cannot pay: seat 0 wins the manche
    view = state.view(1)
    assert (view["manche"], view["eliminated"], view["scores"]) == (2, [], [2, 0])
    assert (state.to_act, state.pending) == (0, "special")  # the manche's winner starts
    assert all(len(h) == 4 and all(c in MONEY for c in h) for h in state.hands)
    for starter in (0, 1):  # each starter overbids in turn: the other seat wins the manche
        assert state.to_act == starter
        act(state, starter, {"pass": True})
        act(state, starter, state.legal_actions()[0])
        act(state, starter, {"bid": 100})
    result = state.result()
    assert state.is_over and result["manche_points"] == [[2, 0], [0, 0], [0, 0]]
    assert result["scores"] == [2, 0] and result["ranks"] == [1, 2]
    assert len(result["decks"]) == 3 and result["decks"][1] != result["decks"][0]


def test_after_an_empty_pile_the_top_scorer_starts_the_next_manche_first_from_the_left():
    state = new(manches=3)
    state.starter = 1
    assert state._top_scorer([3, 1, 3]) == 2
    assert state._top_scorer([3, 1, 2]) == 0
