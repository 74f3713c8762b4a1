"""The dispatcher: the platform's side of every remote turn, so no worker waits on a bot.

    python -m worker.dispatch REDIS_URL [--queue QUEUE] [--calls N] [--part clock|calls]
    with Dispatcher(store): ...          # both parts, in this process

A match runner publishes a remote seat's decision and its run ends
(core/store/waits.py). The dispatcher does the rest:

* **the clock** judges every deadline that passes (a polling bot's turn, or
  a webhook call lost with a dispatcher that died): a timeout, appended only
  if no answer landed first, the match's next run enqueued (`Store.settle`).
  It sleeps until the nearest deadline, looking again at least every
  `TICK_S` — less than the shortest move time, so a deadline set meanwhile is
  never passed unseen — and a timeout is recorded a few milliseconds after
  its deadline, whatever the load, for one round trip a look.
* **the callers** make the webhook calls (core/calls.py: a whole-answer
  deadline, a size limit, the URL and address checked again, signed) on one
  asyncio event loop (core/eventloop.py), up to `calls` (4,096) in flight
  in one process; each answer is judged (core/answers.py) and settled the
  moment it comes; and the best-effort `match_over` notices. A waiting call
  costs a few hundred bytes and a socket, not a thread. A webhook decision
  is two round trips to Redis and crosses threads twice: the taker thread
  takes a call, learns all it needs and starts it, its account's share
  held, in one round trip (`Store.take_prepared_call`: the `BLMOVE` and a
  Lua step sent together, Redis running the step as the `BLMOVE` returns),
  and hands it to the loop; the loop makes the call and hands the answer to the
  settler thread, which judges it and settles its turn in one Lua step
  (the answers that came meanwhile in one round trip: `Store.settle_all`)
  and ends the call. The taker, the settler and the clock each have a
  Redis connection of their own; the rarer store work (a call waiting for
  its account's share, the upkeep) runs on a few store threads.
* **fair share**: an account has at most `CARDARENA_CALLS_PER_ACCOUNT` (256)
  calls in flight, over every dispatcher: counted in a dispatcher first,
  then in Redis as each is sent (`Store.start_call`: `waits:share:{account}`,
  each call leased until its deadline, so a dead dispatcher's expire). Its
  other calls wait, taken but not sent, and **are not charged while they
  wait**: a bot's clock starts when its call is sent, never when it was
  queued. So a few hundred hanging calls from one account hold that
  account's share and nobody else's. A call the platform could not make (no
  socket: `NotMade`) goes back in the queue uncharged.
* **aborting** a match (core/conclusion.py `end_match`) forgets its waiting
  record; every `CHECK_S` the callers cancel the calls of turns no longer
  pending (their sockets closed, their account's share freed) and drop
  their waiting ones.
* **the heartbeat** (worker/heartbeat.py), beside the callers: webhook bots
  not called for 30 s are pinged, so their `status` tells the truth.

Why asyncio, not threads or gevent: the issue was threads held for a call's
whole deadline (64 of them, taken by 66 hanging challenges). With asyncio a
waiting call is a socket and a small object, so one process holds thousands
(bench: `python -m bench.dispatch`); it is the standard library (no new
dependency); and the call's guards are written once, as explicit code
(core/calls.py: the checked address connected to, bytes counted, bytes past
an answer noticed) — a client library (httpx, aiohttp) hides exactly those
behind its own pool and resolver. gevent would have kept the blocking code
but monkey-patches the whole process (redis-py, RQ, the heartbeat's threads,
signals), a global change for one part. The store's work (Redis, judging an
answer, RQ's enqueue) stays synchronous and runs on a few threads beside the
loop, so the loop never waits on Redis.

Reliability, kill -9 included: a call is taken from `waits:calls` by moving
it, atomically, to the caller's own fresh list and on to its taken list
(`waits:fresh:{caller}`, `waits:taken:{caller}`), where it stays until it
is sent; a caller that dies stops beating and its
taken calls go back in the queue (`Store.recover_callers`, by any other
caller; at the latest the clock finds them). A call under way in a dead
dispatcher (no answer long past its deadline) is made once more rather than
charged to the bot; a second loss is the bot's timeout, so no answer that
crashes dispatchers can stall a match. Settling is the log's atomic append:
no turn is played twice.

The pool (worker/pool.py) runs each part in a process of its own beside its
workers (the clock's few milliseconds never wait behind the callers' work
for Python's lock) and starts another if one dies; any number (one per
machine) share the work through Redis, each deadline claimed by exactly one
clock.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import logging
import os
import queue
import secrets
import socket
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Literal

import redis

from core import eventloop, play_on
from core.answers import answered, timed_out
from core.calls import NotMade
from core.store import Store
from core.store.keys import now_ms
from core.store.waits import CALL_SLACK_MS, UNSENT_CHECK_MS, PreparedCall
from sdk.clock import TimeRules
from sdk.faults import fault_kind
from worker.drivers.webhook import MATCH_OVER_S, WebhookDriver, shows_alive
from worker.heartbeat import Heartbeat

log = logging.getLogger("cardarena.dispatch")

#: the longest the clock sleeps without looking for deadlines (less when one is nearer): half the
#: shortest move time (`TimeRules.RANGES`: 50 ms), so a deadline set while it sleeps, at least
#: that far ahead, is seen before it passes
TICK_S = TimeRules.RANGES["move_timeout_ms"][0] / 2000
#: webhook calls one dispatcher holds in flight at once
CALLS = 4096
#: webhook calls in flight per account (CARDARENA_CALLS_PER_ACCOUNT)
CALLS_PER_ACCOUNT = 256
#: what a dispatcher does: judge deadlines, make webhook calls
PARTS = ("clock", "calls")
#: how long one wait for a call in Redis lasts before the taker looks at its stop flag
TAKE_WAIT_S = 0.5
#: how often the callers cancel the calls of turns no longer pending, and beat
CHECK_S = 0.5
#: threads doing the callers' store work (Redis, judging answers) beside the loop: a few, each
#: kept busy, cost less CPU per decision than many taking turns
STORE_THREADS = 4
#: a call the platform could not make waits this long before it is queued again
RETRY_S = 0.5
#: times a taken call's preparation (its records, in Redis) is tried before it is let go
PREPARE_TRIES = 5
#: bots' secrets a dispatcher keeps (all forgotten when full), and bots it noted seen
SECRETS_KEPT = 10_000
#: answers the settler settles in one round trip at most
SETTLE_BATCH = 64
#: a bot's good answers are noted (its `last_seen`, core/liveness.py) at most this often by one
#: dispatcher (seconds): the API's pace for a polling bot's requests (server/auth.py)
SEEN_EVERY_S = 1.0


def calls_per_account() -> int:
    """`CARDARENA_CALLS_PER_ACCOUNT`, else 256."""
    value = os.environ.get("CARDARENA_CALLS_PER_ACCOUNT", "")
    return int(value) if value.strip().isdigit() and int(value) > 0 else CALLS_PER_ACCOUNT


class _Call:
    """One taken call in a dispatcher: what it is, whose, and its task."""

    __slots__ = ("raw", "item", "match", "turn", "account", "bot", "secret", "record", "body", "task", "sent",
                 "called_at")
    #: the account whose share it takes, the bot it calls and its secret: known once it is prepared
    account: str | None
    bot: dict | None
    secret: str | None
    #: a turn's call: its waiting record and the decision's JSON (`Store.prepare_call`)
    record: dict | None
    body: bytes | None
    #: its handling on the loop, once it arrived there
    task: asyncio.Task | None
    #: when it was started (epoch ms), once it is
    called_at: int | None

    def __init__(self, raw: bytes, item: dict) -> None:
        self.raw, self.item = raw, item
        self.match, self.turn = item.get("match"), item.get("turn")
        self.account = self.bot = self.secret = self.record = self.body = self.task = self.called_at = None
        self.sent = False


def _item(raw: bytes) -> dict:
    """A queued call's JSON ({} if it is not JSON: then there is nothing to call)."""
    try:
        item = json.loads(raw)
    except ValueError:
        return {}
    return item if isinstance(item, dict) else {}


