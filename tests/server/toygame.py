"""A tiny hidden-information game, registered only by tests (the server's, and the games' plug-in test).

"toy-high": 2–3 seats, 2 cards each from the deck 1..9 (as strings); seats
play one card each in turn, twice; the highest total wins. A seat's view holds
its own hand and the cards played, never another seat's hand: the leak tests
check the API never shows more than that. Its one decision is "play"; its
result is the common one (`games.base.RESULT`) with nothing added.
"""

from __future__ import annotations

import games
from games import options as opts
from games.base import RANDOM_BOT, Decision, Game, State
from games.ranking import ranks_of
from games.rng import Rng

NAME = "toy-high"
DECK = [str(n) for n in range(1, 10)]


class ToyState(State):
    def __init__(self, game, seats, seed, options):
        super().__init__(game, seats, seed, options)
        deck = options["deck"]
        if deck is None:
            deck = Rng(seed, "deal").shuffled(DECK)
        else:
            deck = opts.check_deck("deck", deck, DECK)
        self.deck = list(deck)
        self.hands = [deck[2 * s: 2 * s + 2] for s in range(seats)]
        self.played: list[list] = []  # [seat, card]
        self.turns = options["rounds"] * seats
        self._to_act = 0

    def _legal_actions(self):
        return [{"card": c} for c in sorted(self.hands[self._to_act])]

    def _apply(self, action):
        seat = self._to_act
        self.hands[seat].remove(action["card"])
        self.played.append([seat, action["card"]])
        self._to_act = None if len(self.played) >= self.turns else len(self.played) % self.seats

    def _view(self, seat):
        out = {"played": [list(p) for p in self.played], "to_act": self._to_act,
               "pending": None if self._to_act is None else "play"}
        if seat is not None:
            out["seat"] = seat
            out["hand"] = sorted(self.hands[seat])
        return out

    def _result(self):
        totals = [sum(int(c) for s, c in self.played if s == seat) for seat in range(self.seats)]
        return {"scores": totals, "ranks": ranks_of(totals), "decks": [self.deck]}


GAME = Game(
    name=NAME, title="Toy high card", min_seats=2, max_seats=3,
    options=[
        opts.Option("rounds", 2, opts.integer(1, 2), "cards each seat plays"),
        opts.Option("deck", None, opts.card_list(), "the deck, top first"),
    ],
    state_class=ToyState,
    rules="toy-high.md",
    bots={"random": RANDOM_BOT},
    decisions=(Decision("play", 'play one card of your hand: {"card": "7"}'),),
)


def register() -> None:
    """Make `games.get("toy-high")` work in this test process (once is enough)."""
    games.register(GAME)
