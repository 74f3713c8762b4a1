"""Polling bots: the decision waits in Redis until the bot fetches and answers it.

The driver publishes the decision where `GET /bots/me/turns` finds it and
blocks on Redis (no sleep loop) until the API says the turn was appended or
the deadline passes. The bot's answer goes into the log through the API,
which judges it against the decision, so the driver only reports whether it
came. A late answer races the referee's default through the log's atomic
append: exactly one of them lands.
"""

from __future__ import annotations

from sdk.referee import fault
from worker.drivers.base import Driver, Reply


class PollingDriver(Driver):
    def __init__(self, store, bot: dict) -> None:
        self.store = store
        self.bot_id = bot["id"]

    def ask(self, decision: dict) -> Reply:
        match_id, turn = decision["match_id"], decision["turn"]
        self.store.publish_decision(self.bot_id, decision)
        if self.store.wait_answer(match_id, turn, timeout_s=decision["deadline_ms"] / 1000):
            return Reply(appended=True)
        self.store.withdraw_decision(self.bot_id, match_id, turn)
        return Reply(fault=fault("timeout", f"no answer within {decision['deadline_ms']} ms"))
