"""A match's run as it starts: what it reads, in one round trip.

    read_run(store, match_id, seats, since[, match])

No keys of its own: it reads, on one pipeline, what core/store/matches.py
(the match's status or record, its log), core/store/bots.py (each seat's bot,
`RUNNER_FIELDS`) and core/store/waits.py (the match's waiting record) keep,
decoded by their functions. A run used to read them in four round trips of
its own; a continuation (worker/match_runner.py, its referee kept) reads
only the match's status, as nothing else of a match changes while it runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from core.store.bots import read_runner_record, runner_record
from core.store.keys import load_fields
from core.store.matches import ARCHIVED, log_key
from core.store.waits import waiting_key, waiting_record


@dataclass
class RunStart:
    """What a run of a match read as it started (`read_run`)."""

    match: dict
    #: its seats' bots' latest records (their `RUNNER_FIELDS`), by id; a deleted bot is absent
    bots: dict[str, dict]
    #: the log's entries from entry `since` on
    since: int
    log: list[dict]
    #: core/store/waits.py `waiting_on`
    waiting: dict | None


def read_run(store, match_id: str, seats: list[str], since: int, match: dict | None = None) -> RunStart | None:
    """The match's record (`get_match`), its seats' bots (`seats`, known already), its log from
    entry `since` (`log_since`) and its waiting record (`waiting_on`), in one round trip; None
    if there is no such match. With `match`, its record read before, only its status is read
    again: nothing else of a match changes before it ends (its start, attempts and end are no
    runner's concern). No transaction: each read is one a run made in a round trip of its own
    before, the match's lease held."""
    bot_ids = list(dict.fromkeys(seats))
    pipe = store.r.pipeline(transaction=False)
    if match is None:
        pipe.hgetall(f"match:{match_id}")
    else:
        pipe.hmget(f"match:{match_id}", "status", ARCHIVED)
    for bot_id in bot_ids:
        read_runner_record(pipe, bot_id)
    pipe.lrange(log_key(match_id), since, -1)
    pipe.hgetall(waiting_key(match_id))
    raw, *bots, entries, waiting = pipe.execute()
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
    return RunStart(found, {b: r for b, r in records.items() if r is not None},
                    since, [json.loads(e) for e in entries], waiting_record(waiting))
