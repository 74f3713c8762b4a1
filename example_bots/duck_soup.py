"""DuckSoupHeuristic: a sensible Duck Soup (La soupe aux canards) player.

A deal scores low-phase points × high-phase points, so the bot wants tricks in
*both* phases: in the low phase (lowest card wins, ace low) it wins what it can
with its low cards and keeps its high cards for the high phase (highest card
wins, ace high), where it cashes them. Every played card is public, so it counts
the cards it has not seen: in the low phase they are the other hand and the
stock, in the high phase exactly the other hand (the stock is empty then).

Each decision scores every legal action by its expected outcome for this trick
(points won or given, in the points' worth for the deal score) plus the value of
winning the lead, less the worth of the card it spends, and picks the best:

* **follow**: the cheapest card that beats the led one, else a card of the led
  suit (giving 1 point, not 2) or the card it needs least; **coin** on the led
  rank when the leader cannot hold a third card of it, or when the two points
  are worth the risk that he does;
* **lead**: a card the other hand is unlikely to beat (in the high phase it
  knows: it cashes its sure winners first) or to coin on;
* **answer-coin**: coin-coin when the fourth card cannot (or is unlikely to) be
  in the other hand, else soupe;
* **answer-coin-coin**: soupe-aux-canards with the fourth card, else a card of
  the coin-coin card's suit (1 point given, not 2).

Points are weighted by their worth: in the high phase a point is worth the
winner's low points (the deal score is their product), so it plays to keep the
product ahead. Every decision reads the view only (hand, trick, history); it
keeps no memory, so one instance plays any number of matches.
"""

from __future__ import annotations

from math import comb

from sdk import Bot

SUITS = "SHDC"
RANKS_LOW = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
ALL_CARDS = tuple(r + s for s in SUITS for r in RANKS_LOW)
#: how strongly a card beats others of its suit, per phase (higher is better)
STRENGTH = {
    "low": {r: 12 - i for i, r in enumerate(RANKS_LOW)},  # A 12, 2 11, ... K 0
    "high": {r: (i - 1) % 13 for i, r in enumerate(RANKS_LOW)},  # 2 0, ... K 11, A 12
}

#: What a card kept through the low phase is worth in the high phase (in points).
KEEP_HIGH = {"A": 2.0, "K": 1.5, "Q": 1.0, "J": 0.6, "10": 0.3, "9": 0.1}
#: What a card is still worth for the low phase's tricks to come.
KEEP_LOW = {"A": 0.6, "2": 0.5, "3": 0.4, "4": 0.3, "5": 0.2, "6": 0.1}
#: The worth of leading the next trick (the leader wins unless beaten in suit).
LEAD = 0.5
#: Points a won lead brings on average (2 if the other plays off suit, 1 in suit).
LEAD_POINTS = 1.7


def rank_of(card: str) -> str:
    return card[:-1]


def suit_of(card: str) -> str:
    return card[-1]


class Table:
    """What the bot knows at one decision, read from its view once."""

    def __init__(self, view: dict) -> None:
        self.seat: int = view["seat"]
        self.phase: str = view["phase"]
        self.strength = STRENGTH[self.phase]
        self.hand: list[str] = list(view["hand"])
        self.trick: list[dict] = view["trick"]
        seen = set(self.hand)
        for trick in view["history"]:
            seen.update(p["card"] for p in trick["cards"])
        seen.update(p["card"] for p in self.trick)
        #: cards in the other hand or the stock
        self.unknown = [c for c in ALL_CARDS if c not in seen]
        self.other_size: int = view["hand_sizes"][1 - self.seat]
        # what a point is worth to each seat in this phase
        points = view["points"]
        if self.phase == "high":
            low = points["low"]
            mean = max(1.0, (low[0] + low[1]) / 2)
            self.mine = low[self.seat] / mean
            self.theirs = low[1 - self.seat] / mean
        else:
            self.mine = self.theirs = 1.0

    # -- what the other hand may hold -------------------------------------------
    def chance_any(self, k: int) -> float:
        """The chance that the other hand holds at least one of `k` given unknown cards."""
        n, h = len(self.unknown), self.other_size
        if k <= 0 or h <= 0 or n < k:
            return 0.0
        return 1.0 - comb(max(0, n - h), k) / comb(n, k)

    def chance_all(self, k: int) -> float:
        """The chance that the other hand holds all of `k` given unknown cards."""
        n, h = len(self.unknown), self.other_size
        return comb(h, k) / comb(n, k) if 0 < k <= h <= n else float(k == 0)

    def beaters(self, card: str) -> list[str]:
        """Unknown cards that beat `card` when it is led."""
        suit, s = suit_of(card), self.strength[rank_of(card)]
        return [c for c in self.unknown if suit_of(c) == suit and self.strength[rank_of(c)] > s]

    def copies(self, card: str) -> tuple[int, int]:
        """How many other cards of the rank of `card` are in my hand, and unknown."""
        rank = rank_of(card)
        mine = sum(1 for c in self.hand if rank_of(c) == rank and c != card)
        unknown = sum(1 for c in self.unknown if rank_of(c) == rank)
        return mine, unknown

    # -- what spending a card costs ----------------------------------------------
    def keep(self, card: str) -> float:
        """What the card is worth in hand for the rest of the deal."""
        r = rank_of(card)
        if self.phase == "low":
            return KEEP_HIGH.get(r, 0.0) + KEEP_LOW.get(r, 0.0)
        # high phase: the other hand is known; a card nothing beats is a sure trick
        above = len(self.beaters(card))
        return 2.0 / (1 + above) + 0.05 * self.strength[r]

    def win(self, points: float) -> float:
        return self.mine * points + LEAD

    def lose(self, points: float) -> float:
        return -self.theirs * points - LEAD


