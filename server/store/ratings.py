"""Ladder storage: ratings, the queue of matches to rate, rating histories.

Keys:
    rating:{game}           hash bot id -> {"mu", "sigma"}
    ladder:{game}           sorted set bot id -> ordinal (mu - 3 sigma)
    ratings:queue:{game}    list of finished rated match ids, oldest first
    ratings:lock:{game}     the lock the rating worker holds while consuming
    bot:{id}:ratings        list of {"mu", "sigma", "ordinal", "match", "at"}

The computation (openskill) is the worker's. It must consume the queue in
order under the lock: `with store.rating_lock(game): for mid in
store.rating_events(game): …; store.save_rating(...); store.ack_rating_event(game, mid)`.
An event is removed only after its ratings are saved, so a worker dying in
between leaves it for the next one.
"""

from __future__ import annotations

import json

from server.store.keys import now_iso, text

#: openskill's defaults: a new bot's rating before its first rated match
DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3.0


def ordinal(mu: float, sigma: float) -> float:
    return mu - 3.0 * sigma


def rating_dict(mu: float, sigma: float) -> dict:
    return {"mu": mu, "sigma": sigma, "ordinal": ordinal(mu, sigma)}


class Ratings:
    r: object

    def bot_rating(self, game: str, bot_id: str) -> dict:
        """The bot's rating {mu, sigma, ordinal}, the default one if never rated."""
        raw = self.r.hget(f"rating:{game}", bot_id)
        if raw is None:
            return rating_dict(DEFAULT_MU, DEFAULT_SIGMA)
        stored = json.loads(raw)
        return rating_dict(stored["mu"], stored["sigma"])

    def save_rating(self, game: str, bot_id: str, mu: float, sigma: float,
                    match_id: str | None = None) -> None:
        """Store a new rating and add it to the bot's history."""
        point = {**rating_dict(mu, sigma), "match": match_id, "at": now_iso()}
        pipe = self.r.pipeline()
        pipe.hset(f"rating:{game}", bot_id, json.dumps({"mu": mu, "sigma": sigma}))
        pipe.zadd(f"ladder:{game}", {bot_id: ordinal(mu, sigma)})
        pipe.rpush(f"bot:{bot_id}:ratings", json.dumps(point, separators=(",", ":")))
        pipe.execute()

    def rating_history(self, bot_id: str) -> list[dict]:
        return [json.loads(p) for p in self.r.lrange(f"bot:{bot_id}:ratings", 0, -1)]

    def rankings(self, game: str) -> list[dict]:
        """The ladder: rated bots that are not retired, best ordinal first.

        Ties (same ordinal) share a rank and the next rank is skipped.
        """
        ids = [text(i) for i in self.r.zrevrange(f"ladder:{game}", 0, -1)]
        if not ids:
            return []
        pipe = self.r.pipeline(transaction=False)  # one round trip for the whole ladder
        for bot_id in ids:
            pipe.hmget(f"bot:{bot_id}", "name", "retired", "matches", "wins")
        pipe.hmget(f"rating:{game}", ids)
        *records, ratings = pipe.execute()
        out: list[dict] = []
        for bot_id, record, rating in zip(ids, records, ratings, strict=True):
            name, retired, matches, wins = (json.loads(v) if v is not None else None for v in record)
            if name is None or retired or rating is None:
                continue
            stored = json.loads(rating)
            rating = rating_dict(stored["mu"], stored["sigma"])
            if out and out[-1]["rating"]["ordinal"] == rating["ordinal"]:
                rank = out[-1]["rank"]
            else:
                rank = len(out) + 1
            out.append({"rank": rank, "bot": bot_id, "name": name, "rating": rating,
                        "matches": matches or 0, "wins": wins or 0})
        return out

    def push_rating_event(self, game: str, match_id: str) -> None:
        """Queue a finished rated match for the rating worker."""
        self.r.rpush(f"ratings:queue:{game}", match_id)

    def rating_events(self, game: str, limit: int = 100) -> list[str]:
        """The oldest queued match ids, in order (not removed)."""
        return [text(m) for m in self.r.lrange(f"ratings:queue:{game}", 0, limit - 1)]

    def ack_rating_event(self, game: str, match_id: str) -> None:
        """Remove a rated match from the head of the queue once its ratings are saved."""
        self.r.lrem(f"ratings:queue:{game}", 1, match_id)

    def apply_rating_event(self, game: str, match_id: str, ratings: dict[str, tuple[float, float]]) -> bool:
        """Save the ratings `match_id` produced and drop it from the queue, atomically.

        Only while `match_id` is still the head of the queue: an event is
        applied once, in queue order, even if a lock holder stalled past its
        lock's timeout and another worker took over.
        """
        import redis

        queue = f"ratings:queue:{game}"
        with self.r.pipeline() as pipe:
            try:
                pipe.watch(queue)
                head = pipe.lindex(queue, 0)
                if head is None or text(head) != match_id:
                    pipe.unwatch()
                    return False
                pipe.multi()
                at = now_iso()
                for bot_id, (mu, sigma) in ratings.items():
                    point = {**rating_dict(mu, sigma), "match": match_id, "at": at}
                    pipe.hset(f"rating:{game}", bot_id, json.dumps({"mu": mu, "sigma": sigma}))
                    pipe.zadd(f"ladder:{game}", {bot_id: ordinal(mu, sigma)})
                    pipe.rpush(f"bot:{bot_id}:ratings", json.dumps(point, separators=(",", ":")))
                pipe.lpop(queue)
                pipe.execute()
                return True
            except redis.WatchError:
                return False

    def rating_lock(self, game: str, timeout_s: float = 60.0, blocking_timeout_s: float = 30.0):
        """A Redis lock (context manager) serialising the rating of one game."""
        return self.r.lock(f"ratings:lock:{game}", timeout=timeout_s,
                           blocking_timeout=blocking_timeout_s)
