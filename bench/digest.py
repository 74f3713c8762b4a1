"""The engines' replay digest: one hash of everything seeded matches show.

    .venv/bin/python bench/digest.py [--matches 200] [--shuffles 1000] [--game NAME]

A refactor or a speed-up of an engine must change no behaviour (issue 14,
issue 18). This tool plays seeded matches of every registered game, at every
seat count and in a few option sets, with a seeded policy over the legal
actions (half the time uniform, half the time among the first three listed,
so auctions and payments run their course instead of ending at the first
over-bid), and hashes:

* at every decision: the seat to act, the legal actions, the view of every
  seat and the spectator's, and the action chosen;
* a few deliberately illegal actions per match (an extra key, a wrong JSON
  type, a card that is no card, a non-dict) with the `IllegalAction` message
  each gets;
* every result;
* `derive_seed`, `Rng.below`, `Rng.sample` and `Rng.shuffled` over `--shuffles` seeds.

The same digest before and after a change means the engines show the same
thing to every seat in every one of those positions. `tests/games/test_digest.py`
pins a small run as a literal. The view's seat check (`view(7)`) and
`result()` before the end are left out: both were changed on purpose.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
from collections.abc import Iterable, Sequence

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402
from games.base import canonical  # noqa: E402
from games.errors import IllegalAction  # noqa: E402
from games.rng import Rng, derive_seed  # noqa: E402

#: Option sets played besides the defaults, per game (the other games: defaults only).
VARIANTS: dict[str, list[dict]] = {
    "duck-soup": [{}, {"edition": "de"}, {"deal_only": True, "edition": "de"}],
    "double-carre": [{}, {"advanced": True}, {"first": 1, "advanced": True}],
    "double": [{}, {"rounds": [3, 1, 4], "chips": 2}],
    "soupe-gertrude": [{}, {"navet_mouche": True}, {"manches": 3, "navet_mouche": True}],
}
#: Illegal attempts per match, at seeded decisions.
ILLEGAL_PER_MATCH = 3
#: The four games' digest at commit 673ec7c, before issue 14's and 18's engine work,
#: by (matches, shuffles): a run with these counts says whether it still matches.
START_DIGESTS = {
    (200, 1000): "ef2e8ccb8e7dcc3db85d524cfa0df23dfbee140513e8e892d94ffc8fb707d548",
    (2, 200): "9baacca54210906693d12f5ec57625eba65fcc88d6798cabae33bb109a76eb52",
}
#: The games START_DIGESTS cover: data of the pin, not the list of games (`games.names()`);
#: a game shipped since is pinned on its own (tests/games/test_digest.py `ADDED`).
START_GAMES = ["double", "double-carre", "duck-soup", "soupe-gertrude"]


def dump(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def configs(names: Iterable[str] | None = None) -> list[tuple[str, int, dict]]:
    """(game, seats, options) for every registered game, seat count and option set."""
    out = []
    for name in names or games.names():
        game = games.get(name)
        for seats in range(game.min_seats, game.max_seats + 1):
            for options in VARIANTS.get(name, [{}]):
                out.append((name, seats, options))
    return out


def illegal_attempts(legal: list[dict], rng: random.Random) -> list[object]:
    """A few actions that are not legal now: shapes every engine must refuse."""
    base = dict(rng.choice(legal))
    key = rng.choice(sorted(base))
    wrong_type = dict(base)
    value = base[key]
    wrong_type[key] = [value] if not isinstance(value, list) else str(value)
    extra = {**base, "extra": 1}
    no_card = {key: "ZZ"}
    candidates: list[object] = [wrong_type, extra, no_card, "play", None, {}, [base]]
    listed = {canonical(a) for a in legal}
    out = []
    for action in candidates:
        try:
            if canonical(action) in listed:
                continue
        except IllegalAction:
            pass
        out.append(action)
    return out


def match_digest(name: str, seats: int, options: dict, seed: int) -> bytes:
    """The hash of one seeded match: every decision, view, illegal message and the result."""
    h = hashlib.sha256()
    h.update(dump([name, seats, options, seed]))
    state = games.get(name).new(seats, seed, json.loads(json.dumps(options)))
    rng = random.Random(f"digest:{name}:{seats}:{seed}")
    step = 0
    illegal_at: set[int] = set()
    while not state.is_over:
        seat = state.to_act
        legal = state.legal_actions()
        views = [state.view(s) for s in range(seats)] + [state.view(None)]
        h.update(dump([step, seat, legal, views]))
        if step in illegal_at or (step < 4 and rng.random() < 0.5) or rng.random() < 0.02:
            illegal_at.add(step)
            for action in illegal_attempts(legal, rng)[:ILLEGAL_PER_MATCH]:
                try:
                    state.apply(action)
                except IllegalAction as exc:
                    h.update(dump(["illegal", repr(action), str(exc)]))
                else:
                    raise AssertionError(f"{name}: {action!r} was accepted at step {step}")
        if rng.random() < 0.5:
            action = legal[rng.randrange(len(legal))]
        else:
            action = legal[rng.randrange(min(3, len(legal)))]
        h.update(dump(action))
        state.apply(json.loads(json.dumps(action)))  # a copy: no identity shortcut
        step += 1
    views = [state.view(s) for s in range(seats)] + [state.view(None)]
    h.update(dump(["over", views, state.legal_actions(), state.result()]))
    return h.digest()


def rng_digest(count: int) -> str:
    """`derive_seed` and the `Rng` draws over `count` seeds."""
    h = hashlib.sha256()
    for i in range(count):
        rng = Rng(i, "digest", i % 7)
        h.update(dump([derive_seed(i, "deal", i % 5), rng.below(1 + i % 100),
                       rng.shuffled(range(52)), rng.sample(range(27), 4), rng.choice("abcdefg")]))
    return h.hexdigest()


def run(matches: int, shuffles: int, names: Sequence[str] | None = None) -> dict:
    """Per (game, seats, options) a hex digest of `matches` seeded matches, plus the rng's and a total."""
    parts: dict[str, str] = {}
    for name, seats, options in configs(names):
        h = hashlib.sha256()
        for seed in range(matches):
            h.update(match_digest(name, seats, options, derive_seed(seed, "digest", seats)))
        parts[f"{name}:{seats}:{json.dumps(options, sort_keys=True)}"] = h.hexdigest()
    parts["rng"] = rng_digest(shuffles)
    total = hashlib.sha256(dump(parts)).hexdigest()
    return {"matches": matches, "shuffles": shuffles, "parts": parts, "total": total}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=200, help="matches per game, seats and options")
    parser.add_argument("--shuffles", type=int, default=1000, help="seeded shuffles")
    parser.add_argument("--game", action="append", help="only this game (repeatable)")
    parser.add_argument("--json", action="store_true", help="print every part's digest as JSON")
    args = parser.parse_args(argv)
    report = run(args.matches, args.shuffles, args.game)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for part, digest in report["parts"].items():
            print(f"{digest}  {part}")
        print(f"{report['total']}  total ({args.matches} matches each, {args.shuffles} shuffles)")
    known = START_DIGESTS.get((args.matches, args.shuffles))
    if known and (args.game or START_GAMES) == START_GAMES:
        same = report["total"] == known
        print("the same as at 673ec7c" if same else "CHANGED since 673ec7c", file=sys.stderr)
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
