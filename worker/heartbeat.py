"""The heartbeat: webhook bots not called for a while are pinged, so their `status` stays true.

Without it a webhook bot's status only changed when the platform happened to
call it: one registered before it was served stayed `offline` for good (its
registration ping failed and nothing pinged it again), and one simply not
scheduled for two minutes turned `offline` while it was up.

Which bots (docs/api.md "Liveness"): active webhook bots on the ladder
(`ladder` not false: the matchmaker pairs only online bots, so an idle bot on
the ladder must be seen to be up), and those off it entered in something
unfinished (`entered`: a match or tournament of theirs not over), that nothing
was learnt of (seen, failed, pinged) for `EVERY_S`. A bot off the ladder and
entered in nothing is left alone.

Fair between accounts: every `tick_s` the heartbeat looks at the next `SCAN`
bots (in registration order, wrapping around, so every bot is looked at however
many there are) and queues the due ones, one queue per account. The queues are
served in turn (round-robin over accounts), at most `PER_ACCOUNT` pings of one
account in flight and `IN_FLIGHT` in all. A ping is asynchronous (core/calls.py
on the process's event loop: one waiting on a hanging server holds a socket,
not a thread) and bounded by `core.liveness.PING_S`; as one ends, the next is
started. So an account's hanging bots hold its own `PER_ACCOUNT` pings only,
and another account's due bot is pinged at its next turn, within a tick or so,
however many hanging bots there are.

A ping is claimed in the store as it starts (`Store.claim_ping`), so several
dispatchers on one Redis ping each bot once, and a bot heard from while it
waited in its queue is not pinged. It runs as a thread of the dispatcher's calls
part (worker/dispatch.py).
"""

from __future__ import annotations

import collections
import concurrent.futures
import logging
import os
import queue
import threading
import time

from core import eventloop, liveness
from core.calls import WAIT_SLACK_S
from core.store.bots import LIVENESS_STAMPS, on_ladder
from core.store.keys import epoch_ms_of, now_ms

log = logging.getLogger("cardarena.heartbeat")

#: a webhook bot nothing was learnt of for this long (seconds) is pinged (CARDARENA_HEARTBEAT_S)
EVERY_S = 30.0
#: seconds between scans
TICK_S = 2.0


def period() -> float:
    """`CARDARENA_HEARTBEAT_S` (seconds, more than 0), else `EVERY_S`."""
    try:
        value = float(os.environ.get("CARDARENA_HEARTBEAT_S", ""))
    except ValueError:
        return EVERY_S
    return value if value > 0 else EVERY_S
#: the bots looked at in one scan
SCAN = 512
#: the most pings one `launch` starts
BATCH = 256
#: pings of one account in flight at once
PER_ACCOUNT = 4
#: pings in flight at once, every account's together
IN_FLIGHT = 256
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


def quiet_since(bot: dict) -> int:
    """When something was last learnt of the bot (epoch ms; 0: never): seen, failed or pinged."""
    return max((epoch_ms_of(bot.get(field)) or 0 for field in LIVENESS_STAMPS), default=0)


class _Flying:
    """One ping under way: whose, its future on the loop, and when it started (monotonic)."""

    __slots__ = ("account", "future", "started")

    def __init__(self, account: str, future: concurrent.futures.Future, started: float) -> None:
        self.account, self.future, self.started = account, future, started


