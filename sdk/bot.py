"""`Bot`: what a bot author subclasses. One method: `act`.

The same class runs everywhere — in-process on the platform (named
`module:Class`), hosted as a webhook with `sdk.serve`, polling with
`sdk.connect`, or in local matches with `cardarena play` — because all of
them only ever call `act(view, legal_actions)` and use the answer.
"""

from __future__ import annotations

from typing import Any


class Bot:
    """Subclass, set `game`, implement `act`.

    `view` is exactly what your seat may know (see the game's rules page);
    `legal_actions` is the list of actions you may take: return one of them.
    """

    #: the game this bot plays (a name from `games.names()`); None = any game
    game: str | None = None

    def act(self, view: dict, legal_actions: list[dict]) -> dict:
        raise NotImplementedError("a Bot must implement act(view, legal_actions)")

    def on_match_start(self, match_id: str, seat: int, view: dict) -> None:
        """Called before the first decision of a match this bot has not seen (optional).

        Where to reset per-match memory: `view` is the same as the first
        `act` call's.
        """

    def on_match_over(self, match_id: str, result: dict) -> None:
        """Called when a match this bot played is over (optional)."""

    @property
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__module__}:{type(self).__qualname__}>"


def load_bot_class(entrypoint: str) -> type[Bot]:
    """The `Bot` subclass named `module:Class`; ValueError with the reason if not."""
    import importlib

    module_name, sep, class_name = entrypoint.partition(":")
    if not sep or not module_name or not class_name:
        raise ValueError(f"{entrypoint!r} is not module:Class (e.g. example_bots.random:RandomBot)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import {module_name!r}: {exc}") from None
    cls: Any = getattr(module, class_name, None)
    if not isinstance(cls, type) or not issubclass(cls, Bot):
        raise ValueError(f"{entrypoint!r} does not name a subclass of sdk.Bot")
    return cls
