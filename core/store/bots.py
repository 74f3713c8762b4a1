"""Bots: who plays, how to reach them, and their record.

Keys:
    bot:{id}          hash (JSON values): id, name, game, kind, owner, url?,
                      entrypoint?, created, retired, matches, wins, faults, nonce;
                      last_seen?, last_failed? (timestamps, as `created`: ISO 8601 UTC to
                      the ms, `keys.iso_ms`), last_failure? (what failed, in the platform's
                      words), last_noted? ("seen" | "failed": which was noted last, for two
                      in one millisecond): its liveness, core/liveness.py;
                      last_pinged? (a timestamp: the heartbeat's claim, worker/heartbeat.py);
                      forfeit_streak? (ladder matches forfeited in a row: core/store/probation.py);
                      max_concurrent? (its matches at once: core/store/slots.py);
                      version?, version_created? (its latest version: core/store/versions.py);
                      accepts? ("everyone" | "owner": who may enter it in a match; absent
                      is "everyone"); person? (true: an account's person seat, a polling
                      bot the web page answers: core/store/people.py)
                      ladder? (false: off its game's ladder, the matchmaker
                      pairs it with nobody; absent is true)
    bot:{id}:faults   list of `{kind: count}` of its last FAULT_MATCHES matches, newest first
    bots              sorted set of every bot id, scored by registration order
    bots:game:{game}  the same, for one game
    bots:seq          the registration counter
    bots:names:{game} hash folded name -> id of the active bot holding it (names are
                      unique among a game's active bots, case-insensitive)
    bot:{id}:matches  sorted set of the bot's match ids, scored by creation order
                      (written by core/store/matches.py with the match)
    house_bots        hash "{game}/{name}" -> id of the house bot placed under that name
                      (`place_house_bot`): placed once, whatever became of it since

A bot's secret is never stored: it is HMAC(server key, id:nonce), so the
referee can sign webhook calls and check a polling bot's credential while a
copy of the database alone reveals nothing. The secret starts with the bot id
so a credential names the bot it claims to be; the HMAC part is compared in
constant time.

A bot's id, nonce, kind and owner never change, so a process that checked a
secret once keeps them (`known_credential`: per process, by bot id, no round
trip) and checks the next request's secret against the one derived from that
nonce, in constant time. What can change — the bot retired (its secret
revoked for good), a bot deleted by hand and registered again under its id —
is checked by the request's own Lua script (`run_credited`): its first
command reads the bot's nonce and `retired`, and the script does its work only if
the nonce is the one the secret was checked against and the bot is not
retired, so a retirement takes effect at the very next request. That script also
notes the bot seen (`last_seen`) when it was last noted `SEEN_EVERY_MS` ago or
more: the credential, the liveness and the request's work in one round trip.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

import redis
from redis.commands.core import Script

from core.store.counts import Counts
from core.store.keys import dump_fields, iso_ms, load_fields, members, new_id, now_iso, now_ms, scored, text
from core.store.lua import args, source
from core.store.ratings import entrant, rating_dict

#: a bot's slots when it did not say (docs/api.md "Bots")
DEFAULT_MAX_CONCURRENT = 4

#: A bot's request notes it seen (`last_seen`, core/liveness.py) at most this often: one write a
#: second is news enough
SEEN_EVERY_MS = 1000
#: What a credited script (one whose first step is `credited`, core/store/lua/lib/credited.lua)
#: answers when the credential no longer holds
NOT_CREDITED = b"not credited"


def stored_stamp(epoch_ms: int) -> str:
    """An instant as a bot's hash holds it (JSON of `keys.iso_ms`): what the Lua steps write
    and compare (the quotes do not change the order)."""
    return f'"{iso_ms(epoch_ms)}"'


class Credential:
    """A secret this process checked (`Bots.known_credential`): the bot's fields that never change
    (`bot`: id, kind, owner) and the nonce (`nonce`, as stored) the secret was derived from."""

    __slots__ = ("bot", "nonce", "secret")

    def __init__(self, bot: dict, nonce: bytes, secret: bytes) -> None:
        self.bot, self.nonce, self.secret = bot, nonce, secret


class NotCredited(Exception):
    """A credited script (`Bots.run_credited`) found the credential no longer the bot's: the bot was
    retired, or holds another nonce."""


#: the credentials one process keeps (`Bots.known_credential`); forgotten all at once past this
CREDENTIALS_KEEP = 100_000

class NameTaken(ValueError):
    """Another active bot of the game has this name (compared case-insensitively)."""

    def __init__(self, name: str, holder: str) -> None:
        super().__init__(f"the name {name!r} is taken by bot {holder}")
        self.holder = holder


def fold_name(name: str) -> bytes:
    """The form names are compared in: compatibility-normalised, case-folded ("Ａlice" is "alice"),
    as UTF-8 (a lone surrogate of a name stored before names were checked kept as it is)."""
    return unicodedata.normalize("NFKC", name).casefold().encode("utf-8", "surrogatepass")


def names_key(game: str) -> str:
    return f"bots:names:{game}"


PUBLIC_FIELDS = (
    "id", "name", "game", "kind", "owner", "url", "entrypoint", "code", "probe_failure",
    "created", "retired", "matches", "wins", "rated_matches", "rated_wins", "faults", "last_seen", "last_failed",
    "last_failure", "last_noted", "forfeit_streak",
    "max_concurrent", "version", "version_created", "accepts", "ladder", "person",
)
#: who may enter a bot in a challenge, tournament or comparison: any account, or its own only
ACCEPTS = ("everyone", "owner")
#: the matches `faults_by_kind` counts over
FAULT_MATCHES = 100


#: a bot's liveness timestamps (core/liveness.py, worker/heartbeat.py)
LIVENESS_STAMPS = ("last_seen", "last_failed", "last_pinged")


#: the fields of a bot's record a match runner uses (core/store/runs.py): how to reach it, its slots
RUNNER_FIELDS = ("id", "kind", "owner", "url", "entrypoint", "code", "max_concurrent", "version")


def read_runner_record(pipe, bot_id: str) -> None:
    """On `pipe`: read the bot's `RUNNER_FIELDS` (`runner_record` decodes the reply)."""
    pipe.hmget(f"bot:{bot_id}", RUNNER_FIELDS)


