"""PIMC: perfect-information Monte Carlo search, one bot for every game.

At each decision it draws full states consistent with what its seat knows
(`game.sample(view, seed)`, docs/api.md §5), plays every candidate action out in
each of them and picks the action with the best mean outcome — the same
worlds for every action, so luck cancels between them. It stops drawing
worlds when its time budget for the decision runs out.

What a playout is differs by game (`Plan` below): how far to play (the end of
the deal, of the round, of the match), what counts as the outcome for the
seat (points, match points), which actions are worth trying (the example
heuristic's favourites when there are many) and how the playout plays (a
fast policy working on the state itself: the example heuristics read views,
too slow to play thousands of decisions a second).

The budget: `PIMC(budget_ms=150)` at most per decision, and never more than
a share of the decision's ``clock["move_ms"]`` (docs/api.md §5): the SDK hands every
bot the whole decision through `Bot.decide`, which PIMC overrides to read it,
so a short move timeout is never overrun (the rest is the network's and the
referee's).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import games
from example_bots.playouts import PLANS, Plan
from sdk import Bot

#: the default time for one decision (well within a 200 ms move time)
BUDGET_MS = 150.0
#: the share of a decision's ``move_ms`` the search may spend, when it knows it
MOVE_SHARE = 0.5

_KEYS: dict[frozenset, str] = {}


def game_of(view: dict) -> games.Game:
    """The registered game whose seat views have exactly this view's keys.

    A view does not name its game and the Bot API passes only the view; the
    keys of a game's views are fixed, and differ from game to game.
    """
    if not _KEYS:
        for name in games.names():
            game = games.get(name)
            if game.sampler is None:
                continue
            state = game.new(game.min_seats, 0)
            _KEYS[frozenset(state.view(0))] = name
    name = _KEYS.get(frozenset(view))
    if name is None:
        raise ValueError("this view is not a seat's view of a game PIMC can play")
    return games.get(name)


class PIMC(Bot):
    """Samples the hidden cards, plays each candidate action out, keeps the best on average."""

    game = None  # any game with a sampler

    def __init__(self, budget_ms: float = BUDGET_MS, seed: int = 0, max_worlds: int = 10_000,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.budget = budget_ms / 1000.0
        self.rng = random.Random(seed)
        self.max_worlds = max_worlds
        self.clock = clock
        self.worlds = 0  # worlds drawn at the last decision (for tests and tuning)
        self._next: dict = {}  # what `decide` read in the decision for the `act` it calls

    def decide(self, decision: dict) -> dict:
        """The whole decision (what every host calls): its ``clock`` caps the budget at
        `MOVE_SHARE` of ``move_ms``; its ``game``, when given, spares guessing the game."""
        clock = decision.get("clock")
        move = clock.get("move_ms") if isinstance(clock, dict) else None
        budget = self.budget
        if type(move) in (int, float) and move > 0:
            budget = min(budget, MOVE_SHARE * move / 1000.0)
        game = decision.get("game")
        self._next = {"budget": budget, "game": game if isinstance(game, str) else None}
        return self.act(decision["view"], decision["legal_actions"])

    def act(self, view: dict, legal_actions: list[dict]) -> dict:
        start = self.clock()
        told, self._next = self._next, {}
        if len(legal_actions) == 1:
            return legal_actions[0]
        try:
            game = games.get(told["game"]) if told.get("game") else game_of(view)
            plan: Plan = PLANS.get(game.name, Plan)(game, view, legal_actions)
            return self._search(game, view, plan, start + told.get("budget", self.budget))
        except Exception:  # never fault for a search's sake: a listed action is always better
            return legal_actions[0]

    def _search(self, game: games.Game, view: dict, plan: Plan, deadline: float) -> dict:
        candidates = plan.candidates()
        if len(candidates) == 1:
            return candidates[0]
        seat = view["seat"]
        totals = [0.0] * len(candidates)
        worlds = 0
        while worlds < self.max_worlds and (worlds == 0 or self.clock() < deadline):
            world_seed = self.rng.getrandbits(48)
            outcomes = []
            for action in candidates:
                if worlds and self.clock() >= deadline:
                    break  # out of time mid-world: a half-played world would favour some actions
                state = game.sample(view, world_seed)
                state.apply(action)
                outcomes.append(plan.playout(state, seat, random.Random(world_seed)))
            else:
                totals = [t + o for t, o in zip(totals, outcomes, strict=True)]
                worlds += 1
                continue
            break
        self.worlds = worlds
        best = max(range(len(candidates)), key=lambda i: (totals[i], -i))
        return candidates[best]


if __name__ == "__main__":
    from example_bots.run import main

    main(PIMC())
