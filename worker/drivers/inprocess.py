"""In-process bots: a `sdk.Bot` subclass the admin registered as module:Class.

A fresh instance per seat and match, so no memory leaks from one match into
the next. The bot gets the referee's decision, whose legal actions are
copies (sdk/referee.py `offer`), so one that edits the action it returns
cannot edit the engine's: its answer is judged as sent. The bot runs in the worker's own process under the watchdog's
deadline (sdk/watchdog.py): a raise, an overrun or a late answer is a
fault like any remote bot's.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import TYPE_CHECKING

from sdk.debug import collecting
from sdk.faults import clean, decision_timeout, fault
from sdk.watchdog import Overrun
from worker.drivers.base import Driver, Reply

if TYPE_CHECKING:
    from sdk.bot import Bot


@lru_cache(maxsize=256)
def bot_class(entrypoint: str):
    """The class named by `entrypoint`, imported once per process."""
    from sdk.bot import load_bot_class

    return load_bot_class(entrypoint)


class InProcessDriver(Driver):
    remote = False

    def __init__(self, bot: dict, context) -> None:
        self.watchdog = context.watchdog
        self.started = False
        self.bot: Bot | None = None
        self.broken = ""
        try:
            self.bot = bot_class(bot["entrypoint"])()
        except Exception as exc:  # an entrypoint that no longer imports: every decision is a fault
            self.broken = f"cannot load {bot.get('entrypoint')}: {clean(exc)}"

    def ask(self, decision: dict) -> Reply:
        if self.bot is None:  # its entrypoint did not load: `broken` says why
            return Reply(fault=fault("bot_error", self.broken))
        limit = decision["deadline_ms"] / 1000
        began = time.monotonic()
        with collecting() as notes:  # what the bot writes with Bot.debug, kept even if it then fails
            try:
                with self.watchdog.limit(limit):
                    if not self.started:
                        self.started = True
                        self.bot.on_match_start(decision["match_id"], decision["seat"], decision["view"])
                    # its own dict and list: a bot that edits them cannot edit what the runner holds
                    action = self.bot.decide({**decision, "legal_actions": list(decision["legal_actions"])})
            except Overrun:
                return Reply(fault=decision_timeout(decision), debug=notes.text)
            except Exception as exc:  # written as local play writes it (sdk.local.timed): the same text
                return Reply(fault=fault("bot_error", f"{type(exc).__name__}: {clean(exc)}"), debug=notes.text)
        if time.monotonic() - began > limit:
            return Reply(fault=decision_timeout(decision, round((time.monotonic() - began) * 1000)),
                         debug=notes.text)
        return Reply(action=action, debug=notes.text)

    def match_over(self, match_id: str, result: dict, you: dict | None = None) -> None:
        if self.bot is not None:
            try:
                with self.watchdog.limit(1.0):
                    self.bot.on_match_over(match_id, result)
            except (Exception, Overrun):
                pass

