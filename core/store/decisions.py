"""Pending decisions of polling bots: what `GET /bots/me/turns` finds.

Keys:
    bot:{id}:decisions          hash "{match}:{turn}" -> {"decision", "sent_at", "deadline_at"}
                                (epoch ms: the answer's latency is counted from sent_at)
    bot:{id}:wake               pub/sub channel: a decision was published
    bot:{id}:polls              sorted set of the bot's long-polls in progress, scored by
                                when each must have ended (epoch ms): the per-bot cap, taken
                                with the account's (core/store/quotas.py `take_places`)

The match runner publishes a decision (in the script that ends its run,
core/store/lua/end_run_asking.lua: `Store.end_run_asking`, core/store/waits.py) and its run ends; a bot
long-poll registers on its wake channel (`listen_decisions`) *before* reading
what is pending, so a decision published between the two still wakes it, and
only then waits (`wait_decisions(listening=…)`): one read before the wait. No sleep loop: the
poll waits on the process' one pub/sub listener of wake channels (core/store/wakeups.py),
which wakes it; it holds no Redis connection while it waits.

The API's poll is two round trips: its credential's check, what is pending and
its places in one credited script (`pending_or_poll_places`: core/store/lua/poll.lua, run by
core/store/bots.py `run_credited`), then, once woken, what is pending with its places given
back when the poll ends with it (`wait_texts`); only a wait that ends empty
gives them back, and notes the bot seen, in round trips of their own. A
decision goes out as the worker stored it (`pending_value`): its JSON text is cut from the record
(`record_parts`), never decoded and encoded again.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Set
from typing import Any

import redis
from redis.commands.core import Script

from core.store.bots import SEEN_EVERY_MS, Credential, stored_stamp
from core.store.keys import now_ms
from core.store.lua import args, source
from core.store.matches import log_key
from core.store.quotas import Places, new_place_token, place_args
from core.store.wakeups import RECHECK_S, UNSURE_S, Subscription, draining, wakeups

#: a record as `pending_value` writes it: `RECORD_HEAD` + the decision's JSON + `RECORD_TAIL`
RECORD_HEAD = b'{"decision":'
RECORD_TAIL = re.compile(rb',"sent_at":-?[0-9]+,"deadline_at":(-?[0-9]+)\}')

#: decisions a bot holds already, (match id, turn) each: left out of what it is sent
Held = Set[tuple[str, int]]

#: `log_key(m)` is LOG_KEY_AROUND[0] + m + LOG_KEY_AROUND[1]: how the scripts find a pending
#: decision's match's log (core/store/lua/lib/pending.lua)
LOG_KEY_AROUND = tuple(log_key("\0").split("\0"))


def fields(decisions: Held) -> list[str]:
    """Decisions ((match id, turn) each) as the fields of a bot's decisions hash name them."""
    return [f"{match_id}:{turn}" for match_id, turn in decisions]


def decisions_key(bot_id: str) -> str:
    return f"bot:{bot_id}:decisions"


def wake_channel(bot_id: str) -> str:
    return f"bot:{bot_id}:wake"


def polls_key(bot_id: str) -> str:
    return f"bot:{bot_id}:polls"


