"""Waits: a match between two runs, waiting for a remote bot's answer or its deadline.

Keys:
    match:{id}:waiting      hash: "record" (JSON {"turn", "seat", "bot", "version", "kind", "queue",
                            "sent_at", "deadline_at", "account", "decision"}, epoch ms; `deadline_at`
                            is `sent_at` plus the decision's `deadline_ms`; the decision comes last:
                            `prepare_call` reads the fields before it), "turn" (the record's: no turn
                            is published twice), "called_at" (epoch ms, a webhook call under
                            way), "called_again" (it was lost once);
                            from the first remote decision to the match's end: the match holds
                            its bots' slots while it has it
    waits:deadlines[:Q]     sorted set "{match}:{turn}" by when the dispatcher's clock must
                            judge the turn a timeout (epoch ms; a webhook's is its deadline plus
                            `CALL_SLACK_MS`, its call timing it out first)
    waits:late_ms[:Q]       list of how late each of the last 1,000 timeouts was recorded
                            (ms past its deadline: what bench/remote.py reports)
    waits:calls[:Q]         list of webhook calls to make (JSON {"match", "turn"} or a notice
                            {"notice", "bot", "message"}), taken by the dispatchers' callers
    waits:taken:{caller}[:Q]  list of the calls one dispatcher's callers took and have not sent
                            yet (moved there atomically as taken: `take_call`); a call leaves it
                            as it is sent (`call_started`) or dropped. A dead caller's list is
                            put back on `waits:calls` by another (`recover_callers`)
    waits:fresh:{caller}[:Q]  list of the one call a dispatcher's taker is moving, for a moment:
                            `take_prepared_call`'s BLMOVE puts it there and the script sent
                            with it moves it on to the taken list, in the same round trip. Put
                            back in the queue with the taken list (`recover_callers`)
    waits:callers[:Q]       set of the callers that may hold taken calls
    waits:share:{account}[:Q]  sorted set "{match}:{turn}" of an account's webhook calls in flight,
                            over every dispatcher, by when its lease ends (epoch ms: the call's
                            deadline plus `CALL_SLACK_MS`; a dead dispatcher's calls expire then):
                            at most `CARDARENA_CALLS_PER_ACCOUNT` (`start_call`)
    waits:caller:{caller}[:Q]  a caller's "alive" key (expires `CALLER_TTL_MS` after its last beat)

A webhook bot's clock starts when its call is sent, not when it is published
(docs/api.md §6): `deadline_at` of a webhook record is only the earliest its
turn could time out; `called_at` starts the clock, and the clock's deadline
entry becomes `called_at + deadline_ms + CALL_SLACK_MS`. A call waiting (in
the queue, for its account's share, or taken by a dispatcher that died) is
never a timeout: the clock only checks on it every `UNSENT_CHECK_MS`, and
puts it back in the queue if it is in none of the callers' lists (lost).

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
from collections.abc import Callable
from typing import Literal, NamedTuple

import redis
from redis.commands.core import Script
from redis.exceptions import NoScriptError

from core.store.debug import debug_key, debug_note
from core.store.decisions import decisions_key, pending_value, wake_channel
from core.store.events import match_channel
from core.store.jobs import NEXT_RUN_GRACE_MS, QUEUE, active_key, enqueue_jobs, next_run_key
from core.store.keys import now_ms, text
from core.store.lua import args, source
from core.store.matches import log_key
from core.store.versions import as_version, versions_key

#: a webhook turn's backstop after its deadline: the call itself times out first; the clock
#: judges it only if the dispatcher making the call died
CALL_SLACK_MS = 2000
#: how often the clock looks at a webhook call not sent yet (it is never the bot's timeout)
UNSENT_CHECK_MS = 10_000
#: a dispatcher's caller not heard of for this long is dead: its taken calls go back in the queue
CALLER_TTL_MS = 5000

def waiting_key(match_id: str) -> str:
    return f"match:{match_id}:waiting"


def deadlines_key(queue: str) -> str:
    return "waits:deadlines" if queue == QUEUE else f"waits:deadlines:{queue}"


def calls_key(queue: str) -> str:
    return "waits:calls" if queue == QUEUE else f"waits:calls:{queue}"


def taken_key(queue: str, caller: str) -> str:
    return f"waits:taken:{caller}" if queue == QUEUE else f"waits:taken:{caller}:{queue}"


def fresh_key(queue: str, caller: str) -> str:
    return f"waits:fresh:{caller}" if queue == QUEUE else f"waits:fresh:{caller}:{queue}"


def callers_key(queue: str) -> str:
    return "waits:callers" if queue == QUEUE else f"waits:callers:{queue}"


def caller_key(queue: str, caller: str) -> str:
    return f"waits:caller:{caller}" if queue == QUEUE else f"waits:caller:{caller}:{queue}"


def share_key(queue: str, account: str) -> str:
    return f"waits:share:{account}" if queue == QUEUE else f"waits:share:{account}:{queue}"


def call_item(match_id: str, turn: int) -> str:
    """A turn's webhook call as queued: always these very bytes (the lists are searched for them)."""
    return json.dumps({"match": match_id, "turn": turn})


