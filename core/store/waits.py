"""Waits: a match between two runs, waiting for a remote bot's answer or its deadline.

Keys:
    match:{id}:waiting      hash: "record" (JSON {"turn", "seat", "bot", "version", "kind", "queue",
                            "sent_at", "deadline_at", "decision"}, epoch ms), "called_at" (epoch
                            ms, a webhook call under way), "called_again" (it was lost once);
                            from the first remote decision to the match's end: the match holds
                            its bots' slots while it has it
    waits:deadlines[:Q]     sorted set "{match}:{turn}" by when the dispatcher's clock must
                            judge the turn a timeout (epoch ms; a webhook's is its deadline plus
                            `CALL_SLACK_MS`, its call timing it out first)
    waits:late_ms[:Q]       list of how late each of the last 1,000 timeouts was recorded
                            (ms past its deadline: what bench/remote.py reports)
    waits:calls[:Q]         list of webhook calls to make (JSON {"match", "turn"} or a notice
                            {"notice", "bot", "message"}), taken by the dispatchers' callers

No worker waits on a bot (architecture idea 6): the match runner publishes a
remote seat's decision (`await_answer`) and its job ends. Whoever settles the
turn — the API for a polling bot's answer, a dispatcher's caller for a
webhook's, a dispatcher's clock at the deadline — appends the entry with the
log's atomic check (turn k lands only on a log of exactly k entries) and,
only if it landed, enqueues the match's next run (`settle`): exactly one
continuation per turn, however the answer and the deadline race.
"""

from __future__ import annotations

import json

from core.store.debug import write_debug
from core.store.decisions import decisions_key, pend
from core.store.jobs import QUEUE, enqueue_continuation
from core.store.keys import now_ms, text
from core.store.matches import log_key, run_ended

#: a webhook turn's backstop after its deadline: the call itself times out first; the clock
#: judges it only if the dispatcher making the call died
CALL_SLACK_MS = 2000
#: a webhook call not yet started this long after its deadline was lost with its dispatcher:
#: the clock then judges the turn a timeout rather than wait for ever
UNSENT_GRACE_MS = 30_000