class Dispatcher:
    """The clock and the callers for one store's queue."""

    def __init__(self, store, calls: int = CALLS, tick_s: float = TICK_S, parts: tuple = PARTS,
                 per_account: int | None = None) -> None:
        self.store, self.calls, self.tick_s, self.parts = store, calls, tick_s, parts
        self.per_account = per_account or calls_per_account()
        self.caller = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.heartbeat = Heartbeat(store) if "calls" in parts else None
        # the callers' state: `busy` and `in_flight` change under `lock` (the taker's thread
        # holds a share as it starts a call); `waiting` and `blocked` change on the loop only
        self.lock = threading.Lock()
        self.busy = 0  # calls taken and not yet waiting or done (preparing, or in flight)
        self.in_flight: collections.Counter = collections.Counter()  # per account
        self.waiting: dict[str, collections.deque] = {}  # per account: calls over its share
        self.blocked: dict[str, float] = {}  # accounts found over their share on every dispatcher, until
        self.secrets: dict[str, str] = {}  # bot id -> its secret (they never change)
        self.seen: dict[str, float] = {}  # bot id -> when the settler last noted it seen (monotonic)
        self.answers: queue.SimpleQueue = queue.SimpleQueue()  # answered calls, for the settler
        self.calls_held: dict[bytes, _Call] = {}  # every taken call, by its queued bytes
        self.loop: asyncio.AbstractEventLoop | None = None
        self.store_threads: ThreadPoolExecutor | None = None
        # the taker's, the settler's and the clock's own stores: each on a connection of its own
        self.taker_store = self.settler_store = self.clock_store = store
        self.maintainer: Future[None] | None = None

    # -- life ------------------------------------------------------------------
    def start(self) -> Dispatcher:
        if "clock" in self.parts:
            self.clock_store = self._own_store()
        if "calls" in self.parts:
            self.taker_store, self.settler_store = self._own_store(), self._own_store()
            self.loop = eventloop.loop()
            self.store_threads = ThreadPoolExecutor(STORE_THREADS, thread_name_prefix="dispatch-store")
            self.store.caller_beat(self.caller)
            self.maintainer = asyncio.run_coroutine_threadsafe(self._maintain(), self.loop)
        for part, name, target in (("clock", "clock", self._clock), ("calls", "calls", self._take_calls),
                                   ("calls", "settler", self._settle_answers)):
            if part not in self.parts:
                continue
            thread = threading.Thread(target=target, name=f"dispatch-{name}", daemon=True)
            thread.start()
            self.threads.append(thread)
        if self.heartbeat is not None:
            self.heartbeat.start()
        return self

    def stop(self, grace_s: float = 5.0) -> None:
        """Stop taking work; wait up to `grace_s` for the calls under way; those still under
        way then, and the waiting ones, go back in the queue uncharged."""
        self.stopping.set()
        if self.heartbeat is not None:
            self.heartbeat.stop()
        for thread in self.threads:
            if thread.name != "dispatch-settler":
                thread.join(timeout=2)
        if self.loop is None:
            self._close_own_stores()
            return
        end = time.monotonic() + grace_s
        while self.busy > 0 and time.monotonic() < end:
            time.sleep(0.02)
        try:
            unsent = eventloop.run(self._cancel_all(), 10)
        except Exception:
            log.exception("stopping the callers")
            unsent = []
        for call in unsent:  # started, not answered: not the bot's doing
            try:
                self.store.call_unstarted(call.match, call.turn, call.account)
            except Exception:
                log.exception("could not queue again the call of match %s turn %s", call.match, call.turn)
        try:
            self.store.caller_gone(self.caller)  # the taken calls not sent go back in the queue
        except Exception:
            log.exception("could not give back the taken calls")
        self.answers.put(None)  # the settler ends once the answers before it are settled
        for thread in self.threads:
            if thread.name == "dispatch-settler":
                thread.join(timeout=5)
        assert self.store_threads is not None  # made with the loop
        self.store_threads.shutdown(wait=False, cancel_futures=True)
        self._close_own_stores()

    def _close_own_stores(self) -> None:
        for own in {self.taker_store, self.settler_store, self.clock_store} - {self.store}:
            own.r.close()

    def _own_store(self) -> Store:
        """The store on a Redis connection of its own, for one thread's round trips: redis-py's
        pool's lock and connection checks cost CPU on every command. The thread's commands are one at a time anyway."""
        pool = self.store.r.connection_pool
        client = redis.Redis(connection_pool=type(pool)(connection_class=pool.connection_class,
                                                        **pool.connection_kwargs),
                             single_connection_client=True)
        return Store(client, self.store.secret_key, queue=self.store.queue)

    def __enter__(self) -> Dispatcher:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- the clock ---------------------------------------------------------------
    def _clock(self) -> None:
        while not self.stopping.is_set():
            try:
                due, nearest = self.clock_store.claim_due_and_next()  # one round trip a look
                for match_id, turn in due:
                    self.judge_deadline(match_id, turn)
                if due:
                    continue
            except Exception:  # Redis away for a moment, or one bad record: the next tick will do
                log.exception("the dispatcher's clock failed a tick")
                nearest = None
            pause = self.tick_s if nearest is None else min(self.tick_s, max(0.0, (nearest - now_ms()) / 1000))
            self.stopping.wait(pause)

    def judge_deadline(self, match_id: str, turn: int) -> None:
        """A claimed deadline: the turn's timeout, unless it was settled, or its webhook call
        is not sent yet (never a timeout: queued again if it was lost), or was lost with its
        dispatcher once (made once more)."""
        store = self.store
        record = store.waiting_on(match_id)
        if record is None or record["turn"] != turn or store.log_length(match_id) > turn:
            return  # settled, or the match is over
        now = now_ms()
        if record["kind"] == "webhook":
            decision = record["decision"]
            called = record.get("called_at")
            if called is None:  # waiting to be sent: the bot's clock has not started
                if store.requeue_if_lost(match_id, turn):
                    log.warning("the webhook call of match %s turn %d was lost before it was sent: "
                                "queued again", match_id, turn)
                store.judge_later(match_id, turn, now + UNSENT_CHECK_MS)
                return
            if now < called + int(decision["deadline_ms"]) + CALL_SLACK_MS:
                store.judge_later(match_id, turn, called + int(decision["deadline_ms"]) + CALL_SLACK_MS)
                return
            if store.call_lost(match_id, turn):  # its dispatcher died: once more, on us
                log.warning("the webhook call of match %s turn %d was lost: made again", match_id, turn)
                return
        if play_on.settle(store, match_id, timed_out(record["decision"]), record):
            if record["kind"] == "polling":
                store.note_late(now_ms() - record["deadline_at"])
            log.info("match %s turn %d: timeout", match_id, turn)

    # -- the callers -------------------------------------------------------------------
    def _take_calls(self) -> None:
        """The taker: moves calls from Redis to this caller's taken list, while it has room, each
        prepared and started in the same round trip (`Store.take_prepared_call`), so the loop gets
        a call already sent or waiting."""
        left = False  # whether a failed round trip may have left a call in the fresh list
        while not self.stopping.is_set():
            if self.busy >= self.calls:
                self.stopping.wait(0.01)
                continue
            try:
                taken = self.taker_store.take_prepared_call(TAKE_WAIT_S, self.caller, self.per_account, wait=not left)
            except Exception:
                log.exception("taking a webhook call failed")
                left = True
                self.stopping.wait(0.5)
                continue
            left = False
            if taken is None:
                continue
            with self.lock:
                self.busy += 1
            raw, prepared = taken
            call = _Call(raw, _item(raw))
            ready, started = self._ready(call, prepared)
            assert self.loop is not None  # made before the taker starts
            self.loop.call_soon_threadsafe(self._arrive, call, ready, started)

    def _ready(self, call: _Call, prepared: PreparedCall | Literal[False] | None) -> tuple[bool | None, str | None]:
        """On the taker's thread, in the same wake-up as the take: the call as its take prepared
        and started it in Redis (if its account had room over every dispatcher), its share then
        held here too; else (a notice, or a preparation that failed) prepared here. (prepared:
        None if it could not be, to be tried again on the loop; how its start went, "sent" or
        "over", or None if not tried.) One hand-over to the loop per call."""
        if prepared is False:  # not a turn's call, or its preparation failed in Redis
            try:
                return self._prepare(call), None
            except Exception:  # Redis away a moment: the loop tries again, patiently
                log.warning("preparing a webhook call failed: %s (tried again)", call.item, exc_info=True)
                return None, None
        if prepared is None:  # its turn is over: it left the taken list
            return False, None
        self._fill(call, prepared)
        with self.lock:  # its share held here as it is in Redis ("over": given back as it waits)
            self.in_flight[call.account] += 1
        return True, prepared.started

    def _arrive(self, call: _Call, ready: bool | None, started: str | None) -> None:
        self.calls_held[call.raw] = call
        if started == "sent":
            call.sent = True
        assert self.loop is not None  # it runs on the loop
        call.task = self.loop.create_task(self._handle(call, ready, started))

    def _done(self, call: _Call, busy: bool = True) -> None:
        self.calls_held.pop(call.raw, None)
        if busy:
            self._unbusy()

    def _unbusy(self) -> None:
        with self.lock:
            self.busy -= 1

    def _hold(self, account: str, first: bool = False) -> bool:
        """Count a call of `account` in flight here, if it has room (`first`: and none of its
        calls waits before this one, nor is it blocked over its share); whether it was."""
        with self.lock:
            if self.in_flight[account] >= self.per_account:
                return False
            if first and (account in self.waiting or self.blocked.get(account, 0) > time.monotonic()):
                return False
            self.in_flight[account] += 1
            return True

    def _release(self, account: str) -> None:
        with self.lock:
            self.in_flight[account] -= 1
            if not self.in_flight[account]:
                del self.in_flight[account]

    async def _off(self, fn, *args):
        """`fn(*args)` on a store thread (Redis, judging): the loop never waits on it."""
        return await self.loop.run_in_executor(self.store_threads, fn, *args)

    async def _handle(self, call: _Call, ready: bool | None = None, started: str | None = None) -> None:
        """A call just taken: made now (or started already: `started`), or waiting for its
        account's share. `ready`: prepared by the taker (True), nothing to call (False), or to
        prepare here (None)."""
        delay = RETRY_S
        for _ in range(PREPARE_TRIES):
            if ready is not None:
                break
            try:
                ready = await self._off(self._prepare, call)
                break
            except Exception:  # Redis away a moment: the call stays taken (ours), tried again
                log.exception("preparing a webhook call failed: %s", call.item)
                if self.stopping.is_set():
                    self._done(call)
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)
        else:  # it cannot be prepared: let it go (the clock finds it lost and queues it again, later)
            await self._off(self.store.call_dropped, self.caller, call.raw)
            self._done(call)
            return
        if not ready:
            self._done(call)
            return
        assert call.account is not None  # prepared
        if started is None and not self._hold(call.account):
            self._wait(call)
            self._unbusy()  # it waits, costing nothing; a finishing call of its account starts it
            return
        await self._make(call, started)

    def _wait(self, call: _Call, first: bool = False) -> None:
        assert call.account is not None  # prepared
        queue = self.waiting.setdefault(call.account, collections.deque())
        if first:
            queue.appendleft(call)
        else:
            queue.append(call)

    def _prepare(self, call: _Call) -> bool:
        """On the taker's thread (or a store thread): the call's bot, secret and account, not
        started; False (and dropped) if there is nothing to call."""
        store, item = self.store, call.item
        if not item.get("notice"):
            if not self._takes_turn(call):  # not a call at all
                store.call_dropped(self.caller, call.raw)
                return False
            prepared = store.prepare_call(call.match, call.turn, call.raw, self.caller, False)
            if prepared is None:  # its turn is over: it left the taken list
                return False
            self._fill(call, prepared)
            return True
        bot = store.version_record(item.get("bot"), item.get("version"))
        if bot is None or bot.get("kind") != "webhook":
            store.call_dropped(self.caller, call.raw)
            return False
        call.bot = bot
        call.secret = self._secret(bot["id"]) if bot.get("url") else ""
        call.account = bot.get("owner") or bot["id"]
        return True

    @staticmethod
    def _takes_turn(call: _Call) -> bool:
        """Whether the queued item names a turn (a match and a turn number): else nothing to call."""
        return isinstance(call.match, str) and isinstance(call.turn, int)

    def _fill(self, call: _Call, prepared: PreparedCall) -> None:
        """The call as `Store.prepare_call` found it: its turn's record, its bot as the version the
        match pinned is reached (its own URL: core/store/versions.py), the body, the account."""
        call.record, call.bot, call.account, call.body = prepared.record, prepared.bot, prepared.account, prepared.body
        call.secret = self._secret(call.bot["id"]) if call.bot.get("url") else ""
        if prepared.started == "sent":
            call.called_at = prepared.called_at

    def _secret(self, bot_id: str) -> str:
        """The bot's secret, kept once derived: it never changes (HMAC of the server key and
        the bot's nonce, both set for good: core/store/bots.py)."""
        secret = self.secrets.get(bot_id)
        if secret is None:
            secret = self.store.bot_secret(bot_id)
            if len(self.secrets) >= SECRETS_KEPT:
                self.secrets.clear()
            self.secrets[bot_id] = secret
        return secret

    def _start(self, call: _Call) -> str:
        """Start the call in Redis (`Store.start_call`): "sent", "over" or "gone"."""
        assert call.record is not None  # a turn's call, prepared
        call.called_at = now_ms()
        return self.store.start_call(call.match, call.turn, call.called_at, int(call.record["decision"]["deadline_ms"]),
                                     self.caller, call.raw, call.account, self.per_account)

    async def _make(self, call: _Call, started: str | None = None) -> None:
        """Make the call, its account's share held here (`_hold`), and settle its turn;
        `started`: how its start in Redis went, if it was tried already."""
        assert call.account is not None  # prepared
        ended = "done"
        try:
            if call.item.get("notice"):
                await self._notify(call)
            else:
                ended = await self._call(call, started)
        except asyncio.CancelledError:
            pass  # its turn is over (aborted), or the dispatcher stops: nothing to settle
        except Exception:  # a platform error after sending: the deadline's backstop settles the turn
            log.exception("a webhook call failed: %s", call.item)
        finally:
            if ended == "over":  # its account has its share in flight on other dispatchers: it waits here
                self._release(call.account)
                self._wait(call, first=True)
                self.blocked[call.account] = time.monotonic() + CHECK_S
                self._unbusy()
            elif ended == "done":
                self._release(call.account)
                self._done(call)
                self._start_waiting(call.account)
            # "settling": answered, its turn handed to the settler, which ends it (`_settled`)

    def _start_waiting(self, account: str) -> None:
        queue = self.waiting.get(account)
        if queue and self.blocked.get(account, 0) > time.monotonic():
            return  # over its share across dispatchers a moment ago: looked at again by the upkeep
        self.blocked.pop(account, None)
        while queue and not self.stopping.is_set() and self._hold(account):
            call = queue.popleft()
            with self.lock:
                self.busy += 1
            assert self.loop is not None  # a call waits only where the callers run
            call.task = self.loop.create_task(self._make(call))
        if queue is not None and not queue:
            del self.waiting[account]

    async def _call(self, call: _Call, started: str | None = None) -> str:
        """Send the call (started in Redis already if `started` says so) and hand its answer to
        the settler: "settling"; "over" if its account's share (over every dispatcher) is in
        flight already (then it was not sent, and waits); "done" if it was not made."""
        assert call.record is not None  # a turn's call, prepared
        store, decision = self.store, call.record["decision"]
        if started is None:
            started = await self._off(self._start, call)
        if started != "sent":
            call.sent = False
            return "over" if started == "over" else "done"  # or settled meanwhile (the match is over)
        call.sent = True
        assert call.bot is not None and call.secret is not None  # prepared
        driver = WebhookDriver(call.bot, call.secret, store=store)
        began = time.monotonic()
        try:
            reply = await driver.ask_async(decision, call.body)  # the bot's clock starts here
        except NotMade as exc:  # no byte reached the bot: queued again, uncharged
            log.warning("the webhook call of match %s turn %s could not be made (%s): queued again",
                        call.match, call.turn, exc)
            call.sent = False
            await asyncio.sleep(RETRY_S)
            await self._off(store.call_unstarted, call.match, call.turn, call.account)
            return "done"
        ms = max(0, int((time.monotonic() - began) * 1000 + 0.999))
        call.sent = False  # answered: whatever happens now, the bot had its call
        self.calls_held.pop(call.raw, None)  # nothing of it is left to cancel
        self.answers.put((call, driver, reply, ms))
        return "settling"

    # -- the settler: answered calls' turns settled, beside the loop ------------------------------
    def _settle_answers(self) -> None:
        """The settler's thread: judges each answer and settles its turn, all the answers that
        came meanwhile in one round trip (`Store.settle_all`), then ends their calls (`_settled`).
        The loop hands an answer over and goes on: one thread crossing per answer, none back."""
        while True:
            batch = [self.answers.get()]
            while len(batch) < SETTLE_BATCH and not self.answers.empty():  # the settler alone takes
                batch.append(self.answers.get_nowait())
            stop = None in batch
            batch = [answer for answer in batch if answer is not None]
            try:
                self._settle(batch)
            except Exception:  # Redis away: the deadline's backstop settles these turns (made once more)
                log.exception("settling %d webhook answers failed", len(batch))
            for call, driver, _, _ in batch:
                self._settled(call, driver)
            if stop:
                return

    def _settle(self, batch: list[tuple]) -> None:
        store, judged = self.settler_store, []
        for call, _, reply, ms in batch:
            try:
                judged.append((call, answered(store, call.record["decision"], ms, reply.action, reply.fault),
                               reply.debug))
            except Exception:  # one answer that cannot be judged now: the deadline's backstop settles it
                log.exception("judging the answer of match %s turn %s failed", call.match, call.turn)
        landed = play_on.settle_all(store, [(call.match, entry, call.record, debug) for call, entry, debug in judged])
        for (call, entry, _), settled in zip(judged, landed, strict=True):
            if settled and fault_kind(entry.get("fault") or "") == "timeout":
                store.note_late(now_ms() - call.called_at - int(call.record["decision"]["deadline_ms"]))

    def _settled(self, call: _Call, driver: WebhookDriver) -> None:
        """On the settler's thread: an answered call ends — its bot's liveness noted (a good
        answer at most once a second a bot: `SEEN_EVERY_S`), its share given back here, and its
        account's waiting calls started on the loop, if it has any."""
        assert call.account is not None  # answered: prepared
        try:
            assert call.bot is not None  # answered: prepared
            alive, bot_id, now = shows_alive(driver.outcome), call.bot["id"], time.monotonic()
            if not (alive and now - self.seen.get(bot_id, -SEEN_EVERY_S) < SEEN_EVERY_S):  # else: seen a
                driver.note(driver.outcome)  # moment ago by this dispatcher, and no failure noted since
                if alive:
                    if len(self.seen) >= SECRETS_KEPT:
                        self.seen.clear()
                    self.seen[bot_id] = now
                elif alive is False:
                    self.seen.pop(bot_id, None)
        finally:
            self._release(call.account)
            self._unbusy()
            if call.account in self.waiting:
                assert self.loop is not None  # a call waits only where the callers run
                self.loop.call_soon_threadsafe(self._start_waiting, call.account)

    async def _notify(self, call: _Call) -> None:
        try:
            assert call.bot is not None and call.secret is not None  # prepared
            await WebhookDriver(call.bot, call.secret).post_async(call.item["message"], MATCH_OVER_S)
        except Exception:  # best effort: the match is over whatever the bot does
            pass
        finally:
            await self._off(self.store.call_dropped, self.caller, call.raw)

    # -- upkeep: beats, dead callers, aborted matches --------------------------------------
    async def _maintain(self) -> None:
        while not self.stopping.is_set():
            try:
                await asyncio.sleep(CHECK_S)
                await self._off(self.store.caller_beat, self.caller)
                moved = await self._off(self.store.recover_callers, self.caller)
                if moved:
                    log.warning("%d webhook calls taken by a dead dispatcher queued again", moved)
                await self._cancel_over()
                for account in list(self.waiting):
                    self._start_waiting(account)
            except asyncio.CancelledError:
                return
            except Exception:
                log.exception("the callers' upkeep failed")

    async def _cancel_over(self) -> None:
        """Cancel the calls (sent or waiting) of turns no longer pending: an aborted match's."""
        held = [c for c in self.calls_held.values() if c.match is not None and c.record is not None]
        if not held:
            return
        over = await self._off(self.store.calls_over, list({(c.match, c.turn) for c in held}))
        if not over:
            return
        for call in held:
            if (call.match, call.turn) not in over:
                continue
            assert call.account is not None  # prepared, with its record
            queue = self.waiting.get(call.account)
            if queue is not None and call in queue:
                queue.remove(call)
                self._done(call, busy=False)
                await self._off(self.store.call_dropped, self.caller, call.raw)
            elif call.task is not None and not call.task.done():
                call.task.cancel()

    async def _cancel_all(self) -> list[_Call]:
        """Stopping: cancel every call; those sent and unanswered are returned."""
        if self.maintainer is not None:
            self.maintainer.cancel()
        unsent = [c for c in self.calls_held.values() if c.sent]
        tasks = [c.task for c in self.calls_held.values() if c.task is not None and not c.task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        self.waiting.clear()
        return unsent

    def holding(self) -> dict:
        """What the callers hold now: calls in flight (per account) and waiting."""
        return {"in_flight": sum(self.in_flight.values()), "waiting": sum(len(q) for q in self.waiting.values()),
                "accounts": dict(self.in_flight)}


def raise_file_limit(wanted: int) -> int:
    """Raise this process's open-files limit towards `wanted` (each call in flight is a
    socket); the limit now."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    if soft != resource.RLIM_INFINITY and soft < wanted:
        log.warning("open files limited to %d: fewer than %d calls can be in flight", soft, wanted)
    return soft


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m worker.dispatch")
    parser.add_argument("redis_url")
    parser.add_argument("--queue", default=None, help="the queue (default: CARDARENA_QUEUE, else cardarena)")
    parser.add_argument("--calls", type=int, default=CALLS, help="webhook calls in flight at once (default %(default)s)")
    parser.add_argument("--part", choices=PARTS, default=None, help="only this part (default: both)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    from core.signals import die_with_parent, stop_on_signals

    die_with_parent()  # a pool killed with kill -9 leaves no dispatcher behind
    from core.store import secret_key

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    client = redis.Redis.from_url(args.redis_url)
    parts = PARTS if args.part is None else (args.part,)
    if "calls" in parts:
        raise_file_limit(args.calls + 256)
    dispatcher = Dispatcher(Store(client, secret_key(client), queue=args.queue), calls=args.calls,
                            parts=parts).start()
    try:
        with stop_on_signals():
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        dispatcher.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
