"""House bots: the games' example bots, on every ladder of a new platform.

A platform nobody has played on yet still has a ladder to join: a worker pool
(`cardarena worker`, and the demo's pool) places, for every game, the admin's
in-process bots named here, unless told not to (`--no-house-bots`). A game gets
`ladder_seats - 1` of them — its heuristic, then its random bot — so the first
bot an author registers fills a ladder table at once, while the house bots alone
never make a table and an idle platform plays nothing.

The pool places them, not the API nor `cardarena migrate`: the pool runs the
in-process bots and the matchmaker that pairs them, so a platform with the
ladder has a pool, and its install has the example bots' code. Placing is
idempotent across restarts and machines (core/store/bots.py `place_house_bot`):
each house bot is registered once ever, and one the admin retires stays retired.
"""

from __future__ import annotations

import logging

import games

log = logging.getLogger("cardarena.worker")

#: the example bots a game's house bots are drawn from, in this order, then the last again
KINDS = ("heuristic", "random")


def house_bots(game: str) -> list[tuple[str, str]]:
    """(name, entrypoint) of `game`'s house bots: `ladder_seats - 1` of its example bots."""
    spec = games.get(game)
    kinds = [k for k in KINDS if k in spec.bots]
    if not kinds:
        return []
    out = []
    for i in range((spec.ladder_seats or spec.min_seats) - 1):
        kind = kinds[min(i, len(kinds) - 1)]
        repeat = i - len(kinds) + 2 if i >= len(kinds) else 1
        out.append((f"house {kind}" + (f" {repeat}" if repeat > 1 else ""), spec.bots[kind]))
    return out


def place_house_bots(store) -> list[dict]:
    """Place every game's house bots not placed before; the bots registered now."""
    placed = []
    for game in games.names():
        for name, entrypoint in house_bots(game):
            bot = store.place_house_bot(game, name, entrypoint)
            if bot is not None:
                log.info("house bot %r registered on the %s ladder (%s, %s)", name, game, bot["id"], entrypoint)
                placed.append(bot)
    return placed
