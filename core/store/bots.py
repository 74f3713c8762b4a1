"""Bots: who plays, how to reach them, and their record.

Keys:
    bot:{id}          hash (JSON values): id, name, game, kind, owner, url?,
                      entrypoint?, created, retired, matches, wins, faults, nonce;
                      last_seen?, last_failed? (epoch ms), last_failure? (what failed, in
                      the platform's words): its liveness, core/liveness.py;
                      last_pinged? (epoch ms: the heartbeat's claim, worker/heartbeat.py);
                      forfeit_streak? (ladder matches forfeited in a row: PROBATION pauses);
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

A bot's secret is never stored: it is HMAC(server key, id:nonce), so the
referee can sign webhook calls and check a polling bot's credential while a
copy of the database alone reveals nothing. The secret starts with the bot id
so a credential names the bot it claims to be; the HMAC part is compared in
constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import unicodedata

from core.store.keys import dump_fields, load_fields, new_id, now_iso, now_ms, text
from core.store.ratings import entrant, rating_dict
from core.store.slots import DEFAULT_MAX_CONCURRENT

#: KEYS: the game's names, the bot's hash, `bots`, `bots:game:{game}`; ARGV: folded name,
#: bot id, registration number, then the bot's fields and values. The name is taken (the
#: holder returned) unless its holder is retired or gone (deleted by hand).
CREATE_BOT_LUA = """
local holder = redis.call('HGET', KEYS[1], ARGV[1])
if holder and holder ~= ARGV[2] then
  local retired = redis.call('HGET', 'bot:' .. holder, 'retired')
  if retired and retired ~= 'true' then return holder end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 4))
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[2])
return false
"""
#: KEYS[1] the bot's hash; ARGV: now ms, quiet ms. The heartbeat's claim to ping a bot: taken
#: (1) only if nothing was learnt of it (seen, failed, pinged) for `quiet` ms, so of several
#: dispatchers exactly one pings it.
CLAIM_PING_LUA = """
local v = redis.call('HMGET', KEYS[1], 'last_seen', 'last_failed', 'last_pinged')
local last = 0
for _, t in ipairs(v) do
  if t and tonumber(t) and tonumber(t) > last then last = tonumber(t) end
end
if tonumber(ARGV[1]) - last < tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'last_pinged', ARGV[1])
return 1
"""
#: KEYS[1] the game's names; ARGV: folded name, bot id
RELEASE_NAME_LUA = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
"""


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
    "id", "name", "game", "kind", "owner", "url", "entrypoint",
    "created", "retired", "matches", "wins", "faults", "last_seen", "last_failed", "last_failure", "forfeit_streak",
    "max_concurrent", "version", "version_created", "accepts", "ladder", "person",
)
#: who may enter a bot in a challenge, tournament or comparison: any account, or its own only
ACCEPTS = ("everyone", "owner")
#: ladder matches forfeited in a row that pause a bot from the ladder (and rated tournaments) until
#: its owner resumes it: forfeits elsewhere never count (docs/api.md §6), or anyone could pause a
#: bot by entering it where it cannot play
PROBATION = 5
#: the matches `faults_by_kind` counts over
FAULT_MATCHES = 100


#: the fields of a bot's record a match runner uses (core/store/runs.py): how to reach it, its slots
RUNNER_FIELDS = ("id", "kind", "owner", "url", "entrypoint", "max_concurrent", "version")


def read_runner_record(pipe, bot_id: str) -> None:
    """On `pipe`: read the bot's `RUNNER_FIELDS` (`runner_record` decodes the reply)."""
    pipe.hmget(f"bot:{bot_id}", RUNNER_FIELDS)


def runner_record(values: list) -> dict | None:
    """A bot's `RUNNER_FIELDS` from `read_runner_record`'s reply, the fields it has; None if
    there is no such bot."""
    if values[0] is None:
        return None
    return {k: json.loads(v) for k, v in zip(RUNNER_FIELDS, values, strict=True) if v is not None}


