"""Matches: a match is an event log.

Keys:
    match:{id}        hash (JSON values): id, game, seats, versions (each seat's bot version:
                      core/store/versions.py), seed, options, status,
                      move_timeout_ms, max_faults, time_bank_ms (null: from before
                      the time bank), tournament, rated, owner, twins?, comparison? and deal?,
                      kind? ("ladder" for the matchmaker's) and pairing? (its ladder pairing:
                      core/store/ladder.py), result, created, started, finished, reason
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

`(game, seats, seed, options)` plus the log rebuild the state exactly
(`replay`). Turn k is appended only while the log holds exactly k entries and
the match is not over, checked and written by one Lua script, so a bot's
answer and the referee's timeout default can never both land on one turn.

A match ends once (`conclude_match`): its result, the bots' records, the
ladder's queue and its tournament's tallies change in one transaction, so a
worker retried after a crash can never count a match twice.
"""

from __future__ import annotations

import json

import games
from core.store import events
from core.store.accounts import queued_key
from core.store.bots import count_result
from core.store.jobs import mark_active
from core.store.keys import dump_fields, load_fields, new_id, now_iso, text
from core.store.ratings import entrant, queue_for_rating
from core.store.versions import match_versions
from sdk.clock import DEFAULT_TIME
from sdk.standings import once_per_bot

OVER = ("finished", "aborted")

#: KEYS[1] the log, KEYS[2] the match hash, KEYS[3] its events channel;
#: ARGV[1] the first turn, ARGV[2..] the entries
APPEND_LUA = """
local status = redis.call('HGET', KEYS[2], 'status')
if not status or status == '"finished"' or status == '"aborted"' then return 0 end
if redis.call('LLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return 0 end
for i = 2, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
redis.call('PUBLISH', KEYS[3], redis.call('LLEN', KEYS[1]))
return 1
"""


#: KEYS[1] the match hash; ARGV[1] now (JSON). One step, so a match an admin stopped meanwhile
#: is never marked running again.
START_LUA = """
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
local status = redis.call('HGET', KEYS[1], 'status')
if status == '"finished"' or status == '"aborted"' or status == '"running"' then return {attempts, 0} end
redis.call('HSET', KEYS[1], 'status', '"running"')
local started = redis.call('HGET', KEYS[1], 'started')
if not started or started == 'null' then redis.call('HSET', KEYS[1], 'started', ARGV[1]) end
return {attempts, 1}
"""


def run_ended(pipe, match_id: str) -> None:
    """On `pipe`: a run of the match ended cleanly (it asked a remote bot): the count of runs
    started without ending, which aborts a crash loop (`start_match`), starts again."""
    pipe.hset(f"match:{match_id}", "attempts", 0)


def log_key(match_id: str) -> str:
    return f"match:{match_id}:log"


def bot_matches_key(bot_id: str) -> str:
    return f"bot:{bot_id}:matches"


def game_matches_key(game: str) -> str:
    return f"matches:game:{game}"


