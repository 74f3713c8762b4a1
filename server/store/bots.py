"""Bots: who plays, how to reach them, and their record.

Keys:
    bot:{id}          hash (JSON values): id, name, game, kind, owner, url?,
                      entrypoint?, created, retired, matches, wins, faults, nonce
    bots              sorted set of every bot id, scored by registration order
    bots:game:{game}  the same, for one game
    bots:seq          the registration counter

A bot's secret is never stored: it is HMAC(server key, id:nonce), so the
referee can sign webhook calls and check a polling bot's credential while a
copy of the database alone reveals nothing. The secret starts with the bot id
so a credential names the bot it claims to be; the HMAC part is compared in
constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from server.store.keys import dump_fields, load_fields, new_id, now_iso, text

PUBLIC_FIELDS = (
    "id", "name", "game", "kind", "owner", "url", "entrypoint",
    "created", "retired", "matches", "wins", "faults",
)


class Bots:
    r: object
    secret_key: bytes

    def create_bot(self, owner_id: str, name: str, game: str, kind: str,
                   url: str | None = None, entrypoint: str | None = None) -> tuple[dict, str]:
        """Register a bot; returns its public record and its secret (shown once)."""
        bot_id = new_id("b")
        bot = {
            "id": bot_id, "name": name, "game": game, "kind": kind, "owner": owner_id,
            "created": now_iso(), "retired": False, "matches": 0, "wins": 0, "faults": 0,
            "nonce": secrets.token_hex(16),
        }
        if url is not None:
            bot["url"] = url
        if entrypoint is not None:
            bot["entrypoint"] = entrypoint
        seq = self.r.incr("bots:seq")
        pipe = self.r.pipeline()
        pipe.hset(f"bot:{bot_id}", mapping=dump_fields(bot))
        pipe.zadd("bots", {bot_id: seq})
        pipe.zadd(f"bots:game:{game}", {bot_id: seq})
        pipe.execute()
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

    def get_bot(self, bot_id: str) -> dict | None:
        """The bot's public fields plus its `rating`, or None."""
        bot = self._bot_record(bot_id)
        if bot is None:
            return None
        public = {k: bot[k] for k in PUBLIC_FIELDS if k in bot}
        public["rating"] = self.bot_rating(bot["game"], bot_id)
        return public

    def list_bots(self, game: str | None = None) -> list[dict]:
        """Every bot (of one game), in registration order."""
        key = f"bots:game:{game}" if game else "bots"
        ids = [text(i) for i in self.r.zrange(key, 0, -1)]
        return [b for b in (self.get_bot(i) for i in ids) if b is not None]

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
        if not secret or not isinstance(secret, str) or len(secret) > 200:
            return None
        bot_id, sep, _ = secret.partition(".")
        if not sep:
            return None
        bot = self._bot_record(bot_id)
        if bot is None or bot.get("retired"):
            return None
        expected = self._derive_secret(bot_id, bot["nonce"])
        if not hmac.compare_digest(expected.encode(), secret.encode("utf-8", "surrogatepass")):
            return None
        return self.get_bot(bot_id)

    def retire_bot(self, bot_id: str) -> None:
        """Retire a bot: it plays no new match; its past matches stay."""
        self.r.hset(f"bot:{bot_id}", "retired", "true")

    def add_bot_result(self, bot_id: str, won: bool, faults: int) -> None:
        """Count one finished match in the bot's record."""
        # the hash holds JSON, and a JSON integer is what HINCRBY reads and writes
        pipe = self.r.pipeline()
        pipe.hincrby(f"bot:{bot_id}", "matches", 1)
        pipe.hincrby(f"bot:{bot_id}", "wins", 1 if won else 0)
        pipe.hincrby(f"bot:{bot_id}", "faults", int(faults))
        pipe.execute()
