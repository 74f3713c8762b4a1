"""The rule engines: one module per game, behind one small interface.

    import games
    games.names()                   # the registered games
    game = games.get("duck-soup")   # unknown -> games.UnknownGame
    state = game.new(seats=2, seed=7, options={})
    while not state.is_over:
        state.apply(state.legal_actions()[0])
    state.result()

Pure Python, standard library only, deterministic from a seed: the server,
the workers and the SDK all judge matches with exactly this code.
"""

from __future__ import annotations

import importlib

from games.base import Game, State, canonical
from games.cards import Card
from games.errors import IllegalAction, InvalidOptions, UnknownGame

__all__ = [
    "Card",
    "Game",
    "IllegalAction",
    "InvalidOptions",
    "State",
    "UnknownGame",
    "canonical",
    "get",
    "names",
]

#: game name -> the module whose `GAME` it is. Imported on first use.
_REGISTRY: dict[str, str] = {
    "double": "games.double",
    "double-carre": "games.double_carre",
    "duck-soup": "games.duck_soup",
    "soupe-gertrude": "games.soupe_gertrude",
}

_loaded: dict[str, Game] = {}


def names() -> list[str]:
    """The registered games' names, sorted."""
    return sorted(_REGISTRY)


def get(name: str) -> Game:
    """The game called `name`; `UnknownGame` (a KeyError) if there is none."""
    game = _loaded.get(name)
    if game is not None:
        return game
    if not isinstance(name, str) or name not in _REGISTRY:
        raise UnknownGame(f"unknown game {name!r}; the games are: {', '.join(names())}")
    game = importlib.import_module(_REGISTRY[name]).GAME
    _loaded[name] = game
    return game
