"""The ladder's pairings: the duplicate deals the matchmaker (worker/matchmaker.py) set up.

Keys:
    pairing:{id}                 hash (JSON values): id, game, bots (the table, in its first
                                 rotation's seat order), matches (its twins, in playing order),
                                 seed, created (epoch ms)
    matchmaker:{game}:pairings   sorted set of the game's pairings in play (a twin not over yet),
                                 scored by creation (epoch ms)
    matchmaker:{game}:played     hash entrant -> ladder matches it finished (counted once, when
                                 the last twin of its pairing is over)
    bot:{id}:ladder              sorted set of the bot's ladder match ids, scored by creation
                                 (epoch ms): how many it was given in the last hour, and its
                                 ladder history
    (the matchmaker's lease of a game is `lease:ladder:{game}`: core/store/jobs.py)

A pairing is one duplicate deal at one table: every seat rotation, played
one after the other (twins), on the standard clock, rated. It is written
whole or not at all (`create_pairing`: one transaction holding the pairing,
its matches, the bots' ladder lists and its first twin's active mark, and
only while the matchmaker's lease is still the caller's), so a matchmaker
killed at any point has made a pairing once or not at all: the recovery
sweep enqueues a first twin it did not get to enqueue (it is active), and
each twin's end enqueues the next (core/conclusion.py). A pairing leaves
play once (`settle_pairing`, one Lua step), which counts its finished
matches for its bots' versions.
"""

from __future__ import annotations

from collections.abc import Callable

import redis
from redis.commands.core import Script

from core.store.jobs import lease_key, mark_active
from core.store.keys import dump_fields, load_fields, members, new_id, now_ms, text
from core.store.lua import args, source
from core.store.ratings import entrant
from core.store.versions import match_versions
from games.seats import rotate
from sdk.clock import DEFAULT_TIME

OVER = ("finished", "aborted")
#: the window of "ladder matches in the last hour" (ms)
HOUR_MS = 3_600_000


def pairings_key(game: str) -> str:
    return f"matchmaker:{game}:pairings"


def played_key(game: str) -> str:
    return f"matchmaker:{game}:played"


def bot_ladder_key(bot_id: str) -> str:
    return f"bot:{bot_id}:ladder"


def pairing_key(pid: str) -> str:
    return f"pairing:{pid}"


def ladder_lease(game: str) -> tuple[str, str]:
    """The (kind, id) of the matchmaker's lease of `game` (core/store/jobs.py `take_lease`)."""
    return "ladder", game