class Matches:
    r: object
    script: object
    current_versions: object

    def create_match(self, game: str, seats: list[str], seed: int, options: dict,
                     move_timeout_ms: int = DEFAULT_TIME.move_timeout_ms, max_faults: int = DEFAULT_TIME.max_faults,
                     time_bank_ms: int | None = DEFAULT_TIME.time_bank_ms,
                     tournament_id: str | None = None, rated: bool = False,
                     owner: str | None = None, match_id: str | None = None,
                     twins: list[str] | None = None, comparison: tuple[str, int] | None = None,
                     versions: list[int | None] | None = None, kind: str | None = None,
                     pairing: str | None = None, pipe=None) -> dict:
        """Store a new match, status "queued" (the caller enqueues its job).

        `owner` is the account that asked for it: its queued matches count
        toward the per-account limit until the match starts. `match_id` lets a
        tournament derive its matches' ids, so a retried expansion finds them.
        `twins` are the ids of the rotations of its deal, itself included, in
        playing order (worker/schedules.py `twin_groups`). `comparison` is (comparison id,
        deal number) for a match of a comparison (core/store/comparisons.py). `versions`
        pins each seat's bot version (None, or a None in it: the bot's latest now). `kind`
        "ladder" and `pairing` mark a match of the ladder (core/store/ladder.py). With `pipe`
        the match is written on that transaction (the caller executes it), not on its own.
        """
        match_id = match_id or new_id("m")
        versions = list(versions or [None] * len(seats))
        if None in versions:  # the bots' latest, read now (one round trip)
            latest = self.current_versions(list(seats))
            versions = [n if v is None else v for v, n in zip(versions, latest, strict=True)]
        versions = [int(v) for v in versions]
        match = {
            "id": match_id, "game": game, "seats": list(seats), "versions": versions, "seed": seed,
            "options": options or {}, "status": "queued",
            "move_timeout_ms": move_timeout_ms, "max_faults": max_faults, "time_bank_ms": time_bank_ms,
            "tournament": tournament_id, "rated": bool(rated), "owner": owner,
            "result": None, "created": now_iso(), "started": None, "finished": None,
        }
        if twins:
            match["twins"] = list(twins)
        if comparison:
            match["comparison"], match["deal"] = comparison
        if kind:
            match["kind"] = kind
        if pairing:
            match["pairing"] = pairing
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

    def bot_match_page(self, bot_id: str, limit: int, before: int | None = None) -> tuple[list[str], int | None]:
        """The bot's match ids, newest first, created before position `before`; and the
        position to continue from (None at the end)."""
        top = f"({before}" if before is not None else "+inf"
        found = self.r.zrevrangebyscore(bot_matches_key(bot_id), top, "-inf", start=0, num=limit + 1,
                                        withscores=True)
        ids = [text(m) for m, _ in found[:limit]]
        more = len(found) > limit
        return ids, int(found[limit - 1][1]) if more else None

    def get_matches(self, match_ids: list[str], fields: tuple[str, ...] | None = None) -> list[dict | None]:
        """Many matches in one round trip (None for a missing one); only `fields` if given."""
        if not match_ids:
            return []
        pipe = self.r.pipeline(transaction=False)
        for match_id in match_ids:
            if fields:
                pipe.hmget(f"match:{match_id}", fields)
            else:
                pipe.hgetall(f"match:{match_id}")
        if not fields:
            return [load_fields(raw) if raw else None for raw in pipe.execute()]
        return [load_fields({k: v for k, v in zip(fields, values, strict=True) if v is not None})
                if values[0] is not None else None for values in pipe.execute()]

    def index_bot_matches(self, batch: int = 1000) -> int:
        """Once per database: enter the matches stored before the per-bot index; how many."""
        if self.r.get("matches:bot_index"):
            return 0
        done, start = 0, 0
        while True:
            found = self.r.zrange("matches", start, start + batch - 1, withscores=True)
            if not found:
                break
            start += len(found)
            pipe = self.r.pipeline(transaction=False)
            for match_id, _ in found:
                pipe.hget(f"match:{text(match_id)}", "seats")
            seats = pipe.execute()
            pipe = self.r.pipeline(transaction=False)
            for (match_id, score), raw in zip(found, seats, strict=True):
                for bot_id in set(json.loads(raw) if raw else []):
                    pipe.zadd(bot_matches_key(bot_id), {text(match_id): score})
                    done += 1
            pipe.execute()
        self.r.set("matches:bot_index", 1)
        return done

    def get_match(self, match_id: str) -> dict | None:
        if not isinstance(match_id, str) or len(match_id) > 64:
            return None
        raw = self.r.hgetall(f"match:{match_id}")
        return load_fields(raw) if raw else None

    def match_status(self, match_id: str) -> str | None:
        raw = self.r.hget(f"match:{match_id}", "status")
        return json.loads(raw) if raw else None

    def match_log(self, match_id: str) -> list[dict]:
        return [json.loads(e) for e in self.r.lrange(log_key(match_id), 0, -1)]

    def log_length(self, match_id: str) -> int:
        return int(self.r.llen(log_key(match_id)))

    def append_entry(self, match_id: str, entry: dict) -> bool:
        """Append `entry` iff the log holds exactly `entry["turn"]` entries (atomic)."""
        return self.append_entries(match_id, [entry])

    def append_entries(self, match_id: str, entries: list[dict]) -> bool:
        """Append consecutive entries iff the log holds exactly `entries[0]["turn"]` (atomic, all or none)."""
        if not entries:
            return True
        script = self.script(APPEND_LUA)
        data = [json.dumps(e, separators=(",", ":")) for e in entries]
        return bool(script(keys=[log_key(match_id), f"match:{match_id}", events.match_channel(match_id)],
                           args=[int(entries[0]["turn"]), *data]))

    def log_since(self, match_id: str, turn: int) -> list[dict]:
        """The log's entries from `turn` on."""
        return [json.loads(e) for e in self.r.lrange(log_key(match_id), turn, -1)]

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
        key = f"match:{match_id}"
        attempts, changed = self.script(START_LUA)(keys=[key], args=[json.dumps(now_iso())])
        if changed:  # a match's next runs (one per remote decision) change nothing anyone watches
            owner, tournament = (json.loads(v) if v else None for v in self.r.hmget(key, "owner", "tournament"))
            with self.r.pipeline() as pipe:
                if owner:
                    pipe.srem(queued_key(owner), match_id)
                events.match_changed(pipe, match_id, tournament)
                pipe.execute()
        return int(attempts)


    def end_run(self, match_id: str) -> None:
        """A run of the match ended cleanly: see `run_ended`."""
        run_ended(self.r, match_id)

    def match_ranks(self, match_ids: list[str]) -> list[tuple[str | None, list, list | None]]:
        """(status, entrants, ranks) of each match, in one round trip (what the ratings worker
        needs): its seats' bots as the versions it pinned (core/store/ratings.py `entrant`)."""
        pipe = self.r.pipeline(transaction=False)
        for match_id in match_ids:
            pipe.hmget(f"match:{match_id}", "status", "seats", "versions", "result")
        out = []
        for status, seats, versions, result in pipe.execute():
            result = json.loads(result) if result else None
            seats = json.loads(seats) if seats else []
            pinned = match_versions({"seats": seats, "versions": json.loads(versions) if versions else None})
            out.append((json.loads(status) if status else None,
                        [entrant(b, v) for b, v in zip(seats, pinned, strict=True)],
                        result.get("ranks") if isinstance(result, dict) else None))
        return out

    def conclude_match(self, match_id: str, status: str, result: dict | None = None,
                       reason: str | None = None, records: list[dict] = ()) -> bool:
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
        """
        import redis

        key = f"match:{match_id}"
        with self.r.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    raw = pipe.hmget(key, "status", "owner", "rated", "game", "tournament", "twins", "kind")
                    if raw[0] is None or json.loads(raw[0]) in OVER:
                        pipe.unwatch()
                        return False
                    owner, rated, game, tournament, twins, kind = (json.loads(v) if v else None for v in raw[1:])
                    finished = status == "finished"
                    counted = [(match_id, list(records) if finished else [])]
                    others = [t for t in twins or () if t != match_id]
                    if others:
                        pipe.watch(*(f"match:{t}" for t in others))
                        ends = [pipe.hmget(f"match:{t}", "status", "records") for t in others]
                        if all(e[0] is not None and json.loads(e[0]) in OVER for e in ends):
                            counted = [(t, json.loads(e[1]) if e[1] else []) for t, e in zip(others, ends, strict=True)] + counted
                        else:
                            counted = []  # the deal is not over: this twin waits for the last one
                    fields = {"status": status, "finished": now_iso(), "result": result}
                    if reason is not None:
                        fields["reason"] = reason
                    if others and finished:
                        fields["records"] = list(records)
                    pipe.multi()
                    pipe.hset(key, mapping=dump_fields(fields))
                    mark_active(pipe, self.queue, "match", match_id)  # its follow-ups: core/conclusion.py
                    if owner:
                        pipe.srem(queued_key(owner), match_id)
                    for mid, seat_records in counted:
                        for record in once_per_bot(seat_records):  # a bot's versions: one match
                            count_result(pipe, record, kind == "ladder")  # pauses: ladder forfeits only
                        if seat_records and rated:  # records come only with a finished match
                            queue_for_rating(pipe, game, mid)
                    if tournament:  # the deal's rotations in the order they were played
                        self.count_tournament_match(pipe, tournament, match_id,
                                                    [seat_records for _, seat_records in counted])
                    events.match_changed(pipe, match_id, tournament)
                    pipe.execute()
                    return True
                except redis.WatchError:
                    continue
