"""In-process bots for the worker pool's end-to-end tests (registered as tests.worker.e2e_bots:Name)."""

from __future__ import annotations

import time

from sdk import Bot


class Slow(Bot):
    """Thinks 15 ms per decision, so a match lasts long enough to be killed in the middle."""

    def act(self, view, legal_actions):
        time.sleep(0.015)
        return legal_actions[-1]


class Cheater(Bot):
    """Remembers every duck-soup deal it plays and uses it in the next rotation: a deliberate
    cheat for the `memory` flag (docs/api.md §5). The deals it has seen are kept in a file (the
    worker processes share nothing else), named by `CARDARENA_TEST_CHEATER_FILE`. A deal it
    has not seen it plays at random (first legal action); a deal whose hand is disjoint from
    a hand it held before — the same deal, seats rotated: it knows its opponent's cards — it
    plays with the heuristic."""

    game = "duck-soup"

    def __init__(self) -> None:
        from example_bots.duck_soup import DuckSoupHeuristic

        self.strong = DuckSoupHeuristic()
        self.repeat: dict[str, bool] = {}

    def decide(self, decision):
        match_id = decision["match_id"]
        if match_id not in self.repeat:
            self.repeat[match_id] = self.remember(frozenset(decision["view"]["hand"]))
        if self.repeat[match_id]:
            return self.strong.act(decision["view"], decision["legal_actions"])
        return decision["legal_actions"][0]

    @staticmethod
    def remember(hand: frozenset) -> bool:
        import os

        path = os.environ["CARDARENA_TEST_CHEATER_FILE"]
        try:
            with open(path) as f:
                seen = [frozenset(line.split()) for line in f]
        except FileNotFoundError:
            seen = []
        with open(path, "a") as f:
            f.write(" ".join(sorted(hand)) + "\n")
        return any(hand.isdisjoint(old) for old in seen)
