"""Seat drivers: how the referee reaches one seat's bot.

One module per kind of bot that is called — `inprocess` (Python, named
module:Class, asked in the worker under the watchdog), `hosted` (code its
author uploaded, asked in its sandbox from the worker) and `webhook` (an HTTP
POST to the bot's URL, made by a dispatcher's caller: worker/dispatch.py). A
remote seat (webhook or polling) is a `Remote` in the match runner: its
decision is published and the run ends (core/store/waits.py); a polling
bot fetches it through the API. Each driver answers `ask(decision)` with a
`Reply`: the bot's raw answer or the fault that stopped it. Judging the
answer against the rules is the referee's (sdk/referee.py), the same for
every kind.
"""

from __future__ import annotations

from worker.drivers.base import Driver, Remote, Reply


def driver_for(store, bot: dict, context, seat: int = 0) -> Driver:
    """The driver for `bot` (its stored record) in `seat` of one match (`context.match_id`)."""
    kind = bot["kind"]
    if kind == "python":
        from worker.drivers.inprocess import InProcessDriver

        return InProcessDriver(bot, context)
    if kind == "hosted":
        from worker.drivers.hosted import HostedDriver

        return HostedDriver(bot, context.match_id, seat)
    if kind in ("webhook", "polling"):
        return Remote(store, bot)
    raise ValueError(f"bot {bot['id']} has an unknown kind {kind!r}")


__all__ = ["Driver", "Remote", "Reply", "driver_for"]