#: calls looked at by one run of lua/calls_over.lua (Redis runs nothing else meanwhile: a chunk stays short)
CALLS_OVER_CHUNK = 500


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


def waiting_record(raw: dict) -> dict | None:
    """`waiting_on`'s answer from the match's waiting hash as Redis gives it (HGETALL)."""
    if not raw or b"record" not in raw:
        return None
    record = json.loads(raw[b"record"])
    if b"called_at" in raw:
        record["called_at"] = int(raw[b"called_at"])
    return record


def waiting_head(raw: bytes | str | None) -> dict | None:
    """A waiting record's fields but its decision (`turn`, `deadline_at`, …: what a run asks of
    it), from its stored JSON. None for no record."""
    if not raw:
        return None
    record = json.loads(raw)
    record.pop("decision", None)
    return record


def waiting_record_and_body(raw: bytes) -> tuple[dict, bytes | None]:
    """A waiting record from its stored JSON, as a webhook call needs it: its fields, and its
    decision's own JSON text within it — the call's body, sent as stored, never encoded again —
    or None if the record is not laid out as `await_answer` writes it (`"decision"` its last
    field: then the body is encoded). Its decision is read without its view (`call_fields`)."""
    source = raw.decode() if isinstance(raw, bytes) else raw
    at = source.find(_DECISION_FIELD)
    if at > 0 and source.endswith("}"):
        try:
            record = json.loads(source[:at].rstrip(",") + "}")
        except ValueError:
            record = None
        if isinstance(record, dict) and "decision" not in record:
            body = source[at + len(_DECISION_FIELD):-1]
            decision = call_fields(body)
            if decision is None:  # laid out otherwise: read whole
                try:
                    decision, end = _DECODER.raw_decode(source, at + len(_DECISION_FIELD))
                except ValueError:
                    decision, end = None, 0
                decision = decision if end == len(source) - 1 else None
            if decision is not None:
                record["decision"] = decision
                return record, body.encode()
    return json.loads(source), None


def call_fields(decision: str) -> dict | None:
    """A decision's fields from its JSON text (sdk/referee.py `MatchReferee.decision`) but its
    `view`, which only the bot reads: the fields before the view and from `legal_actions` on.
    Most of a decision is its view, and the dispatcher never looks at it. None if the text is
    not laid out that way (the fields before the view plain values, `legal_actions` a field of
    the decision itself: then it is read whole)."""
    view, legal = decision.find(_VIEW_FIELD), decision.rfind(_LEGAL_FIELD)
    if not 0 < view < legal:
        return None
    try:
        fields = json.loads(decision[:view].rstrip(",") + "}")
        actions, end = _DECODER.raw_decode(decision, legal + len(_LEGAL_FIELD))
        # `{` and what follows the legal actions is one object only if they close the decision
        # itself: then `legal_actions` is the decision's own field, not one nested deeper
        rest = json.loads("{" + decision[end + 1:]) if decision[end:end + 1] == "," else None
    except ValueError:
        return None
    if not isinstance(fields, dict) or not isinstance(rest, dict) or {"view", "legal_actions"} & (fields.keys()
                                                                                                 | rest.keys()):
        return None
    return {**fields, "legal_actions": actions, **rest}


_DECISION_FIELD, _VIEW_FIELD, _LEGAL_FIELD = '"decision":', '"view":', '"legal_actions":'
#: a decision as `json.dumps(decision, separators=(",", ":"))` writes it, with no check for cycles
#: (a referee's decision, a tree of plain values, has none): the check is pure cost on every turn
_DECISION_ENCODER = json.JSONEncoder(separators=(",", ":"), check_circular=False)
_DECODER = json.JSONDecoder()


