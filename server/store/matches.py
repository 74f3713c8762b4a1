"""Matches: a match is an event log.

Keys:
    match:{id}        hash (JSON values): id, game, seats, seed, options, status,
                      move_timeout_ms, max_faults, tournament, rated, owner,
                      result, created, started, finished, reason
    match:{id}:log    list of JSON entries {"turn", "seat", "action"[, "fault"]}
    matches           sorted set of every match id by creation order

`(game, seats, seed, options)` plus the log rebuild the state exactly
(`replay`). Turn k is appended only while the log holds exactly k entries and
the match is not over, checked and written by one Lua script, so a bot's
answer and the referee's timeout default can never both land on one turn.
"""

from __future__ import annotations

import json

import games
from server.store.accounts import queued_key
from server.store.keys import dump_fields, load_fields, new_id, now_iso

OVER = ("finished", "aborted")

#: KEYS[1] the log, KEYS[2] the match hash; ARGV[1] the turn, ARGV[2] the entry
APPEND_LUA = """
local status = redis.call('HGET', KEYS[2], 'status')
if not status or status == '"finished"' or status == '"aborted"' then return 0 end
if redis.call('LLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[2])
return 1
"""


def log_key(match_id: str) -> str:
    return f"match:{match_id}:log"


class Matches:
    r: object

    def create_match(self, game: str, seats: list[str], seed: int, options: dict,
                     move_timeout_ms: int = 2000, max_faults: int = 3,
                     tournament_id: str | None = None, rated: bool = False,
                     owner: str | None = None) -> dict:
        """Store a new match, status "queued" (the caller enqueues its job).

        `owner` is the account that asked for it: its queued matches count
        toward the per-account limit until the match starts.
        """
        match_id = new_id("m")
        match = {
            "id": match_id, "game": game, "seats": list(seats), "seed": seed,
            "options": options or {}, "status": "queued",
            "move_timeout_ms": move_timeout_ms, "max_faults": max_faults,
            "tournament": tournament_id, "rated": bool(rated), "owner": owner,
            "result": None, "created": now_iso(), "started": None, "finished": None,
        }
        seq = self.r.incr("matches:seq")
        pipe = self.r.pipeline()
        pipe.hset(f"match:{match_id}", mapping=dump_fields(match))
        pipe.zadd("matches", {match_id: seq})
        if owner:
            pipe.sadd(queued_key(owner), match_id)
        pipe.execute()
        return match

    def get_match(self, match_id: str) -> dict | None:
        if not isinstance(match_id, str) or len(match_id) > 64:
            return None
        raw = self.r.hgetall(f"match:{match_id}")
        return load_fields(raw) if raw else None

    def match_log(self, match_id: str) -> list[dict]:
        return [json.loads(e) for e in self.r.lrange(log_key(match_id), 0, -1)]

    def log_length(self, match_id: str) -> int:
        return int(self.r.llen(log_key(match_id)))

    def append_entry(self, match_id: str, entry: dict) -> bool:
        """Append `entry` iff the log holds exactly `entry["turn"]` entries (atomic)."""
        script = self.r.register_script(APPEND_LUA)
        data = json.dumps(entry, separators=(",", ":"))
        return bool(script(keys=[log_key(match_id), f"match:{match_id}"],
                           args=[int(entry["turn"]), data]))

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
        pipe = self.r.pipeline()
        pipe.hset(f"match:{match_id}", mapping=dump_fields(fields))
        if status != "queued":
            owner = self.r.hget(f"match:{match_id}", "owner")
            if owner and json.loads(owner):
                pipe.srem(queued_key(json.loads(owner)), match_id)
        pipe.execute()

    def finish_match(self, match_id: str, result: dict) -> None:
        self.set_match_status(match_id, "finished", result=result, finished=now_iso())

    def abort_match(self, match_id: str, reason: str) -> None:
        self.set_match_status(match_id, "aborted", reason=reason, finished=now_iso())