def is_paused(bot: dict) -> bool:
    """Whether the bot is paused from rated play (its record: `forfeit_streak`)."""
    return int(bot.get("forfeit_streak") or 0) >= PROBATION


def on_ladder(bot: dict) -> bool:
    """Whether the bot is on its game's ladder (`ladder`; a bot registered before the flag is)."""
    return bot.get("ladder") is not False


def accepts_of(bot: dict) -> str:
    """Who may enter the bot (`ACCEPTS`); a bot registered before consent existed accepts everyone."""
    return bot.get("accepts") or "everyone"


def count_result(pipe, record: dict, ladder: bool) -> None:
    """Queue on `pipe` what one finished match (a seat's `record`: bot, won, faults,
    forfeit?, faults_by_kind?) adds to its bot's record (called by the match's conclusion);
    only a `ladder` match moves its forfeit streak (`PROBATION`)."""
    # the hash holds JSON, and a JSON integer is what HINCRBY reads and writes
    key = f"bot:{record['bot']}"
    pipe.hincrby(key, "matches", 1)
    pipe.hincrby(key, "wins", 1 if record["won"] else 0)
    pipe.hincrby(key, "faults", int(record["faults"]))
    if ladder:
        if record.get("forfeit"):
            pipe.hincrby(key, "forfeit_streak", 1)
        else:
            pipe.hset(key, "forfeit_streak", 0)
    if "faults_by_kind" in record:
        pipe.lpush(f"{key}:faults", json.dumps(record["faults_by_kind"], separators=(",", ":")))
        pipe.ltrim(f"{key}:faults", 0, FAULT_MATCHES - 1)


