"""Duck Soup's `sample()`: the other hand and the stock, drawn from what a seat has seen.

Every card played is public and nobody must follow suit, so what a seat knows
of the hidden cards is card counting alone: the cards it has not seen (not in
its hand, not played this deal) lie in the other hand (its size is public)
and the stock (its size too), every placement and stock order equally likely.
In the high phase the stock is empty and the other hand is known exactly.

The sample continues the match from the view: the deal as it stands, then
deals shuffled from the sample's seed. Earlier deals' decks are not part of
any view; a sample's ``result()["decks"]`` shows the deck in its fixed order
for them.
"""

from __future__ import annotations

from games.base import Game, State
from games.cards import Card, deck_52
from games.duck_soup.state import HAND_SIZE, LOW, SEATS, DuckSoupState
from games.sampling import ConstrainedDeal, card_reader, checked_view, require, sample_seed

_DECK = tuple(deck_52())
_card = card_reader(_DECK, "duck-soup")


class DuckSoupSampler:
    """What one view says, worked out once; `sample(seed)` deals the rest."""

    def __init__(self, game: Game, view: dict, options: dict | None) -> None:
        view, self.seat = checked_view(view, lambda v: SEATS)
        try:
            self._read(game, view, dict(options or {}))
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            require(False, f"not a duck-soup view: {exc!r}")

    def _read(self, game: Game, view: dict, options: dict) -> None:
        self.game = game
        self.view = view
        self.options = {**game.defaults, "edition": view["edition"], "target": view["target"],
                        "pond": view["pond"], "sets": view["sets"], "deck": None}
        # `deal_only` is not in a view: given, or false unless the view shows a match that
        # ended after one deal without awarding set points
        if "deal_only" in options:
            self.options["deal_only"] = bool(options["deal_only"])
        else:
            self.options["deal_only"] = (view["to_act"] is None and view["deal"] == 1
                                         and not any(view["set_points"]))
        require(not (self.options["deal_only"] and view["deal"] > 1), "deal_only with a second deal")
        self.hand = [_card(c) for c in view["hand"]]
        self.trick = [(p["seat"], _card(p["card"]), p["call"]) for p in view["trick"]]
        self.history = [{**h, "cards": [{**p, "card": _card(p["card"])} for p in h["cards"]]}
                        for h in view["history"]]
        seen = set(self.hand) | {c for _, c, _ in self.trick}
        seen |= {p["card"] for h in self.history for p in h["cards"]}
        require(len(seen) == len(self.hand) + len(self.trick) + sum(len(h["cards"]) for h in self.history),
                "a card is shown twice")
        self.unseen = [c for c in _DECK if c not in seen]
        other = 1 - self.seat
        self.other_size = view["hand_sizes"][other]
        require(view["hand_sizes"][self.seat] == len(self.hand), "the hand sizes do not match the hand")
        self.stock = view["stock"]
        require(self.stock % 2 == 0 and (self.stock == 0 or view["phase"] == LOW),
                "the stock holds an even number of cards, none in the high phase")
        require(self.other_size <= HAND_SIZE + 1, "the other hand is too large")
        self.deal = ConstrainedDeal(self.unseen, [self.other_size, self.stock], [None, None])

    def zones_of(self, state: DuckSoupState) -> list[list[Card]]:
        """A state's hidden cards in the deal's layout: the other hand, the stock."""
        return [list(state.hands[1 - self.seat]), list(state.deck[state.top:])]

    def sample(self, seed: int) -> DuckSoupState:
        rng = sample_seed(seed)
        other_hand, stock = self.deal.draw(rng)
        view, seat = self.view, self.seat
        state = DuckSoupState.__new__(DuckSoupState)
        State.__init__(state, self.game, SEATS, seed, dict(self.options))
        state.edition, state.target, state.pond = view["edition"], view["target"], view["pond"]
        state.sets, state.deal_only = view["sets"], self.options["deal_only"]
        deal = view["deal"]
        played = [c for _, c, _ in self.trick] + [p["card"] for h in self.history for p in h["cards"]]
        current = self.hand + other_hand + played + stock  # the stock is the deck's tail, top first
        state.decks = [list(_DECK) for _ in range(deal - 1)] + [current]  # (stand-ins, see above)
        state.deck = current
        state.top = len(current) - len(stock)
        state.deals = [{k: (list(v) if isinstance(v, list) else v) for k, v in d.items()}
                       for d in view["deals"]]
        state.capped = False
        self._replay_sets(state, view)
        state.dealer = view["dealer"]
        state.phase = view["phase"]
        state.hands = [[], []]
        state.hands[seat] = list(self.hand)
        state.hands[1 - seat] = other_hand
        state.points = {ph: list(p) for ph, p in view["points"].items()}
        state.trick = list(self.trick)
        state.history = [{**h, "cards": [dict(p) for p in h["cards"]]} for h in self.history]
        state.leader = view["leader"]
        state.pending = view["pending"]
        state._to_act = view["to_act"]
        return state

    @staticmethod
    def _replay_sets(state: DuckSoupState, view: dict) -> None:
        """Set totals and points from the finished deals, as `_end_deal` counted them."""
        state.totals = [[0, 0]]
        state.set_points = [0, 0]
        over = view["to_act"] is None
        for i, d in enumerate(state.deals):
            totals = state.totals[-1]
            totals[0] += d["score"][0]
            totals[1] += d["score"][1]
            if state.deal_only:
                break
            winner, won = state._set_winner(d["pond"], totals)
            if winner is not None:
                state.set_points[winner] += won
                if not (over and i == len(state.deals) - 1):
                    state.totals.append([0, 0])
        require(state.totals[-1] == view["set_totals"] and state.set_points == view["set_points"]
                and len(state.totals) == view["set"], "the set totals do not follow from the deals")
