"""DoubleHeuristic: predicts its tricks from its hand's power, then plays to hit the bid.

In DOUBLE only an *exact* prediction pays (5 + tricks) and a miss costs the
bid, so a bid of 0 risks nothing. The bot therefore:

* **bids** the number n that maximises ``P(n tricks) × (5 + n) − P(miss) × n``,
  where the distribution of its tricks comes from one win chance per card
  (its better half: IDIOT, POPE, trumps by rank, high cards by rank), each
  smaller when more opponents hold more cards that could beat it;
* **plays** to win while it is short of its bid (the cheapest card that takes
  the trick when it plays last, the surest one earlier, otherwise it sheds
  its weakest card) and to lose once it has enough (its most dangerous card
  that cannot take this trick, otherwise the weakest).

"Would this play take the trick?" is answered by the engine's own trick rules
(`games.double.tricks`); everything else is read from the bot's view.
"""

from __future__ import annotations

from games.cards import Card
from games.double.cards import IDIOT, POPE, RANK_STRENGTH, DoubleCard
from games.double.tricks import DoublePlay, trick_winner
from sdk import Bot

#: How often a card that could beat ours is actually played on the same trick.
PLAY_FACTOR = 0.6
#: Chance that a plain (non-trump) winner is not trumped by a void opponent.
NOT_TRUMPED = 0.6
POPE_POWER = 0.85


class Table:
    """What the bot derives from its view once per decision."""

    def __init__(self, view: dict) -> None:
        self.seats: int = view["seats"]
        self.trump: str | None = view["trump"]
        cards = max(1, len(view["hand"]))
        # chance that one given rival motif is in an opponent's hand and shows up
        share = (self.seats - 1) * cards / 27
        self.threat = min(0.95, PLAY_FACTOR * share)

    def motif_power(self, motif: str) -> float:
        """The chance this motif takes a trick it is played on (a rough estimate)."""
        if motif == IDIOT:
            return 1.0
        if motif == POPE:
            return POPE_POWER
        card = Card(motif)
        higher = 12 - RANK_STRENGTH[card.rank]
        beat = (1 - self.threat) ** (higher + 2)  # higher motifs of its suit, POPE, IDIOT
        if self.trump is None or card.suit == self.trump:
            return beat
        return beat * NOT_TRUMPED

    def card_power(self, card: str) -> float:
        return max(self.motif_power(m) for m in DoubleCard(card).motifs)


def trick_distribution(chances: list[float]) -> list[float]:
    """P(k tricks) for k = 0..n when card i wins with `chances[i]` independently."""
    dist = [1.0]
    for p in chances:
        nxt = [0.0] * (len(dist) + 1)
        for k, q in enumerate(dist):
            nxt[k] += q * (1 - p)
            nxt[k + 1] += q * p
        dist = nxt
    return dist


def best_bid(chances: list[float], allowed: list[int]) -> int:
    """The allowed bid with the best expected points."""
    dist = trick_distribution(chances)

    def value(n: int) -> float:
        hit = dist[n] if n < len(dist) else 0.0
        return hit * (5 + n) - (1 - hit) * n

    return max(allowed, key=lambda n: (value(n), -n))


class DoubleHeuristic(Bot):
    game = "double"

    def act(self, view: dict, legal_actions: list[dict]) -> dict:
        table = Table(view)
        if view["pending"] == "bid":
            chances = [table.card_power(c) for c in view["hand"]]
            n = best_bid(chances, [a["bid"] for a in legal_actions])
            return {"bid": n}
        return self.play(view, legal_actions, table)

    def play(self, view: dict, legal: list[dict], table: Table) -> dict:
        seat = view["seat"]
        trick = [DoublePlay(p["seat"], p["card"], p["motif"]) for p in view["trick"]]
        return choose_play(seat, view["bids"][seat] - view["tricks"][seat], trick, view["seats"],
                           view["trump"], legal, table)


def choose_play(seat: int, need: int, trick: list[DoublePlay], seats: int, trump: str | None,
                legal: list[dict], table: Table) -> dict:
    """The play: win while short of the bid, duck once it is made (the rules above).

    Kept apart from the view so a search can play out sampled states with it.
    """
    last = len(trick) == seats - 1

    def wins(action: dict) -> bool:
        plays = [*trick, DoublePlay(seat, action["play"], action["motif"])]
        return trick_winner(plays, trump).seat == seat

    def motif(a: dict) -> float:
        return table.motif_power(a["motif"])

    def card(a: dict) -> float:
        return table.card_power(a["play"])

    winning = [a for a in legal if wins(a)]
    losing = [a for a in legal if a not in winning]
    if need > 0:
        if not trick:  # lead the surest winner
            return max(legal, key=lambda a: (motif(a), -card(a)))
        if winning and last:
            return min(winning, key=card)  # just enough
        if winning:
            return max(winning, key=lambda a: (motif(a), -card(a)))
        return min(legal, key=card)  # cannot take it: keep the good cards
    # enough tricks: duck
    if not trick:
        return min(legal, key=lambda a: (motif(a), -card(a)))
    if losing:
        return max(losing, key=card)  # shed a dangerous card safely
    if last:
        return max(legal, key=card)  # taken anyway: spend the most dangerous card
    return min(legal, key=motif)


if __name__ == "__main__":
    from example_bots.run import main  # written by the SDK helper

    main(DoubleHeuristic())
