"""Where a host gets the bot that answers a match: one instance per match, or one for all.

Every host — `sdk.serve`, `sdk.connect`, local play, a replay's rerun — takes
either a `Bot` instance or a bot class (any zero-argument callable making a
`Bot`, e.g. ``functools.partial(MyBot, depth=3)``). A class gives each match
(each seat of it) its own new instance, so per-match memory kept in `self` is
safe while the bot plays many matches at once; an instance answers every
match, and must keep per-match state keyed by match id itself.

This module says which of the two a host was given and makes the instances,
so every host tells them apart, names them and refuses a non-bot the same way.
"""

from __future__ import annotations

from collections.abc import Callable

from sdk.bot import Bot

#: what a host accepts: an instance shared by every match, or a class or factory called per match
BotSource = Bot | Callable[[], Bot]


def is_shared(source: BotSource) -> bool:
    """Whether `source` is one instance for every match (else a class or factory, per match).

    Anything else is a `TypeError` now, when the host is set up, rather than in a match."""
    if isinstance(source, Bot):
        return True
    if isinstance(source, type) and not issubclass(source, Bot):
        raise TypeError(f"{source.__qualname__} is not a subclass of sdk.Bot")
    if not callable(source):
        raise TypeError(f"expected an sdk.Bot, a Bot class or a function making one, got {source!r:.80}")
    return False


def new_bot(factory: Callable[[], Bot]) -> Bot:
    """One new bot from a class or factory; `TypeError` if it makes something else
    (what making it raises goes through, for the host to report as the bot's error)."""
    made = factory()
    if not isinstance(made, Bot):
        raise TypeError(f"{source_name(factory)} made {type(made).__name__}, not an sdk.Bot")
    return made


def source_name(source: BotSource) -> str:
    """The bot's name as the logs and the webhook's `GET /` show it: the class's."""
    if isinstance(source, Bot):
        return source.name
    name = getattr(source, "name", None)
    if isinstance(name, str):  # a class that sets `name` as a plain attribute
        return name
    inner = getattr(source, "func", source)  # functools.partial(MyBot, ...)
    return getattr(inner, "__name__", None) or type(source).__name__


def source_game(source: BotSource) -> str | None:
    """The game the bot plays, when it can be known without making one (None: any, or unknown)."""
    inner = source if isinstance(source, (Bot, type)) else getattr(source, "func", source)
    game = getattr(inner, "game", None)
    return game if isinstance(game, str) else None


def source_label(source: BotSource) -> str:
    """`module:Class` of the bot, as an export names a local seat."""
    inner = source if isinstance(source, type) else getattr(source, "func", source)
    if isinstance(inner, Bot):
        inner = type(inner)
    module = getattr(inner, "__module__", None) or "?"
    return f"{module}:{getattr(inner, '__qualname__', source_name(source))}"
