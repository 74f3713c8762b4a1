"""Helpers for the Soupe & Gertrude scenario tests: chosen decks and whole turns.

A scenario names only what matters to its rule (the money each seat starts
with, the top of the pile) and `make_deck` completes the deck in a fixed
order, vegetables last, so nothing unplanned reaches a hand early.
"""

from __future__ import annotations

from collections import Counter

import games
from games.soupe_gertrude.cards import MONEY, ORDER, VALUES, VEGETABLES, full_deck

GAME = games.get("soupe-gertrude")
#: 6 seats × this hand uses exactly the 1s, 3s and 4s: any table can start with it
PURSE = ["oseille-1", "oseille-3", "oseille-3", "oseille-4"]


def make_deck(seats: int, top=(), hands=None, variant: bool = False) -> list[str]:
    """A full deck dealing `hands` (default `PURSE` each) with `top` on top of the pile."""
    hands = hands or [PURSE] * seats
    chosen = [c for hand in hands for c in hand] + list(top)
    rest = Counter(full_deck(variant))
    rest.subtract(chosen)
    assert all(n >= 0 for n in rest.values()), f"too many of {rest.most_common()[-1]}"
    return chosen + sorted(rest.elements(), key=lambda c: (c in VEGETABLES, ORDER[c]))


def new(seats: int = 3, top=(), hands=None, variant: bool = False, seed: int = 1, **options):
    deck = make_deck(seats, top, hands, variant)
    return GAME.new(seats=seats, seed=seed, options={"deck": deck, "navet_mouche": variant, **options})


def act(state, seat: int, action: dict) -> None:
    """`seat` takes `action`; fails clearly if someone else was to act."""
    assert state.to_act == seat, (state.to_act, state.pending, action)
    state.apply(action)


def pay_cheaply(state) -> None:
    """Finish a payment with the cheapest cards (money first, vegetables last), waiting seats first."""
    while state.pending == "pay":
        legal = state.legal_actions()
        if {"done": True} in legal:
            state.apply({"done": True})
            return
        received = state.payment["received"]
        state.apply(min((a for a in legal if "give" in a), key=lambda a: (
            a["to"] in received, a["give"] in VEGETABLES, a["give"] not in MONEY,
            VALUES[a["give"]], a["to"])))


def sell(state, winner: int, bid: int = 0, gives=(), special_pass: bool = True) -> None:
    """One whole turn: the drawer passes its special card, shows its first option and
    opens; `winner` takes the lot for `bid` while every other seat passes; `gives`
    (pairs of card and seat) are paid first, then the cheapest cards."""
    drawer = state.drawer
    act(state, drawer, {"pass": True})
    act(state, drawer, state.legal_actions()[0])
    act(state, drawer, {"bid": bid if winner == drawer else 0})
    while state.pending == "bid":
        seat = state.to_act
        if seat == winner and state.auction["high"] < bid:
            state.apply({"bid": bid})
        else:
            state.apply({"pass": True})
    for card, to in gives:
        act(state, winner, {"give": card, "to": to})
    pay_cheaply(state)
    if special_pass and state.pending == "special" and state.special["after"] == "end_turn":
        state.apply({"pass": True})


def events(view: dict, kind: str) -> list[dict]:
    return [e for e in view["log"] if e["event"] == kind]
