"""DOUBLE (2 to 10 seats): predict your tricks exactly, with two-motif cards.

The rules page is `docs/rulings/double.md`; this module follows it. The cards
live in `games.double.cards`, the trick rules in `games.double.tricks`.

A match is ``len(rounds)`` rounds. Each round: deal ``rounds[i]`` cards to each
seat one at a time from the top, starting left of the dealer; turn up the next
card for trump; each seat bids, starting left of the dealer; then the tricks,
left of the dealer leading the first; then points. The last seat deals round
1 and the deal passes left every round.

Decisions, each for `to_act`:

* ``{"bid": n}`` — 0 ≤ n ≤ min(cards in hand, the seat's points);
* ``{"play": "KS/4H", "motif": "4H"}`` — a card with the half it makes active.

Choices this module settles where the rules page leaves them open:

* **Deals.** Round i (0-based) is shuffled with ``Rng(seed, "round", i)``;
  the ``deck`` option replaces round 0's shuffle only. So every deal is a
  function of (seats, seed, options) and never of the actions played.
* **Two identical cards in one hand** (two sets): copies are interchangeable
  — nothing in the rules tells them apart — so the legal actions list each
  (card, motif) pair once, playing it removes one copy, and the hand in a view
  shows both copies.
* **Views** show the current round: its trump, bids, tricks taken, the trick
  on the table and the round's completed tricks (``history``). Past rounds'
  bids, tricks and points are public (``past_rounds``). ``round`` counts from
  1; once the match is over it stays on the last round.
* ``rounds`` holds at most `MAX_ROUNDS` entries, so a match always ends in a
  bounded number of decisions on the platform.
* ``result()`` is refused before the end: its ``decks`` hold deals still to come.
"""

from __future__ import annotations

from typing import Any

from games import options as opts
from games.base import Game, State
from games.double.cards import (
    SET_ORDER,
    SPECIALS,
    DoubleCard,
    double_sets,
    sort_cards,
    suit_of,
)
from games.double.tricks import DoublePlay, led_suit, legal_plays, trick_winner
from games.errors import InvalidOptions
from games.ranking import ranks_of
from games.rng import Rng
from games.seats import left_of

NAME = "double"
MIN_SEATS, MAX_SEATS = 2, 10
#: One 27-card set is enough (and the default) up to this many seats.
ONE_SET_SEATS = 5
DEFAULT_ROUNDS = [1, 2, 3, 4, 5, 5, 4, 3, 2, 1]
MAX_ROUNDS = 100
EXACT_BONUS = 5
SUIT_WORDS = {"S": "a spade", "H": "a heart", "D": "a diamond", "C": "a club"}


def _rounds_check(name: str, value: Any) -> list[int]:
    """A non-empty list of positive whole numbers (the seat count bounds them later)."""
    if (type(value) is not list or not value or len(value) > MAX_ROUNDS
            or not all(type(n) is int and n >= 1 for n in value)):
        raise InvalidOptions(
            f"option {name!r} must be a list of 1 to {MAX_ROUNDS} positive whole numbers "
            f"(cards per seat in each round), not {value!r}"
        )
    return list(value)


def _decks_check(name: str, value: Any) -> Any:
    """"auto", 1 or 2 (exact JSON types: ``true`` is not 1)."""
    if value == "auto" or (type(value) is int and value in (1, 2)):
        return value
    raise InvalidOptions(f'option {name!r} must be "auto", 1 or 2 (sets of 27 cards), '
                         f"not {value!r}")


OPTIONS = (
    opts.Option("decks", "auto", _decks_check,
                '"auto" (1 set for 2-5 seats, 2 for 6-10), 1 (27 cards, at most 5 seats) or 2'),
    opts.Option("rounds", DEFAULT_ROUNDS, _rounds_check,
                "cards dealt to each seat in each round; seats x max + 1 must not exceed the cards"),
    opts.Option("chips", 15, opts.integer(0, 10_000), "each seat's starting points"),
    opts.Option("deck", None, opts.card_list(),
                "the first round's cards, top first (later rounds are shuffled from the seed)"),
)


