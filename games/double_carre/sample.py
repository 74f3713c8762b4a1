"""Le double carré's `sample()`: the other seat's hidden cards and the stock.

A seat knows its own hand, discards and set-aside pairs, the cards revealed
this turn and who took which revealed card on every turn (public). The cards
it cannot place lie in the other seat's hand, its discards, its set-aside
pairs (advanced version) or the stock. The rules reveal more than counting:

* a card that was ever revealed left the stock for good, so the stock holds
  only cards never revealed;
* a card shown in the draw for first player came from the stock and went back
  into it (the stock is only ever revealed four at a time, and the hands were
  dealt before the draw), so until it is revealed it is in the stock — never
  in the other seat's hand, discards or set-aside pairs;
* a revealed card the other seat was the last to take is in its hand, its
  discards or its set-aside pairs;
* a pair the other seat set aside on turn k (and that has not come back yet)
  holds only cards it had on turn k: none it took later;
* a card taken on turn t was discarded on turn t or later, so the other
  seat's discards hold none it took after its last discard.

The sample deals the unplaced cards uniformly among the placements that
respect these facts (`games.sampling.ConstrainedDeal`), and orders each
hidden pile as the engine would (pairs in hand order, oldest first).
"""

from __future__ import annotations

from games.base import Game, State
from games.cards import Card, deck_32
from games.double_carre.state import (
    _HAND_ORDER,
    BASIC_TURNS,
    HAND_SIZE,
    SEATS,
    DoubleCarreState,
)
from games.sampling import ConstrainedDeal, card_reader, checked_view, require, sample_seed

_DECK = tuple(deck_32())
_card = card_reader(_DECK, "double-carre")


def _pair(cards: list[Card]) -> list[Card]:
    return sorted(cards, key=_HAND_ORDER.__getitem__)