class Bots:
    r: object
    secret_key: bytes
    script: object

    def create_bot(self, owner_id: str, name: str, game: str, kind: str,
                   url: str | None = None, entrypoint: str | None = None,
                   max_concurrent: int = DEFAULT_MAX_CONCURRENT, accepts: str = "everyone",
                   ladder: bool = True, person: bool = False) -> tuple[dict, str]:
        """Register a bot; returns its public record and its secret (shown once).

        `NameTaken` if an active bot of `game` has the same name: the name is
        claimed and the bot written in one atomic step, so of two
        registrations racing for a name exactly one wins.
        """
        bot_id = new_id("b")
        bot = {
            "id": bot_id, "name": name, "game": game, "kind": kind, "owner": owner_id,
            "created": now_iso(), "retired": False, "matches": 0, "wins": 0, "faults": 0,
            "nonce": secrets.token_hex(16), "max_concurrent": int(max_concurrent), "accepts": accepts,
            "ladder": bool(ladder),
        }
        if person:
            bot["person"] = True
        if url is not None:
            bot["url"] = url
        if entrypoint is not None:
            bot["entrypoint"] = entrypoint
        self._index_names(game)
        seq = self.r.incr("bots:seq")
        fields = [item for pair in dump_fields(bot).items() for item in pair]
        holder = self.script(CREATE_BOT_LUA)(
            keys=[names_key(game), f"bot:{bot_id}", "bots", f"bots:game:{game}"],
            args=[fold_name(name), bot_id, seq, *fields])
        if holder:
            raise NameTaken(name, text(holder))
        return self.get_bot(bot_id), self._derive_secret(bot_id, bot["nonce"])

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
        ids = [text(i) for i in self.r.zrange("bots", 0, -1)]
        pipe = self.r.pipeline(transaction=False)
        for bot_id in ids:
            pipe.hmget(f"bot:{bot_id}", "owner", "retired")
        rows = [load_fields({k: v for k, v in zip((b"owner", b"retired"), row, strict=True) if v is not None})
                for row in pipe.execute()]
        return sum(1 for row in rows if row.get("owner") == owner and not row.get("retired"))

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
        return self.get_bots([text(i) for i in self.r.zrange(key, 0, -1)])

    def bot_page(self, game: str | None, limit: int, after: int | None = None) -> tuple[list[dict], int | None]:
        """Up to `limit` bots (of one game) registered after position `after`, in order;
        and the position to continue from (None at the end)."""
        key = f"bots:game:{game}" if game else "bots"
        low = f"({after}" if after is not None else "-inf"
        found = self.r.zrangebyscore(key, low, "+inf", start=0, num=limit + 1, withscores=True)
        more = len(found) > limit
        return self.get_bots([text(i) for i, _ in found[:limit]]), int(found[limit - 1][1]) if more else None

    def bot_ids(self, start: int, count: int) -> list[str]:
        """`count` bot ids from position `start` of every bot's registration order."""
        return [text(i) for i in self.r.zrange("bots", start, start + count - 1)]

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
        """The (not retired) bot whose secret this is, or None."""
        return self.bot_for_secret_and(secret)[0]

    def bot_for_secret_and(self, secret: str | None, reads=None) -> tuple[dict | None, list]:
        """`bot_for_secret`, with `reads(pipe, bot_id)` — reads only: they are made before the
        secret is checked — queued in the same round trip as the bot's record: (the bot or None,
        their replies; [] unless the secret is the bot's, so a caller who proves nothing learns
        nothing)."""
        if not secret or not isinstance(secret, str) or len(secret) > 200:
            return None, []
        bot_id, sep, _ = secret.partition(".")
        if not sep:
            return None, []
        replies: list = []
        if reads is None or len(bot_id) > 64:
            bot = self._bot_record(bot_id)
        else:
            pipe = self.r.pipeline(transaction=False)
            pipe.hgetall(f"bot:{bot_id}")
            reads(pipe, bot_id)
            raw, *replies = pipe.execute()
            bot = load_fields(raw) if raw else None
        if bot is None or bot.get("retired"):
            return None, []
        expected = self._derive_secret(bot_id, bot["nonce"])
        if not hmac.compare_digest(expected.encode(), secret.encode("utf-8", "surrogatepass")):
            return None, []
        return {k: bot[k] for k in PUBLIC_FIELDS if k in bot}, replies  # as `bot_record`: no second read

    def retire_bot(self, bot_id: str) -> None:
        """Retire a bot: it plays no new match, its past matches stay, its name is free again."""
        self.r.hset(f"bot:{bot_id}", "retired", "true")
        bot = self._bot_record(bot_id)
        if bot is not None and isinstance(bot.get("name"), str):
            self.script(RELEASE_NAME_LUA)(keys=[names_key(bot["game"])], args=[fold_name(bot["name"]), bot_id])

    def _index_names(self, game: str) -> None:
        """Once per game: enter the active bots registered before names were unique."""
        if not self.r.set(f"{names_key(game)}:indexed", 1, nx=True):
            return
        ids = [text(i) for i in self.r.zrange(f"bots:game:{game}", 0, -1)]
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
        self.r.hset(f"bot:{bot_id}", "last_seen", now_ms())

    def bot_failed(self, bot_id: str, failure: str | None = None) -> None:
        """A call to the bot failed now, and how (`failure`: e.g. "unreachable", "http_error:
        HTTP 401"; the platform's words, shown publicly): core/liveness.py."""
        self.r.hset(f"bot:{bot_id}", mapping=dump_fields({"last_failed": now_ms(),
                                                          "last_failure": failure or "unreachable"}))

    def claim_ping(self, bot_id: str, quiet_ms: int) -> bool:
        """Whether the heartbeat may ping the bot now: nothing was learnt of it for `quiet_ms`
        (atomic: one dispatcher of many gets it; worker/heartbeat.py)."""
        return bool(self.script(CLAIM_PING_LUA)(keys=[f"bot:{bot_id}"], args=[now_ms(), quiet_ms]))
