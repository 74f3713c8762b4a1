"""Pending decisions of polling bots: what `GET /bots/me/turns` finds.

Keys:
    bot:{id}:decisions          hash "{match}:{turn}" -> {"decision", "sent_at", "deadline_at"}
                                (epoch ms: the answer's latency is counted from sent_at)
    bot:{id}:wake               pub/sub channel: a decision was published
    bot:{id}:polls              sorted set of the bot's long-polls in progress, scored by
                                when each must have ended (epoch ms): the per-bot cap, taken
                                with the account's (core/store/quotas.py `take_places`)

The match runner publishes a decision (`pend`, on the pipeline of
`Store.await_answer`, core/store/waits.py) and its run ends; a bot
long-poll registers on its wake channel (`listen_decisions`) *before* reading
what is pending, so a decision published between the two still wakes it, and
only then waits (`wait_decisions(listening=…)`): one read before the wait. No sleep loop: the
poll waits on the process' one pub/sub listener (core/store/wakeups.py),
which wakes it; it holds no Redis connection while it waits.
"""

from __future__ import annotations

import json
import time

from redis.exceptions import NoScriptError

from core.store.keys import now_ms, text
from core.store.matches import log_key
from core.store.quotas import TAKE_LUA, Places, new_place_token, take_args
from core.store.wakeups import RECHECK_S, UNSURE_S, Subscription, wakeups

#: KEYS[1] the bot's decisions; ARGV: what comes before and after a match id in its log's key
#: (`LOG_KEY_AROUND`). Each field and its record, followed by the length of its match's log (the
#: match named by the field "{match}:{turn}"): a poll's read in one round trip
PENDING_LUA = """
local raw = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #raw, 2 do
  local match = string.match(raw[i], '^(.*):%d+$')
  out[#out + 1] = raw[i]
  out[#out + 1] = raw[i + 1]
  out[#out + 1] = match and redis.call('LLEN', ARGV[1] .. match .. ARGV[2]) or 0
end
return out
"""

#: `log_key(m)` is LOG_KEY_AROUND[0] + m + LOG_KEY_AROUND[1]
LOG_KEY_AROUND = tuple(log_key("\0").split("\0"))


def decisions_key(bot_id: str) -> str:
    return f"bot:{bot_id}:decisions"


def wake_channel(bot_id: str) -> str:
    return f"bot:{bot_id}:wake"


def polls_key(bot_id: str) -> str:
    return f"bot:{bot_id}:polls"


def pend(pipe, bot_id: str, decision: dict, sent_at: int, deadline_at: int) -> None:
    """On `pipe`: make `decision` (docs/api.md §3) pending for the bot until `deadline_at`, and wake
    its long-polls."""
    field = f"{decision['match_id']}:{decision['turn']}"
    pipe.hset(decisions_key(bot_id), field, json.dumps(
        {"decision": decision, "sent_at": sent_at, "deadline_at": deadline_at}, separators=(",", ":")))
    pipe.publish(wake_channel(bot_id), field)


def read_pending_record(pipe, bot_id: str, match_id: str, turn: int) -> None:
    """On `pipe`: the read of `Decisions.pending_record` (its reply is for `live_record`)."""
    pipe.hget(decisions_key(bot_id), f"{match_id}:{turn}")


def live_record(value: bytes | str | None) -> dict | None:
    """A pending decision's stored record, or None (none, or past its deadline)."""
    if value is None:
        return None
    record = json.loads(value)
    return None if record["deadline_at"] <= now_ms() else record


