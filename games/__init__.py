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

Games are plug-ins: a `Game` carries everything the rest of the platform needs
to know about it (its rules page, how its cards are drawn, its demo settings,
its example bots, the decisions its views ask and what its result holds), and
`register(game)` makes it playable everywhere by name — so nothing outside
`games/` ever spells a game's name. The four games of the project are
registered from `BUILTIN` on first use, with the modules the environment's
`CARDARENA_GAMES` names (a game that is not shipped); adding a fifth is its own
files and one line there: the checklist is docs/add-a-game.md, and
tests/games/test_conformance.py checks every registered game against what it
declares.
"""

from __future__ import annotations

import importlib
import os
import threading

from games.base import RESULT, Decision, Demo, Game, State, canonical
from games.cards import Card
from games.errors import IllegalAction, InvalidOptions, UnknownGame

__all__ = [
    "BUILTIN",
    "Card",
    "Decision",
    "Demo",
    "Game",
    "IllegalAction",
    "InvalidOptions",
    "RESULT",
    "State",
    "UnknownGame",
    "canonical",
    "get",
    "names",
    "plugin_modules",
    "register",
    "unregister",
]

#: The modules of the project's own games; each defines `GAME`. Imported on first use.
BUILTIN: tuple[str, ...] = (
    "games.double",
    "games.double_carre",
    "games.duck_soup",
    "games.soupe_gertrude",
)

#: The environment variable naming more game modules to load beside `BUILTIN` (comma-separated
#: module names, each defining `GAME`): a game that is not shipped, playable in every process
#: that sees the variable (the API, the workers, the CLI), as a shipped one is.
PLUGINS_ENV = "CARDARENA_GAMES"

_GAMES: dict[str, Game] = {}
_builtin_lock = threading.RLock()
_builtin_loaded = False
_builtin_loading = False  # a plug-in calling `register` as it is imported finds the lock its own


def register(game: Game) -> Game:
    """Make `game` playable everywhere as `game.name`; returns it.

    Registering the same `Game` again does nothing; another game under a name
    already taken is a `ValueError` (a plug-in must not silently replace a game).
    """
    if not isinstance(game, Game):
        raise TypeError(f"register() takes a games.Game, not {type(game).__name__}")
    if not isinstance(game.name, str) or not game.name:
        raise ValueError("a game needs a non-empty name")
    _load_builtin()
    existing = _GAMES.get(game.name)
    if existing is not None and existing is not game:
        raise ValueError(f"a game named {game.name!r} is already registered")
    _GAMES[game.name] = game
    return game


def unregister(name: str) -> None:
    """Forget the game called `name` (a test's toy game, a plug-in being reloaded)."""
    _load_builtin()
    if _GAMES.pop(name, None) is None:
        raise UnknownGame(f"unknown game {name!r}; the games are: {', '.join(names())}")


def names() -> list[str]:
    """The registered games' names, sorted."""
    _load_builtin()
    return sorted(_GAMES)


def get(name: str) -> Game:
    """The game called `name`; `UnknownGame` (a KeyError) if there is none."""
    game = _GAMES.get(name) if isinstance(name, str) else None
    if game is None:
        _load_builtin()
        game = _GAMES.get(name) if isinstance(name, str) else None
        if game is None:
            raise UnknownGame(f"unknown game {name!r}; the games are: {', '.join(names())}")
    return game


def plugin_modules() -> list[str]:
    """The game modules `CARDARENA_GAMES` names beside the shipped ones."""
    return [name.strip() for name in os.environ.get(PLUGINS_ENV, "").split(",") if name.strip()]


def _load_builtin() -> None:
    """Import and register the project's own games and those `CARDARENA_GAMES` names, once
    (lazily: `import games.rng` alone stays cheap)."""
    global _builtin_loaded, _builtin_loading
    if _builtin_loaded:
        return
    with _builtin_lock:
        if _builtin_loaded or _builtin_loading:
            return
        _builtin_loading = True
        try:
            _load_modules()
        finally:
            _builtin_loading = False
        _builtin_loaded = True


def _load_modules() -> None:
    for module in BUILTIN:
        game = importlib.import_module(module).GAME
        _GAMES.setdefault(game.name, game)
    for module in plugin_modules():
        game = _plugin_game(module)
        existing = _GAMES.setdefault(game.name, game)
        if existing is not game:
            raise ValueError(f"{PLUGINS_ENV} names {module}, whose game {game.name!r} is already registered")


def _plugin_game(module: str) -> Game:
    try:
        game = getattr(importlib.import_module(module), "GAME", None)
    except ImportError as exc:
        raise ImportError(f"{PLUGINS_ENV} names {module}, which cannot be imported: {exc}") from exc
    if not isinstance(game, Game):
        raise TypeError(f"{PLUGINS_ENV} names {module}, which defines no games.Game called GAME")
    return game
