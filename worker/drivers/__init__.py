"""Seat drivers: how the referee asks one seat's bot for its decision.

One module per kind of bot — `inprocess` (Python, named module:Class),
`webhook` (an HTTP POST to the bot's URL), `polling` (the decision waits in
Redis for the bot to fetch it). Each answers `ask(decision)` with a `Reply`:
the bot's raw answer or the fault that stopped it. Judging the answer against
the rules is the match runner's job, the same for every kind.
"""

from __future__ import annotations

from worker.drivers.base import Driver, Reply


def driver_for(store, bot: dict, context) -> Driver:
    """The driver for `bot` (its stored record) in one match."""
    kind = bot["kind"]
    if kind == "python":
        from worker.drivers.inprocess import InProcessDriver

        return InProcessDriver(bot, context)
    if kind == "webhook":
        from worker.drivers.webhook import WebhookDriver

        return WebhookDriver(bot, store.bot_secret(bot["id"]), context, store=store)
    if kind == "polling":
        from worker.drivers.polling import PollingDriver

        return PollingDriver(store, bot)
    raise ValueError(f"bot {bot['id']} has an unknown kind {kind!r}")


__all__ = ["Driver", "Reply", "driver_for"]