class Decisions:
    r: object
    script: object

    def pending_decisions(self, bot_id: str, skip: set[tuple[str, int]] = frozenset()) -> list[dict]:
        """The bot's decisions not yet answered whose deadline has not passed (one round trip;
        the others are deleted), but for those in `skip` ((match id, turn) of those the bot
        holds already: not even decoded)."""
        raw = self.script(PENDING_LUA)(keys=[decisions_key(bot_id)], args=list(LOG_KEY_AROUND))
        return self._live_decisions(bot_id, raw, skip)

    def pending_or_poll_places(self, bot_id: str, skip: set[tuple[str, int]], caps: list[tuple[str, int]],
                               seconds: float) -> tuple[list[dict], Places | None, str | None]:
        """`pending_decisions(bot_id, skip)` and, in the same round trip, a long-poll's places
        (`take_places(caps, seconds)`, core/store/quotas.py): (pending, the places, None) with
        them taken, (pending, None, the first key full) without. With something pending the
        poll does not wait: the places just taken are given back."""
        token = new_place_token()
        pending_raw, full = self._scripts_together([
            (PENDING_LUA, [decisions_key(bot_id)], list(LOG_KEY_AROUND)),
            (TAKE_LUA, [key for key, _ in caps], take_args(token, seconds, [cap for _, cap in caps]))])
        pending = self._live_decisions(bot_id, pending_raw, skip)
        if int(full):
            return pending, None, caps[int(full) - 1][0]
        places = Places(caps, token)
        if pending:
            self.give_places(places)
        return pending, places, None

    def _scripts_together(self, calls: list[tuple[str, list, list]]) -> list:
        """Lua scripts (source, keys, args) run in order in one round trip (each atomic, not all
        together): their replies. One Redis lost (restarted, flushed) is loaded and run then."""
        pipe = self.r.pipeline(transaction=False)
        for source, keys, args in calls:  # by SHA: the Script objects in a pipeline would ask first
            pipe.evalsha(self.script(source).sha, len(keys), *keys, *args)
        replies = pipe.execute(raise_on_error=False)[:len(calls)]
        for i, (reply, (source, keys, args)) in enumerate(zip(replies, calls, strict=True)):
            if isinstance(reply, NoScriptError):  # not run: run it now (the Script loads it)
                replies[i] = self.script(source)(keys=keys, args=args)
            elif isinstance(reply, Exception):
                raise reply
        return replies

    def _live_decisions(self, bot_id: str, raw: list, skip: set[tuple[str, int]]) -> list[dict]:
        """PENDING_LUA's reply: the live decisions not in `skip`, by deadline; the stale deleted."""
        if not raw:
            return []
        now = now_ms()
        live, stale = [], []
        skipped = {f"{match_id}:{turn}" for match_id, turn in skip}
        for field, value, logged in zip(raw[::3], raw[1::3], raw[2::3], strict=True):
            if skipped and text(field) in skipped:
                continue
            record = json.loads(value)
            decision = record["decision"]
            answered = int(logged) > decision["turn"]  # settled: its entry is in the log already
            if record["deadline_at"] <= now or answered:
                stale.append(field)
            else:
                live.append((record["deadline_at"], decision))
        if stale:
            self.r.hdel(decisions_key(bot_id), *stale)
        return [d for _, d in sorted(live, key=lambda item: item[0])]

    def find_decision(self, bot_id: str, match_id: str, turn: int) -> dict | None:
        """The pending decision of this bot for that turn, or None."""
        record = self.pending_record(bot_id, match_id, turn)
        return None if record is None else record["decision"]

    def pending_record(self, bot_id: str, match_id: str, turn: int) -> dict | None:
        """`{"decision", "sent_at", "deadline_at"}` of this bot's pending decision for that turn,
        or None (none, or past its deadline)."""
        return live_record(self.r.hget(decisions_key(bot_id), f"{match_id}:{turn}"))

    def listen_decisions(self, bot_id: str) -> Subscription:
        """The bot's wake channel, heard from now on (a context manager): read what is pending
        after this call, then wait on it with `wait_decisions(listening=…)`."""
        return wakeups(self.r).listen(wake_channel(bot_id))

    def wait_decisions(self, bot_id: str, timeout_s: float, skip: set[tuple[str, int]] = frozenset(),
                       listening: Subscription | None = None) -> list[dict]:
        """Pending decisions, waiting up to `timeout_s` until there is one not in `skip`
        ((match id, turn) of those the bot holds already); those are left out.

        It waits on the process' one listener (core/store/wakeups.py), holding no Redis
        connection and, under gevent, no thread: registered on the bot's wake channel before
        reading, it reads again when woken, when the listener (re)subscribes, and on its own
        every `RECHECK_S` (`UNSURE_S` while the listener is not subscribed). `listening`: the
        caller's `listen_decisions`, registered before its own read found nothing (it is not
        read again before the first wait; the caller closes it). A long-poll's places
        (`pending_or_poll_places`) are held for the whole wait and given back by the caller:
        giving them back at each read that might end the wait let a newcomer take them between
        a wake that brought nothing and the poll taking them again (a fifth poll of a bot
        waited, and the one it displaced came back empty at once)."""
        if listening is None:
            with self.listen_decisions(bot_id) as sub:
                return self._wait_decisions(bot_id, timeout_s, skip, sub, True)
        return self._wait_decisions(bot_id, timeout_s, skip, listening, False)

    def _wait_decisions(self, bot_id: str, timeout_s: float, skip: set[tuple[str, int]], sub: Subscription,
                        read_first: bool) -> list[dict]:
        end = time.monotonic() + max(0.0, timeout_s)
        listener, read = sub.listener, read_first
        while True:
            pending = self.pending_decisions(bot_id, skip) if read else []
            read = True
            remaining = end - time.monotonic()
            if pending or remaining <= 0:
                return pending
            sub.wait(min(remaining, RECHECK_S if listener.ready() else UNSURE_S))
