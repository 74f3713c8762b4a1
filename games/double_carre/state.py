"""Le double carré (2 seats): take two of four revealed cards, build groups.

The rules page is `docs/rulings/double-carre.md`; this module follows it.

A match is 4 turns (8 in the advanced version). Each turn 4 cards are revealed,
the active seat takes 2 of them and the other seat gets the other 2, then each
seat discards 2 of its 10 cards face down, active seat first; then the other
seat becomes active. The best 8-card hand wins: the counts of equal ranks,
largest first, compared element by element, then the points of the distinct
ranks (more wins), else a draw.

Decisions, in order, each for `to_act`:

* ``{"take": [a, b]}`` — the active seat picks 2 of the 4 revealed cards;
* ``{"discard": [x, y]}`` — the active seat, then the other, drops 2 cards.

Choices this module settles where the rules page leaves them open:

* The draw for first player (``first: "draw"``, no ``deck``) uses the stream
  ``Rng(seed, "double-carre", "draw")``: seat 0 reveals a uniformly random
  stock card, seat 1 another one of the 15 left; the higher rank starts, equal
  ranks draw again; then the stock is shuffled with the same stream. The deal
  itself comes from ``Rng(seed, "double-carre", "deck")``, so it never depends
  on the draw.
* With ``deck`` given and no ``first``, seat 0 starts: `DoubleCarreGame.new`
  turns the missing ``first`` into ``0`` before the options are checked, so
  the stored options say exactly what was played, and an explicit
  ``first: "draw"`` next to a ``deck`` is refused.
* Advanced version, turns 5–8: the 4 revealed cards are seat 0's 2 set-aside
  cards of turn k, then seat 1's, each pair in rank order (discard actions are
  listed, and stored, with their cards in rank order). Each player turns over
  its own cards at the table, so who set aside which card becomes public then.
* `view()["turn"]` counts turns from 1 (as the rules page does); once over it
  stays on the last turn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from itertools import combinations
from typing import Any

from games import options as opts
from games.base import Game, State
from games.cards import RANKS_32, Card, deck_32, rank_order
from games.errors import InvalidOptions
from games.ranking import ranks_of
from games.rng import Rng

NAME = "double-carre"
SEATS = 2
HAND_SIZE = 8
DEALT = SEATS * HAND_SIZE  # deck[0..15] are dealt, deck[16] is the stock's top
REVEAL = 4
BASIC_TURNS = 4
#: Tie-break points per rank: 7 = 0, 8 = 1, …, A = 7 (the rank's place in RANKS_32).
POINTS = rank_order(RANKS_32)

OPTIONS = (
    opts.Option("advanced", False, opts.boolean(),
                "the advanced version: 2 x 4 turns, turns 1-4 set discards aside"),
    opts.Option("first", "draw", opts.either(opts.one_of("draw"), opts.integer(0, SEATS - 1)),
                'who is active on turn 1: "draw" (the rule book\'s draw) or a seat index; '
                "0 when a deck is given"),
    opts.Option("deck", None, opts.card_list(),
                "32 cards, top first: 16 dealt one at a time from seat 0, then the stock"),
)


# -- hands ---------------------------------------------------------------------
#: The 32 cards in their fixed order: every match shuffles a copy.
_DECK_32: tuple[Card, ...] = tuple(deck_32())
#: card -> its rank, for the 32 cards: hands are ranked and sorted at every
#: decision, and a dict lookup is far cheaper than parsing the card text each time.
_RANK: dict[str, str] = {c: c.rank for c in _DECK_32}
#: card -> its place in a held hand (rank order, then suit), the sort key of `_sorted_hand`.
_HAND_ORDER: dict[str, int] = {
    c: i for i, c in enumerate(sorted(deck_32(), key=lambda c: (POINTS[c.rank], c.suit)))
}


def _ranks(hand: Iterable[str]) -> list[str]:
    """The ranks of `hand`'s cards; text outside the 32 cards is parsed (and refused) by `Card`."""
    hand = list(hand)
    try:
        return list(map(_RANK.__getitem__, hand))
    except (KeyError, TypeError):
        return [Card(c).rank for c in hand]


def _pattern_of(ranks: list[str]) -> list[int]:
    return sorted(Counter(ranks).values(), reverse=True)


def _points_of(ranks: list[str]) -> int:
    return sum(POINTS[r] for r in set(ranks))