def resolve_decks(decks: Any, seats: int) -> int:
    """How many sets are in use; one set cannot serve more than 5 seats."""
    if decks == "auto":
        return 1 if seats <= ONE_SET_SEATS else 2
    if decks == 1 and seats > ONE_SET_SEATS:
        raise InvalidOptions(f"one set (27 cards) allows at most {ONE_SET_SEATS} seats, "
                             f"not {seats}: use decks 2 or \"auto\"")
    return decks


def score_round(points: int, bid: int, taken: int) -> int:
    """Exact: + 5 + tricks. Missed: − the bid. Never below 0."""
    if taken == bid:
        return points + EXACT_BONUS + taken
    return max(0, points - bid)


class DoubleState(State):
    """What is true at the table; `view()` is the one place that hides it."""

    def __init__(self, game: Game, seats: int, seed: int, options: dict[str, Any]) -> None:
        super().__init__(game, seats, seed, options)
        self.n_decks = resolve_decks(options["decks"], seats)
        self.rounds: list[int] = list(options["rounds"])
        cards = double_sets(self.n_decks)
        if seats * max(self.rounds) + 1 > len(cards):
            raise InvalidOptions(
                f"option 'rounds': {seats} seats x {max(self.rounds)} cards + 1 trump card "
                f"needs {seats * max(self.rounds) + 1} cards, but {self.n_decks} set(s) hold "
                f"{len(cards)}"
            )
        self.cards = cards
        if options["deck"] is not None:
            opts.check_deck("deck", options["deck"], cards)
        #: every round's deck as dealt, top first, each shuffled when its round starts
        #: (from the seed and options alone: deals never depend on play)
        self.decks: list[list[DoubleCard]] = []
        self.points: list[int] = [options["chips"]] * seats
        #: per finished round: {"bids", "tricks", "points"} (public)
        self.summaries: list[dict[str, list[int]]] = []
        self.round = -1
        self._start_round()

    # -- the flow ----------------------------------------------------------
    def _deck(self, i: int) -> list[DoubleCard]:
        """Round i's deck: the ``deck`` option for round 0, else shuffled with ``Rng(seed, "round", i)``."""
        if i == 0 and self.options["deck"] is not None:
            return [DoubleCard(c) for c in self.options["deck"]]
        return Rng(self.seed, "round", i).shuffled(self.cards)

    def _start_round(self) -> None:
        self.round += 1
        if len(self.decks) <= self.round:
            self.decks.append(self._deck(self.round))
        n, deck = self.rounds[self.round], self.decks[self.round]
        self.dealer = (self.seats - 1 + self.round) % self.seats
        first = left_of(self.dealer, self.seats)
        # One at a time from `first`: seat s gets deck[k] for every k ≡ s - first (mod seats).
        # Hands are held in the set's order (what views show anyway), so listing
        # the plays needs no sort; removing a card keeps the order.
        dealt = n * self.seats
        self.hands: list[list[DoubleCard]] = [
            sorted(deck[(s - first) % self.seats:dealt:self.seats], key=SET_ORDER.__getitem__)
            for s in range(self.seats)
        ]
        self.trump_card: DoubleCard = deck[n * self.seats]
        special = any(m in SPECIALS for m in self.trump_card.motifs)
        self.trump: str | None = None if special else suit_of(self.trump_card.high)
        self.bids: list[int | None] = [None] * self.seats
        self.tricks: list[int] = [0] * self.seats
        self.trick: list[DoublePlay] = []
        self.history: list[dict[str, Any]] = []
        self.leader = first
        self.pending: str | None = "bid"
        self._to_act: int | None = first

    def max_bid(self, seat: int) -> int:
        return min(len(self.hands[seat]), self.points[seat])

    def _legal_actions(self) -> list[dict]:
        seat = self._to_act
        assert seat is not None  # asked only while the match is on
        if self.pending == "bid":
            return [{"bid": n} for n in range(self.max_bid(seat) + 1)]
        plays = legal_plays(self.hands[seat], led_suit(self.trick), in_order=True)
        return [{"play": card, "motif": m} for card, m in plays]

    def _apply(self, action: dict) -> None:
        if self.pending == "bid":
            self._bid(action["bid"])
        else:
            self._play(action["play"], action["motif"])  # the listed card: a DoubleCard already

    def _bid(self, n: int) -> None:
        assert self._to_act is not None
        self.bids[self._to_act] = n
        following = left_of(self._to_act, self.seats)
        if None in self.bids:
            self._to_act = following
        else:  # everyone has bid: left of the dealer leads (it bid first, so it is next)
            self.pending, self._to_act = "play", self.leader

    def _play(self, card: DoubleCard, motif: str) -> None:
        assert self._to_act is not None
        seat = self._to_act
        self.hands[seat].remove(card)  # one copy; identical copies are interchangeable
        self.trick.append(DoublePlay(seat, card, motif))
        if len(self.trick) < self.seats:
            self._to_act = left_of(seat, self.seats)
            return
        winner = trick_winner(self.trick, self.trump).seat
        self.tricks[winner] += 1
        self.history.append({"leader": self.leader, "led_suit": led_suit(self.trick),
                             "plays": [p.to_json() for p in self.trick], "winner": winner})
        self.trick = []
        if self.hands[winner]:
            self.leader = self._to_act = winner
        else:
            self._end_round()

    def _end_round(self) -> None:
        bids = [b for b in self.bids if b is not None]  # everyone has bid by the round's end
        self.points = [score_round(p, b, t) for p, b, t in zip(self.points, bids, self.tricks, strict=True)]
        self.summaries.append({"bids": bids, "tricks": list(self.tricks),
                               "points": list(self.points)})
        if self.round + 1 < len(self.rounds):
            self._start_round()
        else:
            self.pending, self._to_act = None, None

    def _explain_illegal(self, action: Any) -> str | None:
        """Say which rule the action breaks, from what `to_act` sees."""
        seat = self._to_act
        assert seat is not None  # asked only while the match is on
        if self.pending == "bid":
            top = self.max_bid(seat)
            if not isinstance(action, dict) or set(action) != {"bid"}:
                return f"seat {seat} must bid: send {{'bid': n}} with n from 0 to {top}"
            return (f"a bid is a whole number from 0 to {top} (the cards in your hand, "
                    f"{len(self.hands[seat])}, and your points, {self.points[seat]}), "
                    f"not {action['bid']!r}")
        if not isinstance(action, dict) or set(action) != {"play", "motif"}:
            return f"seat {seat} must play: send {{'play': card, 'motif': one of its halves}}"
        card, motif = action["play"], action["motif"]
        if not isinstance(card, str) or card not in self.hands[seat]:
            return f"{card!r} is not in your hand: {', '.join(sort_cards(self.hands[seat]))}"
        halves = DoubleCard(card).motifs
        if motif not in halves:
            return f"{motif!r} is not a half of {card}: play {halves[0]!r} or {halves[1]!r}"
        led = led_suit(self.trick)
        if led is not None:
            return (f"{SUIT_WORDS[led][2:]}s were led and you hold {SUIT_WORDS[led]}: play a card "
                    f"with its {SUIT_WORDS[led][2:]} half active, or a POPE or IDIOT half")
        return None

    # -- what each seat sees -----------------------------------------------
    def _view(self, seat: int | None) -> dict:
        """Public facts for everyone; a seat adds its own hand. Never another
        hand, nor the undealt cards (only the turned-up trump card)."""
        return {
            "seat": seat,
            "seats": self.seats,
            "round": self.round + 1,
            "rounds": len(self.rounds),
            "cards_per_seat": self.rounds[self.round],
            "decks": self.n_decks,
            "dealer": self.dealer,
            "trump_card": self.trump_card,
            "trump": self.trump,
            "hand": None if seat is None else sort_cards(self.hands[seat]),
            "hand_sizes": [len(h) for h in self.hands],
            "bids": list(self.bids),
            "tricks": list(self.tricks),
            "leader": self.leader if self.pending == "play" else None,
            "trick": [p.to_json() for p in self.trick],
            "led_suit": led_suit(self.trick),
            "points": list(self.points),
            "pending": self.pending,
            "to_act": self._to_act,
            "history": [{**h, "plays": [dict(p) for p in h["plays"]]} for h in self.history],
            "past_rounds": [{k: list(v) for k, v in r.items()} for r in self.summaries],
        }

    def _result(self) -> dict:
        """The outcome (``decks`` holds every deal: `State.result` waits for the end)."""
        return {
            "scores": list(self.points),
            "ranks": ranks_of(self.points),
            "decks": [list(d) for d in self.decks],
            "rounds": [{k: list(v) for k, v in r.items()} for r in self.summaries],
        }
