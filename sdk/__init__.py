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

from sdk.bot import Bot
from sdk.client import (
    Account,
    BotInfo,
    CardarenaError,
    Client,
    Comparison,
    DebugNote,
    GameInfo,
    Match,
    Ping,
    Ranking,
    Rating,
    Standing,
    Tournament,
    Version,
)
from sdk.export import ExportError
from sdk.local import play_local
from sdk.polling import connect
from sdk.protocol import sign, signature_ok
from sdk.replay import Replay
from sdk.replay import load as load_replay
from sdk.webhook import serve, webhook_app

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
