"""The heartbeat: webhook bots not called for a while are pinged, so their `status` stays true.

Without it a webhook bot's status would change only when the platform happened
to call it: one registered before it was served would stay `offline` for good
(its registration ping failed and nothing would ping it again), and one simply
not scheduled for two minutes would turn `offline` while it was up. Each cycle the
heartbeat looks at the next `SCAN` bots (in registration order, wrapping
around, so every bot is looked at however many there are) and pings the
active (not retired) webhook bots among them that nothing was learnt of for
`EVERY_S` — at most `BATCH` a cycle, `core.liveness.PINGERS` at once, each
bounded by `core.liveness.PING_S`: a cycle's cost is bounded whatever the bots do.

Which bots (docs/api.md §6 "Liveness"): active webhook bots on the ladder
(`ladder` not false: the matchmaker pairs only online bots, so an idle
bot on the ladder must be seen to be up), and those off it entered in
something unfinished (`entered`: a match or tournament of theirs not over).
A bot off the ladder and entered in nothing is left alone. A ping is claimed in the
store (`Store.claim_ping`), so several dispatchers on one Redis ping each bot
once. It runs as a thread of the dispatcher's calls part (worker/dispatch.py).
"""

from __future__ import annotations

import logging
import os
import threading

from core import liveness
from core.store.bots import on_ladder

log = logging.getLogger("cardarena.heartbeat")

#: a webhook bot nothing was learnt of for this long (seconds) is pinged
EVERY_S = 30.0
#: seconds between cycles
TICK_S = 2.0
#: the bots looked at in one cycle
SCAN = 512
#: the most pings of one cycle
BATCH = 64
OVER = ("finished", "aborted")


#: a bot's latest matches and tournaments looked at by `entered`
ENTERED_LATEST = 5


def entered(store, bot_id: str) -> bool:
    """Whether the bot is in something unfinished: one of its latest matches, or tournaments,
    is not over (a comparison plays through matches, so it shows among them)."""
    mids, _ = store.bot_match_page(bot_id, ENTERED_LATEST)
    if any(m is not None and m["status"] not in OVER for m in store.get_matches(mids, ("status",))):
        return True
    tids, _ = store.newest("tournaments", ENTERED_LATEST, bot=bot_id)
    return any(t is not None and t["status"] not in OVER for t in store.get_tournaments(tids))


class Heartbeat:
    """Pings due webhook bots of one store, a cycle at a time (`cycle`) or in a thread (`start`)."""

    def __init__(self, store, every_s: float = EVERY_S, tick_s: float = TICK_S,
                 scan: int = SCAN, batch: int = BATCH, public_only: bool | None = None) -> None:
        self.store, self.every_s, self.tick_s, self.scan, self.batch = store, every_s, tick_s, scan, batch
        self.public_only = (os.environ.get("CARDARENA_PUBLIC_URLS_ONLY") == "1"
                            if public_only is None else public_only)
        self.position = 0  # where the next cycle's scan starts, in the `bots` order
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def due(self) -> list[dict]:
        """The webhook bots due a ping among the next `scan` bots, claimed: at most `batch`,
        the next cycle going on after the last one looked at."""
        ids = self.store.bot_ids(self.position, self.scan)
        records = self.store.bot_records(ids)
        out: list[dict] = []
        looked = 0
        for bot_id in ids:
            if len(out) >= self.batch:
                break
            looked += 1
            bot = records.get(bot_id)
            if bot is None or bot.get("kind") != "webhook" or bot.get("retired"):
                continue
            if not on_ladder(bot) and not entered(self.store, bot_id):
                continue
            if self.store.claim_ping(bot_id, int(self.every_s * 1000)):
                out.append(bot)
        ended = looked == len(ids) and len(ids) < self.scan  # the last bots: wrap around
        self.position = 0 if ended else self.position + looked
        return out

    def cycle(self) -> dict[str, liveness.Pinged]:
        """One cycle: ping the due bots and note what was found; `{bot_id: Pinged}`."""
        return liveness.ping_and_note(self.store, self.due(), self.public_only)

    def start(self) -> Heartbeat:
        self.thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout=liveness.PING_S * (BATCH // liveness.PINGERS + 1) + 1)

    def _run(self) -> None:
        while not self.stopping.wait(self.tick_s):
            try:
                self.cycle()
            except Exception:  # Redis away for a moment: the next cycle will do
                log.exception("a heartbeat cycle failed")