class Heartbeat:
    """Pings due webhook bots of one store, fairly between accounts: a cycle at a time
    (`cycle`: scan, start, wait for those pings) or in a thread (`start`)."""

    def __init__(self, store, every_s: float | None = None, tick_s: float = TICK_S, scan: int = SCAN,
                 batch: int = BATCH, per_account: int = PER_ACCOUNT, in_flight: int = IN_FLIGHT,
                 public_only: bool | None = None) -> None:
        self.every_s = period() if every_s is None else every_s
        self.store, self.tick_s, self.scan_size = store, tick_s, scan
        self.batch, self.per_account, self.in_flight = batch, per_account, in_flight
        self.public_only = (os.environ.get("CARDARENA_PUBLIC_URLS_ONLY") == "1"
                            if public_only is None else public_only)
        self.position = 0  # where the next scan starts, in the `bots` order
        # account -> its due bots, in the order they are served (an account served goes last)
        self.queues: collections.OrderedDict[str, collections.deque] = collections.OrderedDict()
        self.queued: set[str] = set()  # bot ids queued or being pinged
        self.flying: dict[str, _Flying] = {}  # bot id -> its ping under way
        self.per_account_flying: collections.Counter = collections.Counter()
        self.done: queue.SimpleQueue = queue.SimpleQueue()  # (bot id, Pinged or None) as pings end
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    # -- the steps ----------------------------------------------------------------------
    def scan(self) -> int:
        """Queue the due webhook bots among the next `scan_size` bots, each in its account's queue
        (once: a bot queued or being pinged is not queued again); how many were queued."""
        ids = self.store.bot_ids(self.position, self.scan_size)
        records = self.store.bot_records(ids)
        due_before = now_ms() - int(self.every_s * 1000)
        added = 0
        for bot_id in ids:
            bot = records.get(bot_id)
            if (bot is None or bot.get("kind") != "webhook" or bot.get("retired") or bot_id in self.queued
                    or quiet_since(bot) > due_before):
                continue
            if not on_ladder(bot) and not entered(self.store, bot_id):
                continue
            self.queues.setdefault(str(bot.get("owner")), collections.deque()).append(bot)
            self.queued.add(bot_id)
            added += 1
        self.position = 0 if len(ids) < self.scan_size else self.position + len(ids)
        return added

    def launch(self) -> list[str]:
        """Start the pings the queues are due, round-robin over accounts (one each a turn), at
        most `per_account` of one account and `in_flight` in all under way, `batch` at most;
        the ids of the bots whose ping started."""
        started: list[str] = []
        turned = True
        while turned and len(started) < self.batch and len(self.flying) < self.in_flight:
            turned = False
            for account in list(self.queues):
                if len(started) >= self.batch or len(self.flying) >= self.in_flight:
                    break
                if self.per_account_flying[account] >= self.per_account:
                    continue
                waiting = self.queues.pop(account)  # served: its turn comes again after the others'
                bot = waiting.popleft()
                if waiting:
                    self.queues[account] = waiting
                turned = True
                if self._start(account, bot):
                    started.append(bot["id"])
        return started

    def _start(self, account: str, bot: dict) -> bool:
        """Claim the bot's ping and start it on the loop (False: another dispatcher pings it, or
        it was heard from meanwhile)."""
        bot_id = bot["id"]
        if not self.store.claim_ping(bot_id, int(self.every_s * 1000)):
            self.queued.discard(bot_id)
            return False
        secret = self.store.bot_secret(bot_id)
        future = eventloop.submit(liveness.ping_async(bot.get("url") or "", secret, self.public_only, account))
        self.flying[bot_id] = _Flying(account, future, time.monotonic())
        self.per_account_flying[account] += 1
        future.add_done_callback(lambda f: self.done.put((bot_id, _outcome(f))))
        return True

    def settle(self, wait_s: float = 0.0) -> dict[str, liveness.Pinged]:
        """Note what the ended pings found (waiting up to `wait_s` for the first), freeing their
        accounts' turns; a ping the loop never ended (`PING_S` and some slack past) is given up
        unnoted. `{bot_id: Pinged}` of those noted."""
        found: dict[str, liveness.Pinged] = {}
        try:
            item = self.done.get(timeout=wait_s) if wait_s > 0 else self.done.get_nowait()
        except queue.Empty:
            item = None
        while item is not None:
            bot_id, pinged = item
            if bot_id is not None and self._end(bot_id) and pinged is not None:
                liveness.note(self.store, bot_id, pinged)
                found[bot_id] = pinged
            try:
                item = self.done.get_nowait()
            except queue.Empty:
                item = None
        given_up = time.monotonic() - liveness.PING_S - WAIT_SLACK_S
        for bot_id in [b for b, f in self.flying.items() if f.started < given_up]:
            self.flying[bot_id].future.cancel()
            self._end(bot_id)
        return found

    def _end(self, bot_id: str) -> bool:
        """Forget a ping under way (False: it was already)."""
        flying = self.flying.pop(bot_id, None)
        if flying is None:
            return False
        self.per_account_flying[flying.account] -= 1
        if self.per_account_flying[flying.account] <= 0:
            del self.per_account_flying[flying.account]
        self.queued.discard(bot_id)
        return True

    # -- a cycle, or a thread ---------------------------------------------------------------
    def cycle(self) -> dict[str, liveness.Pinged]:
        """One cycle: scan, start the pings due, and wait for those (each bounded by
        `PING_S`); `{bot_id: Pinged}` of the pings noted."""
        self.scan()
        started = set(self.launch())
        found: dict[str, liveness.Pinged] = {}
        end = time.monotonic() + liveness.PING_S + WAIT_SLACK_S
        while started & set(self.flying) and time.monotonic() < end:
            found.update(self.settle(wait_s=end - time.monotonic()))
        found.update(self.settle())
        return found

    def start(self) -> Heartbeat:
        self.thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.done.put((None, None))  # wakes the thread's wait
        if self.thread is not None:
            self.thread.join(timeout=self.tick_s + 5)
        for flying in list(self.flying.values()):
            flying.future.cancel()

    def _run(self) -> None:
        next_scan = time.monotonic()
        while not self.stopping.is_set():
            try:
                if time.monotonic() >= next_scan:
                    self.scan()
                    next_scan = time.monotonic() + self.tick_s
                self.launch()
                self.settle(wait_s=max(0.0, next_scan - time.monotonic()))  # until a ping ends, or the next scan
            except Exception:  # Redis away for a moment: the next tick will do
                log.exception("a heartbeat step failed")
                self.stopping.wait(self.tick_s)


def _outcome(future: concurrent.futures.Future) -> liveness.Pinged | None:
    """What an ended ping found; None when it never ran to its end (cancelled, or the loop
    failed it): nothing is learnt of the bot then."""
    if future.cancelled() or future.exception() is not None:
        return None
    return future.result()
