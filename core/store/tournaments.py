"""Tournaments: the request, its matches, progress and standings.

Keys:
    tournament:{id}           hash (JSON values): id, game, owner, bots, format, seats,
                              deals, duplicate, seed, options, move_timeout_ms, time_bank_ms,
                              max_faults, status (queued, running, finished, aborting,
                              aborted), reason? (why it is aborting/aborted), created, started,
                              finished, versions ({bot: version} pinned at creation), total?,
                              schedule?, standings? (saved as it ends; until then
                              `standings` computes them from the tallies when read)
    tournament:{id}:matches   list of match ids in schedule order
    tournament:{id}:done      set of the match ids that are over
    tournament:{id}:tally     hash "{bot}|{stat}" -> number: each entrant's points, matches,
                              wins, draws, faults, forfeits, score sum and sum of squares, and
                              its memory differences' count, sum and sum of squares
    tournament:{id}:summary   hash name -> JSON: what a tournament over shows, computed once
                              (the crosstable), since its matches no longer change
    tournaments               sorted set of every tournament id by creation order
    tournaments:game:{game}   the same for one game's tournaments, and
    tournaments:bot:{id}      for those a bot entered (core/store/lists.py reads them)
    (changes of status, standings and its matches' status are announced on the
    tournament's events channel: core/store/events.py)

The worker sets `total` before it adds any match, and a match is counted
done (and into the tallies) in the same transaction that concludes it, so
progress and standings never count a match twice or lose one. The
standings of a tournament in play are computed from its tallies when read
(a few dozen fields), not written at every match's end.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import redis
from redis.commands.core import Script

from core.store import events
from core.store.accounts import open_tournaments_key
from core.store.counts import Counts
from core.store.jobs import enqueue_on
from core.store.keys import dump_fields, load_fields, new_id, now_iso, text
from sdk.clock import DEFAULT_TIME
from sdk.standings import TALLY_FIELDS, memory_differences, standings_from_tallies, tally_increments


def game_tournaments_key(game: str) -> str:
    return f"tournaments:game:{game}"


def bot_tournaments_key(bot_id: str) -> str:
    return f"tournaments:bot:{bot_id}"


#: what a run of one of its matches reads of a tournament (core/store/runs.py): whether it may go
#: on (its status, and the reason it stops), and on whose say its matches are played (its owner)
RUN_FIELDS = ("status", "reason", "owner")


def tournament_key(tid: str) -> str:
    return f"tournament:{tid}"


def run_fields(values: list) -> dict:
    """`RUN_FIELDS` as read (HMGET's reply), decoded: a missing one is None."""
    return {field: json.loads(v) if v else None for field, v in zip(RUN_FIELDS, values, strict=True)}


def due_keys(tid: str) -> list[str]:
    """The keys `due_from` decides from: the tournament's hash (its status and total) and its
    done set (its size)."""
    return [tournament_key(tid), f"tournament:{tid}:done"]


def read_due(pipe, tid: str) -> None:
    """Queue on `pipe` the reads `due_from` decides from (two replies)."""
    record, done = due_keys(tid)
    pipe.hmget(record, "status", "total")
    pipe.scard(done)


def due_from(status_total, done) -> bool:
    """From `read_due`'s replies: the tournament is "queued" or "running" and all its scheduled
    matches are over."""
    status, total = status_total
    if status is None or json.loads(status) not in ("queued", "running"):
        return False
    total = json.loads(total) if total else 0
    return bool(total) and int(done) >= int(total)


class Tournaments:
    r: redis.Redis
    script: Callable[[str], Script]
    current_versions: Callable[[list[str]], list[int]]
    queue: str

    def create_tournament(self, game: str, bots: list[str], seats: int, deals: int,
                          duplicate: bool, seed: int, options: dict,
                          move_timeout_ms: int = DEFAULT_TIME.move_timeout_ms, max_faults: int = DEFAULT_TIME.max_faults,
                     time_bank_ms: int | None = DEFAULT_TIME.time_bank_ms,
                          format: str = "round-robin", owner: str | None = None,
                          **extra) -> dict:
        """Store a new tournament, status "queued" (the caller enqueues its job)."""
        tid = new_id("t")
        tournament = {
            "id": tid, "game": game, "owner": owner, "bots": list(bots), "format": format,
            "seats": seats, "deals": deals, "duplicate": duplicate, "seed": seed,
            "options": options or {}, "move_timeout_ms": move_timeout_ms,
            "time_bank_ms": time_bank_ms, "max_faults": max_faults, "status": "queued", "created": now_iso(),
            "started": None, "finished": None,
            # each entrant's version now: every match of the tournament plays it (core/store/versions.py)
            "versions": dict(zip(bots, self.current_versions(list(bots)), strict=True)), **extra,
        }
        seq = self.r.incr("tournaments:seq")
        pipe = self.r.pipeline()
        pipe.hset(f"tournament:{tid}", mapping=dump_fields(tournament))
        pipe.zadd("tournaments", {tid: seq})
        pipe.zadd(game_tournaments_key(game), {tid: seq})
        for bot_id in set(bots):
            pipe.zadd(bot_tournaments_key(bot_id), {tid: seq})
        if owner:
            pipe.sadd(open_tournaments_key(owner), tid)
        pipe.execute()
        return tournament

    def get_tournament(self, tid: str) -> dict | None:
        if not isinstance(tid, str) or len(tid) > 64:
            return None
        raw = self.r.hgetall(f"tournament:{tid}")
        return load_fields(raw) if raw else None

    def tournament_owner(self, tid: str) -> str | None:
        """The account that made the tournament (None: the admin's), read alone."""
        raw = self.r.hget(f"tournament:{tid}", "owner")
        return json.loads(raw) if raw else None

    def tournament_statuses(self, tids: list[str]) -> dict[str, str | None]:
        """tournament id -> status (None if missing), in one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for tid in tids:
            pipe.hget(f"tournament:{tid}", "status")
        return {tid: json.loads(raw) if raw else None for tid, raw in zip(tids, pipe.execute(), strict=True)} \
            if tids else {}

    def set_tournament(self, tid: str, **fields) -> None:
        """Update fields; a status of "finished"/"aborted" frees the owner's slot."""
        status = fields.get("status")
        if status == "running" and "started" not in fields:
            fields["started"] = now_iso()
        if status in ("finished", "aborted") and "finished" not in fields:
            fields["finished"] = now_iso()
        pipe = self.r.pipeline()
        pipe.hset(f"tournament:{tid}", mapping=dump_fields(fields))
        if status in ("finished", "aborted"):
            owner = self.r.hget(f"tournament:{tid}", "owner")
            if owner and json.loads(owner):
                pipe.srem(open_tournaments_key(json.loads(owner)), tid)
        if status is not None:
            events.tournament_changed(pipe, tid)
        pipe.execute()

    def start_tournament(self, tid: str, **fields) -> None:
        """The expansion's fields (`total`, `schedule`…), and status "running" unless the
        tournament has left "queued"/"running" meanwhile (an abort is never undone)."""
        def update(pipe) -> None:
            status = pipe.hget(f"tournament:{tid}", "status")
            pipe.multi()
            if status is not None and json.loads(status) in ("queued", "running"):
                pipe.hset(f"tournament:{tid}", mapping=dump_fields({"status": "running", **fields}))
                if json.loads(status) == "queued":
                    pipe.hset(f"tournament:{tid}", mapping=dump_fields({"started": now_iso()}))
                    events.tournament_changed(pipe, tid)
            else:
                pipe.hset(f"tournament:{tid}", mapping=dump_fields(fields))

        self.r.transaction(update, f"tournament:{tid}")

    def begin_abort(self, tid: str, reason: str) -> str | None:
        """Mark the tournament "aborting" (`reason`) and queue the job that ends its matches
        (worker/jobs.py `run_tournament`), in one transaction; the status it had (None if
        there is no such tournament). Nothing changes unless it was "queued" or "running"."""
        found: list[str | None] = [None]  # the status read by the transaction's last try

        def mark(pipe) -> None:
            raw = pipe.hget(f"tournament:{tid}", "status")
            found[0] = status = json.loads(raw) if raw is not None else None
            pipe.multi()
            if status in ("queued", "running"):
                pipe.hset(f"tournament:{tid}", mapping=dump_fields({"status": "aborting", "reason": reason}))
                events.tournament_changed(pipe, tid)
                enqueue_on(self.r, pipe, "tournament", [tid], self.queue, at_front=True)

        self.r.transaction(mark, f"tournament:{tid}")
        return found[0]

    def tournament_run_fields(self, tid: str) -> dict:
        """The tournament's `RUN_FIELDS`, read alone (a run reads them with the rest: core/store/runs.py)."""
        return run_fields(self.r.hmget(tournament_key(tid), *RUN_FIELDS))

    def tournament_stop(self, tid: str) -> tuple[str | None, str | None]:
        """(status, reason) of the tournament, in one read: whether a run of one of its
        matches may go on ("aborting"/"aborted": no)."""
        raw = self.r.hmget(f"tournament:{tid}", "status", "reason")
        status, reason = (json.loads(v) if v is not None else None for v in raw)
        return status, reason

    def add_tournament_match(self, tid: str, match_id: str) -> None:
        self.r.rpush(f"tournament:{tid}:matches", match_id)

    def add_tournament_matches(self, tid: str, match_ids: list[str], pipe=None) -> None:
        """Append these to the tournament's matches (on `pipe` if given, which the caller executes)."""
        if match_ids:
            (pipe or self.r).rpush(f"tournament:{tid}:matches", *match_ids)

    def tournament_matches(self, tid: str) -> list[str]:
        return [text(m) for m in self.r.lrange(f"tournament:{tid}:matches", 0, -1)]

    def tournament_match_page(self, tid: str, start: int, limit: int) -> tuple[list[str], int | None]:
        """Match ids `start`… in schedule order (at most `limit`), and where the next page starts."""
        ids = [text(m) for m in self.r.lrange(f"tournament:{tid}:matches", start, start + limit)]
        return ids[:limit], start + limit if len(ids) > limit else None

    def tournament_summary(self, tid: str, name: str):
        """A stored part of a finished tournament's summary, or None if not computed yet."""
        raw = self.r.hget(f"tournament:{tid}:summary", name)
        return json.loads(raw) if raw else None

    def save_tournament_summary(self, tid: str, name: str, value) -> None:
        self.r.hset(f"tournament:{tid}:summary", name, json.dumps(value, separators=(",", ":")))

    def tournament_progress(self, tid: str) -> dict:
        """{"done", "total"}: `total` is the stored one if set, else the matches added."""
        pipe = self.r.pipeline()
        pipe.scard(f"tournament:{tid}:done")
        pipe.hget(f"tournament:{tid}", "total")
        pipe.llen(f"tournament:{tid}:matches")
        done, total, added = pipe.execute()
        total = json.loads(total) if total else None
        return {"done": int(done), "total": int(total if total is not None else added)}

    TALLIES = TALLY_FIELDS

    def count_tournament_match(self, pipe, counts: Counts, tid: str, match_ids: Sequence[str],
                               rotations: list[list[dict]]) -> None:
        """Queue on `pipe` and `counts` (inside the matches' concluding transaction): the matches
        done, and each seat record of the deal's rotations counted now (one list per rotation,
        in the order played: a single match's, or a duplicate deal's once its last twin ended)
        added to the tournament's tallies, with each bot's memory difference over the deal."""
        pipe.sadd(f"tournament:{tid}:done", *match_ids)
        tally = f"tournament:{tid}:tally"
        for record in (r for rotation in rotations for r in rotation):
            for stat, value in tally_increments(record).items():
                counts.add(tally, f"{record['bot']}|{stat}", value)
        for bot, diff in memory_differences(rotations).items():
            counts.add(tally, f"{bot}|memory_n", 1)
            counts.add(tally, f"{bot}|memory", diff)
            counts.add(tally, f"{bot}|memory2", diff * diff)

    def tournament_tallies(self, tid: str) -> dict[str, dict[str, float]]:
        """bot -> {stat: number} for every entrant with a finished match."""
        return self._tallies(self.r.hgetall(f"tournament:{tid}:tally"))

    def _tallies(self, raw: dict) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for field, value in raw.items():
            bot, _, stat = text(field).rpartition("|")
            out.setdefault(bot, dict.fromkeys(self.TALLIES, 0.0))[stat] = float(value)
        return out

    def tournament_complete(self, tid: str) -> bool:
        """Every scheduled match is over (and the schedule was expanded)."""
        progress = self.tournament_progress(tid)
        return progress["total"] > 0 and progress["done"] >= progress["total"]

    def tournament_due_to_finish(self, tid: str) -> bool:
        """The tournament is "running" (or "queued") and every scheduled match is over: in
        one round trip, the check each of its matches' ends makes (core/store/runs.py
        `read_end` makes it beside the end's other reads)."""
        pipe = self.r.pipeline(transaction=False)
        read_due(pipe, tid)
        return due_from(*pipe.execute())

    def save_standings(self, tid: str, standings: list[dict]) -> None:
        pipe = self.r.pipeline()
        pipe.hset(f"tournament:{tid}", "standings", json.dumps(standings, separators=(",", ":")))
        events.tournament_changed(pipe, tid)
        pipe.execute()

    def standings(self, tid: str) -> list[dict]:
        """The standings saved as the tournament ended, else (in play) computed from its tallies
        now: one round trip either way."""
        pipe = self.r.pipeline(transaction=False)
        pipe.hget(f"tournament:{tid}", "standings")
        pipe.hgetall(f"tournament:{tid}:tally")
        saved, tallies = pipe.execute()
        saved = json.loads(saved) if saved else None
        return saved if saved else standings_from_tallies(self._tallies(tallies))
