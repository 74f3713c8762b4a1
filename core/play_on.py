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

from core.store.runs import read_run
from sdk.referee import MatchReferee

log = logging.getLogger("cardarena.play_on")

#: the kinds of bot whose turn is published rather than asked in a worker
REMOTE_KINDS = ("webhook", "polling")
#: match records a settling process keeps (nothing in them but the status changes while the
#: match is on, and the status is read again each time)
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
    match = _kept_match(store, match_id)
    if match is None:
        return False
    start = read_run(store, match_id, match["seats"], 0, match)
    if start is None or start.match["status"] != "running" or len(start.log) != length:
        return False
    ref = new_referee(start.match)
    for entry in start.log:
        ref.record(entry)
    if ref.is_over or ref.forfeited():
        return False
    if start.waiting is not None and start.waiting["turn"] >= ref.turn:
        return True  # published already
    bot = store.pinned_bots(start.match, start.bots)[ref.to_act]
    if bot is None or bot.get("kind") not in REMOTE_KINDS:
        return False
    store.end_run_asking(match_id, ref.turn, (decision_for(ref, start.match, match_id), bot), run_ends=False)
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


_matches: OrderedDict[str, dict] = OrderedDict()
_matches_lock = threading.Lock()  # a dispatcher settles on two threads (its callers', its clock's)


def _kept_match(store, match_id: str) -> dict | None:
    """The match's record, as this process read it last (a read the first time)."""
    with _matches_lock:
        match = _matches.get(match_id)
    if match is None:
        match = store.get_match(match_id)
        if match is None or match.get("status") != "running":
            return match
    with _matches_lock:
        _matches[match_id] = match
        _matches.move_to_end(match_id)
        while len(_matches) > MATCHES_KEPT:
            _matches.popitem(last=False)
    return match