class PreparedCall(NamedTuple):
    """`prepare_call`'s answer: how the call's start went ("sent", "over", or "read": not
    tried), the turn's waiting record (its decision without its view: `call_fields`), the bot as its pinned version is reached, the account
    whose share the call takes, the decision's JSON (or None), and when it was started."""

    started: str
    record: dict
    bot: dict
    account: str
    body: bytes | None
    called_at: int


def _prepared(got: list, now: int) -> PreparedCall | None:
    """`PreparedCall` from the prepare step's `prepared` (None for "gone")."""
    if text(got[0]) == "gone":
        return None
    started, raw, url, owner, latest, old, account = got
    record, body = waiting_record_and_body(raw)
    bot = {"id": record["bot"], "version": json.loads(latest) if latest else 1}
    if url:
        bot["url"] = json.loads(url)
    if owner:
        bot["owner"] = json.loads(owner)
    return PreparedCall(text(started), record, as_version(bot, record.get("version"), old or None), text(account),
                        body, now)


def _member(match_id: str, turn: int) -> str:
    return f"{match_id}:{turn}"


class Waits:
    r: redis.Redis
    script: Callable[[str], Script]
    queue: str
    append_entry: Callable[[str, dict], bool]
    archived_document: Callable[[str], dict]

    def await_answer(self, match_id: str, decision: dict, bot: dict) -> dict | None:
        """Ask a remote bot: `decision` becomes pending for a polling bot, or a call to make for
        a webhook; the turn's deadline is set; the run that asks ended cleanly
        (`end_run_asking`). The waiting record, or None if the turn was published already."""
        return self.end_run_asking(match_id, decision["turn"], (decision, bot))

    def end_run_asking(self, match_id: str, turn: int, ask: tuple[dict, dict] | None,
                       run_ends: bool = True) -> dict | None:
        """Publish `turn`, a remote bot's, in one step (lua/end_run_asking.lua): `ask`'s decision
        (decision, bot) pending for a polling bot or a call to make for a webhook, the turn's
        deadline set, the waiting record written — unless `ask` is None (a run before this one
        published it). A turn is published once, and only on a log of exactly `turn` entries of a
        match not over: whoever publishes it second (a run and the settler of the turn before,
        core/play_on.py) publishes nothing. `run_ends`: a run of the match ends here (its count
        of attempts is 0 again). The decision is encoded once, for the waiting record and the
        pending decision alike. The waiting record written, or None."""
        member = _member(match_id, turn)
        kind, record, record_json, judge_at, item, lists = "", None, "", 0, "", ["", ""]
        if ask is not None:
            decision, bot = ask
            sent_at = now_ms()
            deadline_at = sent_at + int(decision["deadline_ms"])
            kind = bot["kind"]
            head = {"turn": turn, "seat": decision["seat"], "bot": bot["id"], "version": bot.get("version"),
                    "kind": kind, "queue": self.queue, "sent_at": sent_at, "deadline_at": deadline_at,
                    "account": bot.get("owner")}
            encoded = _DECISION_ENCODER.encode(decision)
            # the record as json.dumps({**head, "decision": decision}) writes it, the decision encoded once
            record_json = json.dumps(head, separators=(",", ":"))[:-1] + ',"decision":' + encoded + "}"
            record = {**head, "decision": decision}
            if kind == "polling":
                judge_at, item = deadline_at, pending_value(encoded, sent_at, deadline_at)
                lists = [decisions_key(bot["id"]), wake_channel(bot["id"])]
            else:
                judge_at, item = deadline_at + CALL_SLACK_MS, call_item(match_id, turn)
                lists = [calls_key(self.queue), ""]
        published = self.script(source("end_run_asking"))(
            keys=[waiting_key(match_id), deadlines_key(self.queue), *lists, f"match:{match_id}", log_key(match_id)],
            args=[args(kind=kind, turn=turn, judge_at=judge_at, member=member, run_ends=run_ends), record_json, item])
        return record if int(published) and record is not None else None

    def _call_settings(self, share: int) -> dict:
        """lua/lib/prepare_call.lua's settings of this queue's calls: the account's `share`, and
        where the keys it builds put an account's or a bot's id."""
        return {"share": share, "share_around": share_key(self.queue, "\0").split("\0"),
                "slack": CALL_SLACK_MS, "versions_after": versions_key("").removeprefix("bot:")}

    def waiting_on(self, match_id: str) -> dict | None:
        """The match's last remote turn asked (its record, with `called_at` if a call started), or None."""
        return waiting_record(self.r.hgetall(waiting_key(match_id)))

    def start_call(self, match_id: str, turn: int, called_at: int, deadline_ms: int, caller: str,
                   item: str | bytes, account: str | None = None, share: int = 0) -> str:
        """A dispatcher's caller sends the webhook call of this turn now (`called_at`): "sent" —
        the bot's clock starts, the clock's deadline becomes `called_at + deadline_ms +
        CALL_SLACK_MS`, and the call leaves `caller`'s taken list; "gone" if the turn is no
        longer pending (it leaves the list too); "over" if `account` has `share` calls in
        flight already, over every dispatcher (it stays taken, to be tried again)."""
        lease = called_at + int(deadline_ms) + CALL_SLACK_MS
        got = self.script(source("start_call"))(
            keys=[waiting_key(match_id), log_key(match_id), deadlines_key(self.queue), taken_key(self.queue, caller),
                  share_key(self.queue, account or "-")],
            args=[args(turn=turn, now=called_at, lease=lease, member=_member(match_id, turn), item=text(item),
                       share=share if account else 0)])
        return text(got)

    def prepare_call(self, match_id: str, turn: int, item: str | bytes, caller: str, start: bool = True,
                     share: int = 0, now: int | None = None) -> PreparedCall | None:
        """A taken webhook call: what it needs to be made — the turn's waiting record, its bot as
        the version the match pinned is reached (its URL read now: a changed URL holds at once),
        its account — and, with `start`, its start (`start_call`, at `now`, with the account's
        `share`), in one round trip. None (and the call leaves `caller`'s taken list) if its
        turn is no longer a pending webhook call."""
        now = now_ms() if now is None else now
        got = self.script(source("prepare_call"))(
            keys=[waiting_key(match_id), log_key(match_id), deadlines_key(self.queue), taken_key(self.queue, caller)],
            args=[args(turn=turn, now=now, member=_member(match_id, turn), item=text(item), start=start,
                       **self._call_settings(share))])
        return _prepared(got, now)

    def take_prepared_call(self, timeout_s: float, caller: str, share: int = 0,
                           wait: bool = True) -> tuple[bytes, PreparedCall | Literal[False] | None] | None:
        """`take_call` and, if the call names a turn, its `prepare_call` with its start (with the
        account's `share`) at once, in one round trip: the BLMOVE to `caller`'s fresh list and
        lua/take_call.lua after it are sent together in one pipeline (Redis runs the script right after
        the BLMOVE, even one that blocked). None if no call came within `timeout_s`; else (its queued bytes, its
        `PreparedCall`, or None if its turn is over (it left the taken list), or False if it was
        not prepared: not a turn's call, or its preparation failed — it is taken, nothing else).
        `wait=False` takes only what a failed round trip left in the fresh list, if anything."""
        keys = [fresh_key(self.queue, caller), taken_key(self.queue, caller), deadlines_key(self.queue)]
        named = [args(waiting_around=waiting_key("\0").split("\0"), log_around=log_key("\0").split("\0"),
                      **self._call_settings(share))]
        script = self.script(source("take_call"))
        if wait:
            pipe = self.r.pipeline(transaction=False)
            pipe.execute_command("BLMOVE", calls_key(self.queue), keys[0], "LEFT", "LEFT", timeout_s)  # see take_call
            pipe.evalsha(script.sha, len(keys), *keys, *named)
            moved, got = pipe.execute(raise_on_error=False)
            if isinstance(moved, Exception):
                raise moved
            if isinstance(got, NoScriptError):  # Redis lost it (a restart): loaded, run alone
                got = script(keys, named)
            elif isinstance(got, Exception):
                raise got
        else:
            got = script(keys, named)
        if not got:
            return None
        if len(got) == 1:
            return got[0], False
        item, now, prepared = got
        return item, _prepared(prepared, int(now))


    def call_started(self, match_id: str, turn: int, called_at: int, deadline_ms: int | None = None,
                     caller: str | None = None, item: str | bytes | None = None) -> bool:
        """`start_call` with no account's share kept: True if the call is sent now."""
        if deadline_ms is None:
            record = self.waiting_on(match_id) or {"decision": {"deadline_ms": 0}}
            deadline_ms = int(record["decision"]["deadline_ms"])
        item = call_item(match_id, turn) if item is None else item
        return self.start_call(match_id, turn, called_at, deadline_ms, caller or "-", item) == "sent"

    def call_unstarted(self, match_id: str, turn: int, account: str | None = None) -> bool:
        """A call the platform could not make (no socket, the dispatcher stopping): not the
        bot's — back in the queue, its clock not started, its account's share given back.
        False if the turn is over."""
        return bool(self.script(source("unstart_call"))(
            keys=[waiting_key(match_id), log_key(match_id), deadlines_key(self.queue), calls_key(self.queue),
                  share_key(self.queue, account or "-")],
            args=[args(turn=turn, check_at=now_ms() + UNSENT_CHECK_MS, member=_member(match_id, turn),
                       item=call_item(match_id, turn))]))

    def call_lost(self, match_id: str, turn: int) -> bool:
        """A webhook call started long ago never ended (its dispatcher died): queue it once
        more (True); False if it was lost once already (then it is the bot's timeout)."""
        key = waiting_key(match_id)
        if not self.r.hsetnx(key, "called_again", 1):
            return False
        record = self.waiting_on(match_id) or {}
        pipe = self.r.pipeline()
        pipe.hdel(key, "called_at")
        if record.get("account"):
            pipe.zrem(share_key(self.queue, record["account"]), _member(match_id, turn))
        pipe.zadd(deadlines_key(self.queue), {_member(match_id, turn): now_ms() + UNSENT_CHECK_MS})
        pipe.rpush(calls_key(self.queue), call_item(match_id, turn))
        pipe.execute()
        return True

    def requeue_if_lost(self, match_id: str, turn: int) -> bool:
        """A webhook call not sent yet that is in no list (neither queued nor taken by any
        caller) was lost: queue it again (True). Never the bot's timeout."""
        callers = [c.decode() if isinstance(c, bytes) else c for c in self.r.smembers(callers_key(self.queue))]
        return bool(self.script(source("find_call"))(
            keys=[waiting_key(match_id), log_key(match_id), calls_key(self.queue),
                  *[key(self.queue, c) for c in callers for key in (taken_key, fresh_key)]],
            args=[args(turn=turn, item=call_item(match_id, turn))]))

    def calls_over(self, calls: list[tuple[str, int]]) -> set[tuple[str, int]]:
        """Of these (match, turn), the ones no longer pending (settled, or the match over): one
        script a `CALLS_OVER_CHUNK` of them, not commands per call: a dispatcher may hold
        thousands of calls."""
        over: set[tuple[str, int]] = set()
        for start in range(0, len(calls), CALLS_OVER_CHUNK):
            chunk = calls[start:start + CALLS_OVER_CHUNK]
            keys = [key for match_id, _ in chunk for key in (log_key(match_id), waiting_key(match_id))]
            for index in self.script(source("calls_over"))(keys=keys, args=[args(turns=[turn for _, turn in chunk])]):
                over.add(chunk[int(index) - 1])
        return over

    # -- the dispatchers' callers: who holds which taken call ---------------------------------
    def take_call(self, timeout_s: float, caller: str | None = None) -> bytes | None:
        """The next webhook call to make (its queued bytes: JSON), waiting up to `timeout_s`;
        None if there was none. Moved atomically to `caller`'s taken list until it is sent
        (`call_started`) or dropped (`call_dropped`)."""
        # BLMOVE as a command: it waits fractions of a second, which redis-py's `blmove` (typed
        # for whole seconds) does not declare
        return self.r.execute_command("BLMOVE", calls_key(self.queue), taken_key(self.queue, caller or "-"), "LEFT",
                                      "LEFT", timeout_s)

    def call_dropped(self, caller: str, item: bytes) -> None:
        """A taken call that is not to be made (its turn is over), or a notice sent."""
        self.r.lrem(taken_key(self.queue, caller), 1, text(item))  # JSON: ASCII, the same bytes

    def caller_beat(self, caller: str) -> None:
        """`caller` is alive (and may hold taken calls) for `CALLER_TTL_MS` more."""
        pipe = self.r.pipeline()
        pipe.sadd(callers_key(self.queue), caller)
        pipe.set(caller_key(self.queue, caller), 1, px=CALLER_TTL_MS)
        pipe.execute()

    def recover_callers(self, alive: str | None = None) -> int:
        """Put the calls taken by dead callers (and by `caller_gone` ones) back in the queue;
        how many."""
        moved = 0
        for raw in self.r.smembers(callers_key(self.queue)):
            caller = raw.decode() if isinstance(raw, bytes) else raw
            if caller == alive or self.r.exists(caller_key(self.queue, caller)):
                continue
            moved += self._recover(caller)
        return moved

    def caller_gone(self, caller: str) -> int:
        """A caller stops: the calls it took and did not send go back in the queue; how many."""
        self.r.delete(caller_key(self.queue, caller))
        return self._recover(caller)

    def _recover(self, caller: str) -> int:
        """lua/recover_callers.lua for `caller`: its calls back in the queue; how many."""
        return int(self.script(source("recover_callers"))(
            keys=[taken_key(self.queue, caller), calls_key(self.queue), callers_key(self.queue),
                  fresh_key(self.queue, caller)], args=[args(caller=caller)]))

    def settle(self, match_id: str, entry: dict, record: dict | None = None, debug: str | None = None) -> bool:
        """Append the entry that ends a remote turn (an answer, a fault, a timeout) and, if it
        landed, keep the answer's `debug` text (core/store/debug.py) and enqueue the match's
        next run (an RQ job, "match-{id}-{turn+1}": core/store/jobs.py); False if the turn was
        already settled or the match is over (nothing kept, nothing enqueued): exactly one
        continuation per turn. `record`: the turn's `waiting_on`, if read already. Should the
        caller die between the append and the enqueue, the recovery sweep finds the match
        settled, idle and not queued, and enqueues that run (worker/recovery.py). The API and
        the dispatchers settle through core/play_on.py, which publishes the next turn itself
        when it is another remote bot's."""
        return self.settle_all([(match_id, entry, record or self.waiting_on(match_id) or {}, debug)])[0]

    def settle_all(self, turns: list[tuple[str, dict, dict, str | None]], enqueue: bool = True) -> list[bool]:
        """`settle` of each (match, entry, record, debug): the appends in one round trip, then the
        continuations of those that landed enqueued together (unless not `enqueue`: the caller
        goes on, core/play_on.py). What landed."""
        if not turns:
            return []
        calls = [self._settling(match_id, entry, record, debug) for match_id, entry, record, debug in turns]
        landed = [bool(int(got)) for got in self._scripts_at_once(source("settle"), calls)]
        if enqueue:
            self.enqueue_runs([(match_id, int(entry["turn"]) + 1, record.get("queue") or self.queue)
                               for (match_id, entry, record, _), done in zip(turns, landed, strict=True) if done])
        return landed

    def enqueue_runs(self, runs: list[tuple[str, int, str]]) -> None:
        """Enqueue the runs continuing these (match, log length, queue), each queue's together."""
        by_queue: dict[str, list[tuple[str, int]]] = {}
        for match_id, length, queue in runs:
            by_queue.setdefault(queue, []).append((match_id, length))
        for queue, on_it in by_queue.items():
            enqueue_jobs(self.r, "match", [m for m, _ in on_it], queue, [k for _, k in on_it])

    def _scripts_at_once(self, script_source: str, calls: list[tuple[list, list]]) -> list:
        """The script run with each (keys, args) in one round trip, by its SHA (a pipeline of
        redis-py's Script objects asks Redis whether it knows them first: one more round trip),
        loaded and run again if Redis lost it (a restart)."""
        if len(calls) == 1:
            return [self.script(script_source)(*calls[0])]
        sha = self.script(script_source).sha
        for attempt in (1, 2):
            pipe = self.r.pipeline(transaction=False)
            for keys, arguments in calls:
                pipe.evalsha(sha, len(keys), *keys, *arguments)
            try:
                return pipe.execute()
            except NoScriptError:
                if attempt == 2:
                    raise
                self.r.script_load(script_source)
        return []

    def _settling(self, match_id: str, entry: dict, record: dict, debug: str | None) -> tuple[list, list]:
        """lua/settle.lua's keys and arguments."""
        turn = int(entry["turn"])
        queue = record.get("queue") or self.queue
        member = _member(match_id, turn)
        account = record.get("account") if record.get("kind") == "webhook" else None
        polling = record.get("kind") == "polling" and record.get("turn") == turn
        field, note = debug_note(turn, entry["seat"], debug) if debug else ("", "")
        keys = [log_key(match_id), f"match:{match_id}", match_channel(match_id), deadlines_key(queue),
                share_key(queue, account or "-"), debug_key(match_id), decisions_key(record.get("bot") or "-"),
                active_key(queue), next_run_key(match_id)]
        return keys, [args(turn=turn, entry=json.dumps(entry, separators=(",", ":")), member=member,
                           shared=bool(account), debug_field=field, debug_note=note, polling=polling,
                           active_member=f"match:{match_id}", next_run_ms=NEXT_RUN_GRACE_MS)]

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
        return self.claim_due_and_next(now, limit)[0]

    def claim_due_and_next(self, now: int | None = None,
                           limit: int = 200) -> tuple[list[tuple[str, int]], int | None]:
        """`claim_due`, and when the earliest deadline left falls (`next_deadline`), in one
        round trip: what a clock's tick needs."""
        due, first = self.script(source("claim_due"))(keys=[deadlines_key(self.queue)],
                                                      args=[args(now=now_ms() if now is None else now, limit=limit)])
        out = []
        for member in due:
            match_id, _, turn = text(member).rpartition(":")
            out.append((match_id, int(turn)))
        return out, None if first is None else int(float(first))

    def judge_later(self, match_id: str, turn: int, at: int) -> None:
        """(Re)set when the clock judges this turn (a claim it could not judge yet, a lost one)."""
        self.r.zadd(deadlines_key(self.queue), {_member(match_id, turn): at})

    def has_deadline(self, match_id: str, turn: int) -> bool:
        return self.r.zscore(deadlines_key(self.queue), _member(match_id, turn)) is not None

    def run_states(self, match_ids: list[str]) -> dict[str, tuple[int, dict | None, bool]]:
        """For each match in play (none archived): its log's length, its waiting record
        (`waiting_on`) and whether that record's turn has its deadline (`has_deadline`) — the
        recovery sweep's view of every match it may queue again, in two round trips however many.

        A deadline found missing is a clock's claim the sweep puts back (`judge_later`), so a third
        round trip, for those alone, checks that nothing moved since the first: a match ended or
        a turn settled meanwhile took its deadline away with its waiting record or its log's
        length, and counts as still having it (nothing to put back)."""
        if not match_ids:
            return {}
        pipe = self.r.pipeline(transaction=False)
        for match_id in match_ids:
            pipe.llen(log_key(match_id))
            pipe.hgetall(waiting_key(match_id))
        replies = pipe.execute()
        waiting = {m: (length, waiting_record(raw), raw.get(b"record") if raw else None)
                   for m, length, raw in zip(match_ids, replies[::2], replies[1::2], strict=True)}
        asked = [(m, record["turn"]) for m, (_, record, _) in waiting.items() if record is not None]
        pipe = self.r.pipeline(transaction=False)
        for match_id, turn in asked:
            pipe.zscore(deadlines_key(self.queue), _member(match_id, turn))
        deadlines = {m: score is not None for (m, _), score in zip(asked, pipe.execute() if asked else [], strict=True)}
        missing = [m for m, present in deadlines.items() if not present]
        if missing:
            pipe = self.r.pipeline(transaction=False)
            for match_id in missing:
                pipe.llen(log_key(match_id))
                pipe.hget(waiting_key(match_id), "record")
            replies = pipe.execute()
            for match_id, length, raw in zip(missing, replies[::2], replies[1::2], strict=True):
                if (length, raw) != (waiting[match_id][0], waiting[match_id][2]):
                    deadlines[match_id] = True  # moved on since: not a claim to put back
        return {m: (length, record, deadlines.get(m, False)) for m, (length, record, _) in waiting.items()}

    def next_deadline(self) -> int | None:
        """When the earliest deadline falls (epoch ms), or None."""
        first = self.r.zrange(deadlines_key(self.queue), 0, 0, withscores=True)
        return int(first[0][1]) if first else None

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
        elif record.get("account"):  # its call's share of its account, at once
            pipe.zrem(share_key(record.get("queue") or self.queue, record["account"]), _member(match_id, record["turn"]))
        pipe.delete(waiting_key(match_id))
        pipe.execute()