def pattern(hand: Iterable[str]) -> list[int]:
    """The counts of equal ranks, largest first: 3 aces + 3 kings + 2 queens -> [3, 3, 2]."""
    return _pattern_of(_ranks(hand))


def points(hand: Iterable[str]) -> int:
    """The points of the distinct ranks in `hand` (each rank counted once)."""
    return _points_of(_ranks(hand))


def strength(hand: Iterable[str]) -> tuple[list[int], int]:
    """A sortable strength: pattern first, then points (greater is better)."""
    ranks = _ranks(hand)
    return _pattern_of(ranks), _points_of(ranks)


def _sorted_hand(cards: Iterable[str]) -> list[str]:
    """A hand in rank order (then suit), so a view reads like a held hand."""
    cards = list(cards)
    try:
        return sorted(cards, key=_HAND_ORDER.__getitem__)
    except (KeyError, TypeError):  # not one of the 32 cards: let `Card` say what is wrong
        return sorted(cards, key=lambda c: (POINTS[Card(c).rank], Card(c).suit))


# -- the match -------------------------------------------------------------------
def draw_first(stock: list[Card], seed: int) -> tuple[int, list[list[Card]], list[Card]]:
    """The rule book's draw: (the seat that starts, the pairs revealed, the reshuffled stock).

    Each seat reveals a random stock card (seat 0 first, two different cards);
    the higher rank starts, equal ranks draw again; the cards go back and the
    stock is shuffled. All from one seeded stream, so it replays exactly.
    """
    rng = Rng(seed, NAME, "draw")
    draws: list[list[Card]] = []
    while True:
        i = rng.below(len(stock))
        rest = stock[:i] + stock[i + 1:]
        pair = [stock[i], rest[rng.below(len(rest))]]
        draws.append(pair)
        a, b = (POINTS[c.rank] for c in pair)
        if a != b:
            return (0 if a > b else 1), draws, rng.shuffled(stock)