class Ladder:
    r: redis.Redis
    script: Callable[[str], Script]
    queue: str
    current_versions: Callable[[list[str]], list[int]]
    create_match: Callable[..., dict]
    get_matches: Callable[..., list[dict | None]]
    enqueue: Callable[..., None]

    def create_pairing(self, game: str, table: list[str], seed: int, order: list[int],
                       lease_token: str) -> dict | None:
        """Write a pairing of `table` (bot ids, the first rotation's seats) on the deal `seed`:
        one match per rotation in `order` (the rotations, in playing order), each seat's bot at
        its latest version, the standard clock, rated, `kind` "ladder". All in one transaction,
        only while the game's matchmaker lease holds `lease_token` (else None: another matchmaker
        took over); then its first twin is enqueued (or, if the caller dies first, the sweep
        enqueues it: it is marked active in the same transaction)."""
        import redis

        pid = new_id("p")
        mids = [f"m_{pid.removeprefix('p_')}_{r}" for r in order]
        versions = self.current_versions(list(table))
        created = now_ms()
        lease = lease_key(*ladder_lease(game))
        pairing = {"id": pid, "game": game, "bots": list(table), "matches": mids, "seed": seed,
                   "created": created}
        with self.r.pipeline() as pipe:
            try:
                pipe.watch(lease)
                held = pipe.get(lease)
                if held is None or text(held) != lease_token:
                    pipe.unwatch()
                    return None
                pipe.multi()
                for r, mid in zip(order, mids, strict=True):
                    seats = rotate(list(table), r)
                    self.create_match(game, seats, seed, {}, move_timeout_ms=DEFAULT_TIME.move_timeout_ms,
                                      max_faults=DEFAULT_TIME.max_faults, time_bank_ms=DEFAULT_TIME.time_bank_ms,
                                      rated=True, match_id=mid, twins=mids, versions=rotate(versions, r),
                                      kind="ladder", pairing=pid, pipe=pipe)
                    for bot_id in set(seats):
                        pipe.zadd(bot_ladder_key(bot_id), {mid: created})
                pipe.hset(pairing_key(pid), mapping=dump_fields(pairing))
                pipe.zadd(pairings_key(game), {pid: created})
                mark_active(pipe, self.queue, "match", mids[0])
                pipe.execute()
            except redis.WatchError:
                return None
        self.enqueue("match", [mids[0]])
        return pairing

    def get_pairing(self, pid: str) -> dict | None:
        raw = self.r.hgetall(pairing_key(pid))
        return load_fields(raw) if raw else None

    def pairings_in_play(self, game: str) -> list[dict]:
        """The game's pairings in play, oldest first."""
        ids = members(self.r.zrange(pairings_key(game), 0, -1))
        if not ids:
            return []
        pipe = self.r.pipeline(transaction=False)
        for pid in ids:
            pipe.hgetall(pairing_key(pid))
        return [load_fields(raw) for raw in pipe.execute() if raw]

    def settle_pairing(self, game: str, pid: str) -> bool:
        """If every match of the pairing is over: it leaves play and its finished matches are
        counted for their seats' entrants (`ladder_matches`), once (True for that call)."""
        pairing = self.get_pairing(pid)
        if pairing is None:
            self.r.zrem(pairings_key(game), pid)
            return False
        found = self.get_matches(pairing["matches"], ("status", "seats", "versions"))
        matches = [m for m in found if m is not None]
        if len(matches) < len(found) or any(m["status"] not in OVER for m in matches):
            return False
        entrants = [entrant(b, v) for m in matches if m["status"] == "finished"
                    for b, v in zip(m["seats"], match_versions(m), strict=True)]
        return bool(self.script(source("settle_pairing"))(keys=[pairings_key(game), played_key(game)],
                                                          args=[args(pairing=pid, entrants=entrants)]))

    def ladder_recent(self, bot_ids: list[str], since_ms: int) -> dict[str, int]:
        """How many ladder matches each bot was given since `since_ms` (epoch ms), one round trip."""
        if not bot_ids:
            return {}
        pipe = self.r.pipeline(transaction=False)
        for bot_id in bot_ids:
            pipe.zcount(bot_ladder_key(bot_id), since_ms, "+inf")
        return {b: int(n) for b, n in zip(bot_ids, pipe.execute(), strict=True)}

    def ladder_match_counts(self, game: str, entrants: list[str]) -> dict[str, int]:
        """Ladder matches each entrant (a bot's version: core/store/ratings.py) finished."""
        if not entrants:
            return {}
        raw = self.r.hmget(played_key(game), entrants)
        return {e: int(n or 0) for e, n in zip(entrants, raw, strict=True)}

    def bot_ladder_matches(self, bot_id: str, limit: int) -> list[str]:
        """The bot's latest ladder match ids, newest first."""
        return members(self.r.zrevrange(bot_ladder_key(bot_id), 0, limit - 1))

    def ladder_matches_in_play(self, game: str) -> list[dict]:
        """For each of the game's pairings in play, the match of it being played (or due) now."""
        out = []
        for pairing in self.pairings_in_play(game):
            matches = self.get_matches(pairing["matches"], ("id", "status", "seats", "versions", "started", "rated",
                                                            "twins"))
            due = next((m for m in matches if m is not None and m["status"] not in OVER), None)
            if due is not None:
                out.append({**due, "pairing": pairing["id"], "rotation": pairing["matches"].index(due["id"]) + 1,
                            "rotations": len(pairing["matches"])})
        return out
