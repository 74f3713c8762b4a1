"""What one seat knows of the hidden cards, read from its view's log (for `sample()`).

Each other hand is tracked as the cards known to be in it plus *slots*: cards
whose identity is unknown, each with the set of ids it may be. The manche
starts with four money slots per other seat (the purse is dealt from the money
alone); public events then move known cards (payments, purchases, a souris
that finds its vegetable, the turnip), reveal facts (a souris that misses:
the target holds no such vegetable; a souris that gets nothing back: its
player holds only that vegetable and the fly; a hand shown; the three cards a
Gertrude drew) and move unknown cards (a seat eliminated: its hand leaves the game
unseen). The pile is what is left, and a redraw's vegetables are known to be
in it (or in the lot drawn right after).

Bids prove values: a bid that did not eliminate its bidder proves its hand
was worth at least the bid then (an unpayable bid eliminates at once), and an
eliminating bid proves the hand that left the game was worth less. `lower`
keeps, per other seat, a lower bound on its hand's value now: the best bid
since the manche began, moved by every change to the hand since (a seen card
by its value; an unseen one by the most it may have been worth when it
leaves, the least when it arrives), so it stays true. `out_bounds` keeps, per
eliminated hand, the out-slots it left and the most they may be worth.

One approximation, where an exact answer would need the joint history of two
other seats: a card that changes hands privately between two other seats (a
Gertrude's kept card, a souris's card given back) is a slot for its receiver
that may be any card the giver could have held, and the giver's hand is then
known more coarsely (`Hand.lose_unknown`). Both stay true accounts — what
really happened always fits them — but they forget that the two hands are
linked, so a sample may give the card to both seats' possibilities at once
(never twice: the cards are dealt from one box).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from games.sampling import require
from games.soupe_gertrude.cards import MONEY, VALUES, card_ids


@dataclass
class Hand:
    """One other seat's hand: cards known to be in it, and slots of unknown identity."""

    known: Counter = field(default_factory=Counter)
    slots: list[frozenset] = field(default_factory=list)

    def size(self) -> int:
        return sum(self.known.values()) + len(self.slots)

    def possible(self) -> frozenset:
        """Every id this hand may hold."""
        ids = {c for c, n in self.known.items() if n > 0}
        for slot in self.slots:
            ids |= slot
        return frozenset(ids)

    def holds(self, card: str) -> None:
        """A fact: the hand holds `card` (a slot that may be it becomes it)."""
        if self.known[card] == 0:
            self._resolve(card)

    def holds_all(self, cards: list[str]) -> None:
        """A fact: the hand holds all of `cards` (with their copies)."""
        for card, n in Counter(cards).items():
            while self.known[card] < n:
                self._resolve(card)

    def _resolve(self, card: str) -> None:
        """One more copy of `card` is known: one slot that may be it becomes it.

        When the slots that may be it are nested (money within any card), the
        narrowest is the one to spend: what is left allows every case. Otherwise
        which one it was is not known, and those left may each be any of them.
        """
        candidates = sorted((i for i, s in enumerate(self.slots) if card in s),
                            key=lambda i: len(self.slots[i]))
        require(bool(candidates), f"a hand is said to hold {card!r}, which it cannot")
        domains = [self.slots[i] for i in candidates]
        if not all(a <= b for a, b in zip(domains, domains[1:], strict=False)):
            union = frozenset().union(*domains)
            for i in candidates:
                self.slots[i] = union
        del self.slots[candidates[0]]
        self.known[card] += 1

    def lose(self, card: str) -> None:
        """`card` leaves the hand, in view of this seat."""
        self.holds(card)
        self.known[card] -= 1

    def lose_unknown(self, barred: set[str]) -> frozenset:
        """A card this seat did not see leaves the hand (never one of `barred`); returns
        what it may have been.

        Any card not barred may have left, a known one or a slot: one copy of each
        known id that may have left becomes uncertain, and the hand keeps one card
        fewer among those copies and its slots, each now any of them (a coarser but
        true account: the state that really happened always fits it).
        """
        candidates = [c for c, n in self.known.items() if n > 0 and c not in barred]
        ids = frozenset(candidates).union(*self.slots)
        may = ids - barred
        require(bool(may), "a card left a hand that could not give it")
        uncertain = len(candidates) + len(self.slots) - 1
        for card in candidates:
            self.known[card] -= 1
        self.slots = [ids] * uncertain
        return may

    def lacks(self, card: str) -> None:
        """A fact: the hand holds no `card`."""
        require(self.known[card] == 0, f"a hand holding {card!r} was said to lack it")
        self.slots = [s - {card} for s in self.slots]

    def only(self, ids: set[str]) -> None:
        """A fact: every card of the hand is one of `ids`."""
        require(all(c in ids for c, n in self.known.items() if n > 0),
                "a hand said to hold only some cards holds others")
        self.slots = [s & ids for s in self.slots]

    def exactly(self, cards: list[str]) -> None:
        self.known = Counter(cards)
        self.slots = []


