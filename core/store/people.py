"""People at the table: page sign-in sessions and each account's person seats (docs/api.md §6).

Keys:
    session:{sha256…}       hash (JSON values): account, csrf, created — one signed-in
                            browser; it expires with its key (`SESSION_TTL_S`), and signing
                            out deletes it, so a stolen cookie dies with it
    account:{id}:people     hash game -> the id of the account's person seat of that game: a
                            polling bot (`person` true) whose decisions the page answers

A session id is 256 random bits, kept only as its SHA-256 (like account
tokens: a copy of the database opens no browser's session). The cookie that
carries it is signed and dated by the server (server/auth.py), so a cookie
is checked before Redis is read. The CSRF token is the session's own random
value: a page sends it back with every request that changes something.
"""

from __future__ import annotations

import hashlib
import secrets

import redis

from core.store.keys import dump_fields, load_fields, now_iso, text

#: how long a page session lasts (seconds) unless signed out sooner
SESSION_TTL_S = 7 * 24 * 3600


def session_key(session_id: str) -> str:
    return "session:" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()


def people_key(account_id: str) -> str:
    return f"account:{account_id}:people"


class People:
    r: redis.Redis

    def create_session(self, account_id: str, ttl_s: int = SESSION_TTL_S) -> tuple[str, str]:
        """A new session of `account_id`: (its id, for the cookie; its CSRF token)."""
        session_id, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
        key = session_key(session_id)
        pipe = self.r.pipeline()
        pipe.hset(key, mapping=dump_fields({"account": account_id, "csrf": csrf, "created": now_iso()}))
        pipe.expire(key, int(ttl_s))
        pipe.execute()
        return session_id, csrf

    def get_session(self, session_id: str | None) -> dict | None:
        """`{"account", "csrf", "created"}` of a live session, or None."""
        if not isinstance(session_id, str) or not 20 <= len(session_id) <= 100:
            return None
        raw = self.r.hgetall(session_key(session_id))
        return load_fields(raw) if raw else None

    def end_session(self, session_id: str | None) -> None:
        if isinstance(session_id, str) and len(session_id) <= 100:
            self.r.delete(session_key(session_id))

    def person_seat(self, account_id: str, game: str) -> str | None:
        """The id of the account's person seat for `game`, or None."""
        found = self.r.hget(people_key(account_id), game)
        return text(found) if found else None

    def claim_person_seat(self, account_id: str, game: str, bot_id: str) -> str:
        """Record `bot_id` as the account's person seat for `game` unless one is already: the
        seat that holds the place (of two racing requests, the first)."""
        self.r.hsetnx(people_key(account_id), game, bot_id)
        return self.person_seat(account_id, game) or bot_id

    def forget_person_seat(self, account_id: str, game: str) -> None:
        """The account's person seat for `game` is gone (retired): the next one replaces it."""
        self.r.hdel(people_key(account_id), game)

    def person_seats(self, account_id: str) -> dict[str, str]:
        """game -> the account's person seat there."""
        return {text(g): text(b) for g, b in self.r.hgetall(people_key(account_id)).items()}
