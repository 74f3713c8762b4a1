"""Print one real decision per registered game, as a bot receives it (api.md §3).

    .venv/bin/python docs/gen_decisions.py > /tmp/decisions.md

The output is the "One decision per game" part of docs/write-a-bot.md: run
it again when a game is added or its views change, and paste it in.
Each decision is the first of a seeded match, built from the engine itself
(`view(seat)` and `legal_actions()`), so the page can never drift from the rules.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import games  # noqa: E402

SEED = 7


def first_decision(name: str, seed: int = SEED) -> dict:
    game = games.get(name)
    state = game.new(seats=game.min_seats, seed=seed, options={})
    seat = state.to_act
    return {"type": "turn", "protocol": 1, "match_id": "m_3f9c2a", "game": name, "turn": 0,
            "seat": seat, "view": state.view(seat), "legal_actions": state.legal_actions(),
            "deadline_ms": 2000}


def compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def pretty(decision: dict) -> str:
    """One key a line, the view's keys too, one legal action a line: readable and still JSON."""
    lines = []
    for key, value in decision.items():
        if key == "view":
            inner = [f'    "{k}": {compact(v)}' for k, v in value.items()]
            lines.append('  "view": {\n' + ",\n".join(inner) + "\n  }")
        elif key == "legal_actions":
            inner = [f"    {compact(a)}" for a in value]
            lines.append('  "legal_actions": [\n' + ",\n".join(inner) + "\n  ]")
        else:
            lines.append(f'  "{key}": {compact(value)}')
    return "{\n" + ",\n".join(lines) + "\n}"


def main() -> None:
    for name in games.names():
        print(f"#### {name}\n")
        print("```json")
        print(pretty(first_decision(name)))
        print("```\n")


if __name__ == "__main__":
    main()
