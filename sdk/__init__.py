"""The cardarena SDK: write a bot in a few lines, then host it or enter it.

    from sdk import Bot, serve, connect, Client

    class Lowest(Bot):
        game = GAME                      # a name from GET /games, see Client.games()
        def act(self, view, legal_actions):
            return legal_actions[0]

    serve(Lowest(), port=8001, secret=SECRET)                  # a webhook bot
    connect(Lowest(), "http://127.0.0.1:5000", secret=SECRET)  # or poll for turns
    client = Client("http://127.0.0.1:5000", token=TOKEN)      # register, schedule, rank
    replay = load_replay("http://127.0.0.1:5000/matches/m_3f9c2a")  # any match's decisions again
    replay.rerun(Lowest)                                       # your bot's answers to them

Every failure talking to the platform raises `CardarenaError`; a source that
is not a match export, `ExportError`.
"""

from sdk.bot import Bot, load_bot_class
from sdk.client import (
    Account,
    BotInfo,
    CardarenaError,
    Client,
    Comparison,
    GameInfo,
    Match,
    Ranking,
    Rating,
    Standing,
    Tournament,
    Version,
)
from sdk.export import ExportError
from sdk.polling import Poller, PollStats, connect
from sdk.protocol import PROTOCOL, SIGNATURE_HEADER, ProtocolError, sign, signature_ok
from sdk.replay import Replay, RerunRow
from sdk.replay import load as load_replay
from sdk.webhook import BotServer, serve, webhook_app

__all__ = [
    "PROTOCOL",
    "SIGNATURE_HEADER",
    "Account",
    "Bot",
    "BotInfo",
    "BotServer",
    "CardarenaError",
    "ExportError",
    "Client",
    "Comparison",
    "GameInfo",
    "Match",
    "PollStats",
    "Poller",
    "ProtocolError",
    "Ranking",
    "Rating",
    "Replay",
    "RerunRow",
    "Standing",
    "Tournament",
    "Version",
    "connect",
    "load_bot_class",
    "load_replay",
    "serve",
    "sign",
    "signature_ok",
    "webhook_app",
]
