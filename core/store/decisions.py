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
poll waits on the process' one pub/sub listener of wake channels (core/store/wakeups.py),
which wakes it; it holds no Redis connection while it waits.

The API's poll is two round trips: its credential's check, what is pending and
its places in one credited script (`pending_or_poll_places`, core/store/bots.py
`credited_script`), then, once woken, what is pending with its places given
back when the poll ends with it (`wait_texts`); only a wait that ends empty
gives them back, and notes the bot seen, in round trips of their own. A
decision goes out as the worker stored it (`pending_value`): its JSON text is cut from the record
(`record_parts`), never decoded and encoded again.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

import redis
from redis.commands.core import Script

from core.store.bots import SEEN_EVERY_MS, Credential, credited_script, stored_stamp
from core.store.keys import now_ms
from core.store.matches import log_key
from core.store.quotas import TAKE_FUNCTION, Places, new_place_token, take_args
from core.store.wakeups import RECHECK_S, UNSURE_S, Subscription, draining, wakeups

#: `pending(key, before, after, skip)`: the bot's decisions (`key`) but those whose field is in the set
#: `skip` (the bot holds them: not even sent back), each field and its record followed by the
#: length of its match's log (the match named by the field "{match}:{turn}", its log's key
#: `before .. match .. after`, `LOG_KEY_AROUND`): a poll's read in one round trip.
#: `skipped(argv, at)`: the set of the `argv[at]` fields that follow it, and the index after them.
PENDING_FUNCTION = """
local function pending(key, before, after, skip)
  local raw = redis.call('HGETALL', key)
  local out = {}
  for i = 1, #raw, 2 do
    if not skip[raw[i]] then
      local match = string.match(raw[i], '^(.*):%d+$')
      out[#out + 1] = raw[i]
      out[#out + 1] = raw[i + 1]
      out[#out + 1] = match and redis.call('LLEN', before .. match .. after) or 0
    end
  end
  return out
end
local function skipped(argv, at)
  local skip = {}
  for i = at + 1, at + tonumber(argv[at]) do skip[argv[i]] = true end
  return skip, at + tonumber(argv[at]) + 1
end
"""
#: `live(out, now)`: whether `pending`'s reply `out` holds a decision that may be live at `now`: not
#: answered (its log shorter than its turn + 1) and its deadline — the record's last field as
#: `pending_value` writes it — after now (a record not read so counts as live). The same test as
#: `Decisions._live_texts`, given the same now.
LIVE_FUNCTION = """
local function live(out, now)
  for i = 1, #out, 3 do
    local turn = tonumber(string.match(out[i], ':(%d+)$'))
    local deadline = tonumber(string.match(out[i + 1], '"deadline_at":(%d+)}$'))
    if not turn or not deadline or (deadline > now and out[i + 2] <= turn) then return true end
  end
  return false
end
"""
#: KEYS[1] the bot's decisions; ARGV `LOG_KEY_AROUND`
PENDING_LUA = PENDING_FUNCTION + "return pending(KEYS[1], ARGV[1], ARGV[2], {})\n"
#: `PENDING_LUA` for a bot's own request, after its credential's check (`credited_script`): ARGV then
#: how many fields to skip and those fields
PENDING_CREDITED_LUA = credited_script(PENDING_FUNCTION, """
return pending(KEYS[1], ARGV[1], ARGV[2], (skipped(ARGV, 3)))
""")

#: A long-poll's first step, after its credential's (`credited_script`): what is pending and, only if
#: nothing is, its places. KEYS[1] the bot's decisions, then the places' keys; ARGV:
#: `LOG_KEY_AROUND` (2), now ms, how many fields to skip and those fields, then `take`'s ARGV
#: (core/store/quotas.py). {-1, pending} when a decision may be live (`live`): no place taken,
#: the poll does not wait; else {`take`'s reply, pending}.
POLL_LUA = credited_script(PENDING_FUNCTION + LIVE_FUNCTION + TAKE_FUNCTION, """
local skip, rest = skipped(ARGV, 4)
local out = pending(KEYS[1], ARGV[1], ARGV[2], skip)
if live(out, tonumber(ARGV[3])) then return {-1, out} end
local keys, argv = {}, {}
for i = 2, #KEYS do keys[#keys + 1] = KEYS[i] end
for i = rest, #ARGV do argv[#argv + 1] = ARGV[i] end
return {take(keys, argv), out}
""")