def pending_value(decision_json: str, sent_at: int, deadline_at: int) -> str:
    """A pending decision's stored record, from its decision as JSON already: the bytes
    `json.dumps({"decision", "sent_at", "deadline_at"}, separators=(",", ":"))` gives, without encoding
    the decision again."""
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
    run_credited: Callable[..., Any]
    take_places: Callable[[list[tuple[str, int]], float], tuple[str | None, str | None]]

    def pending_decisions(self, bot_id: str, skip: Held = frozenset()) -> list[dict]:
        """The bot's decisions not yet answered whose deadline has not passed (one round trip;
        the others are deleted), but for those in `skip` ((match id, turn) of those the bot
        holds already: not even decoded)."""
        raw = self._pending_raw(bot_id, skip)
        return [json.loads(d) for d in self._live_texts(bot_id, raw, skip, now_ms())]

    def pending_texts(self, credential: Credential, skip: Held = frozenset()) -> list[bytes]:
        """`pending_decisions` for the bot's own request, its credential checked first
        (core/store/bots.py `run_credited`: `NotCredited` if it no longer holds; the bot noted
        seen): each decision as its JSON text as stored, not decoded. One round trip."""
        bot_id = credential.bot["id"]
        raw = self.run_credited("pending_credited", credential, [decisions_key(bot_id)],
                                around=LOG_KEY_AROUND, skip=fields(skip))
        return self._live_texts(bot_id, raw, skip, now_ms())

    def pending_or_poll_places(self, credential: Credential, skip: Held,
                               caps: list[tuple[str, int]], seconds: float
                               ) -> tuple[list[bytes], Places | None, str | None]:
        """`pending_texts(credential, skip)` and, in the same round trip, a long-poll's places
        (`take_places(caps, seconds)`, core/store/quotas.py) if nothing is pending: (pending, the
        places, None) with them taken, (pending, None, the first key full) without; with
        something pending no place is taken (the places' token is None: nothing to give back),
        the poll does not wait. One atomic script (core/store/lua/poll.lua), after the credential's check:
        taking places and giving them straight back when a decision was there cost a second
        round trip, the credential a third."""
        bot_id = credential.bot["id"]
        token, now = new_place_token(), now_ms()
        flag, pending_raw = self.run_credited(
            "poll", credential, [decisions_key(bot_id), *(key for key, _ in caps)], around=LOG_KEY_AROUND,
            skip=fields(skip), now=now, places=place_args(token, seconds, [cap for _, cap in caps], now))
        pending = self._live_texts(bot_id, pending_raw, skip, now)  # the script's now: the same judgement
        flag = int(flag)
        if flag < 0 and not pending:  # a record the script could not read, stale once decoded
            taken, full_key = self.take_places(caps, seconds)
            return [], (None if full_key else Places(caps, taken)), full_key
        if flag > 0:
            return pending, None, caps[flag - 1][0]
        return pending, Places(caps, token if flag == 0 else None), None

    def _live_texts(self, bot_id: str, raw: list, skip: Held, now: int) -> list[bytes]:
        """A `pending` reply (core/store/lua/lib/pending.lua): the JSON texts of the decisions live at
        `now` (the test of lib/live.lua) not in `skip` (which a script may have left out already), by
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

    def _pending_raw(self, bot_id: str, skip: Held) -> list:
        """What is pending for the bot but `skip`, each with its match's log length (one round trip:
        core/store/lua/pending_decisions.lua)."""
        return self.script(source("pending_decisions"))(
            keys=[decisions_key(bot_id)], args=[args(around=LOG_KEY_AROUND, skip=fields(skip))])

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
        pending, flat = self.run_credited("answer_reads", credential, [decisions_key(credential.bot["id"]), also],
                                          field=f"{match_id}:{turn}")
        return bool(pending), dict(zip(flat[::2], flat[1::2], strict=True))

    def listen_decisions(self, bot_id: str) -> Subscription:
        """The bot's wake channel, heard from now on (a context manager): read what is pending
        after this call, then wait on it with `wait_decisions(listening=…)`."""
        return wakeups(self.r).listen(wake_channel(bot_id))

    def wait_decisions(self, bot_id: str, timeout_s: float, skip: Held = frozenset(),
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
            return self._live_texts(bot_id, self._pending_raw(bot_id, skip), skip, now_ms())

        if listening is None:
            with self.listen_decisions(bot_id) as sub:
                texts = self._wait(read, timeout_s, sub, True)
        else:
            texts = self._wait(read, timeout_s, listening, False)
        return [json.loads(d) for d in texts]

    def wait_texts(self, bot_id: str, timeout_s: float, skip: Held, listening: Subscription,
                   places: Places, began: int) -> list[bytes]:
        """`wait_decisions` for a long-poll holding `places` (`pending_or_poll_places`), after its
        first read (`listening` registered before it): each decision as its JSON text as stored.
        The places are held for the whole wait — giving them back at each read that might end
        it let a newcomer take them between a wake that brought nothing and the poll taking them
        again (a fifth poll of a bot waited, and the one it displaced came back empty at once)
        — and given back by the read that ends it with a decision, in its round trip
        (core/store/lua/read_and_give.lua; their token None from then on), which also notes the bot seen if
        the poll began (`began`, epoch ms) `SEEN_EVERY_MS` ago or more. A wait that ends empty
        leaves both to the caller."""
        keys = [decisions_key(bot_id), f"bot:{bot_id}", *places.keys]
        skipped = fields(skip)

        def read() -> list[bytes]:
            now = now_ms()
            seen = stored_stamp(now) if now - began >= SEEN_EVERY_MS else ""
            given, raw = self.script(source("read_and_give"))(
                keys=keys, args=[args(around=LOG_KEY_AROUND, skip=skipped, now=now, seen=seen, token=places.token)])
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
