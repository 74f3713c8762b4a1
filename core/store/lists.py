"""Finding things: matches and tournaments newest first, by game and by bot.

Reads the sorted sets each concept writes with every new record, scored by
creation order (`matches:seq`, `tournaments:seq`): `matches`,
`matches:game:{game}` and `bot:{id}:matches` (core/store/matches.py);
`tournaments`, `tournaments:game:{game}` and `tournaments:bot:{id}`
(core/store/tournaments.py). A list is a range read of one of them, never a
scan; a page is the `limit` newest ids below a cursor — the score of the last
id of the page before — so pages stay put while new records arrive.

Key:
    lists:indexed    set once the records stored before the game and tournament
                     lists existed are in them (`index_lists`; the per-bot match
                     list has its own, `index_bot_matches`)
"""

from __future__ import annotations

import json

import redis

from core.store.keys import load_fields, scored
from core.store.matches import bot_matches_key, game_matches_key
from core.store.tournaments import bot_tournaments_key, game_tournaments_key

MATCHES, TOURNAMENTS = "matches", "tournaments"
INDEXED = "lists:indexed"


def _key(kind: str, game: str | None, bot: str | None) -> str:
    if kind == MATCHES:
        return bot_matches_key(bot) if bot else game_matches_key(game) if game else MATCHES
    return bot_tournaments_key(bot) if bot else game_tournaments_key(game) if game else TOURNAMENTS


class Lists:
    r: redis.Redis

    def newest(self, kind: str, limit: int, before: int | None = None, game: str | None = None,
               bot: str | None = None) -> tuple[list[str], int | None]:
        """Up to `limit` ids of `kind` ("matches" or "tournaments"), newest first, created before
        position `before`, of `bot` (else of `game`, else all); and the position the next page
        starts before (None on the last page)."""
        top = f"({before}" if before is not None else "+inf"
        found = scored(self.r.zrevrangebyscore(_key(kind, game, bot), top, "-inf", start=0, num=limit + 1,
                                               withscores=True))
        ids = [i for i, _ in found[:limit]]
        return ids, int(found[limit - 1][1]) if len(found) > limit else None

    def get_tournaments(self, tids: list[str]) -> list[dict | None]:
        """Many tournaments in one round trip (None for a missing one)."""
        pipe = self.r.pipeline(transaction=False)
        for tid in tids:
            pipe.hgetall(f"tournament:{tid}")
        return [load_fields(raw) if raw else None for raw in pipe.execute()]

    def index_lists(self, batch: int = 1000) -> int:
        """Once per database: enter the records stored before the game and tournament lists
        existed; how many."""
        if self.r.get(INDEXED):
            return 0
        done = 0
        for kind, record, fields in ((MATCHES, "match", ("game",)), (TOURNAMENTS, "tournament", ("game", "bots"))):
            start = 0
            while True:
                found = scored(self.r.zrange(kind, start, start + batch - 1, withscores=True))
                if not found:
                    break
                start += len(found)
                pipe = self.r.pipeline(transaction=False)
                for ident, _ in found:
                    pipe.hmget(f"{record}:{ident}", *fields)
                rows = pipe.execute()
                pipe = self.r.pipeline(transaction=False)
                for (ident, score), values in zip(found, rows, strict=True):
                    if values[0] is None:
                        continue
                    game = json.loads(values[0])
                    pipe.zadd(_key(kind, game, None), {ident: score})
                    for bot in set(json.loads(values[1]) if kind == TOURNAMENTS and values[1] else ()):
                        pipe.zadd(_key(kind, None, bot), {ident: score})
                    done += 1
                pipe.execute()
        self.r.set(INDEXED, 1)
        return done
