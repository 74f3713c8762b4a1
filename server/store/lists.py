"""Finding things: matches and tournaments newest first, by game and by bot.

Keys (sorted sets of ids, scored by creation order: `matches:seq`, `tournaments:seq`):
    matches:game:{game}        the game's matches
    bot:{id}:matches           the matches a bot sits in
    tournaments:game:{game}    the game's tournaments
    tournaments:bot:{id}       the tournaments a bot entered
    lists:indexed              set once the records stored before these indexes are in them

Each record is indexed in the pipeline that stores it (`index_match`,
`index_tournament`), so a list is a range read of one sorted set, never a
scan. A page is the `limit` newest ids below a cursor — the score of the last
id of the page before — so pages stay put while new records arrive.
"""

from __future__ import annotations

import json

from server.store.keys import text

MATCHES, TOURNAMENTS = "matches", "tournaments"
INDEXED = "lists:indexed"
#: the hash of one record of each kind: match:{id}, tournament:{id}
RECORD = {MATCHES: "match", TOURNAMENTS: "tournament"}


def game_key(kind: str, game: str) -> str:
    return f"{kind}:game:{game}"


def bot_key(kind: str, bot_id: str) -> str:
    return f"bot:{bot_id}:matches" if kind == MATCHES else f"tournaments:bot:{bot_id}"


def index_match(pipe, match_id: str, seq: int, game: str, bots: list[str]) -> None:
    """Queue on `pipe` a new match's entries in its game's and its bots' lists."""
    _index(pipe, MATCHES, match_id, seq, game, bots)


def index_tournament(pipe, tid: str, seq: int, game: str, bots: list[str]) -> None:
    _index(pipe, TOURNAMENTS, tid, seq, game, bots)


def _index(pipe, kind: str, ident: str, seq: int, game: str, bots: list[str]) -> None:
    pipe.zadd(game_key(kind, game), {ident: seq})
    for bot_id in set(bots):
        pipe.zadd(bot_key(kind, bot_id), {ident: seq})


class Lists:
    r: object

    def newest(self, kind: str, limit: int, before: int | None = None, game: str | None = None,
               bot: str | None = None) -> tuple[list[str], int | None]:
        """Up to `limit` ids of `kind` ("matches" or "tournaments"), newest first, created before
        position `before`, of `bot` (else of `game`, else all); and the position the next page
        starts before (None on the last page)."""
        key = bot_key(kind, bot) if bot else game_key(kind, game) if game else kind
        top = f"({before}" if before is not None else "+inf"
        found = self.r.zrevrangebyscore(key, top, "-inf", start=0, num=limit + 1, withscores=True)
        ids = [text(i) for i, _ in found[:limit]]
        return ids, int(found[limit - 1][1]) if len(found) > limit else None

    def records(self, kind: str, ids: list[str]) -> list[dict | None]:
        """Many matches or tournaments in one round trip (None for a missing one)."""
        pipe = self.r.pipeline(transaction=False)
        for ident in ids:
            pipe.hgetall(f"{RECORD[kind]}:{ident}")
        return [{text(k): json.loads(v) for k, v in raw.items()} if raw else None for raw in pipe.execute()]

    def index_lists(self, batch: int = 1000) -> int:
        """Once per database: enter the records stored before these lists existed; how many."""
        if self.r.get(INDEXED):
            return 0
        done = 0
        for kind, fields in ((MATCHES, ("game", "seats")), (TOURNAMENTS, ("game", "bots"))):
            start = 0
            while True:
                found = self.r.zrange(kind, start, start + batch - 1, withscores=True)
                if not found:
                    break
                start += len(found)
                pipe = self.r.pipeline(transaction=False)
                for ident, _ in found:
                    pipe.hmget(f"{RECORD[kind]}:{text(ident)}", *fields)
                rows = pipe.execute()
                pipe = self.r.pipeline(transaction=False)
                for (ident, score), (game, bots) in zip(found, rows, strict=True):
                    if game is not None:
                        _index(pipe, kind, text(ident), int(score), json.loads(game),
                               json.loads(bots) if bots else [])
                        done += 1
                pipe.execute()
        self.r.set(INDEXED, 1)
        return done