class DoubleCarreState(State):
    """What is true at the table; `view()` is the one place that hides it."""

    def __init__(self, game: Game, seats: int, seed: int, options: dict[str, Any]) -> None:
        super().__init__(game, seats, seed, options)
        self.advanced: bool = options["advanced"]
        self.turns = BASIC_TURNS * (2 if self.advanced else 1)
        if options["deck"] is not None:
            deck = [Card(c) for c in opts.check_deck("deck", options["deck"], deck_32())]
        else:
            deck = Rng(seed, NAME, "deck").shuffled(_DECK_32)
        stock = deck[DEALT:]
        self.draws: list[list[Card]] = []
        if options["first"] == "draw":
            self.first, self.draws, stock = draw_first(stock, seed)
        else:
            self.first = options["first"]
        #: the deck as actually used: the 16 dealt, then the stock after the draw
        self.deck: list[Card] = deck[:DEALT] + stock
        self.hands: list[list[Card]] = [deck[s:DEALT:SEATS] for s in range(SEATS)]
        self.stock: list[Card] = list(stock)  # top first
        self.set_aside: list[list[list[Card]]] = [[] for _ in range(SEATS)]  # pairs, oldest first
        self.out: list[list[Card]] = [[] for _ in range(SEATS)]  # discards that left the game
        #: per turn: the 4 revealed cards and what each seat took (public)
        self.history: list[dict[str, Any]] = []
        self.turn = 0  # 1-based once the first turn starts
        self.revealed: list[Card] = []
        self.pending: str | None = None
        self._to_act: int | None = None
        self._start_turn()

    # -- the flow ----------------------------------------------------------
    @property
    def active(self) -> int:
        """The active seat this turn: `first` on odd turns, the other on even ones."""
        return (self.first + self.turn - 1) % SEATS

    def _start_turn(self) -> None:
        if self.turn == self.turns:
            self.pending, self._to_act, self.revealed = None, None, []
            return
        self.turn += 1
        if self.turn <= BASIC_TURNS:
            self.revealed, self.stock = self.stock[:REVEAL], self.stock[REVEAL:]
        else:  # advanced turns 5-8: the pairs set aside on turn k, seat 0's first
            self.revealed = [c for s in range(SEATS) for c in self.set_aside[s].pop(0)]
        self.pending, self._to_act = "take", self.active

    def _legal_actions(self) -> list[dict]:
        assert self._to_act is not None
        verb = self.pending
        if verb == "take":
            cards = self.revealed
        else:
            cards = sorted(self.hands[self._to_act], key=_HAND_ORDER.__getitem__)
        return [{verb: [a, b]} for a, b in combinations(cards, 2)]

    def _apply(self, action: dict) -> None:
        # `apply` hands over the listed action, whose cards are already `Card`s.
        if self.pending == "take":
            self._take(action["take"])
        else:
            self._discard(list(action["discard"]))

    def _take(self, pair: list[Card]) -> None:
        active = self.active
        taken: list[list[Card]] = [[] for _ in range(SEATS)]
        for card in self.revealed:
            taken[active if card in pair else 1 - active].append(card)
        for seat in range(SEATS):
            self.hands[seat].extend(taken[seat])
        self.history.append({"turn": self.turn, "active": active,
                             "revealed": list(self.revealed), "taken": taken})
        self.pending, self._to_act = "discard", active

    def _discard(self, pair: list[Card]) -> None:
        seat = self._to_act
        assert seat is not None  # asked only while the match is on
        for card in pair:
            self.hands[seat].remove(card)
        if self.advanced and self.turn <= BASIC_TURNS:
            self.set_aside[seat].append(pair)
        else:
            self.out[seat].extend(pair)
        if seat == self.active:
            self._to_act = 1 - seat
        else:
            self._start_turn()

    def _explain_illegal(self, action: Any) -> str | None:
        """Say which rule the action breaks, from what `to_act` sees."""
        assert self._to_act is not None
        verb = self.pending
        if not isinstance(action, dict) or set(action) != {verb}:
            return f"seat {self._to_act} must {verb}: send {{{verb!r}: [card, card]}}"
        cards = action[verb]
        if not isinstance(cards, list) or len(cards) != 2 or len(set(map(str, cards))) != 2:
            return f"{verb!r} needs a list of 2 different cards, not {cards!r}"
        pool = self.revealed if verb == "take" else self.hands[self._to_act]
        where = "the revealed cards" if verb == "take" else "your hand"
        missing = [c for c in cards if c not in pool]
        if missing:
            return f"{missing[0]!r} is not among {where}: {', '.join(pool)}"
        return None

    # -- what each seat sees -----------------------------------------------
    def _view(self, seat: int | None) -> dict:
        """Public facts for everyone; a seat adds its own hand, discards and set-aside pile.

        Never the other hand, the other seat's discards or set-aside cards, or
        the stock's order (only its size).
        """
        view: dict[str, Any] = {
            "turn": self.turn,
            "turns": self.turns,
            "advanced": self.advanced,
            "first": self.first,
            "active": None if self.is_over else self.active,
            "to_act": self._to_act,
            "pending": self.pending,
            "revealed": list(self.revealed),
            "taken": [{"turn": h["turn"], "active": h["active"],
                       "cards": [list(t) for t in h["taken"]]} for h in self.history],
            "stock": len(self.stock),
            "set_aside_sizes": [2 * len(self.set_aside[s]) for s in range(SEATS)],
            "draw": [list(p) for p in self.draws],
        }
        if seat is not None:
            view["seat"] = seat
            view["hand"] = _sorted_hand(self.hands[seat])
            view["discards"] = list(self.out[seat])
            view["set_aside"] = [list(p) for p in self.set_aside[seat]]
        return view

    def _result(self) -> dict:
        """The outcome (hands are secret before the end: `State.result` waits for it)."""
        strengths = [strength(h) for h in self.hands]
        ranks = ranks_of(strengths)
        scores = [0.5, 0.5] if ranks == [1, 1] else [int(r == 1) for r in ranks]
        return {
            "scores": scores,
            "ranks": ranks,
            "decks": [list(self.deck)],
            "first": self.first,
            "hands": [_sorted_hand(h) for h in self.hands],
            "patterns": [s[0] for s in strengths],
            "points": [s[1] for s in strengths],
            "draw": [list(p) for p in self.draws],
        }


class DoubleCarreGame(Game):
    """The game's facts; `new` makes ``first`` default to seat 0 when a deck is given."""

    def new(self, seats: int | None = None, seed: int = 0, options: dict | None = None) -> State:
        if isinstance(options, dict) and options.get("deck") is not None:
            if "first" not in options:
                options = {**options, "first": 0}
            elif options["first"] == "draw":
                raise InvalidOptions(
                    'option "first" cannot be "draw" with a "deck": the deck fixes the stock, '
                    "so name the starting seat (0 or 1)"
                )
        return super().new(seats, seed, options)
