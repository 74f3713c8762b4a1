"""Bot versions: a bot's code changes, its history stays and each version is rated on its own.

Keys:
    bot:{id}            (core/store/bots.py) `version` (the latest, 1 when absent) and
                        `version_created`; its `url`/`entrypoint` are the latest version's
    bot:{id}:versions   hash version -> JSON {"version", "created", "url"?, "entrypoint"?, "code"?}
                        of each version superseded by a newer one: how to reach it still

A match records the version of each seat (`versions`, pinned when the match, its
tournament or its comparison is created), and the referee reaches a seat the way
that version is reached (`seat_bots`): a webhook version at its own URL, an
in-process version through its own entrypoint, a hosted version with its own code
(its sha256, core/hosted_code.py) and entrypoint. A polling bot's versions are
labels (one process answers for the bot): its matches and ratings are kept
apart, but two of its versions cannot play each other.

Ratings are per *entrant* (core/store/ratings.py `entrant(bot, version)`): version 1
under the bare bot id, as before versions existed, version n > 1 as `{bot}@{n}`.
The ladder shows each bot's latest version.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import redis
from redis.commands.core import Script

from core.store.keys import now_iso
from core.store.lua import args, source
from core.store.ratings import entrant, rating_dict

#: the fields of a bot's record that say how one version is reached
REACHED_BY = ("url", "entrypoint", "code")


def versions_key(bot_id: str) -> str:
    return f"bot:{bot_id}:versions"


def version_of(bot: dict) -> int:
    """A bot record's latest version (1 for a bot from before versions)."""
    return int(bot.get("version") or 1)


def match_versions(match: dict) -> list[int]:
    """The version each seat of a match played (1 for a match from before versions)."""
    versions = match.get("versions")
    n = len(match.get("seats") or [])
    return [int(v) for v in versions] if isinstance(versions, list) and len(versions) == n else [1] * n


class Versions:
    r: redis.Redis
    script: Callable[[str], Script]
    bot_record: Callable[[str], dict | None]
    bot_records: Callable[[list[str]], dict[str, dict]]
    bot_ratings: Callable[[str, list[str]], dict[str, tuple[float, float]]]

    def new_version(self, bot_id: str, url: str | None = None, entrypoint: str | None = None,
                    code: str | None = None) -> int:
        """Start the bot's next version (reached at `url`, through `entrypoint`, with `code` if
        given, else as the latest is now); its number. Matches already created keep theirs."""
        changed = {name: json.dumps(v) for name, v in (("url", url), ("entrypoint", entrypoint), ("code", code))
                   if v is not None}
        return int(self.script(source("new_version"))(keys=[f"bot:{bot_id}", versions_key(bot_id)],
                                                      args=[args(now=json.dumps(now_iso()), **changed)]))

    def bot_versions(self, bot: dict) -> list[dict]:
        """Every version of `bot` (its record), newest first: {"version", "created", "rating"}."""
        latest = version_of(bot)
        old = {int(k): json.loads(v) for k, v in self.r.hgetall(versions_key(bot["id"])).items()}
        created = {n: (old.get(n) or {}).get("created") for n in range(1, latest)}
        created[latest] = bot.get("version_created") or bot.get("created")
        if latest == 1:
            created[1] = bot.get("created")
        keys = [entrant(bot["id"], n) for n in range(latest, 0, -1)]
        ratings = self.bot_ratings(bot["game"], keys)
        return [{"version": n, "created": created.get(n), "rating": rating_dict(*ratings[key])}
                for n, key in zip(range(latest, 0, -1), keys, strict=True)]

    def current_versions(self, bot_ids: list[str]) -> list[int]:
        """The latest version of each bot, in order (1 for one that does not exist)."""
        pipe = self.r.pipeline(transaction=False)
        for bot_id in bot_ids:
            pipe.hget(f"bot:{bot_id}", "version")
        return [int(v) if v else 1 for v in pipe.execute()]

    def version_record(self, bot_id: str, version: int | None) -> dict | None:
        """The bot's record as its `version` is reached (its url or entrypoint then), with
        `version`; None if there is no such bot. The latest version for None or an unknown one."""
        bot = self.bot_record(bot_id)
        return None if bot is None else self._as_version(bot, version)

    def seat_bots(self, match: dict) -> list[dict | None]:
        """Each seat's bot record as the version the match pinned is reached, in seat order
        (None for a bot that no longer exists), in two round trips."""
        return self.pinned_bots(match, self.bot_records(list(dict.fromkeys(match["seats"]))))

    def pinned_bots(self, match: dict, bots: dict[str, dict]) -> list[dict | None]:
        """`seat_bots` from the seats' latest records (`bots`, by id, read already): one
        more round trip only for a seat pinned to an older version."""
        return [None if b not in bots else self._as_version(bots[b], v)
                for b, v in zip(match["seats"], match_versions(match), strict=True)]

    def _as_version(self, bot: dict, version: int | None) -> dict:
        if version is None or not is_older(bot, version):
            return as_version(bot, version, None)
        return as_version(bot, version, self.r.hget(versions_key(bot["id"]), version))


def is_older(bot: dict, version: int | None) -> bool:
    """Whether `version` is one of the bot's (its latest record's) older versions: reached as
    `versions_key` says."""
    return version is not None and int(version) != version_of(bot)


def as_version(bot: dict, version: int | None, old: bytes | str | None) -> dict:
    """The bot's record (its latest) as `version` is reached: `old`, its entry in
    `versions_key` (None for the latest version, or one unknown: then the latest)."""
    if old is None or version is None or not is_older(bot, version):
        return {**bot, "version": version_of(bot)}
    record = json.loads(old)
    out = {k: v for k, v in bot.items() if k not in REACHED_BY}
    out.update({k: record[k] for k in REACHED_BY if k in record})
    return {**out, "version": int(version)}


__all__ = ["Versions", "as_version", "is_older", "match_versions", "version_of", "versions_key"]
