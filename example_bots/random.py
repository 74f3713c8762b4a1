"""RandomBot: plays a uniformly random legal action, in any game.

The baseline every heuristic must beat, and the fastest bot for benchmarks.
"""

from __future__ import annotations

import random

from sdk import Bot


class RandomBot(Bot):
    game = None  # any game

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def act(self, view: dict, legal_actions: list[dict]) -> dict:
        return legal_actions[self.rng.randrange(len(legal_actions))]


if __name__ == "__main__":
    from example_bots.run import main

    main(RandomBot())
