"""Print one real decision per registered game, as a bot receives it (docs/api.md §3).

    .venv/bin/python docs/gen_decisions.py > /tmp/decisions.md

The output is the "One decision per game" part of docs/write-a-bot.md: run
it again when a game is added or its views change, and paste it in.
Each decision is the first of a seeded match, built from the engine itself
(`view(seat)` and `legal_actions()`), so the page can never drift from the rules.
The rules pages (docs/rules) get one decision of every kind from gen_rules.py,
which builds and prints decisions the same way.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_rules import decision, games, pretty  # noqa: E402

SEED = 7


def first_decision(name: str, seed: int = SEED) -> dict:
    game = games.get(name)
    return decision(name, game.new(seats=game.min_seats, seed=seed, options={}), 0)


def main() -> None:
    for name in games.names():
        print(f"#### {name}\n")
        print("```json")
        print(pretty(first_decision(name), pack=False))
        print("```\n")


if __name__ == "__main__":
    main()