def runner_record(values: list) -> dict | None:
    """A bot's `RUNNER_FIELDS` from `read_runner_record`'s reply, the fields it has; None if
    there is no such bot."""
    if values[0] is None:
        return None
    return {k: json.loads(v) for k, v in zip(RUNNER_FIELDS, values, strict=True) if v is not None}


def on_ladder(bot: dict) -> bool:
    """Whether the bot is on its game's ladder (`ladder`; a bot registered before the flag is)."""
    return bot.get("ladder") is not False


#: the share of a bot's slots the ladder may hold at once (at least one: worker/matchmaker.py)
LADDER_SHARE = 0.5


def ladder_room(bot: dict) -> int:
    """The most ladder pairings a bot is in at once: `LADDER_SHARE` of its slots, at least 1."""
    return max(1, math.ceil(int(bot.get("max_concurrent") or DEFAULT_MAX_CONCURRENT) * LADDER_SHARE))


def guest_share(bot: dict) -> int:
    """The slots of a bot that matches other accounts start with it may hold at once
    (core/store/slots.py, core/store/guests.py): on the ladder, what `ladder_room` leaves (0 for a
    bot of one slot: other accounts may not enter it then); off the ladder, all of them."""
    cap = int(bot.get("max_concurrent") or DEFAULT_MAX_CONCURRENT)
    return cap - ladder_room(bot) if on_ladder(bot) else cap


def accepts_of(bot: dict) -> str:
    """Who may enter the bot (`ACCEPTS`); a bot registered before consent existed accepts everyone."""
    return bot.get("accepts") or "everyone"


def count_result(counts: Counts, record: dict, ladder: bool, rated: bool = False) -> None:
    """What one finished match (a seat's `record`: bot, won, faults, forfeit?, faults_by_kind?)
    adds to its bot's record, gathered in `counts` (called by the match's conclusion);
    only a `ladder` match moves its forfeit streak (core/store/probation.py), only a `rated` one its
    rated record (`rated_matches`, `rated_wins`: the leaderboard's, which matches an account
    schedules itself must not move)."""
    # the hash holds JSON, and a JSON integer is what HINCRBY reads and writes
    key = f"bot:{record['bot']}"
    counts.add(key, "matches", 1)
    counts.add(key, "wins", 1 if record["won"] else 0)
    if rated:
        counts.add(key, "rated_matches", 1)
        counts.add(key, "rated_wins", 1 if record["won"] else 0)
    counts.add(key, "faults", int(record["faults"]))
    if ladder:
        if record.get("forfeit"):
            counts.add(key, "forfeit_streak", 1)
        else:
            counts.set(key, "forfeit_streak", 0)  # in order with a deal's other rotations
    if "faults_by_kind" in record:
        counts.push(f"{key}:faults", json.dumps(record["faults_by_kind"], separators=(",", ":")), FAULT_MATCHES)


