"""DoubleCarreHeuristic: builds the largest groups in Le double carré.

Hands are compared by their pattern (largest group first), so the bot scores
the 8 cards it keeps as the sum of ``10 ** count`` over its ranks: with 8
cards that order agrees with the rules' element-by-element comparison, and
the points of the distinct ranks are added as a fraction, as the rules break
ties. That score decides every take and every discard.

Only between choices that keep the same groups does the bot look ahead, with
a bonus on the scale of the points, too small to ever trade a group for a hope
(a look-ahead weighted like a real group plays worse than the greedy core):

* it keeps the groups with the most copies still unseen (a dead rank cannot grow);
* basic version: it leaves the other seat the revealed cards it least wants
  (ranks it has not been seen taking);
* advanced version: it remembers that a pair set aside on turn k comes back
  on turn k + 4, when the same seat is active again. Its own set-aside cards
  count as live copies for their rank (very likely to come back when it will
  choose first then, less otherwise), and the unseen cards still to come
  include the other seat's set-aside pairs.

Every decision reads the bot's own view only; the scoring reuses
`games.double_carre.points`.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from games.cards import RANKS_32, Card
from games.double_carre import points
from sdk import Bot

#: The chance that a pair set aside comes back to its owner, by who chooses first then.
BACK_WHEN_ACTIVE = 0.9
BACK_WHEN_NOT = 0.35
#: The share of the turned-over cards a seat ends up with (it takes 2 of 4).
SHARE = 0.5
#: Look-ahead bonus per expected extra copy, by the size of the group it would grow.
#: On the scale of the points (1 point = 0.01): it never outweighs a change of
#: pattern (at least 80) and competes with the points only as the cards to come do.
GROW = {1: 0.003, 2: 0.01, 3: 0.02}
#: Penalty per card left to the other seat on a take, per card of that rank it was
#: seen taking. Basic version only: in the advanced one much of what it takes is
#: set-aside junk, and there the penalty measurably lost games.
DENY_TAKE = 0.5

_ALL = [r + s for s in "SHDC" for r in RANKS_32]


def rank(card: str) -> str:
    return Card(card).rank


def base_value(hand: list[str]) -> float:
    """The hand as it stands: larger groups first, then points (as a fraction)."""
    counts = Counter(rank(c) for c in hand)
    return sum(10 ** c for c in counts.values()) + points(hand) / 100


class Outlook:
    """What the bot knows of the cards still to come, read from its view once per decision."""

    def __init__(self, view: dict) -> None:
        self.seat: int = view["seat"]
        self.first: int = view["first"]
        self.turns_left: int = view["turns"] - view["turn"]
        known = set(view["hand"]) | set(view["discards"]) | set(view["revealed"])
        known |= {c for pair in view["set_aside"] for c in pair}
        known |= {c for t in view["taken"] for cards in t["cards"] for c in cards}
        unknown = [c for c in _ALL if c not in known]
        self.unknown_by_rank = Counter(rank(c) for c in unknown)
        # cards not yet turned over that this seat cannot place: the stock, and
        # (advanced) what the other seat has set aside or will set aside
        future = view["stock"]
        if view["advanced"]:
            future += view["set_aside_sizes"][1 - self.seat] + 2 * max(0, 4 - view["turn"])
        self.p_unknown = SHARE * min(1.0, future / len(unknown)) if unknown else 0.0
        #: ranks the other seat was seen taking, with how many
        self.wanted = Counter(rank(c) for t in view["taken"] for c in t["cards"][1 - self.seat])
        # my own set-aside pairs: the pair at place i was set aside on turn popped + i + 1
        popped = max(0, view["turn"] - 4)
        self.back: Counter = Counter()
        for i, pair in enumerate(view["set_aside"]):
            self.add_back(self.back, pair, popped + i + 1)

    def chooses_first(self, turn: int) -> bool:
        """Whether this seat is active on `turn` (the active seat alternates)."""
        return (self.first + turn - 1) % 2 == self.seat

    def add_back(self, back: Counter, pair: list[str], turn_set_aside: int) -> None:
        """Count `pair` as likely to come back on turn `turn_set_aside` + 4."""
        chance = BACK_WHEN_ACTIVE if self.chooses_first(turn_set_aside) else BACK_WHEN_NOT
        for card in pair:
            back[rank(card)] += chance

    def bonus(self, hand: list[str], back: Counter) -> float:
        """The tie-break: how much the groups kept may still grow."""
        if self.turns_left <= 0:
            return 0.0
        counts = Counter(rank(c) for c in hand)
        return sum(GROW[c] * min(1.0, self.unknown_by_rank[r] * self.p_unknown + back[r])
                   for r, c in counts.items() if c in GROW)

    def denial(self, given: list[str]) -> int:
        """How much the other seat may want `given` (cards it gets or may pick first)."""
        return sum(self.wanted[rank(c)] for c in given)


class DoubleCarreHeuristic(Bot):
    """Takes the pair that best improves its groups, discards what contributes least."""

    game = "double-carre"

    def act(self, view: dict, legal_actions: list[dict]) -> dict:
        values = self.values(view, legal_actions)
        return legal_actions[max(range(len(values)), key=values.__getitem__)]

    def values(self, view: dict, legal_actions: list[dict]) -> list[float]:
        """Each action's value as this bot sees it (a search ranks its candidates by them)."""
        outlook = Outlook(view)
        if view["pending"] == "take":
            return [self._take_value(view, outlook, a["take"]) for a in legal_actions]
        return [self._discard_value(view, outlook, a["discard"]) for a in legal_actions]

    def _take_value(self, view: dict, outlook: Outlook, pair: list[str]) -> float:
        """The best hand reachable after taking `pair`, less what the rest gives away."""
        ten = view["hand"] + pair
        best = max(self._discard_value(view, outlook, list(drop), ten)
                   for drop in combinations(ten, 2))
        if view["advanced"]:
            return best
        return best - DENY_TAKE * outlook.denial([c for c in view["revealed"] if c not in pair])

    def _discard_value(self, view: dict, outlook: Outlook, drop: list[str],
                       ten: list[str] | None = None) -> float:
        hand = list(view["hand"] if ten is None else ten)
        for card in drop:
            hand.remove(card)
        value = base_value(hand)
        back = outlook.back
        if view["advanced"] and view["turn"] <= 4:  # this pair comes back on turn + 4
            back = Counter(back)
            outlook.add_back(back, drop, view["turn"])
        return value + outlook.bonus(hand, back)


if __name__ == "__main__":
    from example_bots.run import main  # written by the SDK helper

    main(DoubleCarreHeuristic())
