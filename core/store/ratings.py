"""Ladder storage: ratings, the queue of matches to rate, rating histories.

Keys:
    rating:{game}           hash entrant -> {"mu", "sigma"}
    ladder:{game}           sorted set entrant -> ordinal (mu - 3 sigma)
    ratings:queue:{game}    list of finished rated deals, oldest first: each its finished
                            matches' ids joined by "," (a lone match: its id)
    ratings:lock:{game}     the lock the rating worker holds while consuming
    ratings:deals:{game}    list of the rated deals, in the order they were rated: each
                            [entrants, their deal ranks] (what a refit fits from, ~0.1 KB a deal)
    ratings:pairs:{game}    hash pair of accounts ("a|b") -> {"entrant|entrant": [deals, the
                            first's score]}: their encounters at ladder tables (core/collusion.py)
    ratings:met:{game}      hash entrant -> {opponent entrant: [deals, its score]}
    ratings:flags:{game}    hash pair of accounts -> {"accounts", "deals", "score", "expected",
                            "z", "at"}: the pairs the collusion test flagged, for good
    bot:{id}:ratings        list of {"mu", "sigma", "ordinal", "match", "at", "version"?}
                            ("match": the deal's last finished match)
                            (every version's points, in the order they were rated; the
                            latest `RATING_HISTORY_POINTS` only: a bot on the ladder all
                            year would otherwise grow it by hundreds of thousands)

A rating belongs to an *entrant*, a version of a bot (core/store/versions.py):
`entrant(bot, version)` is the bot id for version 1 — the ratings stored before
versions existed are version 1's — and `{bot}@{n}` for version n.

The computation (openskill) is the worker's. It must consume the queue in
order under the lock: `with store.rating_lock(game): for mid in
store.rating_events(game): …; store.save_rating(...); store.ack_rating_event(game, mid)`.
An event is removed only after its ratings are saved, so a worker dying in
between leaves it for the next one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import redis
from redis.commands.core import Script

from core.store.keys import members, now_iso, text
from core.store.lua import args, source
from core.store.probation import is_paused

#: openskill's defaults: a new bot's rating before its first rated match
DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3.0
#: a rating whose σ is above this is `provisional` (docs/api.md §6): half a new bot's σ
PROVISIONAL_SIGMA = DEFAULT_SIGMA * 0.5


#: what the ladder shows of each bot's record, and decides its place by (`rankings`)
LADDER_FIELDS = ("name", "matches", "wins", "faults", "rated_matches", "rated_wins", "retired", "ladder",
                 "version", "forfeit_streak")
#: how many points a bot's rating history keeps, its latest (`bot:{id}:ratings`)
RATING_HISTORY_POINTS = 2000


def account_of(bot: dict) -> str:
    """Whose a bot is, for fairness (the matchmaker's tables, the collusion test): its
    account; each house bot (the admin's) an account of its own."""
    owner = bot.get("owner") or "admin"
    return f"admin:{bot['id']}" if owner == "admin" else owner


def entrant(bot_id: str, version: int | None) -> str:
    """Who a rating belongs to: the bot id for its version 1, `{bot}@{n}` for version n."""
    return bot_id if version in (None, 1) else f"{bot_id}@{int(version)}"


def entrant_version(key: str) -> tuple[str, int]:
    """(bot id, version) of an entrant: `entrant`'s inverse."""
    bot_id, _, version = key.partition("@")
    return bot_id, int(version) if version else 1


def rating_queue_key(game: str) -> str:
    return f"ratings:queue:{game}"


def rated_deals_key(game: str) -> str:
    return f"ratings:deals:{game}"


def pairs_key(game: str) -> str:
    return f"ratings:pairs:{game}"


def met_key(game: str) -> str:
    return f"ratings:met:{game}"


def flags_key(game: str) -> str:
    return f"ratings:flags:{game}"


def queue_for_rating(pipe, game: str, match_ids: list[str]) -> None:
    """On `pipe` (the transaction concluding the match): queue a finished rated deal — its
    finished matches, in playing order (a lone match: itself) — for the rating worker, which
    rates it in one update (core/ratings.py `deal_ratings`). The ids travel in the event
    itself: a match's twins are gone from Redis once it is archived."""
    pipe.rpush(rating_queue_key(game), ",".join(match_ids))


def deal_of(event: str) -> list[str]:
    """The match ids of a queued rating event (`queue_for_rating`)."""
    return event.split(",")


def is_provisional(sigma: float) -> bool:
    """Whether a rating is still provisional: its σ above `PROVISIONAL_SIGMA`."""
    return sigma > PROVISIONAL_SIGMA


def ordinal(mu: float, sigma: float) -> float:
    return mu - 3.0 * sigma


def rating_dict(mu: float, sigma: float) -> dict:
    return {"mu": mu, "sigma": sigma, "ordinal": ordinal(mu, sigma)}


class Ratings:
    r: redis.Redis
    script: Callable[[str], Script]
    bot_records: Callable[[list[str]], dict[str, dict]]
    bot_fields: Callable[[list[str], Sequence[str]], dict[str, dict]]
    ladder_match_counts: Callable[[str, list[str]], dict[str, int]]
    match_ranks: Callable[[list[str]], list[tuple[str | None, list, list | None]]]

    def bot_rating(self, game: str, key: str) -> dict:
        """An entrant's rating {mu, sigma, ordinal} (a bot id: its version 1), the default
        one if never rated."""
        raw = self.r.hget(f"rating:{game}", key)
        if raw is None:
            return rating_dict(DEFAULT_MU, DEFAULT_SIGMA)
        stored = json.loads(raw)
        return rating_dict(stored["mu"], stored["sigma"])

    def save_rating(self, game: str, key: str, mu: float, sigma: float,
                    match_id: str | None = None) -> None:
        """Store an entrant's new rating (a bot id: its version 1) and add it to the bot's history."""
        bot_id, version = entrant_version(key)
        point = {**rating_dict(mu, sigma), "match": match_id, "at": now_iso(), "version": version}
        pipe = self.r.pipeline()
        pipe.hset(f"rating:{game}", key, json.dumps({"mu": mu, "sigma": sigma}))
        pipe.zadd(f"ladder:{game}", {key: ordinal(mu, sigma)})
        pipe.rpush(f"bot:{bot_id}:ratings", json.dumps(point, separators=(",", ":")))
        pipe.ltrim(f"bot:{bot_id}:ratings", -RATING_HISTORY_POINTS, -1)
        pipe.execute()

    def rating_history(self, bot_id: str) -> list[dict]:
        """The bot's latest `RATING_HISTORY_POINTS` rating points, oldest first."""
        return [json.loads(p) for p in self.r.lrange(f"bot:{bot_id}:ratings", 0, -1)]

    def rating_histories(self, entrants: list[tuple[str, int]], last: int) -> list[list[dict]]:
        """For each (bot, version): that version's points among the bot's latest `last` x 4
        (one round trip: the leaderboard's history lines)."""
        pipe = self.r.pipeline(transaction=False)
        for bot_id, _ in entrants:
            pipe.lrange(f"bot:{bot_id}:ratings", -4 * last, -1)
        out = []
        for (_, version), raw in zip(entrants, pipe.execute() if entrants else [], strict=True):
            points = [json.loads(p) for p in raw]
            out.append([p for p in points if p.get("version", 1) == version][-last:])
        return out

    def rankings(self, game: str) -> list[dict]:
        """The ladder: the latest version of each rated bot that is not retired and is on the
        ladder (`ladder` not false), best ordinal first (a version not yet rated is not on it),
        with its `ladder_matches`, whether it is `provisional` (core/ratings.py) and whether it
        is `paused` (core/store/bots.py `is_paused`); its record `matches` and `wins` is its rated
        play, `other_matches` and `other_wins` the rest.

        Ties (same ordinal) share a rank and the next rank is skipped.
        """
        keys = members(self.r.zrevrange(f"ladder:{game}", 0, -1))
        if not keys:
            return []
        bots = self.bot_fields(list(dict.fromkeys(entrant_version(k)[0] for k in keys)), LADDER_FIELDS)
        ratings = self.r.hmget(f"rating:{game}", keys)
        out: list[dict] = []
        for key, stored_rating in zip(keys, ratings, strict=True):
            bot_id, version = entrant_version(key)
            bot = bots.get(bot_id) or {}
            name, matches, wins, faults = (bot.get(k) for k in ("name", "matches", "wins", "faults"))
            rated_matches, rated_wins = (int(bot.get(k) or 0) for k in ("rated_matches", "rated_wins"))
            if (name is None or bot.get("retired") or bot.get("ladder") is False or stored_rating is None
                    or version != int(bot.get("version") or 1)):
                continue
            stored = json.loads(stored_rating)
            rating = rating_dict(stored["mu"], stored["sigma"])
            if out and out[-1]["rating"]["ordinal"] == rating["ordinal"]:
                rank = out[-1]["rank"]
            else:
                rank = len(out) + 1
            out.append({"rank": rank, "bot": bot_id, "version": version, "name": name, "rating": rating,
                        "matches": rated_matches, "wins": rated_wins,
                        "other_matches": (matches or 0) - rated_matches, "other_wins": (wins or 0) - rated_wins,
                        "faults": faults or 0,
                        "provisional": is_provisional(rating["sigma"]), "paused": is_paused(bot),
                        "entrant": key})
        played = self.ladder_match_counts(game, [row.pop("entrant") for row in out])
        for row in out:
            row["ladder_matches"] = played[entrant(row["bot"], row["version"])]
        return out

    def rating_deals(self, events: list[str]) -> list[list[tuple[str | None, list, list | None]]]:
        """For each queued event, its matches' (status, entrants, ranks) (`match_ranks`), in one
        round trip."""
        ids = [deal_of(e) for e in events]
        flat = iter(self.match_ranks([m for deal in ids for m in deal]))
        return [[next(flat) for _ in deal] for deal in ids]

    def rating_events(self, game: str, limit: int = 100) -> list[str]:
        """The oldest queued events (deals, `queue_for_rating`), in order (not removed)."""
        return [text(m) for m in self.r.lrange(rating_queue_key(game), 0, limit - 1)]

    def ack_rating_event(self, game: str, match_id: str) -> None:
        """Remove a rated match from the head of the queue once its ratings are saved."""
        self.r.lrem(rating_queue_key(game), 1, match_id)

    def apply_rating_event(self, game: str, match_id: str, ratings: dict[str, tuple[float, float]],
                           deal: tuple[list[str], list[int]] | None = None,
                           pairs: dict[str, dict] | None = None, met: dict[str, dict] | None = None,
                           held: tuple[str, str] | None = None) -> bool:
        """Save the ratings `match_id` produced (by entrant), keep its `deal` (entrants and deal
        ranks) and the encounter records it changed (`pairs` of accounts, entrants' `met`), and
        drop it from the queue, atomically.

        Only while `match_id` is still the head of the queue (one Lua step): an
        event is applied once, in queue order, even if a lock holder stalled
        past its lock's timeout and another worker took over. With `held` (the
        rating lock's key and its holder's token), only while that lock is still
        the caller's too: a stalled holder's ratings, computed from ratings the
        new holder may have changed since, are never written over them.
        """
        at = now_iso()
        keys = [rating_queue_key(game), f"rating:{game}", f"ladder:{game}", rated_deals_key(game),
                pairs_key(game), met_key(game), held[0] if held else rating_queue_key(game)]
        entrants = []
        records = {"pairs": [{"field": k, "record": json.dumps(v, separators=(",", ":"))} for k, v in (pairs or {}).items()],
                   "met": [{"field": k, "record": json.dumps(v, separators=(",", ":"))} for k, v in (met or {}).items()]}
        for key, (mu, sigma) in ratings.items():
            bot_id, version = entrant_version(key)
            point = {**rating_dict(mu, sigma), "match": deal_of(match_id)[-1], "at": at, "version": version}
            keys.append(f"bot:{bot_id}:ratings")
            entrants.append({"entrant": key, "rating": json.dumps({"mu": mu, "sigma": sigma}),
                             "ordinal": repr(ordinal(mu, sigma)), "point": json.dumps(point, separators=(",", ":"))})
        return bool(self.script(source("apply_rating_event"))(
            keys=keys, args=[args(match=match_id, token=held[1] if held else "", history=RATING_HISTORY_POINTS, entrants=entrants,
                                  deal=json.dumps(list(deal), separators=(",", ":")) if deal else "", **records)]))

    def rated_deals(self, game: str) -> list[tuple[list[str], list[int]]]:
        """Every rated deal of `game` (its entrants and deal ranks), in the order they were rated."""
        return [tuple(json.loads(d)) for d in self.r.lrange(rated_deals_key(game), 0, -1)]

    def pair_records(self, game: str, keys: list[str]) -> dict[str, dict]:
        """The encounter records of these pairs of accounts (core/collusion.py `PairRecord`), an
        empty one for a pair that never met."""
        if not keys:
            return {}
        raw = self.r.hmget(pairs_key(game), keys)
        return {k: json.loads(v) if v else {} for k, v in zip(keys, raw, strict=True)}

    def met_records(self, game: str, entrants: list[str]) -> dict[str, dict]:
        """Each entrant's results against each opponent entrant (core/collusion.py `MetRecord`),
        an empty one for an entrant that never played a rated deal."""
        if not entrants:
            return {}
        raw = self.r.hmget(met_key(game), entrants)
        return {e: json.loads(v) if v else {} for e, v in zip(entrants, raw, strict=True)}

    def collusion_flags(self, game: str) -> dict[str, dict]:
        """The pairs of accounts the collusion test flagged in `game`, each with its test."""
        return {text(k): json.loads(v) for k, v in self.r.hgetall(flags_key(game)).items()}

    def entrant_accounts(self, entrants: list[str]) -> dict[str, str]:
        """Each entrant's account (`account_of`), in one round trip: the owner field alone of each
        bot (the rating worker asks for every entrant of a game after each match)."""
        bot_ids = sorted({entrant_version(e)[0] for e in entrants})
        pipe = self.r.pipeline(transaction=False)
        for bot_id in bot_ids:
            pipe.hget(f"bot:{bot_id}", "owner")
        owners = {b: json.loads(raw) if raw else None for b, raw in zip(bot_ids, pipe.execute(), strict=True)}
        return {e: account_of({"id": entrant_version(e)[0], "owner": owners[entrant_version(e)[0]]})
                for e in entrants}

    def save_refit(self, game: str, fitted: dict[str, tuple[float, float]], flags: dict[str, dict],
                   held: tuple[str, str] | None = None) -> bool:
        """Flag the pairs of accounts `flags` (their tests) and replace the game's ratings by
        `fitted` (core/ratings.py `refit`) in one transaction: an entrant fitted with another
        rating gets it and a point in its history, one no longer rated leaves the ladder. With
        `held` (the rating lock's key and its holder's token), only while that lock is still
        the caller's (WATCHed: its expiry or another holder fails the transaction); whether it
        was made."""
        stored = {text(k): json.loads(v) for k, v in self.r.hgetall(f"rating:{game}").items()}
        at = now_iso()
        with self.r.pipeline() as pipe:
            try:
                if held is not None:
                    pipe.watch(held[0])
                    if text(pipe.get(held[0]) or b"") != held[1]:
                        return False
                pipe.multi()
                for field, test in flags.items():
                    pipe.hset(flags_key(game), field, json.dumps({"accounts": field.split("|"), **test, "at": at}))
                for key, old in stored.items():
                    if key not in fitted:
                        pipe.hdel(f"rating:{game}", key)
                        pipe.zrem(f"ladder:{game}", key)
                        continue
                    mu, sigma = fitted[key]
                    if (mu, sigma) == (old["mu"], old["sigma"]):
                        continue
                    bot_id, version = entrant_version(key)
                    pipe.hset(f"rating:{game}", key, json.dumps({"mu": mu, "sigma": sigma}))
                    pipe.zadd(f"ladder:{game}", {key: ordinal(mu, sigma)})
                    point = {**rating_dict(mu, sigma), "match": None, "at": at, "version": version, "refit": True}
                    pipe.rpush(f"bot:{bot_id}:ratings", json.dumps(point, separators=(",", ":")))
                    pipe.ltrim(f"bot:{bot_id}:ratings", -RATING_HISTORY_POINTS, -1)
                pipe.execute()
            except redis.WatchError:
                return False
        return True

    def bot_ratings(self, game: str, bot_ids: list[str]) -> dict[str, tuple[float, float]]:
        """(mu, sigma) of each entrant (a bot id: its version 1), the default for one never
        rated, in one round trip."""
        if not bot_ids:
            return {}
        raw = self.r.hmget(f"rating:{game}", bot_ids)
        out = {}
        for bot_id, value in zip(bot_ids, raw, strict=True):
            stored = json.loads(value) if value else {"mu": DEFAULT_MU, "sigma": DEFAULT_SIGMA}
            out[bot_id] = (stored["mu"], stored["sigma"])
        return out

    def rating_lock(self, game: str, timeout_s: float = 60.0, blocking_timeout_s: float = 30.0):
        """A Redis lock (context manager) serialising the rating of one game."""
        return self.r.lock(f"ratings:lock:{game}", timeout=timeout_s,
                           blocking_timeout=blocking_timeout_s)
