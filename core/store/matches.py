"""Matches: a match is an event log.

Keys:
    match:{id}        hash (JSON values): id, game, seats, versions (each seat's bot version:
                      core/store/versions.py), seed, options, status,
                      move_timeout_ms, max_faults, time_bank_ms (null: from before
                      the time bank), seat_clocks? (seats on a clock of their own: a
                      person's, sdk/clock.py `seat_clocks`), tournament, rated, owner, twins?,
                      comparison? and deal?, kind? ("ladder" for the matchmaker's) and pairing?
                      (its ladder pairing: core/store/ladder.py), result, created, started,
                      finished, reason
    match:{id}:log    list of JSON entries {"turn", "seat", "action"[, "fault"]}
                      (each append and each change of status is announced on the
                      match's events channel: core/store/events.py)
    matches           sorted set of every match id by creation order
    matches:seq       the creation counter (the scores of `matches`)
    bot:{id}:matches  sorted set of the bot's matches, same scores: written in the
                      match's own pipeline, so a bot's list never scans every match
    matches:game:{game}  the same for the game's matches (core/store/lists.py reads
                      these lists a page at a time)
    matches:bot_index set once every match stored before that index is in it
    archive:due       sorted set of the matches over and waiting to be archived, by when they were
                      left to it (`archive_later`); on a queue Q other than the default, archive:due:Q

Once nothing can change what a match shows (its end, or a twin's at its deal's end) it is
due to be archived (`archive_later`), and `archive_due` moves the matches due, a batch at a
time, to the archive
(core/store/archive.py: its whole record, log and debug notes, in one file) and Redis
keeps of it only `match:{id}` with `KEPT` — what the lists, the ladder, the sweep and the
end's checks read — its result's `BRIEF` part (field `brief`) and `archived` (true):
about 0.4 KB, besides its entries in the sorted sets above (0.5 KB). Every reader below answers
an archived match from the archive exactly as it answered from Redis (`get_match`,
`match_log`, `log_since`, `log_length`, `replay`, and core/store/debug.py's notes).

`(game, seats, seed, options)` plus the log rebuild the state exactly
(`replay`). Turn k is appended only while the log holds exactly k entries and
the match is not over, checked and written by one Lua script, so a bot's
answer and the referee's timeout default can never both land on one turn.

A match ends once (`conclude_match`): its result, the bots' records, the
ladder's queue and its tournament's tallies change in one transaction, so a
worker retried after a crash can never count a match twice.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import redis
from redis.client import Pipeline
from redis.commands.core import Script

import games
from core.store import archive as archives
from core.store import events
from core.store.accounts import queued_key
from core.store.bots import count_result
from core.store.counts import Counts
from core.store.debug import write_debug
from core.store.jobs import QUEUE, active_key, lease_key, mark_active, next_run_key
from core.store.keys import dump_fields, load_fields, members, new_id, now_iso, scored, text
from core.store.lua import args, source
from core.store.ratings import entrant, queue_for_rating
from core.store.slots import slots_step
from core.store.versions import match_versions
from sdk.clock import DEFAULT_TIME
from sdk.standings import once_per_bot

OVER = ("finished", "aborted")

#: what Redis keeps of an archived match (`archive_match`): what lists, the ladder and the sweep read
KEPT = ("id", "game", "status", "seats", "versions", "tournament", "comparison", "rated", "kind", "created",
        "finished")
#: the part of an archived match's result Redis keeps (field `brief`): what the lists show
BRIEF = ("scores", "ranks", "forfeits")
#: the fields of the record Redis keeps of an archived match besides `KEPT`
ARCHIVED, BRIEF_FIELD = "archived", "brief"

#: how long one process may take to archive a batch of matches before another may (ms)
ARCHIVE_LEASE_MS = 60_000
#: matches archived in one step (`archive_due`): the files of a batch are made durable together
ARCHIVE_BATCH = 64


class ArchiveBusy(Exception):
    """Another process is archiving the match now (it holds `lease:archive:{id}`): try later."""


def start_announcement(match_id: str, owner: str | None, tournament: str | None) -> dict:
    """What follows a start that marked the match running (`Matches.match_started`), as the start's
    own Lua step makes it (core/store/lua/lib/start_match.lua's `started`)."""
    out: dict = {"match": match_id, "publish": events.status_messages(match_id, tournament)}
    if owner:
        out["queued"] = queued_key(owner)
    return out


def archive_due_key(queue: str) -> str:
    """The sorted set of the queue's matches due to be archived (`Matches.archive_later`)."""
    return "archive:due" if queue == QUEUE else f"archive:due:{queue}"


def hand_over_archive_due(connection, queue: str) -> None:
    """The matches still due to be archived on a queue nobody will work any more become due on
    the default queue, whose workers' sweep archives them (with `jobs.drop_queue`)."""
    if queue == QUEUE:
        raise ValueError("the default queue is the platform's: it is never dropped")
    with connection.pipeline() as pipe:  # MULTI: due on one queue or the other, never neither
        pipe.zunionstore(archive_due_key(QUEUE), [archive_due_key(QUEUE), archive_due_key(queue)], aggregate="MIN")
        pipe.delete(archive_due_key(queue))
        pipe.execute()


def log_key(match_id: str) -> str:
    return f"match:{match_id}:log"


def brief_result(result) -> dict | None:
    """The part of a result the lists show (`BRIEF`)."""
    return {k: result[k] for k in BRIEF if k in result} if isinstance(result, dict) else None


def kept_record(record: dict) -> dict:
    """What Redis keeps of an archived match (as stored: JSON values): `KEPT` but its id (the
    key's) and its empty fields (a lone match's tournament), which reading puts back."""
    kept = {k: record[k] for k in KEPT if k != "id" and record.get(k) is not None}
    kept[BRIEF_FIELD], kept[ARCHIVED] = brief_result(record.get("result")), True
    return dump_fields(kept)


@dataclass(frozen=True)
class PlayedAhead:
    """A match its runner played whole in memory, to end with the match it ran
    (`Matches.conclude_rotations`): its log's entries, result, seat records and debug notes
    `(turn, seat, text)`."""

    match: dict  # its record
    entries: list[dict]
    result: dict
    records: list[dict]
    notes: list[tuple[int, int, str]]

    @property
    def match_id(self) -> str:
        return self.match["id"]


def by_deal(played: Sequence[PlayedAhead]) -> list[list[PlayedAhead]]:
    """Matches played ahead, in playing order, as runs of one deal's rotations (a match without
    twins, a deal of its own)."""
    deals: list[list[PlayedAhead]] = []
    for one in played:
        if deals and one.match_id in (deals[-1][0].match.get("twins") or ()):
            deals[-1].append(one)
        else:
            deals.append([one])
    return deals


def bot_matches_key(bot_id: str) -> str:
    return f"bot:{bot_id}:matches"


def game_matches_key(game: str) -> str:
    return f"matches:game:{game}"


class Matches:
    r: redis.Redis
    script: Callable[[str], Script]
    queue: str
    current_versions: Callable[[list[str]], list[int]]
    take_leases: Callable[..., dict[str, str | None]]  # core/store/jobs.py (its ttl_ms has a default)
    release_leases: Callable[[str, dict[str, str]], None]
    count_tournament_match: Callable[[Pipeline, Counts, str, Sequence[str], list[list[dict]]], None]  # core/store/tournaments.py

    def create_match(self, game: str, seats: list[str], seed: int, options: dict,
                     move_timeout_ms: int = DEFAULT_TIME.move_timeout_ms, max_faults: int = DEFAULT_TIME.max_faults,
                     time_bank_ms: int | None = DEFAULT_TIME.time_bank_ms,
                     tournament_id: str | None = None, rated: bool = False,
                     owner: str | None = None, match_id: str | None = None,
                     twins: list[str] | None = None, comparison: tuple[str, int] | None = None,
                     versions: list[int | None] | None = None,
                     seat_clocks: list[dict | None] | None = None, kind: str | None = None,
                     pairing: str | None = None, pipe=None, seq: int | None = None) -> dict:
        """Store a new match, status "queued" (the caller enqueues its job).

        `owner` is the account that asked for it: its queued matches count
        toward the per-account limit until the match starts. `match_id` lets a
        tournament derive its matches' ids, so a retried expansion finds them.
        `twins` are the ids of the rotations of its deal, itself included, in
        playing order (worker/schedules.py `twin_groups`). `comparison` is (comparison id,
        deal number) for a match of a comparison (core/store/comparisons.py). `versions`
        pins each seat's bot version (None, or a None in it: the bot's latest now).
        `seat_clocks` gives seats a clock of their own (sdk/clock.py `seat_clocks`). `kind`
        "ladder" and `pairing` mark a match of the ladder (core/store/ladder.py). With `pipe`
        the match is written on that transaction (the caller executes it), not on its own.
        `seq` is its place in creation order if the caller reserved it (`reserve_match_seqs`).
        """
        match_id = match_id or new_id("m")
        given = list(versions or [None] * len(seats))
        if None in given:  # the bots' latest, read now (one round trip)
            latest = self.current_versions(list(seats))
            given = [n if v is None else v for v, n in zip(given, latest, strict=True)]
        pinned = [int(v) for v in given if v is not None]  # each seat's: none is left unknown
        match = {
            "id": match_id, "game": game, "seats": list(seats), "versions": pinned, "seed": seed,
            "options": options or {}, "status": "queued",
            "move_timeout_ms": move_timeout_ms, "max_faults": max_faults, "time_bank_ms": time_bank_ms,
            "tournament": tournament_id, "rated": bool(rated), "owner": owner,
            "result": None, "created": now_iso(), "started": None, "finished": None,
        }
        if seat_clocks:
            match["seat_clocks"] = list(seat_clocks)
        if twins:
            match["twins"] = list(twins)
        if comparison:
            match["comparison"], match["deal"] = comparison
        if kind:
            match["kind"] = kind
        if pairing:
            match["pairing"] = pairing
        if seq is None:
            seq = self.r.incr("matches:seq")
        own = pipe is None
        if own:
            pipe = self.r.pipeline()
        pipe.hset(f"match:{match_id}", mapping=dump_fields(match))
        pipe.zadd("matches", {match_id: seq})
        pipe.zadd(game_matches_key(game), {match_id: seq})
        for bot_id in set(seats):
            pipe.zadd(bot_matches_key(bot_id), {match_id: seq})
        if owner:
            pipe.sadd(queued_key(owner), match_id)
        if own:
            pipe.execute()
        return match

    def reserve_match_seqs(self, n: int) -> int:
        """Reserve `n` consecutive places in creation order (`create_match`'s `seq`): the first."""
        return int(self.r.incrby("matches:seq", n)) - n + 1

    def bot_match_page(self, bot_id: str, limit: int, before: int | None = None) -> tuple[list[str], int | None]:
        """The bot's match ids, newest first, created before position `before`; and the
        position to continue from (None at the end)."""
        top = f"({before}" if before is not None else "+inf"
        found = scored(self.r.zrevrangebyscore(bot_matches_key(bot_id), top, "-inf", start=0, num=limit + 1,
                                               withscores=True))
        ids = [m for m, _ in found[:limit]]
        more = len(found) > limit
        return ids, int(found[limit - 1][1]) if more else None

    @property
    def archive(self) -> archives.Archive | None:
        """Where finished matches go (core/store/archive.py): `CARDARENA_ARCHIVE`, read at first
        use; None when archiving is off. A test or a tool may set another."""
        found = self.__dict__.get("_archive", False)
        if found is False:
            found = self.__dict__["_archive"] = archives.from_env()
        return found

    @archive.setter
    def archive(self, value: archives.Archive | None) -> None:
        self.__dict__["_archive"] = value

    def archived_document(self, match_id: str) -> dict:
        """The archived match's file (`ArchiveMissing` without one, or with archiving off)."""
        archive = self.archive
        if archive is None:
            raise archives.ArchiveMissing(match_id, archives.default_root(), f"no archive ({archives.ARCHIVE_ENV}=off)")
        return archive.read(match_id)

    def get_matches(self, match_ids: list[str], fields: tuple[str, ...] | None = None,
                    brief: bool = False) -> list[dict | None]:
        """Many matches in one round trip (None for a missing one); only `fields` if given.

        An archived match is read from the archive unless Redis keeps all that is asked
        (`KEPT`); with `brief` its `result` is only the part lists show (`BRIEF`), which
        Redis keeps, so a list never reads the archive."""
        if not match_ids:
            return []
        pipe = self.r.pipeline(transaction=False)
        for match_id in match_ids:
            if fields:
                pipe.hmget(f"match:{match_id}", [*fields, ARCHIVED, BRIEF_FIELD])
            else:
                pipe.hgetall(f"match:{match_id}")
        out: list[dict | None] = []
        for match_id, raw in zip(match_ids, pipe.execute(), strict=True):
            if not fields:
                if not raw or ARCHIVED.encode() not in raw:
                    out.append(load_fields(raw) if raw else None)
                elif brief:
                    out.append(self._brief(match_id, load_fields(raw)))
                else:
                    out.append(self.archived_document(match_id)["match"])
                continue
            *values, archived, brief_raw = raw
            if archived is None:
                out.append(load_fields({k: v for k, v in zip(fields, values, strict=True) if v is not None})
                           if values[0] is not None else None)
                continue
            answered = set(KEPT) | ({"result"} if brief else set())
            if set(fields) <= answered:
                kept = load_fields({k: v for k, v in zip(fields, values, strict=True) if v is not None})
                record = {k: kept.get(k) for k in fields}  # a field kept empty is not stored
                if "id" in fields:
                    record["id"] = match_id
                if "result" in fields:
                    record["result"] = json.loads(brief_raw) if brief_raw else None
            else:
                whole = self.archived_document(match_id)["match"]
                record = {k: whole[k] for k in fields if k in whole}
            out.append(record)
        return out

    @staticmethod
    def _brief(match_id: str, kept: dict) -> dict:
        """An archived match as Redis keeps it, its result the brief one."""
        record = {k: kept.get(k) for k in KEPT}
        record["id"], record["result"] = match_id, kept.get(BRIEF_FIELD)
        return record

    def index_bot_matches(self, batch: int = 1000) -> int:
        """Once per database: enter the matches stored before the per-bot index; how many."""
        if self.r.get("matches:bot_index"):
            return 0
        done, start = 0, 0
        while True:
            found = scored(self.r.zrange("matches", start, start + batch - 1, withscores=True))
            if not found:
                break
            start += len(found)
            pipe = self.r.pipeline(transaction=False)
            for match_id, _ in found:
                pipe.hget(f"match:{match_id}", "seats")
            seats = pipe.execute()
            pipe = self.r.pipeline(transaction=False)
            for (match_id, score), raw in zip(found, seats, strict=True):
                for bot_id in set(json.loads(raw) if raw else []):
                    pipe.zadd(bot_matches_key(bot_id), {match_id: score})
                    done += 1
            pipe.execute()
        self.r.set("matches:bot_index", 1)
        return done

    def get_match(self, match_id: str) -> dict | None:
        """The match's whole record (an archived one's from the archive), None if there is none."""
        if not isinstance(match_id, str) or len(match_id) > 64:
            return None
        raw = self.r.hgetall(f"match:{match_id}")
        if not raw:
            return None
        if ARCHIVED.encode() in raw:
            return self.archived_document(match_id)["match"]
        return load_fields(raw)

    def match_status(self, match_id: str) -> str | None:
        raw = self.r.hget(f"match:{match_id}", "status")
        return json.loads(raw) if raw else None

    def redis_or_archived(self, match_id: str, read: Callable[[Pipeline], object]) -> tuple[object, dict | None]:
        """`read(pipe)`'s reply, or the match's archived document if it is archived.

        One round trip: the read, then the archived mark. `archive_match` deletes the
        keys and sets the mark in one transaction, so whenever it ran, the read found the
        keys whole or the mark is seen after it."""
        pipe = self.r.pipeline(transaction=False)
        read(pipe)
        pipe.hget(f"match:{match_id}", ARCHIVED)
        reply, archived = pipe.execute()
        return (None, self.archived_document(match_id)) if archived else (reply, None)

    def match_log(self, match_id: str) -> list[dict]:
        return self.log_since(match_id, 0)

    def log_length(self, match_id: str) -> int:
        length, doc = self.redis_or_archived(match_id, lambda pipe: pipe.llen(log_key(match_id)))
        if doc is not None:
            return len(doc["log"])
        assert isinstance(length, int)  # LLEN's reply
        return length

    def append_entry(self, match_id: str, entry: dict) -> bool:
        """Append `entry` iff the log holds exactly `entry["turn"]` entries (atomic)."""
        return self.append_entries(match_id, [entry])

    def append_entries(self, match_id: str, entries: list[dict]) -> bool:
        """Append consecutive entries iff the log holds exactly `entries[0]["turn"]` (atomic, all or none)."""
        if not entries:
            return True
        data = [json.dumps(e, separators=(",", ":")) for e in entries]
        return bool(self.script(source("append_entries"))(
            keys=[log_key(match_id), f"match:{match_id}", events.match_channel(match_id)],
            args=[args(first_turn=int(entries[0]["turn"]), entries=data)]))

    def log_since(self, match_id: str, turn: int) -> list[dict]:
        """The log's entries from `turn` on."""
        raw, doc = self.redis_or_archived(match_id, lambda pipe: pipe.lrange(log_key(match_id), turn, -1))
        if doc is not None:
            return doc["log"][turn:]
        assert isinstance(raw, list)  # LRANGE's reply
        return [json.loads(e) for e in raw]

    def replay(self, match_id: str, upto: int | None = None) -> games.State:
        """The match's state after its logged actions (the first `upto` of them)."""
        match = self.get_match(match_id)
        if match is None:
            raise KeyError(match_id)
        state = games.get(match["game"]).new(len(match["seats"]), match["seed"], match["options"])
        log = self.match_log(match_id)
        for entry in log if upto is None else log[:upto]:
            state.apply(entry["action"])
        return state

    def set_match_status(self, match_id: str, status: str, **fields) -> None:
        """Set the status (and any other fields); "running" also stamps `started`."""
        fields["status"] = status
        if status == "running" and "started" not in fields:
            fields["started"] = now_iso()
        owner, tournament = (json.loads(v) if v else None
                             for v in self.r.hmget(f"match:{match_id}", "owner", "tournament"))
        pipe = self.r.pipeline()
        pipe.hset(f"match:{match_id}", mapping=dump_fields(fields))
        if status != "queued" and owner:
            pipe.srem(queued_key(owner), match_id)
        events.match_changed(pipe, match_id, tournament)
        pipe.execute()

    def start_match(self, match_id: str) -> int:
        """A runner starts (or resumes) the match: status "running" unless it is already over
        (an admin may stop it between the runner's read and this call: "aborted" must stay),
        and the number of times a runner has started it, this one included (a crash loop is
        cut short)."""
        attempts, changed = self.script(source("start_match"))(keys=[f"match:{match_id}"],
                                                               args=[args(started_at=json.dumps(now_iso()))])
        if changed:  # a match's next runs (one per remote decision) change nothing anyone watches
            self.match_started(match_id)
        return int(attempts)

    def take_slots_and_start(self, match_id: str, bots: list[dict], match: dict | None = None) -> tuple[dict | None, int]:
        """`take_slots` (core/store/slots.py), then, if they are taken, `start_match`, in one step
        (a match runner's start, one round trip): (None, the number of starts, this one
        included) or (the first full bot, 0: the match waits in its queue, not started).
        `match`: its record if the caller holds it: then `match_started` is made in the same
        step, else after it."""
        slotted, keys, slots = slots_step(match_id, bots)
        started = {} if match is None else {
            "started": start_announcement(match_id, match.get("owner"), match.get("tournament"))}
        full, attempts, changed = self.script(source("take_slots_and_start"))(
            keys=[f"match:{match_id}", *keys], args=[args(slots=slots, started_at=json.dumps(now_iso()), **started)])
        if full:
            return slotted[int(full) - 1], 0
        if changed and match is None:  # else made in the start's step
            self.match_started(match_id)
        return None, int(attempts)

    def match_started(self, match_id: str, match: dict | None = None) -> None:
        """What follows the start step that marked the match running: it leaves its owner's
        queued matches, and its watchers are told. `match`: its record if the caller holds it
        (its owner and tournament never change), else they are read."""
        if match is not None:
            owner, tournament = match.get("owner"), match.get("tournament")
        else:
            owner, tournament = (json.loads(v) if v else None
                                 for v in self.r.hmget(f"match:{match_id}", "owner", "tournament"))
        with self.r.pipeline() as pipe:
            if owner:
                pipe.srem(queued_key(owner), match_id)
            events.match_changed(pipe, match_id, tournament)
            pipe.execute()

    def match_ranks(self, match_ids: list[str]) -> list[tuple[str | None, list, list | None]]:
        """(status, entrants, ranks) of each match, in one round trip (what the ratings worker
        needs): its seats' bots as the versions it pinned (core/store/ratings.py `entrant`)."""
        pipe = self.r.pipeline(transaction=False)
        for match_id in match_ids:
            pipe.hmget(f"match:{match_id}", "status", "seats", "versions", "result", BRIEF_FIELD)
        out = []
        for status, seats, versions, result, brief in pipe.execute():
            result = json.loads(result or brief) if result or brief else None  # an archived match: its brief
            seats = json.loads(seats) if seats else []
            pinned = match_versions({"seats": seats, "versions": json.loads(versions) if versions else None})
            out.append((json.loads(status) if status else None,
                        [entrant(b, v) for b, v in zip(seats, pinned, strict=True)],
                        result.get("ranks") if isinstance(result, dict) else None))
        return out

    def archive_later(self, match_ids: list[str], done: Sequence[str]) -> int:
        """Leave matches that are over (a settled deal's rotations) to be archived in a batch,
        and count the matches `done` no longer active, in one transaction; how many matches are
        due now. From then on `archive_due`, in a worker's job or the recovery sweep, archives
        them: a process dying here loses nothing (the match is still active, or due). With
        archiving off, `done` are only counted done."""
        if self.archive is None:
            self.r.srem(active_key(self.queue), *(f"match:{m}" for m in done))
            return 0
        key = archive_due_key(self.queue)
        with self.r.pipeline() as pipe:
            pipe.zadd(key, dict.fromkeys(match_ids, time.time()), nx=True)
            pipe.srem(active_key(self.queue), *(f"match:{m}" for m in done))
            pipe.zcard(key)
            return pipe.execute()[-1]

    def archive_due_count(self) -> int:
        """How many matches are due to be archived (`archive_later`)."""
        return self.r.zcard(archive_due_key(self.queue))

    def archive_due(self, limit: int = ARCHIVE_BATCH, skip: int = 0) -> tuple[int, int]:
        """Archive the `limit` matches due the longest (`archive_later`) after the first `skip`:
        (how many of them are no longer due — archived now, or found archived already —, how
        many still are). Those another process is archiving stay due: should it die, a later
        call archives them once its lease lapses."""
        ids = members(self.r.zrange(archive_due_key(self.queue), skip, skip + limit - 1))
        if not ids:
            return 0, 0
        try:
            self.archive_matches(ids)
        except ArchiveBusy:
            pass
        still = sum(score is not None for score in self.r.zmscore(archive_due_key(self.queue), ids))
        return len(ids) - still, still

    def archive_match(self, match_id: str) -> int | None:
        """Move a match that is over to the archive (`archive_matches`); the file's size, None if
        there was nothing to do (archived already, not over, missing, archiving off);
        `ArchiveBusy` if another process is archiving it now."""
        return self.archive_matches([match_id])[match_id]

    def archive_matches(self, match_ids: list[str]) -> dict[str, int | None]:
        """Move matches that are over (a duplicate deal's rotations) to the archive
        (core/store/archive.py): each one's file size, None if there was nothing to do
        (archived already, not over, missing, archiving off).

        Each one's record, log and debug notes are written to the archive, all of them durably
        (`Archive.write_all`), before Redis lets go of them; then, in one transaction that fails if any of them changed since
        they were read (then all is read and written again), the logs and the notes are
        deleted, each record becomes what Redis keeps (`kept_record`) and is no longer due
        (`archive_later`). A process killed
        anywhere in between leaves each match whole in Redis, and its file whole or absent:
        repeating the call (the recovery sweep does) finishes it. Four round trips whatever
        the number of matches: the leases, the WATCH, the reads, the transaction.

        One process at a time archives a match (`lease:archive:{id}`: taken for all of them in
        one round trip, each given back in the transaction that archives it); the matches whose
        lease another holds are left out, and `ArchiveBusy` is raised once the others are done
        (the sweep takes over should the holder die). Twins ending together and the sweep may
        race here: the WATCH guards Redis, not the file, and a writer that read the record
        before another let go and the log just after (gone by then) would replace the file with
        an empty log before its transaction failed. Reading the log and the notes before the
        record keeps even a writer whose lease lapsed from that: a record not yet archived
        when read means the log read before it was still whole."""
        archive = self.archive
        if archive is None:
            return dict.fromkeys(match_ids)
        tokens = self.take_leases("archive", match_ids, ARCHIVE_LEASE_MS)
        held = {m: token for m, token in tokens.items() if token is not None}
        sizes: dict[str, int | None] = dict.fromkeys(match_ids)
        done: set[str] = set()
        try:
            if held:
                archived = self._archive_leased(archive, held)
                sizes.update(archived)
                done = set(archived)
        finally:
            self.release_leases("archive", {m: t for m, t in held.items() if m not in done})
        if len(held) < len(match_ids):
            busy = sorted(set(match_ids) - set(held))
            raise ArchiveBusy(f"matches {', '.join(busy)} are being archived by another process")
        return sizes

    def _archive_leased(self, archive: archives.Archive, held: dict[str, str]) -> dict[str, int]:
        """`archive_matches`' work on the matches whose lease it holds (id -> token): the size of
        each one archived, whose lease the archiving transaction gave back."""
        import redis

        from core.store.debug import debug_key

        keys = {m: (f"match:{m}", log_key(m), debug_key(m), lease_key("archive", m)) for m in held}
        with self.r.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(*(k for four in keys.values() for k in four))
                    # read after the WATCH, on another connection: a change since makes the EXEC fail
                    reads = self.r.pipeline(transaction=False)
                    for key, log, notes, lease in keys.values():
                        reads.lrange(log, 0, -1)
                        reads.hgetall(notes)
                        reads.hgetall(key)
                        reads.get(lease)
                    replies = reads.execute()
                    records, docs = {}, {}
                    nothing_to_do = []  # archived already, missing or not over: no longer due
                    for i, match_id in enumerate(keys):
                        raw_log, raw_notes, raw, lease = replies[4 * i:4 * i + 4]
                        if lease is None or text(lease) != held[match_id]:
                            continue  # its lease lapsed: another may be at it, the sweep looks again
                        record = dict(sorted(load_fields(raw).items())) if raw else {}  # the same bytes from every writer
                        if not raw or ARCHIVED.encode() in raw or record.get("status") not in OVER:
                            nothing_to_do.append(match_id)
                            continue
                        debug = {str(t): json.loads(v) for t, v in sorted((int(text(t)), v)
                                                                          for t, v in raw_notes.items())}
                        records[match_id] = record
                        docs[match_id] = archives.document(record, raw_log, debug)
                    due = archive_due_key(self.queue)
                    if not docs:
                        pipe.unwatch()
                        if nothing_to_do:
                            self.r.zrem(due, *nothing_to_do)
                        return {}
                    sizes = archive.write_all(docs)  # durable, all of them, before Redis lets go
                    pipe.multi()
                    for match_id, record in records.items():
                        key, log, notes, lease = keys[match_id]
                        pipe.delete(key, log, notes, lease)  # the lease is still ours: it is watched
                        pipe.hset(key, mapping=kept_record(record))
                    pipe.zrem(due, *records, *nothing_to_do)
                    pipe.execute()
                    return sizes
                except redis.WatchError:
                    continue

    def archive_finished(self, batch: int = 500) -> int:
        """Archive every match over whose deal is over that Redis still holds whole (the
        matches that ended before the archive existed: `cardarena migrate`); how many."""
        if self.archive is None:
            return 0
        done, start = 0, 0
        while True:
            ids = members(self.r.zrange("matches", start, start + batch - 1))
            if not ids:
                return done
            start += len(ids)
            pipe = self.r.pipeline(transaction=False)
            for match_id in ids:
                pipe.hmget(f"match:{match_id}", "status", "twins", ARCHIVED)
            for match_id, (status, twins, archived) in zip(ids, pipe.execute(), strict=True):
                if archived or status is None or json.loads(status) not in OVER:
                    continue
                group = json.loads(twins) if twins else [match_id]
                if all(m is not None and m["status"] in OVER for m in self.get_matches(group, ("status",))):
                    with contextlib.suppress(ArchiveBusy):  # another process is at it
                        done += bool(self.archive_match(match_id))

    def conclude_match(self, match_id: str, status: str, result: dict | None = None,
                       reason: str | None = None, records: Sequence[dict] = (),
                       twins: Sequence[str] | None = None) -> bool:
        """End a match exactly once: True only for the call that ended it.

        `records` holds one dict per seat: `bot`, `won` (alone first), `faults`,
        and for a tournament `points`, `score`, `draw`, `forfeit`. In one
        transaction (WATCH on the match and its twins): the status, result and
        end time; each record counted in its bot's totals; a finished rated
        match queued for the ladder; a tournament match added to its
        tournament's done set and tallies. A worker dying before this leaves
        the match running (its retry concludes it); after it, a retry sees the
        match over and changes nothing, so nothing is ever counted twice. The
        match is marked active until what follows its end is done: call it
        through `core.conclusion.end_match`, the one path a match ends by.

        A twin (a rotation of a duplicate deal) is counted only with its whole
        deal: its records wait in the match (`records`) until the last of its
        twins ends, and that conclusion counts them all — so no standings,
        record or rating shows one rotation of a deal while another is to come.
        `twins` are the match's (as its record has them: they never change) if
        the caller holds its record, else they are read first. The additions to
        the bots' records and the tallies are one script call in the transaction
        (core/store/counts.py). Four round trips: the WATCH, the reads, redis-py's
        check that the script is loaded, the transaction.
        """
        return self.conclude_rotations(match_id, status, result, reason, records, twins)[0]

    def conclude_rotations(self, match_id: str, status: str, result: dict | None = None,
                           reason: str | None = None, records: Sequence[dict] = (),
                           twins: Sequence[str] | None = None,
                           ahead: Sequence[PlayedAhead] = ()) -> tuple[bool, bool]:
        """`conclude_match`, and with it, in the same transaction, the matches `ahead` that the
        match's runner played whole in memory (worker/match_runner.py `play_ahead`): its deal's
        next rotations, then whole deals of its batch, in playing order (`by_deal`). Each ends
        as if it had run — its log, status, result and records, counted with its deal — only if
        every one of them is still queued with an empty log, else none of them. (whether the
        match ended here, whether `ahead` did with it)."""
        import redis

        key = f"match:{match_id}"
        if twins is None:
            stored = self.r.hget(key, "twins")
            twins = json.loads(stored) if stored else []
        rest = [t for t in twins or () if t != match_id]  # the deal's other rotations
        later = [a.match_id for a in ahead]
        with self.r.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key, *(f"match:{t}" for t in dict.fromkeys([*rest, *later])),
                               *(log_key(t) for t in later))
                    # read after the WATCH, on another connection: a change since makes the EXEC fail
                    reads = self.r.pipeline(transaction=False)
                    reads.hmget(key, "status", "owner", "rated", "game", "tournament", "kind")
                    for t in rest:
                        reads.hmget(f"match:{t}", "status", "records")
                    for t in later:
                        reads.hget(f"match:{t}", "status")
                        reads.llen(log_key(t))
                    raw, *read = reads.execute()
                    if raw[0] is None or json.loads(raw[0]) in OVER:
                        pipe.unwatch()
                        return False, False
                    owner, rated, game, tournament, kind = (json.loads(v) if v else None for v in raw[1:])
                    finished = status == "finished"
                    ends = {t: (json.loads(e[0]) if e[0] else None, json.loads(e[1]) if e[1] else [])
                            for t, e in zip(rest, read[:len(rest)], strict=True)}
                    untouched = read[len(rest):]
                    landing = list(ahead) if finished and all(
                        s is not None and json.loads(s) == "queued" and n == 0
                        for s, n in zip(untouched[::2], untouched[1::2], strict=True)) else []
                    ended = [match_id, *(a.match_id for a in landing)]
                    # its deal: counted once over, all its rotations in playing order
                    own = [(match_id, list(records) if finished else [])]
                    own += [(a.match_id, list(a.records)) for a in landing if a.match_id in rest]
                    before = [t for t in rest if t not in ended]
                    if all(ends[t][0] in OVER for t in before):
                        own = [(t, ends[t][1]) for t in before] + own
                    else:
                        own = []  # the deal is not over: this twin waits for the last one
                    deals = [([match_id, *(a.match_id for a in landing if a.match_id in rest)], own)]
                    deals += [([a.match_id for a in deal], [(a.match_id, list(a.records)) for a in deal])
                              for deal in by_deal([a for a in landing if a.match_id not in rest])]
                    now = now_iso()
                    fields: dict[str, object] = {"status": status, "finished": now, "result": result}
                    if reason is not None:
                        fields["reason"] = reason
                    if rest and finished:
                        fields["records"] = list(records)
                    pipe.multi()
                    pipe.hset(key, mapping=dump_fields(fields))
                    for a in landing:  # as its run would have left it, then its end
                        pipe.rpush(log_key(a.match_id), *(json.dumps(e, separators=(",", ":")) for e in a.entries))
                        for turn, seat, text_ in a.notes:
                            write_debug(pipe, a.match_id, turn, seat, text_)
                        played: dict[str, object] = {"status": "finished", "attempts": 1, "started": now,
                                                     "finished": now, "result": a.result}
                        if a.match.get("twins"):
                            played["records"] = list(a.records)
                        pipe.hset(f"match:{a.match_id}", mapping=dump_fields(played))
                    mark_active(pipe, self.queue, "match", *ended)  # their follow-ups: core/conclusion.py
                    pipe.delete(*(next_run_key(mid) for mid in ended))  # no next run to hold for
                    if owner:
                        pipe.srem(queued_key(owner), *ended)
                    counts = Counts()  # the bots' records' and the tallies' additions: one step
                    for ids, counted in deals:
                        for _, seat_records in counted:
                            for record in once_per_bot(seat_records):  # a bot's versions: one match
                                count_result(counts, record, kind == "ladder", bool(rated))  # pauses: ladder forfeits only
                        deal = [mid for mid, seat_records in counted if seat_records]  # records: finished
                        if deal and rated:  # the deal's finished rotations, rated as one (core/ratings.py)
                            assert game is not None, "a match has its game"
                            queue_for_rating(pipe, game, deal)
                        if tournament:  # the deal's rotations in the order they were played
                            self.count_tournament_match(pipe, counts, tournament, ids,
                                                        [seat_records for _, seat_records in counted])
                    counts.queue(pipe, self.script(source("add_counts")))
                    for mid in ended:
                        events.match_changed(pipe, mid, tournament)
                    pipe.execute()
                    return True, bool(landing)
                except redis.WatchError:
                    continue
