"""`Bot`: what a bot author subclasses. One method: `act`.

The same class runs everywhere — in-process on the platform (named
`module:Class`), hosted as a webhook with `sdk.serve`, polling with
`sdk.connect`, or in local matches with `cardarena play` — because all of
them only ever call `decide(decision)`, which calls `act(view, legal_actions)`
unless the bot wants the whole decision (its clock, its deadline).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from types import ModuleType
from typing import Any

from sdk.debug import note


class Bot:
    """Subclass, set `game`, implement `act`.

    `view` is exactly what your seat may know (see the game's rules page);
    `legal_actions` is the list of actions you may take: return one of them.
    """

    #: the game this bot plays (a name from `games.names()`); None = any game
    game: str | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _check_decide(cls)

    def act(self, view: dict, legal_actions: list[dict]) -> dict:
        raise NotImplementedError("a Bot must implement act(view, legal_actions)")

    def decide(self, decision: dict) -> dict:
        """The answer to a whole decision (docs/api.md §3, §5): what every host calls.

        By default `act(view, legal_actions)`. Override it to use the rest:
        `deadline_ms` (this answer's whole time), `clock` (`move_ms` and the
        `bank_ms` left) and `last_latency_ms` (what the previous answer cost).
        """
        return self.act(decision["view"], decision["legal_actions"])

    def debug(self, text: str) -> None:
        """Note what this bot is thinking, for the decision under way (docs/write-a-bot.md).

        Sent with the answer as `"debug"` — several calls join, one line each; at most
        1,000 characters are kept — and shown only to the bot's owner beside the turn
        (and in local play: `cardarena play -v`, exports). Written in `on_match_start`, it
        joins the first decision's; outside a decision (in a thread of your own) it is
        dropped. Safe when this instance answers several matches at once: each thread's
        decision has its own notes.
        """
        note(text)

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


def _check_decide(cls: type) -> None:
    """A subclass's own `decide` must take the decision alone: the hosts call
    `decide(decision)`, so a helper of the same name taking `(view, legal_actions)`
    would fail every decision. Said when the class is defined, not in a match."""
    own = cls.__dict__.get("decide")
    if own is None or not callable(own):
        return
    try:
        params = list(inspect.signature(own).parameters.values())[1:]
    except (TypeError, ValueError):
        return
    required = [p for p in params if p.default is p.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(required) != 1:
        raise TypeError(
            f"{cls.__qualname__}.decide{inspect.signature(own)}: Bot.decide(decision) is the "
            "SDK's hook every host calls with the whole decision; implement act(view, "
            "legal_actions) and give your own helper another name")


def load_bot_class(entrypoint: str, allow_path: bool = False) -> type[Bot]:
    """The `Bot` subclass named `module:Class`; ValueError with the reason if not.

    With `allow_path` (local play only), also `path/to/file.py:Class`: the file
    is loaded as a module, its folder first on `sys.path` as for a script, so
    it can import the modules beside it. The platform's in-process bots never
    take a path: the admin installs them as modules.
    """
    module_name, sep, class_name = entrypoint.rpartition(":")
    if not sep or not module_name or not class_name:
        raise ValueError(f"{entrypoint!r} is not module:Class (e.g. example_bots.random:RandomBot)")
    if _is_path(module_name):
        if not allow_path:
            raise ValueError(f"{entrypoint!r}: a file path is taken only by local play; name a module:Class")
        module = _load_file(module_name)
    else:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ValueError(f"cannot import {module_name!r}: {exc}") from None
    cls: Any = getattr(module, class_name, None)
    if not isinstance(cls, type) or not issubclass(cls, Bot):
        raise ValueError(f"{entrypoint!r} does not name a subclass of sdk.Bot")
    return cls


def _is_path(name: str) -> bool:
    return name.endswith(".py") or "/" in name or os.sep in name


def _load_file(path: str) -> ModuleType:
    """The Python file at `path` as a module (loaded once per process)."""
    import hashlib  # local play's path alone: not on the import of every bot
    import importlib.util

    full = os.path.realpath(path)
    if not os.path.isfile(full):
        raise ValueError(f"no such file: {path}")
    stem = os.path.splitext(os.path.basename(full))[0]
    name = f"cardarena_bot_{stem}_{hashlib.sha256(full.encode()).hexdigest()[:8]}"
    if name in sys.modules:
        return sys.modules[name]
    folder = os.path.dirname(full)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, full)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load {path} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it, as an import does (dataclasses look it up)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ValueError(f"cannot load {path}: {type(exc).__name__}: {exc}") from None
    return module