class Bots:
    r: redis.Redis
    secret_key: bytes
    script: Callable[[str], Script]
    bot_rating: Callable[[str, str], dict]  # core/store/ratings.py
    bot_ratings: Callable[[str, list[str]], dict[str, tuple[float, float]]]

    def create_bot(self, owner_id: str, name: str, game: str, kind: str,
                   url: str | None = None, entrypoint: str | None = None, code: str | None = None,
                   max_concurrent: int = DEFAULT_MAX_CONCURRENT, accepts: str = "everyone",
                   ladder: bool = True, person: bool = False) -> tuple[dict, str]:
        """Register a bot; returns its public record and its secret (shown once).

        `NameTaken` if an active bot of `game` has the same name: the name is
        claimed and the bot written in one atomic step, so of two
        registrations racing for a name exactly one wins.
        """
        bot_id, nonce = new_id("b"), secrets.token_hex(16)
        bot: dict[str, object] = {
            "id": bot_id, "name": name, "game": game, "kind": kind, "owner": owner_id,
            "created": now_iso(), "retired": False, "matches": 0, "wins": 0, "faults": 0,
            "nonce": nonce, "max_concurrent": int(max_concurrent), "accepts": accepts,
            "ladder": bool(ladder),
        }
        if person:
            bot["person"] = True
        if url is not None:
            bot["url"] = url
        if entrypoint is not None:
            bot["entrypoint"] = entrypoint
        if code is not None:  # a hosted bot's code: its sha256 (core/hosted_code.py)
            bot["code"] = code
        self._index_names(game)
        seq = self.r.incr("bots:seq")
        holder = self.script(source("create_bot"))(
            keys=[names_key(game), f"bot:{bot_id}", "bots", f"bots:game:{game}"],
            args=[args(bot=bot_id, seq=seq, fields=dump_fields(bot)), fold_name(name)])
        if holder:
            raise NameTaken(name, text(holder))
        created = self.get_bot(bot_id)
        if created is None:  # deleted by hand between its writing and this read
            raise KeyError(bot_id)
        return created, self._derive_secret(bot_id, nonce)

    def place_house_bot(self, game: str, name: str, entrypoint: str) -> dict | None:
        """Register the admin's in-process bot `name` of `game` (on its ladder) once ever.

        The new bot's record; None when this house bot was placed before — by any process, on
        any machine, even if the admin has retired it since (retired stays retired) — or when an
        account's own bot holds the name. Two processes placing it at once register it once:
        names are unique among a game's active bots (`create_bot`).
        """
        placed = f"{game}/{name}"
        if self.r.hexists("house_bots", placed):
            return None
        try:
            bot, _ = self.create_bot("admin", name, game, "python", entrypoint=entrypoint)
        except NameTaken as exc:
            holder = self.get_bot(exc.holder)
            if holder is not None and holder.get("owner") == "admin":  # placed meanwhile by another
                self.r.hsetnx("house_bots", placed, exc.holder)
            return None
        self.r.hsetnx("house_bots", placed, bot["id"])
        return bot

    def _bot_record(self, bot_id: str) -> dict | None:
        if not isinstance(bot_id, str) or len(bot_id) > 64:
            return None
        raw = self.r.hgetall(f"bot:{bot_id}")
        return load_fields(raw) if raw else None

    def bot_record(self, bot_id: str) -> dict | None:
        """The bot's stored fields without its rating (how to reach it), or None."""
        bot = self._bot_record(bot_id)
        return None if bot is None else {k: bot[k] for k in PUBLIC_FIELDS if k in bot}

    def active_bot_count(self, owner: str) -> int:
        """How many not-retired bots `owner` has (one pipelined read of every bot's owner:
        done at registration only, where the per-account cap needs it)."""
        ids = members(self.r.zrange("bots", 0, -1))
        pipe = self.r.pipeline(transaction=False)
        for bot_id in ids:
            pipe.hmget(f"bot:{bot_id}", "owner", "retired")
        rows = [load_fields({k: v for k, v in zip((b"owner", b"retired"), row, strict=True) if v is not None})
                for row in pipe.execute()]
        return sum(1 for row in rows if row.get("owner") == owner and not row.get("retired"))

    def bot_fields(self, bot_ids: list[str], fields: Sequence[str]) -> dict[str, dict]:
        """Of each of `bot_ids` that exists, by id, the `fields` its record has, in one round trip:
        a page listing many bots reads what it shows, not whole records (`bot_records`)."""
        names = ("id", *fields)
        pipe = self.r.pipeline(transaction=False)
        for bot_id in bot_ids:
            pipe.hmget(f"bot:{bot_id}", names)
        return {bot_id: {k: json.loads(v) for k, v in zip(names, values, strict=True) if v is not None}
                for bot_id, values in zip(bot_ids, pipe.execute() if bot_ids else [], strict=True)
                if values[0] is not None}

    def bot_records(self, bot_ids: list[str]) -> dict[str, dict]:
        """`bot_record` of each of `bot_ids` that exists, by id, in one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for bot_id in bot_ids:
            pipe.hgetall(f"bot:{bot_id}")
        out = {}
        for bot_id, raw in zip(bot_ids, pipe.execute(), strict=True):
            if raw:
                bot = load_fields(raw)
                out[bot_id] = {k: bot[k] for k in PUBLIC_FIELDS if k in bot}
        return out

    def get_bot(self, bot_id: str) -> dict | None:
        """The bot's public fields plus its `rating` (its latest version's), or None."""
        bot = self._bot_record(bot_id)
        if bot is None:
            return None
        public = {k: bot[k] for k in PUBLIC_FIELDS if k in bot}
        public["rating"] = self.bot_rating(bot["game"], entrant(bot_id, bot.get("version")))
        return public

    def list_bots(self, game: str | None = None) -> list[dict]:
        """Every bot (of one game), in registration order."""
        key = f"bots:game:{game}" if game else "bots"
        return self.get_bots(members(self.r.zrange(key, 0, -1)))

    def bot_page(self, game: str | None, limit: int, after: int | None = None) -> tuple[list[dict], int | None]:
        """Up to `limit` bots (of one game) registered after position `after`, in order;
        and the position to continue from (None at the end)."""
        key = f"bots:game:{game}" if game else "bots"
        low = f"({after}" if after is not None else "-inf"
        found = scored(self.r.zrangebyscore(key, low, "+inf", start=0, num=limit + 1, withscores=True))
        more = len(found) > limit
        return self.get_bots([i for i, _ in found[:limit]]), int(found[limit - 1][1]) if more else None

    def bot_ids(self, start: int, count: int) -> list[str]:
        """`count` bot ids from position `start` of every bot's registration order."""
        return members(self.r.zrange("bots", start, start + count - 1))

    def get_bots(self, bot_ids: list[str]) -> list[dict]:
        """The public records (their latest version's rating included) of the bots that exist
        among `bot_ids`, in two round trips."""
        if not bot_ids:
            return []
        pipe = self.r.pipeline(transaction=False)
        for bot_id in bot_ids:
            pipe.hgetall(f"bot:{bot_id}")
        records = [load_fields(raw) for raw in pipe.execute() if raw]
        by_game: dict[str, list[str]] = {}
        for bot in records:
            by_game.setdefault(bot["game"], []).append(entrant(bot["id"], bot.get("version")))
        ratings = {}
        for game, keys in by_game.items():
            ratings.update({k: rating_dict(*r) for k, r in self.bot_ratings(game, keys).items()})
        return [{**{k: bot[k] for k in PUBLIC_FIELDS if k in bot},
                 "rating": ratings[entrant(bot["id"], bot.get("version"))]} for bot in records]

    def _derive_secret(self, bot_id: str, nonce: str) -> str:
        mac = hmac.new(self.secret_key, f"{bot_id}:{nonce}".encode(), hashlib.sha256).hexdigest()
        return f"{bot_id}.{mac}"

    def bot_secret(self, bot_id: str) -> str:
        """The bot's secret, derived again from the server key (KeyError if no such bot)."""
        bot = self._bot_record(bot_id)
        if bot is None:
            raise KeyError(bot_id)
        return self._derive_secret(bot_id, bot["nonce"])

    def bot_for_secret(self, secret: str | None) -> dict | None:
        """The (not retired) bot whose secret this is, or None. A secret found to be the bot's is
        kept for `known_credential`."""
        checked = self._check_secret(secret)
        return None if checked is None else checked[0]

    def credential(self, secret: str | None) -> Credential | None:
        """The `Credential` of the bot whose secret this is: one this process knows
        (`known_credential`: no round trip), else checked as `bot_for_secret` checks it (one);
        None if it is not the secret of a bot that is not retired."""
        known = self.known_credential(secret)
        if known is not None:
            return known
        checked = self._check_secret(secret)
        return None if checked is None else checked[1]

    def _check_secret(self, secret: str | None) -> tuple[dict, Credential] | None:
        """`bot_for_secret`'s check: the bot's public record and its `Credential` (kept), or None."""
        if not secret or not isinstance(secret, str) or len(secret) > 200:
            return None
        bot_id, sep, _ = secret.partition(".")
        if not sep:
            return None
        bot = self._bot_record(bot_id)
        if bot is None or bot.get("retired"):
            return None
        expected = self._derive_secret(bot_id, bot["nonce"]).encode()
        if not hmac.compare_digest(expected, secret.encode("utf-8", "surrogatepass")):
            return None
        known = self._credentials()
        if len(known) >= CREDENTIALS_KEEP:
            known.clear()
        credential = known[bot_id] = Credential({k: bot[k] for k in ("id", "kind", "owner") if k in bot},
                                                json.dumps(bot["nonce"]).encode(), expected)
        return {k: bot[k] for k in PUBLIC_FIELDS if k in bot}, credential  # as `bot_record`: no second read

    def known_credential(self, secret: str | None) -> Credential | None:
        """The `Credential` of the bot whose secret this is, if this process found it the bot's
        before (`bot_for_secret`): compared in constant time with the secret derived from the nonce
        it was, no round trip. Whether the bot still holds that nonce and is not retired is the
        caller's script's first step (`run_credited`). None: not known here (ask
        `bot_for_secret`), or not that secret."""
        if not secret or not isinstance(secret, str) or len(secret) > 200:
            return None
        known = self._credentials().get(secret.partition(".")[0])
        if known is None or not hmac.compare_digest(known.secret, secret.encode("utf-8", "surrogatepass")):
            return None
        return known

    def run_credited(self, name: str, credential: Credential, keys: list[str], **named: object) -> Any:
        """The credited script `name`.lua for the bot of `credential` (its first step `credited`,
        core/store/lua/lib/credited.lua: KEYS[1] the bot's hash, args `credential`), with the work's
        `keys` after the bot's and its `named` arguments: its reply, or `NotCredited` (the
        credential forgotten: a next request is checked afresh) when the credential no longer holds."""
        now = now_ms()
        checked = {"nonce": credential.nonce.decode(), "now": stored_stamp(now),
                   "seen_before": stored_stamp(now - SEEN_EVERY_MS)}
        reply = self.script(source(name))(keys=[f"bot:{credential.bot['id']}", *keys],
                                          args=[args(credential=checked, **named)])
        if reply == NOT_CREDITED:
            self._credentials().pop(credential.bot["id"], None)
            raise NotCredited(credential.bot["id"])
        return reply

    def _credentials(self) -> dict[str, Credential]:
        """This process' checked credentials, by bot id (`known_credential`)."""
        return self.__dict__.setdefault("_known_credentials", {})

    def retire_bot(self, bot_id: str) -> None:
        """Retire a bot: it plays no new match, its past matches stay, its name is free again."""
        self.r.hset(f"bot:{bot_id}", "retired", "true")
        bot = self._bot_record(bot_id)
        if bot is not None and isinstance(bot.get("name"), str):
            self.script(source("release_name"))(keys=[names_key(bot["game"])],
                                                args=[args(bot=bot_id), fold_name(bot["name"])])

    def _index_names(self, game: str) -> None:
        """Once per game: enter the active bots registered before names were unique."""
        if not self.r.set(f"{names_key(game)}:indexed", 1, nx=True):
            return
        ids = members(self.r.zrange(f"bots:game:{game}", 0, -1))
        pipe = self.r.pipeline(transaction=False)
        for bot_id in ids:
            pipe.hmget(f"bot:{bot_id}", "name", "retired")
        records = pipe.execute() if ids else []
        pipe = self.r.pipeline(transaction=False)
        for bot_id, (name, retired) in zip(ids, records, strict=True):
            name = json.loads(name) if name else None
            if isinstance(name, str) and not (retired and json.loads(retired)):
                pipe.hsetnx(names_key(game), fold_name(name), bot_id)
        pipe.execute()

    def faults_by_kind(self, bot_id: str) -> dict[str, int]:
        """`{kind: count}` of the bot's faults over its last FAULT_MATCHES matches."""
        out: dict[str, int] = {}
        for raw in self.r.lrange(f"bot:{bot_id}:faults", 0, FAULT_MATCHES - 1):
            for kind, n in json.loads(raw).items():
                out[kind] = out.get(kind, 0) + int(n)
        return dict(sorted(out.items()))

    def update_bot(self, bot_id: str, **fields) -> None:
        """Change a bot's `max_concurrent`, `url`, `accepts` or `ladder` (validated by the caller)."""
        allowed = {k: v for k, v in fields.items()
                   if k in ("max_concurrent", "url", "accepts", "ladder") and v is not None}
        if allowed:
            self.r.hset(f"bot:{bot_id}", mapping=dump_fields(allowed))

    def resume_bot(self, bot_id: str) -> None:
        """Lift a pause: the bot may be entered in rated matches again."""
        self.r.hset(f"bot:{bot_id}", "forfeit_streak", 0)

    def bot_seen(self, bot_id: str) -> None:
        """The bot answered something now (core/liveness.py)."""
        self.r.hset(f"bot:{bot_id}", mapping=dump_fields({"last_seen": now_iso(), "last_noted": "seen"}))

    def bot_failed(self, bot_id: str, failure: str | None = None) -> None:
        """A call to the bot failed now, and how (`failure`: e.g. "unreachable", "http_error:
        HTTP 401"; the platform's words, shown publicly): core/liveness.py."""
        self.r.hset(f"bot:{bot_id}", mapping=dump_fields({"last_failed": now_iso(), "last_noted": "failed",
                                                          "last_failure": failure or "unreachable"}))

    def convert_liveness_stamps(self) -> int:
        """Rewrite the liveness timestamps (`LIVENESS_STAMPS`) stored as epoch ms numbers, as data
        from before they had the one form of every timestamp held them, as that form (`iso_ms`);
        how many were rewritten. Repeatable: a timestamp already in that form is left as it is."""
        ids = members(self.r.zrange("bots", 0, -1))
        converted = 0
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            pipe = self.r.pipeline(transaction=False)
            for bot_id in chunk:
                pipe.hmget(f"bot:{bot_id}", LIVENESS_STAMPS)
            pipe_out = self.r.pipeline(transaction=False)
            for bot_id, values in zip(chunk, pipe.execute(), strict=True):
                for field, raw in zip(LIVENESS_STAMPS, values, strict=True):
                    value = json.loads(raw) if raw is not None else None
                    if isinstance(value, int | float) and not isinstance(value, bool):
                        pipe_out.hset(f"bot:{bot_id}", field, stored_stamp(int(value)))
                        converted += 1
            pipe_out.execute()
        return converted

    def note_probe(self, bot_id: str, failure: str | None) -> None:
        """What a hosted bot's code did with its probe decision (core/liveness.py): answered
        (None), or how it failed — its own traceback, which only its owner is shown."""
        if failure is None:
            self.r.hdel(f"bot:{bot_id}", "probe_failure")
        else:
            self.r.hset(f"bot:{bot_id}", "probe_failure", json.dumps(failure))

    def claim_ping(self, bot_id: str, quiet_ms: int) -> bool:
        """Whether the heartbeat may ping the bot now: nothing was learnt of it for `quiet_ms`
        (atomic: one dispatcher of many gets it; worker/heartbeat.py)."""
        now = now_ms()
        return bool(self.script(source("claim_ping"))(
            keys=[f"bot:{bot_id}"], args=[args(now=stored_stamp(now), quiet=stored_stamp(now - quiet_ms))]))
