"""What a PIMC playout is in each game: how far it goes, what it counts, how it plays.

A `Plan` is made per decision from the view and the legal actions. The base
plays uniformly random actions to the end of the match and counts the seat's
match points; each game's plan plays to a nearer horizon (the deal, the
round) with a quicker and better policy, and counts what that horizon decides.
"""

from __future__ import annotations

import random

import games
from games.ranking import match_points


class Plan:
    """Random playouts to the end of the match; the outcome is the seat's match points."""

    def __init__(self, game: games.Game, view: dict, legal: list[dict]) -> None:
        self.game, self.view, self.legal = game, view, legal

    def candidates(self) -> list[dict]:
        """The actions worth searching (all of them unless a game says otherwise)."""
        return self.legal

    def done(self, state: games.State) -> bool:
        return state.is_over

    def utility(self, state: games.State, seat: int) -> float:
        return match_points(state.result()["ranks"], seat)

    def policy(self, state: games.State, rng: random.Random) -> dict:
        legal = state.legal_actions()
        return legal[rng.randrange(len(legal))]

    def playout(self, state: games.State, seat: int, rng: random.Random) -> float:
        while not self.done(state):
            state.apply(self.policy(state, rng))
        return self.utility(state, seat)


class DuckSoupPlan(Plan):
    """To the end of the deal; the outcome is the deal score's difference (low × high each)."""

    def __init__(self, game: games.Game, view: dict, legal: list[dict]) -> None:
        super().__init__(game, view, legal)
        self.deals = len(view["deals"])

    def done(self, state) -> bool:
        return len(state.deals) > self.deals or state.is_over

    def utility(self, state, seat: int) -> float:
        score = state.deals[self.deals]["score"]
        return (score[seat] - score[1 - seat]) / 100.0


PLANS: dict[str, type[Plan]] = {
    "duck-soup": DuckSoupPlan,
}
