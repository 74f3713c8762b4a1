"""The cardarena SDK: write a bot in a few lines, then host it or enter it.

    from sdk import Bot, serve, connect, Client

    class Lowest(Bot):
        game = GAME                      # a name from GET /games, see Client.games()
        def act(self, view, legal_actions):
            return legal_actions[0]

    serve(Lowest, port=8001, secret=SECRET)                    # a webhook bot
    connect(Lowest, "http://127.0.0.1:5000", secret=SECRET)    # or poll for turns
    client = Client("http://127.0.0.1:5000", token=TOKEN)      # register, schedule, rank
    replay = load_replay("http://127.0.0.1:5000/matches/m_3f9c2a")  # any match's decisions again
    replay.rerun(Lowest)                                       # your bot's answers to them
    play_local(GAME, [Lowest, Lowest], seed=1)                 # one match at home, refereed as there

Given the class, every host makes one instance per match (and seat), so state
kept in `self` is that match's (`sdk.instances`); given an instance, that one
object answers every match.

Every failure talking to the platform raises `CardarenaError`; a source that
is not a match export, `ExportError`.
"""

from __future__ import annotations

import importlib

from sdk.bot import Bot

#: the names below `Bot` and the module each comes from, imported at first use (PEP 562): a bot
#: that only subclasses `Bot` — a hosted bot in its sandbox starts in a fraction of the time —
#: never imports the HTTP client, the web server or local play
_LAZY = {
    **dict.fromkeys(("Account", "BotInfo", "CardarenaError", "Client", "Comparison", "DebugNote", "GameInfo", "Match",
                     "Ping", "Ranking", "Rating", "Standing", "Tournament", "Version"), "sdk.client"),
    "ExportError": "sdk.export",
    "play_local": "sdk.local",
    "connect": "sdk.polling",
    "sign": "sdk.protocol",
    "signature_ok": "sdk.protocol",
    "Replay": "sdk.replay",
    "serve": "sdk.webhook",
    "webhook_app": "sdk.webhook",
}
_RENAMED = {"load_replay": ("sdk.replay", "load")}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _RENAMED:
        module, attribute = _RENAMED[name]
        value = getattr(importlib.import_module(module), attribute)
    else:
        raise AttributeError(f"module 'sdk' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_RENAMED))


#: the bot author's surface: write a bot, host or connect it, play it locally, use the API.
#: Protocol internals (`sdk.protocol`'s header and hooks, `sdk.polling.Poller`,
#: `sdk.bot.load_bot_class`…) are imported from their modules.
__all__ = [
    # a bot, and the ways to play it
    "Bot",
    "serve",
    "connect",
    "play_local",
    "webhook_app",
    "sign",
    "signature_ok",
    # the REST API, and what it returns
    "Client",
    "CardarenaError",
    "Account",
    "BotInfo",
    "Comparison",
    "DebugNote",
    "GameInfo",
    "Match",
    "Ping",
    "Ranking",
    "Rating",
    "Standing",
    "Tournament",
    "Version",
    # replays and exports
    "load_replay",
    "Replay",
    "ExportError",
]
