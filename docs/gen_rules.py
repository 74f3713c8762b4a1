"""Generate the parts of the rules pages (docs/rules/<game>.md) that come from the engines.

    .venv/bin/python docs/gen_rules.py           # rewrite the generated parts in place
    .venv/bin/python docs/gen_rules.py --check   # exit 1 naming every stale page

A page is prose written for bot authors, with generated blocks between
`<!-- generated: NAME -->` and `<!-- end: NAME -->` markers:

* `options` — the options table: each option's default from
  `games.get(name).describe()` and its meaning from the engine's declaration;
* `decision: KIND` — one real decision whose view's `pending` is KIND, as a
  bot receives it, for every `Decision` the game declares. It is found by
  playing seeded matches at the demo's table (a seeded random player that
  makes no bid it cannot pay) until that kind of decision comes up, so every
  example is a state the engine really reaches.

Everything per game comes from its registration: a new game needs no edit here.

tests/docs/test_rules_docs.py fails when a block is stale: run this again
after changing an engine's views, actions or options.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import games  # noqa: E402
from sdk.clock import DEFAULT_TIME  # noqa: E402

PAGES = ROOT / "docs" / "rules"


def search(game: games.Game) -> dict[str, tuple[int, dict]]:
    """The game's decisions (`pending` values), each with the table (seats, options) where
    its example is looked for: the demo's size (the smallest table without a demo)."""
    seats = game.demo.seats if game.demo else game.min_seats
    return {d.kind: (seats, dict(d.options)) for d in game.decisions}


#: the example of a kind is its earliest decision (the shortest view) in these first seeds…
SCAN_SEEDS = 30
#: …or, if it never came up there, its first in these
MAX_SEEDS = 400
MATCH_ID = "m_3f9c2a"
BLOCK = re.compile(r"(<!-- generated: (?P<name>[^>]+?) -->\n)(?P<body>.*?)(<!-- end: (?P=name) -->)", re.S)


def choose(view: dict, legal: list[dict], rng: random.Random) -> dict:
    """A seeded random player that never bids more than its hand is worth, so
    matches run long enough to reach every kind of decision."""
    value = view.get("hand_value")
    affordable = [a for a in legal if not (isinstance(a.get("bid"), int) and value is not None
                                           and a["bid"] > value)]
    return rng.choice(affordable or legal)


def decision(name: str, state, turn: int) -> dict:
    """The decision the seat to act receives (docs/api.md §3)."""
    seat = state.to_act
    return {"type": "turn", "protocol": 1, "match_id": MATCH_ID, "game": name, "turn": turn, "seat": seat,
            "view": state.view(seat), "legal_actions": state.legal_actions(), "deadline_ms": DEFAULT_TIME.move_timeout_ms}


def examples(name: str) -> dict[str, dict]:
    """Each kind of decision of `name` as it first comes up in seeded matches: {pending: decision}."""
    game = games.get(name)
    wanted = search(game)
    tables: dict[str, list[str]] = {}
    for kind, (seats, options) in wanted.items():
        tables.setdefault(json.dumps([seats, options], sort_keys=True), []).append(kind)
    found: dict[str, dict] = {}
    for key, kinds in tables.items():
        seats, options = json.loads(key)
        for seed in range(1, MAX_SEEDS + 1):
            if seed > SCAN_SEEDS and all(k in found for k in kinds):
                break
            state, rng, turn = game.new(seats=seats, seed=seed, options=options), random.Random(seed), 0
            while not state.is_over:
                if all(k in found for k in kinds) and turn >= max(found[k]["turn"] for k in kinds):
                    break  # nothing earlier to find in this match
                view = state.view(state.to_act)
                kind = view["pending"]
                if kind in kinds and (kind not in found or turn < found[kind]["turn"]):
                    found[kind] = decision(name, state, turn)
                state.apply(choose(view, state.legal_actions(), rng))
                turn += 1
    missing = [k for k in wanted if k not in found]
    if missing:
        raise RuntimeError(f"{name}: no {missing} decision in {MAX_SEEDS} seeded matches")
    return {kind: found[kind] for kind in wanted}


def compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def packed(items: list, indent: str, width: int = 100) -> list[str]:
    """JSON items several to a line, each line at most about `width` wide."""
    lines, line = [], ""
    for item in items:
        text = compact(item)
        if line and len(indent) + len(line) + 2 + len(text) > width:
            lines.append(line + ",")
            line = ""
        line = f"{line}, {text}" if line else text
    if line:
        lines.append(line)
    return [indent + x for x in lines]


def pretty(message: dict, pack: bool = True) -> str:
    """A decision as readable JSON: one key a line, the view's keys too, and the legal
    actions several to a line (`pack`; one a line otherwise)."""
    lines = []
    for key, value in message.items():
        if key == "view":
            inner = [f'    "{k}": {compact(v)}' for k, v in value.items()]
            lines.append('  "view": {\n' + ",\n".join(inner) + "\n  }")
        elif key == "legal_actions":
            actions = packed(value, "    ") if pack else [f"    {compact(a)}," for a in value]
            actions[-1] = actions[-1].rstrip(",")
            lines.append('  "legal_actions": [\n' + "\n".join(actions) + "\n  ]")
        else:
            lines.append(f'  "{key}": {compact(value)}')
    return "{\n" + ",\n".join(lines) + "\n}"


def options_table(name: str) -> str:
    """The options: name, default as `GET /games` gives it, meaning."""
    game = games.get(name)
    defaults = game.describe()["options"]
    rows = ["| option | default | meaning |", "|---|---|---|"]
    for option in game.options:
        rows.append(f"| `{option.name}` | `{compact(defaults[option.name])}` | {option.help.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def blocks(name: str) -> dict[str, str]:
    """Every generated block of the game's page: {marker name: markdown}."""
    out = {"options": options_table(name)}
    for kind, message in examples(name).items():
        out[f"decision: {kind}"] = f"```json\n{pretty(message)}\n```\n"
    return out


def refresh(text: str, generated: dict[str, str]) -> str:
    """`text` with each generated block replaced; a block the page lacks is an error."""
    seen = set()

    def fill(match: re.Match) -> str:
        name = match.group("name")
        if name not in generated:
            raise KeyError(f"the page has a block {name!r} that nothing generates")
        seen.add(name)
        return match.group(1) + generated[name] + match.group(4)

    text = BLOCK.sub(fill, text)
    missing = [name for name in generated if name not in seen]
    if missing:
        raise KeyError(f"the page lacks the generated blocks {missing}: add their markers")
    return text


def page(name: str) -> Path:
    return PAGES / f"{name}.md"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for name in games.names():
        text = page(name).read_text(encoding="utf-8")
        fresh = refresh(text, blocks(name))
        if fresh != text:
            stale.append(name)
            if not check:
                page(name).write_text(fresh, encoding="utf-8")
    if stale:
        print(("stale: " if check else "refreshed: ") + ", ".join(str(page(n).relative_to(ROOT)) for n in stale))
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
