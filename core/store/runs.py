"""A match's run as it starts, and its follow-ups as it ends: what they read, in one round trip.

    read_run(store, match_id, seats, since[, match])
    start_run(store, match_id, match, since, seat_bots)
    read_end(store, match)

No keys of its own: it reads, on one pipeline, what core/store/matches.py
(the match's status or record, its log), core/store/bots.py (each seat's bot,
`RUNNER_FIELDS`) and core/store/waits.py (the match's waiting record) keep,
decoded by their functions, in one round trip rather than one per store; a continuation (worker/match_runner.py, its referee kept) reads
only the match's status, as nothing else of a match changes while it runs,
and takes its slots and starts (core/store/slots.py's and matches.py's steps)
in the same step (`start_run`): one round trip, not three. As a match ends, what
its follow-ups read — its waiting record, its deal's statuses and whether its
tournament (core/store/tournaments.py) is to finish — is one round trip too
(`read_end`), not three, and giving its slots back is part of it.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass

from core.store.bots import RUNNER_FIELDS, read_runner_record, runner_record
from core.store.keys import load_fields, now_iso, text
from core.store.lua import args, source
from core.store.matches import ARCHIVED, log_key, start_announcement
from core.store.slots import SLOTTED, release_step, slots_step, woken_from
from core.store.tournaments import RUN_FIELDS, due_from, due_keys, run_fields, tournament_key
from core.store.waits import waiting_head, waiting_key, waiting_record


@dataclass
class RunStart:
    """What a run of a match read as it started (`read_run`)."""

    match: dict
    #: its seats' bots' latest records (their `RUNNER_FIELDS`), by id; a deleted bot is absent
    bots: dict[str, dict]
    #: the log's entries from entry `since` on
    since: int
    log: list[dict]
    #: the match's waiting record without its decision (core/store/waits.py `waiting_head`): a run
    #: asks only which turn it is for and its deadline
    waiting: dict | None
    #: `start_run`'s slots and start: (the first full bot or None, the runs started, this one
    #: included: `take_slots_and_start`'s answer) and whether the start marked the match running;
    #: None if they were not made (the match is over, or its tournament stopping)
    started: tuple[tuple[dict | None, int], bool] | None = None
    #: its tournament's `RUN_FIELDS` (core/store/tournaments.py): read when the match's record was
    #: known to name one, else None
    tournament: dict | None = None


def read_run(store, match_id: str, seats: list[str], since: int, match: dict | None = None) -> RunStart | None:
    """The match's record (`get_match`), its seats' bots (`seats`, known already), its log from
    entry `since` (`log_since`) and its waiting record without its decision (`waiting_head`), in one round trip; None
    if there is no such match. With `match`, its record read before, only its status is read
    again: nothing else of a match changes before it ends (its start, attempts and end are no
    runner's concern); and its tournament's `RUN_FIELDS`, if it has one. No transaction: each
    read is one a run made in a round trip of its own before, the match's lease held."""
    bot_ids = list(dict.fromkeys(seats))
    pipe = store.r.pipeline(transaction=False)
    if match is None:
        pipe.hgetall(f"match:{match_id}")
    else:
        pipe.hmget(f"match:{match_id}", "status", ARCHIVED)
    for bot_id in bot_ids:
        read_runner_record(pipe, bot_id)
    pipe.lrange(log_key(match_id), since, -1)
    pipe.hget(waiting_key(match_id), "record")
    tid = match.get("tournament") if match is not None else None
    if tid:
        pipe.hmget(tournament_key(tid), *RUN_FIELDS)
    replies = pipe.execute()
    tournament = run_fields(replies.pop()) if tid else None
    raw, *bots, entries, waiting = replies
    if match is None:
        found, archived = (load_fields(raw), ARCHIVED.encode() in raw) if raw else (None, False)
    else:
        status, archived = raw
        found = {**match, "status": json.loads(status)} if status is not None else None
    if found is None:
        return None
    if archived:  # over: only its record is read (from the archive)
        return RunStart(store.archived_document(match_id)["match"], {}, since, [], None)
    records = {b: runner_record(values) for b, values in zip(bot_ids, bots, strict=True)}
    remember_kinds(records)
    return RunStart(found, {b: r for b, r in records.items() if r is not None},
                    since, [json.loads(e) for e in entries], waiting_head(waiting), tournament=tournament)


def start_run(store, match_id: str, match: dict, since: int, seat_bots: list[dict | None]) -> RunStart | None:
    """`read_run` of a match whose record was read before (`match`: only its status is read again)
    and `take_slots_and_start` (core/store/matches.py), in one step: the slots of the remote bots
    among `seat_bots` (the records the match's last run used: a bot's kind never changes, and its
    `max_concurrent` only counts for a match not holding its slot yet, from its next match) and
    the start with what follows it (`match_started`), made only if the match is neither over nor
    archived nor its tournament stopping (`RunStart.started`); and its tournament's `RUN_FIELDS`.
    A first run passes no `seat_bots` (`since` 0) when none of them takes a slot. None if
    there is no such match. The match's lock is held: nothing else moves it meanwhile."""
    bot_ids = list(dict.fromkeys(match["seats"]))
    slotted, slot_keys, slots = slots_step(match_id, [b for b in seat_bots if b is not None])
    held = [_read_bots.get(b) for b in bot_ids]  # (stamp, record) as this process last read each
    tid = match.get("tournament")
    raw = store.script(source("start_run"))(
        keys=[f"match:{match_id}", log_key(match_id), waiting_key(match_id),
              tournament_key(tid) if tid else f"match:{match_id}", *(f"bot:{b}" for b in bot_ids), *slot_keys],
        args=[args(bots=len(bot_ids), fields=RUNNER_FIELDS, stamps=[text(h[0]) if h else "" for h in held],
                   since=since, tournament=bool(tid), slots=slots, started_at=f'"{now_iso()}"',
                   started=start_announcement(match_id, match.get("owner"), tid))])
    status, archived, bots, entries, waiting, full, attempts, changed, tournament = raw
    if status is None:
        return None
    if archived:  # over: only its record is read (from the archive)
        return RunStart(store.archived_document(match_id)["match"], {}, since, [], None)
    records = {b: _bot_read(b, values, h) for b, values, h in zip(bot_ids, bots, held, strict=True)}
    remember_kinds(records)
    started, status = None, json.loads(status)
    if int(full) >= 0:
        started = ((slotted[int(full) - 1] if int(full) else None, int(attempts)), bool(int(changed)))
        status = "running" if int(changed) else status  # as the start step left it
    return RunStart({**match, "status": status}, {b: r for b, r in records.items() if r is not None},
                    since, [json.loads(e) for e in entries],
                    waiting_head(waiting), started, run_fields(tournament) if tid else None)


#: bot id -> (its `RUNNER_FIELDS`' stamp, its record) as this process's last `start_run` read it,
#: least recently read first: lua/start_run.lua sends a bot's fields only when their stamp changed
_read_bots: OrderedDict[str, tuple[bytes, dict | None]] = OrderedDict()
#: bots whose record a process keeps so (a few hundred bytes each)
BOTS_KEPT = 1024


#: bot id -> its kind, as this process last read it (a bot's kind never changes), most recent last
_kinds: OrderedDict[str, str] = OrderedDict()


def remember_kinds(records: dict[str, dict | None]) -> None:
    """Keep the kinds of these bots' records (`takes_no_slot`)."""
    for bot_id, record in records.items():
        if record is not None and record.get("kind"):
            _kinds.pop(bot_id, None)
            _kinds[bot_id] = record["kind"]
    while len(_kinds) > BOTS_KEPT:
        _kinds.popitem(last=False)


def takes_no_slot(bot_ids: list[str]) -> bool:
    """Whether this process has read each of these bots and none takes a slot (an in-process
    bot's): a first run of theirs may start with its reads in one step (`start_run`, no slots)."""
    return all(b in _kinds and _kinds[b] not in SLOTTED for b in bot_ids)


def _bot_read(bot_id: str, values: list, held: tuple[bytes, dict | None] | None) -> dict | None:
    """A bot's record from lua/start_run.lua's reply: [stamp, *fields] as read, or [] if its stamp
    was `held`'s (the record kept then, a copy: the caller may change it); None if no such bot."""
    if values:
        held = (values[0], runner_record(values[1:]))
    assert held is not None, "start_run.lua sends [] only for a stamp this process held"
    _read_bots.pop(bot_id, None)
    _read_bots[bot_id] = held  # the most recently read last
    while len(_read_bots) > BOTS_KEPT:
        _read_bots.popitem(last=False)
    return None if held[1] is None else dict(held[1])


@dataclass
class EndRead:
    """What the follow-ups of a match's end read (core/conclusion.py `match_concluded`)."""

    #: the match's waiting record (core/store/waits.py `waiting_on`): a remote turn still pending
    waiting: dict | None
    #: the status of each rotation of its deal (itself alone without twins), in playing order
    twins: dict[str, str | None]
    #: its tournament is to finish now (core/store/tournaments.py `tournament_due_to_finish`)
    tournament_due: bool
    #: with `release`: the matches woken as its slots were given back, to enqueue
    woken: list[str]


def read_end(store, match: dict, release: bool = False) -> EndRead:
    """The match's waiting record, its deal's statuses and whether its tournament is to finish,
    in one step (lua/read_end.lua); with `release`, in the same step its slots are given back
    (core/store/slots.py `release_slots`: each seat's bot's oldest waiting match woken)."""
    group = list(match.get("twins") or [match["id"]])
    tid = match.get("tournament")
    bots = list(dict.fromkeys(match["seats"])) if release else []
    release_keys, release_args = release_step(match["id"], bots, each=1)
    named: dict = {"twins": len(group), "tournament": bool(tid)}
    if bots:
        named["release"] = release_args
    woken, waiting, statuses, tournament = store.script(source("read_end"))(
        keys=[waiting_key(match["id"]), *(f"match:{mid}" for mid in group), *(due_keys(tid) if tid else []),
              *(release_keys if bots else [])],
        args=[args(**named)])
    fields = dict(zip(waiting[::2], waiting[1::2], strict=True))
    return EndRead(waiting_record(fields),
                   {mid: json.loads(raw) if raw else None for mid, raw in zip(group, statuses, strict=True)},
                   due_from(tournament[:2], tournament[2]) if tid else False, woken_from(woken))