#: A woken long-poll's read: what is pending and, if a decision may be live (`live`: the poll ends
#: with it), the poll's places given back and, when ARGV[4] is not empty, the bot noted seen then
#: (ARGV[4]: now as the bot's hash holds it, `stored_stamp`). KEYS[1] the bot's decisions, KEYS[2]
#: the bot's hash, then the places' keys; ARGV: `LOG_KEY_AROUND` (2), now ms, seen or '', the
#: places' token, how many fields to skip and those fields. {1 if given back else 0, pending}.
READ_AND_GIVE_LUA = PENDING_FUNCTION + LIVE_FUNCTION + """
local out = pending(KEYS[1], ARGV[1], ARGV[2], (skipped(ARGV, 6)))
if not live(out, tonumber(ARGV[3])) then return {0, out} end
for i = 3, #KEYS do redis.call('ZREM', KEYS[i], ARGV[5]) end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], 'last_seen', ARGV[4]) end
return {1, out}
"""

#: An answer's reads, after its credential's (`credited_script`): KEYS[1] the bot's decisions,
#: KEYS[2] a hash read with it (the match's waiting hash, core/store/waits.py); ARGV[1] the
#: decision's field. {1 if it is pending else 0, the hash's fields and values}.
ANSWER_READS_LUA = credited_script("", """
return {redis.call('HEXISTS', KEYS[1], ARGV[1]), redis.call('HGETALL', KEYS[2])}
""")

#: a record as `pending_value` writes it: `RECORD_HEAD` + the decision's JSON + `RECORD_TAIL`
RECORD_HEAD = b'{"decision":'
RECORD_TAIL = re.compile(rb',"sent_at":-?[0-9]+,"deadline_at":(-?[0-9]+)\}')

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


def record_parts(field: bytes, value: bytes) -> tuple[int, int, bytes]:
    """A pending decision's turn (its field's), deadline and the decision itself as its JSON text,
    cut from the record as `pending_value` wrote it: the decision is handed on as stored, not decoded."""
    cut = value.rfind(b',"sent_at":')
    tail = RECORD_TAIL.fullmatch(value, cut) if cut > 0 and value.startswith(RECORD_HEAD) else None
    turn = field.rpartition(b":")[2]
    if tail is None or not turn.isdigit():  # not as `pending_value` writes it (never so far): decoded
        record = json.loads(value)
        decision = json.dumps(record["decision"], separators=(",", ":")).encode()
        return int(record["decision"]["turn"]), int(record["deadline_at"]), decision
    return int(turn), int(tail[1]), value[len(RECORD_HEAD):cut]


def live_record(value: bytes | str | None) -> dict | None:
    """A pending decision's stored record, or None (none, or past its deadline)."""
    if value is None:
        return None
    record = json.loads(value)
    return None if record["deadline_at"] <= now_ms() else record