#: the private events, and which seats see each (as the engine logs them)
PRIVATE = {"shown": ("to",), "given_back": ("seat", "to"), "drawn": ("seat", "target"),
           "kept_card": ("seat", "target")}


class Knowledge:
    """Walks one manche of a seat's log and keeps what it says about hidden cards."""

    def __init__(self, view: dict) -> None:
        self.me: int = view["seat"]
        self.seats: int = view["seats"]
        self.ids = frozenset(card_ids(view["navet_mouche"]))
        self.money = frozenset(MONEY)
        log = view["log"]
        starts = [i for i, e in enumerate(log) if e["event"] == "manche"]
        require(bool(starts), "the log has no set-up")
        self.events = log[starts[-1]:]
        self.hands = {s: Hand() for s in range(self.seats) if s != self.me}
        self.out_known: Counter = Counter()
        self.out_slots: list[frozenset] = []
        self.pile_known: Counter = Counter()  # a lower bound on the pile (and the lot just drawn)
        self.held: list[str] = []  # a two-seat payment's cards, held aside until it ends
        self.lot_open = False
        #: other seat -> a lower bound on its hand's value now (from its bids)
        self.lower: dict[int, int] = {}
        #: (indices into `out_slots`, the most those cards may be worth): eliminated hands
        self.out_bounds: list[tuple[range, int]] = []
        for event in self.events:
            getattr(self, "_" + event["event"], self._ignore)(event)

    # -- helpers --------------------------------------------------------------------
    def _hand(self, seat: int) -> Hand | None:
        return None if seat == self.me else self.hands[seat]

    def _lose(self, seat: int, card: str) -> None:
        hand = self._hand(seat)
        if hand is not None:
            hand.lose(card)
            self._shift(seat, -VALUES[card])

    def _gain(self, seat: int, card: str) -> None:
        hand = self._hand(seat)
        if hand is not None:
            hand.known[card] += 1
            self._shift(seat, VALUES[card])

    def _shift(self, seat: int, value: int) -> None:
        """The hand's value moved by `value`: so does its lower bound."""
        if seat in self.lower:
            self.lower[seat] += value

    def _moved_unseen(self, giver: int, receiver: int, barred: set[str]) -> None:
        """A private transfer between two other seats (see the module's note)."""
        may = self.hands[giver].lose_unknown(barred)
        self.hands[receiver].slots.append(may)
        self._shift(giver, -max(VALUES[c] for c in may))
        self._shift(receiver, min(VALUES[c] for c in may))

    @staticmethod
    def _ignore(event: dict) -> None:
        return None

    # -- the events ------------------------------------------------------------------
    def _manche(self, event: dict) -> None:
        for hand in self.hands.values():
            hand.known, hand.slots = Counter(), [self.money] * 4

    def _bid(self, event: dict) -> None:
        """A bid logged is a bid its seat could pay: its hand is worth at least that."""
        seat = event["seat"]
        if seat != self.me:
            self.lower[seat] = max(self.lower.get(seat, 0), event["bid"])

    def _redraw(self, event: dict) -> None:
        for card, n in Counter(event["cards"]).items():
            self.pile_known[card] = max(self.pile_known[card], n)

    def _draw(self, event: dict) -> None:
        self.lot_open = True

    def _purchase(self, event: dict) -> None:
        self.pile_known -= Counter(event["cards"])
        for card in event["cards"]:
            self._gain(event["seat"], card)
        self.lot_open = False

    def _give(self, event: dict) -> None:
        self._lose(event["seat"], event["card"])
        if self.seats == 2:
            self.held.append(event["card"])
        else:
            self._gain(event["to"], event["card"])

    def _received(self, event: dict) -> None:
        self.held.remove(event["card"])
        self._gain(event["seat"], event["card"])

    def _discarded(self, event: dict) -> None:
        for card in event["cards"]:
            self.held.remove(card)
            self.out_known[card] += 1

    def _eliminated(self, event: dict) -> None:
        """An unpayable bid: the hand, worth less than the bid, leaves the game unseen."""
        hand = self._hand(event["seat"])
        if hand is not None:
            first = len(self.out_slots)
            self.out_known += hand.known
            self.out_slots += hand.slots
            most = event["bid"] - 1 - sum(VALUES[c] * n for c, n in hand.known.items())
            require(most >= 0, "an eliminated hand was worth its bid")
            self.out_bounds.append((range(first, len(self.out_slots)), most))
            hand.known, hand.slots = Counter(), []
            self.lower.pop(event["seat"], None)

    def _souris(self, event: dict) -> None:
        self._lose(event["seat"], "souris")
        self.out_known["souris"] += 1

    def _gertrude(self, event: dict) -> None:
        self._lose(event["seat"], "gertrude")
        self.out_known["gertrude"] += 1

    def _cancel(self, event: dict) -> None:
        self._lose(event["seat"], "gertrude")
        self.out_known["gertrude"] += 1

    def _souris_result(self, event: dict) -> None:
        self.souris = event  # the give-back that follows a hit bars its vegetable
        target, vegetable = event["target"], event["vegetable"]
        if event["taken"]:
            self._lose(target, vegetable)
            self._gain(event["seat"], vegetable)
        elif target != self.me:
            self.hands[target].lacks(vegetable)

    def _shown(self, event: dict) -> None:
        self.hands[event["seat"]].exactly(event["hand"])

    def _given_back(self, event: dict) -> None:
        self._lose(event["seat"], event["card"])
        self._gain(event["to"], event["card"])

    def _give_back(self, event: dict) -> None:
        seat, target = event["seat"], event["to"]
        if "card" in event:  # nothing given back: the player holds nothing it could give
            if seat != self.me:
                self.hands[seat].only({self.souris["vegetable"], "mouche"})
            return
        if self.me in (seat, target):  # seen in `given_back`
            return
        self._moved_unseen(seat, target, {self.souris["vegetable"], "mouche"})

    def _drawn(self, event: dict) -> None:
        hand = self._hand(event["target"])
        if hand is not None:
            hand.holds_all(event["cards"])

    def _kept_card(self, event: dict) -> None:
        self._lose(event["target"], event["card"])
        self._gain(event["seat"], event["card"])

    def _kept(self, event: dict) -> None:
        seat, target = event["seat"], event["target"]
        if self.me in (seat, target):
            return  # seen in `drawn` and `kept_card`
        if event["taken"]:
            self._moved_unseen(target, seat, {"mouche"})
        elif event["drawn"] == 1:  # nothing but the fly was drawn: the fly was the whole hand
            self.hands[target].exactly(["mouche"])

    def _navet(self, event: dict) -> None:
        self._lose(event["seat"], "navet")
        self.out_known["navet"] += 1
        if event["hit"]:
            self._lose(event["target"], event["vegetable"])
            self.out_known[event["vegetable"]] += 1
