"""The dispatcher: the platform's side of every remote turn, so no worker waits on a bot.

    python -m worker.dispatch REDIS_URL [--queue QUEUE] [--calls N] [--part clock|calls]
    with Dispatcher(store): ...          # both parts, in threads of this process

A match runner publishes a remote seat's decision and its run ends
(core/store/waits.py). The dispatcher does the rest:

* **the clock** judges every deadline that passes (a polling bot's turn, or
  a webhook call lost with a dispatcher that died): a timeout, appended only
  if no answer landed first, the match's next run enqueued (`Store.settle`).
  It sleeps until the nearest deadline, looking again at least every
  `TICK_S` — less than the shortest move time, so a deadline set meanwhile is
  never passed unseen — and a timeout is recorded a few milliseconds after
  its deadline, whatever the load, for two round trips a look.
* **the callers**: `calls` threads making the webhook calls (core/calls.py:
  a whole-answer deadline, a size limit, the URL checked again, signed),
  each answer judged (core/answers.py) and settled the moment it comes;
  and the best-effort `match_over` notices. A thread takes a call from Redis
  only when it is free, so a busy dispatcher leaves calls to another, and
  a bot's time starts when its call is made, not when it was queued.
* **the heartbeat** (worker/heartbeat.py), beside the callers: webhook bots
  not called for 30 s are pinged, so their `status` tells the truth.

The pool (worker/pool.py) runs each part in a process of its own beside its
workers (the clock's few milliseconds never wait behind the callers' many
threads for Python's lock) and starts another if one dies; any number (one
per machine) share the work through Redis, each deadline claimed by exactly
one clock. kill -9 loses
nothing: deadlines and calls are in Redis, and a call that was under way in
a dead dispatcher (no answer long past its deadline) is made once more
rather than charged to the bot; a second loss is the bot's timeout, so no
answer that crashes dispatchers can stall a match.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from core.answers import answered, timed_out
from core.store.keys import now_ms
from core.store.waits import CALL_SLACK_MS, UNSENT_GRACE_MS
from sdk.clock import TimeRules, elapsed_ms
from sdk.faults import fault_kind
from worker.drivers.webhook import MATCH_OVER_S, WebhookDriver
from worker.heartbeat import Heartbeat

log = logging.getLogger("cardarena.dispatch")

#: the longest the clock sleeps without looking for deadlines (less when one is nearer): half the
#: shortest move time (`TimeRules.RANGES`: 50 ms), so a deadline set while it sleeps, at least
#: that far ahead, is seen before it passes
TICK_S = TimeRules.RANGES["move_timeout_ms"][0] / 2000
#: webhook calls one dispatcher holds at once
CALLS = 64
#: what a dispatcher does: judge deadlines, make webhook calls
PARTS = ("clock", "calls")
#: how long a call taken from Redis may wait for a free thread before the taker blocks again
TAKE_WAIT_S = 0.5


class Dispatcher:
    """The clock and `calls` caller threads for one store's queue."""

    def __init__(self, store, calls: int = CALLS, tick_s: float = TICK_S, parts: tuple = PARTS) -> None:
        self.store, self.calls, self.tick_s, self.parts = store, calls, tick_s, parts
        self.stopping = threading.Event()
        self.free = threading.Semaphore(calls)
        self.pool = ThreadPoolExecutor(max_workers=calls, thread_name_prefix="caller")
        self.threads: list[threading.Thread] = []
        self.heartbeat = Heartbeat(store) if "calls" in parts else None

    # -- life ------------------------------------------------------------------
    def start(self) -> Dispatcher:
        for part, target in (("clock", self._clock), ("calls", self._take_calls)):
            if part not in self.parts:
                continue
            thread = threading.Thread(target=target, name=f"dispatch-{part}", daemon=True)
            thread.start()
            self.threads.append(thread)
        if self.heartbeat is not None:
            self.heartbeat.start()
        return self

    def stop(self, grace_s: float = 5.0) -> None:
        """Stop taking work; wait up to `grace_s` for the calls under way (an unfinished one is
        made again by the next dispatcher, past its deadline)."""
        self.stopping.set()
        if self.heartbeat is not None:
            self.heartbeat.stop()
        for thread in self.threads:
            thread.join(timeout=2)
        end = time.monotonic() + grace_s
        taken = 0
        while taken < self.calls and time.monotonic() < end:  # every thread free again: all done
            if self.free.acquire(timeout=max(0.0, end - time.monotonic())):
                taken += 1
        self.pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> Dispatcher:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- the clock ---------------------------------------------------------------
    def _clock(self) -> None:
        while not self.stopping.is_set():
            try:
                due = self.store.claim_due()
                for match_id, turn in due:
                    self.judge_deadline(match_id, turn)
                if due:
                    continue
                nearest = self.store.next_deadline()
            except Exception:  # Redis away for a moment, or one bad record: the next tick will do
                log.exception("the dispatcher's clock failed a tick")
                nearest = None
            pause = self.tick_s if nearest is None else min(self.tick_s, max(0.0, (nearest - now_ms()) / 1000))
            self.stopping.wait(pause)

    def judge_deadline(self, match_id: str, turn: int) -> None:
        """A claimed deadline: the turn's timeout, unless it was settled, or its webhook call
        is still to be made (or was lost with its dispatcher: made once more)."""
        store = self.store
        record = store.waiting_on(match_id)
        if record is None or record["turn"] != turn or store.log_length(match_id) > turn:
            return  # settled, or the match is over
        now = now_ms()
        if record["kind"] == "webhook":
            decision = record["decision"]
            called = record.get("called_at")
            if called is None and now < record["deadline_at"] + UNSENT_GRACE_MS:
                store.judge_later(match_id, turn, now + CALL_SLACK_MS)  # still queued: it times out itself
                return
            if called is not None and now < called + int(decision["deadline_ms"]) + CALL_SLACK_MS:
                store.judge_later(match_id, turn, called + int(decision["deadline_ms"]) + CALL_SLACK_MS)
                return
            if store.call_lost(match_id, turn):  # its dispatcher died: once more, on us
                log.warning("the webhook call of match %s turn %d was lost: made again", match_id, turn)
                return
        if store.settle(match_id, timed_out(record["decision"]), record):
            if record["kind"] == "polling":
                store.note_late(now_ms() - record["deadline_at"])
            log.info("match %s turn %d: timeout", match_id, turn)

    # -- the callers ---------------------------------------------------------------
    def _take_calls(self) -> None:
        while not self.stopping.is_set():
            if not self.free.acquire(timeout=TAKE_WAIT_S):
                continue
            try:
                item = self.store.take_call(TAKE_WAIT_S)
            except Exception:
                log.exception("taking a webhook call failed")
                item = None
                self.stopping.wait(0.5)
            if item is None:
                self.free.release()
                continue
            self.pool.submit(self._call, item)

    def _call(self, item: dict) -> None:
        try:
            if item.get("notice"):
                self.notify(item["bot"], item["message"], item.get("version"))
            else:
                self.call(item["match"], int(item["turn"]))
        except Exception:  # a platform error: the deadline's backstop settles the turn
            log.exception("a webhook call failed: %s", item)
        finally:
            self.free.release()

    def call(self, match_id: str, turn: int) -> None:
        """Make one webhook call and settle its turn with the judged answer."""
        store = self.store
        record = store.waiting_on(match_id)
        if record is None or record["turn"] != turn or record["kind"] != "webhook":
            return
        called_at = now_ms()
        if not store.call_started(match_id, turn, called_at):
            return  # settled meanwhile (the match is over)
        # reached as the version the match pinned (its own URL: core/store/versions.py)
        bot = store.version_record(record["bot"], record.get("version")) or {"id": record["bot"]}
        driver = WebhookDriver(bot, store.bot_secret(record["bot"]), store=store)
        decision = record["decision"]
        began = time.monotonic()
        try:
            reply = driver.ask(decision)
        finally:
            driver.close()
        entry = answered(store, decision, elapsed_ms(began), reply.action, reply.fault)
        if store.settle(match_id, entry, record, reply.debug) and fault_kind(entry.get("fault") or "") == "timeout":
            store.note_late(now_ms() - called_at - int(decision["deadline_ms"]))

    def notify(self, bot_id: str, message: dict, version: int | None = None) -> None:
        bot = self.store.version_record(bot_id, version)
        if bot is None or bot.get("kind") != "webhook":
            return
        try:
            WebhookDriver(bot, self.store.bot_secret(bot_id)).post(message, MATCH_OVER_S)
        except Exception:  # best effort: the match is over whatever the bot does
            pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m worker.dispatch")
    parser.add_argument("redis_url")
    parser.add_argument("--queue", default=None, help="the queue (default: CARDARENA_QUEUE, else cardarena)")
    parser.add_argument("--calls", type=int, default=CALLS, help="webhook calls held at once")
    parser.add_argument("--part", choices=PARTS, default=None, help="only this part (default: both)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    import redis

    from core.signals import die_with_parent, stop_on_signals

    die_with_parent()  # a pool killed with kill -9 leaves no dispatcher behind
    from core.store import Store, secret_key

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    client = redis.Redis.from_url(args.redis_url)
    parts = PARTS if args.part is None else (args.part,)
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