class DoubleCarreSampler:
    """What one view says, worked out once; `sample(seed)` deals the rest."""

    def __init__(self, game: Game, view: dict, options: dict | None) -> None:
        view, self.seat = checked_view(view, lambda v: SEATS)
        try:
            self._read(game, view)
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            require(False, f"not a double-carre view: {exc!r}")

    def _read(self, game: Game, view: dict) -> None:
        self.game, self.view = game, view
        me, other = self.seat, 1 - self.seat
        turn, pending, active = view["turn"], view["pending"], view["active"]
        self.hand = [_card(c) for c in view["hand"]]
        self.discards = [_card(c) for c in view["discards"]]
        self.set_aside = [[_card(c) for c in pair] for pair in view["set_aside"]]
        self.revealed = [_card(c) for c in view["revealed"]]
        self.taken = [[[_card(c) for c in cards] for cards in t["cards"]] for t in view["taken"]]
        mine = [*self.hand, *self.discards, *(c for p in self.set_aside for c in p)]
        if pending == "take":
            mine += self.revealed
        require(len(set(mine)) == len(mine), "a card is shown twice")
        last_taker: dict[Card, tuple[int, int]] = {}
        for entry, cards in zip(view["taken"], self.taken, strict=True):
            for seat in range(SEATS):
                for card in cards[seat]:
                    last_taker[card] = (seat, entry["turn"])
        unplaced = [c for c in _DECK if c not in set(mine)]
        #: when the other seat last took each revealed card it holds (0: never revealed)
        since = {c: last_taker[c][1] if c in last_taker else 0 for c in unplaced}
        #: cards shown in the draw and not revealed since: still in the stock
        in_stock = {_card(c) for pair in view["draw"] for c in pair}
        in_stock -= set(last_taker) | set(self.revealed)
        require(not in_stock & set(mine), "a card of the draw is shown out of the stock")
        require(all(last_taker.get(c, (other,))[0] == other for c in unplaced),
                "a card this seat took last is missing from its view")
        # -- how many cards the other seat holds where ----------------------------------
        other_discarded_now = pending == "discard" and active == other and view["to_act"] == me
        over = view["to_act"] is None
        done = turn if over else turn - 1 + other_discarded_now  # the other's discards so far
        self.other_hand = HAND_SIZE + (2 if pending == "discard" and not other_discarded_now else 0)
        self.pairs_since = []  # the turn each of the other's pending set-aside pairs was set aside
        out_turns = list(range(1, done + 1))
        if view["advanced"]:
            set_aside_turns = [t for t in range(1, min(done, BASIC_TURNS) + 1)]
            returned = max(0, turn - BASIC_TURNS)  # turn 4 + k brings back the pairs of turn k
            self.pairs_since = set_aside_turns[returned:]
            out_turns = [t for t in out_turns if t > BASIC_TURNS]
            require(2 * len(self.pairs_since) == view["set_aside_sizes"][other],
                    "the set-aside sizes do not agree with the turn")
        self.out_turns = out_turns
        stock = view["stock"]
        sizes = [self.other_hand, 2 * len(out_turns), *(2 for _ in self.pairs_since), stock]
        last_out = out_turns[-1] if out_turns else 0
        held = [c for c in unplaced if c not in in_stock]  # may be in the other's piles
        allowed: list[set[Card] | None] = [
            None if not in_stock else set(held),
            {c for c in held if since[c] <= last_out},
            *({c for c in held if since[c] <= k} for k in self.pairs_since),
            {c for c in unplaced if since[c] == 0},
        ]
        self.since = since
        self.deal = ConstrainedDeal(unplaced, sizes, allowed)

    def zones_of(self, state: DoubleCarreState) -> list[list[Card]]:
        """A state's hidden cards in the deal's layout: the other seat's hand, discards and
        set-aside pairs, then the stock."""
        other = 1 - self.seat
        return [list(state.hands[other]), list(state.out[other]),
                *(list(p) for p in state.set_aside[other]), list(state.stock)]

    def sample(self, seed: int) -> DoubleCarreState:
        view, me, other = self.view, self.seat, 1 - self.seat
        rng = sample_seed(seed)
        other_hand, out, *pairs, stock = self.deal.draw(rng)
        state = DoubleCarreState.__new__(DoubleCarreState)
        options = {"advanced": view["advanced"], "first": view["first"], "deck": None}
        State.__init__(state, self.game, SEATS, seed, options)
        state.advanced, state.turns, state.first = view["advanced"], view["turns"], view["first"]
        state.draws = [[_card(c) for c in p] for p in view["draw"]]
        state.turn, state.pending, state._to_act = view["turn"], view["pending"], view["to_act"]
        state.revealed = list(self.revealed)
        state.hands = [[], []]
        state.hands[me], state.hands[other] = list(self.hand), other_hand
        state.stock = stock
        # the other's discards, oldest first: each card after the turn it was taken
        out.sort(key=lambda c: (self.since[c], _HAND_ORDER[c]))
        state.out = [[], []]
        state.out[me] = list(self.discards)
        state.out[other] = [c for i in range(0, len(out), 2) for c in _pair(out[i:i + 2])]
        state.set_aside = [[], []]
        state.set_aside[me] = [list(p) for p in self.set_aside]
        state.set_aside[other] = [_pair(p) for p in pairs]
        state.history = []
        for entry, cards in zip(view["taken"], self.taken, strict=True):
            shown = list(self.revealed) if entry["turn"] == view["turn"] else cards[0] + cards[1]
            state.history.append({"turn": entry["turn"], "active": entry["active"],
                                  "revealed": shown, "taken": [list(c) for c in cards]})
        # the deck as used, for `result()`: what came out of the stock in turns 1-4, then the stock
        from_stock = [c for h in state.history[:BASIC_TURNS] for c in h["revealed"]]
        if view["pending"] == "take" and view["turn"] <= BASIC_TURNS:
            from_stock += self.revealed
        tail = from_stock + stock
        head = [c for c in _DECK if c not in set(tail)]
        state.deck = head + tail
        return state
