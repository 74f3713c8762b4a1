"""A remote turn settled, and what comes next: another remote bot's turn published by the settler
itself, anything else left to the match's next run.

    landed = settle_all(store, [(match_id, entry, waiting_record, debug), ...])

A remote bot's answer is settled where it lands: the API for a polling bot's (server/api/turns.py),
a dispatcher for a webhook's or a deadline (worker/dispatch.py). What follows is either another
remote bot's turn, whose decision is the state's view and listed actions — rebuilt from the log,
the engines being deterministic, in well under a millisecond — or work for a worker: an
in-process or hosted bot's turn, a forfeited seat's moves, the match's end. The settler publishes
the first itself (`play_on`) and enqueues the match's next run (an RQ job, core/store/jobs.py)
for the second, so a match between remote bots costs a worker no job per decision, only its
first run and its end.

A settling process keeps the referee of each match it published a turn of (`MATCHES_KEPT`, the least
recently used dropped): the log only grows, so the next turn it settles records only the entries
past it — after checking that the log's entry before them is the one it recorded last (else it
replays the log).

Nothing is lost if the settler dies between settling and publishing: the match is active, settled
and not waiting, so the recovery sweep enqueues its next run (worker/recovery.py). Nothing is
published twice: a turn is published only on a log of exactly that many entries whose waiting
record is for an earlier turn (core/store/lua/end_run_asking.lua), whoever publishes it — a
settler or a run. Anything unusual (the log moved on, the match over or unknown, another queue's
match, an error) is left to the next run, which handles every case.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass

from core.store.runs import read_run
from sdk.referee import MatchReferee

log = logging.getLogger("cardarena.play_on")

#: the kinds of bot whose turn is published rather than asked in a worker
REMOTE_KINDS = ("webhook", "polling")
#: matches whose referee a settling process keeps between their turns (the state after the log's
#: entries so far: the log only grows, so the next turn records only the entries past it)
MATCHES_KEPT = 1024


def settle_all(store, turns: list[tuple[str, dict, dict, str | None]]) -> list[bool]:
    """Settle each remote turn (match, entry, its waiting record, debug) once (`Store.settle_all`)
    and, for those that landed, publish the next turn if it is a remote bot's, else enqueue the
    match's next run. What landed."""
    landed = store.settle_all(turns, enqueue=False)
    runs = [(match_id, int(entry["turn"]) + 1, record.get("queue") or store.queue)
            for (match_id, entry, record, _), done in zip(turns, landed, strict=True) if done]
    store.enqueue_runs([run for run in runs if not play_on(store, run[0], run[1], run[2])])
    return landed


def settle(store, match_id: str, entry: dict, record: dict | None = None, debug: str | None = None) -> bool:
    """`settle_all` of one turn; `record`: its waiting record, if read already."""
    return settle_all(store, [(match_id, entry, record or store.waiting_on(match_id) or {}, debug)])[0]


def play_on(store, match_id: str, length: int, queue: str) -> bool:
    """Publish the match's turn `length` if it is a remote bot's: True if it needs no run now
    (published, here or by whoever got there first), False to leave it to the match's next run."""
    if queue != store.queue:  # another queue's match: its own workers' store publishes it
        return False
    try:
        return _publish_next(store, match_id, length)
    except Exception:  # the run does whatever this could not (Redis away: so will its job)
        log.exception("match %s: publishing turn %d failed; left to its next run", match_id, length)
        return False


def _publish_next(store, match_id: str, length: int) -> bool:
    kept = _take_kept(match_id)
    match = kept.match if kept is not None else store.get_match(match_id)
    if match is None or match.get("status") in ("finished", "aborted"):
        return False
    since = kept.ref.turn - 1 if kept is not None and 0 < kept.ref.turn <= length else 0
    start = read_run(store, match_id, match["seats"], since, match)
    if start is None or start.match["status"] != "running" or since + len(start.log) != length:
        return False
    if kept is not None and since and start.log[0] == kept.last:  # the referee this process kept: only the entries past it
        ref, entries = kept.ref, start.log[1:]
    else:
        if since:  # not the log it recorded: from the start
            start = read_run(store, match_id, match["seats"], 0, match)
            if start is None or len(start.log) != length:
                return False
        ref, entries = new_referee(start.match), start.log
    for entry in entries:
        ref.record(entry)
    if ref.is_over or ref.forfeited():
        return False
    if start.waiting is not None and start.waiting["turn"] >= ref.turn:
        return True  # published already
    bot = store.pinned_bots(start.match, start.bots)[ref.to_act]
    if bot is None or bot.get("kind") not in REMOTE_KINDS:
        return False
    store.end_run_asking(match_id, ref.turn, (decision_for(ref, start.match, match_id), bot), run_ends=False)
    _keep(match_id, _Kept(match, ref, start.log[-1]))
    return True  # published, or by another first: either way not this one's to run


def new_referee(match: dict) -> MatchReferee:
    """The referee of a match's rules, at its first turn."""
    return MatchReferee(match["game"], len(match["seats"]), match["seed"], match["options"],
                        match["max_faults"], match["move_timeout_ms"], match.get("time_bank_ms") or 0,
                        match.get("seat_clocks"))


def decision_for(ref: MatchReferee, match: dict, match_id: str) -> dict:
    """The decision the seat to act is sent (docs/api.md §3), as the match's rules have it: a
    match from before time banks is sent none of the bank's fields."""
    decision = ref.decision(match_id)
    if match.get("time_bank_ms") is None:
        decision.pop("clock")
        decision.pop("last_latency_ms")
    return decision


@dataclass
class _Kept:
    """A referee a settling process keeps between the turns of a match it publishes."""

    match: dict  # its record: nothing in it but the status changes while it plays (read again)
    ref: MatchReferee
    last: dict  # the last entry it recorded, the log's entry `ref.turn - 1`, or it is not used


#: match id -> the referee kept, least recently used first
_kept: OrderedDict[str, _Kept] = OrderedDict()
_kept_lock = threading.Lock()  # a dispatcher settles on two threads (its callers', its clock's)


def _take_kept(match_id: str) -> _Kept | None:
    """The match's kept referee, taken: no other thread of this process uses it meanwhile."""
    with _kept_lock:
        return _kept.pop(match_id, None)


def _keep(match_id: str, kept: _Kept) -> None:
    with _kept_lock:
        _kept[match_id] = kept
        while len(_kept) > MATCHES_KEPT:
            _kept.popitem(last=False)