class Decisions:
    r: redis.Redis
    script: Callable[[str], Script]
    run_credited: Callable[[str, Credential, list, list], Any]

    def pending_decisions(self, bot_id: str, skip: set[tuple[str, int]] = frozenset()) -> list[dict]:
        """The bot's decisions not yet answered whose deadline has not passed (one round trip;
        the others are deleted), but for those in `skip` ((match id, turn) of those the bot
        holds already: not even decoded)."""
        raw = self.script(PENDING_LUA)(keys=[decisions_key(bot_id)], args=list(LOG_KEY_AROUND))
        return [json.loads(d) for d in self._live_texts(bot_id, raw, skip, now_ms())]

    def pending_texts(self, credential: Credential, skip: set[tuple[str, int]] = frozenset()) -> list[bytes]:
        """`pending_decisions` for the bot's own request, its credential checked first
        (core/store/bots.py `run_credited`: `NotCredited` if it no longer holds; the bot noted
        seen): each decision as its JSON text as stored, not decoded. One round trip."""
        bot_id = credential.bot["id"]
        skipped = [f"{match_id}:{turn}" for match_id, turn in skip]
        raw = self.run_credited(PENDING_CREDITED_LUA, credential, [decisions_key(bot_id)],
                                [*LOG_KEY_AROUND, len(skipped), *skipped])
        return self._live_texts(bot_id, raw, skip, now_ms())

    def pending_or_poll_places(self, credential: Credential, skip: set[tuple[str, int]],
                               caps: list[tuple[str, int]], seconds: float
                               ) -> tuple[list[bytes], Places | None, str | None]:
        """`pending_texts(credential, skip)` and, in the same round trip, a long-poll's places
        (`take_places(caps, seconds)`, core/store/quotas.py) if nothing is pending: (pending, the
        places, None) with them taken, (pending, None, the first key full) without; with
        something pending no place is taken (the places' token is None: nothing to give back),
        the poll does not wait. One atomic script (`POLL_LUA`), after the credential's check:
        taking places and giving them straight back when a decision was there cost a second
        round trip, the credential a third."""
        bot_id = credential.bot["id"]
        token, now = new_place_token(), now_ms()
        skipped = [f"{match_id}:{turn}" for match_id, turn in skip]
        flag, pending_raw = self.run_credited(
            POLL_LUA, credential, [decisions_key(bot_id), *(key for key, _ in caps)],
            [*LOG_KEY_AROUND, now, len(skipped), *skipped, *take_args(token, seconds, [cap for _, cap in caps])])
        pending = self._live_texts(bot_id, pending_raw, skip, now)  # the script's now: the same judgement
        flag = int(flag)
        if flag < 0 and not pending:  # a record the script could not read, stale once decoded
            token, full_key = self.take_places(caps, seconds)
            return [], (None if full_key else Places(caps, token)), full_key
        if flag > 0:
            return pending, None, caps[flag - 1][0]
        return pending, Places(caps, token if flag == 0 else None), None

    def _live_texts(self, bot_id: str, raw: list, skip: set[tuple[str, int]], now: int) -> list[bytes]:
        """A `pending` reply (PENDING_FUNCTION's): the JSON texts of the decisions live at `now`
        (the test of `LIVE_FUNCTION`) not in `skip` (which a script may have left out already), by
        deadline; the stale deleted."""
        if not raw:
            return []
        live, stale = [], []
        skipped = {f"{match_id}:{turn}".encode() for match_id, turn in skip}
        for field, value, logged in zip(raw[::3], raw[1::3], raw[2::3], strict=True):
            if skipped and field in skipped:
                continue
            turn, deadline, decision = record_parts(field, value)
            if deadline <= now or int(logged) > turn:  # past its deadline, or settled: its entry is logged
                stale.append(field)
            else:
                live.append((deadline, decision))
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

    def answer_reads(self, credential: Credential, match_id: str, turn: int, also: str) -> tuple[bool, dict]:
        """For the bot's answer to that turn, its credential checked first (`run_credited`:
        `NotCredited` if it no longer holds; the bot noted seen): whether a decision of that turn
        is pending for it, and the fields of the hash `also` as HGETALL gives them (the match's
        waiting hash, core/store/waits.py, which holds the same decision and which settling the
        turn needs: the record is decoded once, from there), in one round trip."""
        pending, flat = self.run_credited(ANSWER_READS_LUA, credential,
                                          [decisions_key(credential.bot["id"]), also], [f"{match_id}:{turn}"])
        return bool(pending), dict(zip(flat[::2], flat[1::2], strict=True))

    def listen_decisions(self, bot_id: str) -> Subscription:
        """The bot's wake channel, heard from now on (a context manager): read what is pending
        after this call, then wait on it with `wait_decisions(listening=…)`."""
        return wakeups(self.r).listen(wake_channel(bot_id))

    def wait_decisions(self, bot_id: str, timeout_s: float, skip: set[tuple[str, int]] = frozenset(),
                       listening: Subscription | None = None) -> list[dict]:
        """Pending decisions, waiting up to `timeout_s` until there is one not in `skip`
        ((match id, turn) of those the bot holds already); those are left out.

        It waits on the process' one listener of wake channels (core/store/wakeups.py), holding no Redis
        connection and, under gevent, no thread: registered on the bot's wake channel before
        reading, it reads again when woken, when the listener (re)subscribes, and on its own
        every `RECHECK_S` (`UNSURE_S` while the listener is not subscribed). `listening`: the
        caller's `listen_decisions`, registered before its own read found nothing (it is not
        read again before the first wait; the caller closes it)."""

        def read() -> list[bytes]:
            raw = self.script(PENDING_LUA)(keys=[decisions_key(bot_id)], args=list(LOG_KEY_AROUND))
            return self._live_texts(bot_id, raw, skip, now_ms())

        if listening is None:
            with self.listen_decisions(bot_id) as sub:
                texts = self._wait(read, timeout_s, sub, True)
        else:
            texts = self._wait(read, timeout_s, listening, False)
        return [json.loads(d) for d in texts]

    def wait_texts(self, bot_id: str, timeout_s: float, skip: set[tuple[str, int]], listening: Subscription,
                   places: Places, began: int) -> list[bytes]:
        """`wait_decisions` for a long-poll holding `places` (`pending_or_poll_places`), after its
        first read (`listening` registered before it): each decision as its JSON text as stored.
        The places are held for the whole wait — giving them back at each read that might end
        it let a newcomer take them between a wake that brought nothing and the poll taking them
        again (a fifth poll of a bot waited, and the one it displaced came back empty at once)
        — and given back by the read that ends it with a decision, in its round trip
        (`READ_AND_GIVE_LUA`; their token None from then on), which also notes the bot seen if
        the poll began (`began`, epoch ms) `SEEN_EVERY_MS` ago or more. A wait that ends empty
        leaves both to the caller."""
        keys = [decisions_key(bot_id), f"bot:{bot_id}", *places.keys]
        skipped = [f"{match_id}:{turn}" for match_id, turn in skip]

        def read() -> list[bytes]:
            now = now_ms()
            given, raw = self.script(READ_AND_GIVE_LUA)(
                keys=keys, args=[*LOG_KEY_AROUND, now, stored_stamp(now) if now - began >= SEEN_EVERY_MS else "",
                                 places.token,
                                 len(skipped), *skipped])
            texts = self._live_texts(bot_id, raw, skip, now)  # the script's now: the same judgement
            if int(given):
                places.token = None
                if not texts:  # a record the script could not read, stale once decoded: the poll ends
                    return []  # empty (its places are gone), and the bot polls again
            return texts

        return self._wait(read, timeout_s, listening, False, stop=lambda: places.token is None)

    @staticmethod
    def _wait(read, timeout_s: float, sub: Subscription, read_first: bool, stop=lambda: False) -> list[bytes]:
        """`read()` until it brings something, `stop()` says so or `timeout_s` has passed, waiting on
        `sub` between reads (RECHECK_S at most; UNSURE_S while the listener is not subscribed)."""
        end = time.monotonic() + max(0.0, timeout_s)
        listener, reading = sub.listener, read_first
        while True:
            pending = read() if reading else []
            reading = True
            remaining = end - time.monotonic()
            if pending or remaining <= 0 or stop() or draining():
                return pending
            sub.wait(min(remaining, RECHECK_S if listener.ready() else UNSURE_S))