#: KEYS[1] the deadlines; ARGV[1] now, ARGV[2] how many. Claimed by removal, so of several
#: dispatchers' clocks exactly one judges each deadline.
CLAIM_DUE_LUA = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end
return due
"""


def waiting_key(match_id: str) -> str:
    return f"match:{match_id}:waiting"


def deadlines_key(queue: str) -> str:
    return "waits:deadlines" if queue == QUEUE else f"waits:deadlines:{queue}"


def calls_key(queue: str) -> str:
    return "waits:calls" if queue == QUEUE else f"waits:calls:{queue}"


def late_key(queue: str) -> str:
    return "waits:late_ms" if queue == QUEUE else f"waits:late_ms:{queue}"


#: how many timeouts' lateness is kept
LATE_KEPT = 1000


def drop_waits(connection, queue: str) -> None:
    """Forget what a queue nobody will work any more had pending: its deadlines, its calls,
    its timeouts' lateness (with `jobs.drop_queue`; never the default queue's)."""
    if queue == QUEUE:
        raise ValueError("the default queue is the platform's: it is never dropped")
    connection.delete(deadlines_key(queue), calls_key(queue), late_key(queue))


def _member(match_id: str, turn: int) -> str:
    return f"{match_id}:{turn}"


class Waits:
    r: object
    script: object
    queue: str
    append_entry: object

    def await_answer(self, match_id: str, decision: dict, bot: dict) -> dict:
        """Ask a remote bot: `decision` becomes pending for a polling bot, or a call to make for
        a webhook; the turn's deadline is set. One transaction. The waiting record."""
        sent_at = now_ms()
        deadline_at = sent_at + int(decision["deadline_ms"])
        turn = decision["turn"]
        record = {"turn": turn, "seat": decision["seat"], "bot": bot["id"], "version": bot.get("version"),
                  "kind": bot["kind"], "queue": self.queue, "sent_at": sent_at, "deadline_at": deadline_at,
                  "decision": decision}
        judge_at = deadline_at if bot["kind"] == "polling" else deadline_at + CALL_SLACK_MS
        pipe = self.r.pipeline()
        run_ended(pipe, match_id)  # the run that asks ends cleanly
        pipe.delete(waiting_key(match_id))
        pipe.hset(waiting_key(match_id), "record", json.dumps(record, separators=(",", ":")))
        pipe.zadd(deadlines_key(self.queue), {_member(match_id, turn): judge_at})
        if bot["kind"] == "polling":
            pend(pipe, bot["id"], decision, sent_at, deadline_at)
        else:
            pipe.rpush(calls_key(self.queue), json.dumps({"match": match_id, "turn": turn}))
        pipe.execute()
        return record

    def waiting_on(self, match_id: str) -> dict | None:
        """The match's last remote turn asked (its record, with `called_at` if a call started), or None."""
        raw = self.r.hgetall(waiting_key(match_id))
        if not raw or b"record" not in raw:
            return None
        record = json.loads(raw[b"record"])
        if b"called_at" in raw:
            record["called_at"] = int(raw[b"called_at"])
        return record

    def call_started(self, match_id: str, turn: int, called_at: int) -> bool:
        """A dispatcher starts the webhook call of this turn (read from `waiting_on` just
        before): False if the turn is no longer pending."""
        if self.r.llen(log_key(match_id)) > turn:
            return False
        self.r.hset(waiting_key(match_id), "called_at", called_at)
        return True

    def call_lost(self, match_id: str, turn: int) -> bool:
        """A webhook call started long ago never ended (its dispatcher died): queue it once
        more (True); False if it was lost once already (then it is the bot's timeout)."""
        key = waiting_key(match_id)
        if not self.r.hsetnx(key, "called_again", 1):
            return False
        pipe = self.r.pipeline()
        pipe.hdel(key, "called_at")
        pipe.zadd(deadlines_key(self.queue), {_member(match_id, turn): now_ms() + CALL_SLACK_MS})
        pipe.rpush(calls_key(self.queue), json.dumps({"match": match_id, "turn": turn}))
        pipe.execute()
        return True

    def settle(self, match_id: str, entry: dict, record: dict | None = None, debug: str | None = None) -> bool:
        """Append the entry that ends a remote turn (an answer, a fault, a timeout) and, if it
        landed, keep the answer's `debug` text (core/store/debug.py) and enqueue the match's
        next run; False if the turn was already settled or the match is over (nothing kept,
        nothing enqueued). `record`: the turn's `waiting_on`, if read already."""
        if not self.append_entry(match_id, entry):
            return False
        turn = entry["turn"]
        record = record or self.waiting_on(match_id) or {}
        queue = record.get("queue") or self.queue
        pipe = self.r.pipeline()
        pipe.zrem(deadlines_key(queue), _member(match_id, turn))
        write_debug(pipe, match_id, turn, entry["seat"], debug)
        if record.get("kind") == "polling" and record.get("turn") == turn:
            pipe.hdel(decisions_key(record["bot"]), _member(match_id, turn))
        pipe.execute()
        enqueue_continuation(self.r, match_id, turn + 1, queue)
        return True

    def note_late(self, ms: int) -> None:
        """A timeout was recorded `ms` after its deadline."""
        pipe = self.r.pipeline()
        pipe.lpush(late_key(self.queue), int(ms))
        pipe.ltrim(late_key(self.queue), 0, LATE_KEPT - 1)
        pipe.execute()

    def lateness(self) -> list[int]:
        """How late the last timeouts were recorded (ms past their deadlines), newest first."""
        return [int(v) for v in self.r.lrange(late_key(self.queue), 0, -1)]

    def claim_due(self, now: int | None = None, limit: int = 200) -> list[tuple[str, int]]:
        """The (match, turn) whose deadline has passed, each claimed by this call alone."""
        due = self.script(CLAIM_DUE_LUA)(keys=[deadlines_key(self.queue)],
                                         args=[now_ms() if now is None else now, limit])
        out = []
        for member in due:
            match_id, _, turn = text(member).rpartition(":")
            out.append((match_id, int(turn)))
        return out

    def judge_later(self, match_id: str, turn: int, at: int) -> None:
        """(Re)set when the clock judges this turn (a claim it could not judge yet, a lost one)."""
        self.r.zadd(deadlines_key(self.queue), {_member(match_id, turn): at})

    def has_deadline(self, match_id: str, turn: int) -> bool:
        return self.r.zscore(deadlines_key(self.queue), _member(match_id, turn)) is not None

    def next_deadline(self) -> int | None:
        """When the earliest deadline falls (epoch ms), or None."""
        first = self.r.zrange(deadlines_key(self.queue), 0, 0, withscores=True)
        return int(first[0][1]) if first else None

    def take_call(self, timeout_s: float) -> dict | None:
        """The next webhook call to make, waiting up to `timeout_s`; None if there was none."""
        got = self.r.blpop([calls_key(self.queue)], timeout=timeout_s)
        return None if got is None else json.loads(got[1])

    def push_notice(self, bot_id: str, message: dict, version: int | None = None) -> None:
        """A best-effort message for a webhook bot (`match_over`) as `version` is reached, sent
        by a dispatcher's caller."""
        self.r.rpush(calls_key(self.queue), json.dumps({"notice": True, "bot": bot_id, "version": version,
                                                        "message": message}))

    def forget_wait(self, match_id: str) -> None:
        """The match is over: no turn of it is pending any more (a late answer finds it over)."""
        record = self.waiting_on(match_id)
        if record is None:
            return
        pipe = self.r.pipeline()
        pipe.zrem(deadlines_key(record.get("queue") or self.queue), _member(match_id, record["turn"]))
        if record["kind"] == "polling":
            pipe.hdel(decisions_key(record["bot"]), _member(match_id, record["turn"]))
        pipe.delete(waiting_key(match_id))
        pipe.execute()