class DuckSoupHeuristic(Bot):
    """Wins cheap low tricks, keeps its high cards for the high phase, coins when it pays."""

    game = "duck-soup"

    def act(self, view: dict, legal_actions: list[dict]) -> dict:
        try:
            values = self.values(view, legal_actions)
            return legal_actions[max(range(len(values)), key=values.__getitem__)]
        except Exception:  # never fault: any listed action is better than none
            return legal_actions[0]

    def values(self, view: dict, legal_actions: list[dict]) -> list[float]:
        """Each action's value as this bot sees it (a search ranks its candidates by them)."""
        table = Table(view)
        decide = {
            "lead": self._lead,
            "follow": self._follow,
            "answer-coin": self._answer_coin,
            "answer-coin-coin": self._answer_coin_coin,
        }[view["pending"]]
        return [decide(table, a) for a in legal_actions]

    # -- the four decisions ---------------------------------------------------------
    def _lead(self, t: Table, action: dict) -> float:
        card = action["play"]
        mine, unknown = t.copies(card)
        # a coin on it (2 points: the other's best answer when it can): I concede
        # with no third card, and with one if the other hand holds the fourth too;
        # otherwise my coin-coin would win both tricks, so it is no threat
        if mine == 0:
            coined = t.chance_any(unknown)
        elif unknown == 2:
            coined = t.chance_all(2)
        else:
            coined = 0.0
        beaten = (1 - coined) * t.chance_any(len(t.beaters(card)))
        safe = 1.0 - beaten - coined
        value = safe * t.win(LEAD_POINTS) + beaten * t.lose(1) + coined * t.lose(2)
        return value - t.keep(card)

    def _follow(self, t: Table, action: dict) -> float:
        card, led = action["play"], t.trick[0]["card"]
        cost = t.keep(card)
        if action.get("call") == "coin":
            mine, unknown = t.copies(card)
            # with another copy in hand I answer a coin-coin with the fourth; without,
            # a leader holding a third takes both tricks (2 + 1 or 2) and a second card
            risk = 0.0 if mine >= 1 else t.chance_any(unknown)
            return (1 - risk) * t.win(2) + risk * (t.lose(3.5) - 0.5) - cost
        if suit_of(card) != suit_of(led):
            return t.lose(2) - cost
        if t.strength[rank_of(card)] > t.strength[rank_of(led)]:
            return t.win(1) - cost
        return t.lose(1) - cost

    def _answer_coin(self, t: Table, action: dict) -> float:
        if action.get("call") == "soupe":
            return t.lose(2)
        third = action["play"]
        # the fourth card: with me, already played, or maybe in the other hand
        rank = rank_of(third)
        fourth = [c for c in t.unknown if rank_of(c) == rank]
        risk = t.chance_any(len(fourth))
        return (1 - risk) * t.win(2 + LEAD_POINTS) + risk * t.lose(4) - t.keep(third)

    def _answer_coin_coin(self, t: Table, action: dict) -> float:
        card = action["play"]
        if action.get("call") == "soupe-aux-canards":
            return t.win(4) + 10.0  # both tricks are mine: always
        third = t.trick[2]["card"]
        second = 1 if suit_of(card) == suit_of(third) else 2
        return t.lose(2 + second) - t.keep(card)


if __name__ == "__main__":
    from example_bots.run import main

    main(DuckSoupHeuristic())
