"""Pending decisions of polling bots: what `GET /bots/me/turns` finds.

Keys:
    bot:{id}:decisions          hash "{match}:{turn}" -> {"decision", "sent_at", "deadline_at"}
                                (epoch ms: the answer's latency is counted from sent_at)
    bot:{id}:wake               pub/sub channel: a decision was published
    bot:{id}:polls              sorted set of the bot's long-polls in progress, scored by
                                when each must have ended (epoch ms): the per-bot cap, taken
                                with the account's (core/store/quotas.py `take_places`)

The match runner publishes a decision (`PEND_STEP`, in the step that ends
its run: `Store.end_run_asking`, core/store/waits.py) and its run ends; a bot
long-poll registers on its wake channel (`listen_decisions`) *before* reading
what is pending, so a decision published between the two still wakes it, and
only then waits (`wait_decisions(listening=…)`): one read before the wait. No sleep loop: the
poll waits on the process' one pub/sub listener (core/store/wakeups.py),
which wakes it; it holds no Redis connection while it waits.
"""

from __future__ import annotations

import json
import time

from core.store.keys import now_ms, text
from core.store.matches import log_key
from core.store.quotas import TAKE_FUNCTION, Places, new_place_token, take_args
from core.store.wakeups import RECHECK_S, UNSURE_S, Subscription, wakeups

#: `pending(key, before, after)`: the bot's decisions (`key`), each field and its record followed by
#: the length of its match's log (the match named by the field "{match}:{turn}", its log's key
#: `before .. match .. after`, `LOG_KEY_AROUND`): a poll's read in one round trip
PENDING_FUNCTION = """
local function pending(key, before, after)
  local raw = redis.call('HGETALL', key)
  local out = {}
  for i = 1, #raw, 2 do
    local match = string.match(raw[i], '^(.*):%d+$')
    out[#out + 1] = raw[i]
    out[#out + 1] = raw[i + 1]
    out[#out + 1] = match and redis.call('LLEN', before .. match .. after) or 0
  end
  return out
end
"""
#: KEYS[1] the bot's decisions; ARGV `LOG_KEY_AROUND`
PENDING_LUA = PENDING_FUNCTION + "return pending(KEYS[1], ARGV[1], ARGV[2])\n"

#: A long-poll's first step: what is pending and, only if nothing is, its places. KEYS[1] the bot's
#: decisions, then the places' keys; ARGV: `LOG_KEY_AROUND` (2), now ms, how many fields to skip
#: and those fields, then `take`'s ARGV (core/store/quotas.py). {-1, pending} when a decision may
#: be live (not skipped, not answered — its log shorter than its turn + 1 — and its deadline, the
#: record's last field as `pending_value` writes it, after now; a record not read so counts as live): no
#: place taken, the poll does not wait; else {`take`'s reply, pending}.
POLL_LUA = PENDING_FUNCTION + TAKE_FUNCTION + """
local out = pending(KEYS[1], ARGV[1], ARGV[2])
local now, skipping = tonumber(ARGV[3]), tonumber(ARGV[4])
local skip = {}
for i = 1, skipping do skip[ARGV[4 + i]] = true end
for i = 1, #out, 3 do
  if not skip[out[i]] then
    local turn = tonumber(string.match(out[i], ':(%d+)$'))
    local deadline = tonumber(string.match(out[i + 1], '"deadline_at":(%d+)}$'))
    if not turn or not deadline or (deadline > now and out[i + 2] <= turn) then return {-1, out} end
  end
end
local keys, argv = {}, {}
for i = 2, #KEYS do keys[#keys + 1] = KEYS[i] end
for i = 5 + skipping, #ARGV do argv[#argv + 1] = ARGV[i] end
return {take(keys, argv), out}
"""

#: `log_key(m)` is LOG_KEY_AROUND[0] + m + LOG_KEY_AROUND[1]
LOG_KEY_AROUND = tuple(log_key("\0").split("\0"))


def decisions_key(bot_id: str) -> str:
    return f"bot:{bot_id}:decisions"


def wake_channel(bot_id: str) -> str:
    return f"bot:{bot_id}:wake"


def polls_key(bot_id: str) -> str:
    return f"bot:{bot_id}:polls"


#: The pend step, inside a caller's Lua script: a decision (docs/api.md §3) pending for the bot
#: until its deadline, and its long-polls woken. `pending` the bot's decisions (`decisions_key`),
#: `wake` its wake channel, `field` "{match}:{turn}" and `value` its record (`pending_value`),
#: declared before it
PEND_STEP = """
redis.call('HSET', pending, field, value)
redis.call('PUBLISH', wake, field)
"""


def pending_value(decision_json: str, sent_at: int, deadline_at: int) -> str:
    """A pending decision's stored record, from its decision as JSON already: the bytes
    `json.dumps({"decision", "sent_at", "deadline_at"}, separators=(",", ":"))` gives (a poll reads
    the deadline at its end: `POLL_LUA`), without encoding the decision again."""
    return f'{{"decision":{decision_json},"sent_at":{int(sent_at)},"deadline_at":{int(deadline_at)}}}'


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
        (`take_places(caps, seconds)`, core/store/quotas.py) if nothing is pending: (pending, the
        places, None) with them taken, (pending, None, the first key full) without; with
        something pending no place is taken (the places' token is None: nothing to give back),
        the poll does not wait. One atomic script (`POLL_LUA`): taking places and giving them
        straight back when a decision was there cost a second round trip."""
        token = new_place_token()
        skipped = [f"{match_id}:{turn}" for match_id, turn in skip]
        flag, pending_raw = self.script(POLL_LUA)(
            keys=[decisions_key(bot_id), *(key for key, _ in caps)],
            args=[*LOG_KEY_AROUND, now_ms(), len(skipped), *skipped,
                  *take_args(token, seconds, [cap for _, cap in caps])])
        pending = self._live_decisions(bot_id, pending_raw, skip)
        flag = int(flag)
        if flag < 0 and not pending:  # live in the script, past its deadline since: take them now
            token, full_key = self.take_places(caps, seconds)
            return [], (None if full_key else Places(caps, token)), full_key
        if flag > 0:
            return pending, None, caps[flag - 1][0]
        return pending, Places(caps, token if flag == 0 else None), None

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
