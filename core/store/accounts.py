"""Accounts: a name and a bearer token, the token kept only as its SHA-256.

Keys:
    account:{id}                hash (JSON values): id, name, created
    account:token:{sha256 hex}  -> account id
    account:{id}:queued         set of the account's matches still queued (the 50 limit)
    account:{id}:open_tournaments  set of its tournaments not yet over (the 3 limit)

A token is 256 random bits. Looking one up hashes it and reads the hash's
key, then compares the stored digest with `hmac.compare_digest` so neither the
lookup nor the check depends on how much of a guess was right.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from core.store.keys import dump_fields, load_fields, new_id, now_iso, text


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def queued_key(account_id: str) -> str:
    return f"account:{account_id}:queued"


def open_tournaments_key(account_id: str) -> str:
    return f"account:{account_id}:open_tournaments"


class Accounts:
    r: object

    def create_account(self, name: str) -> tuple[dict, str]:
        """A new account and its token; the token is returned here only."""
        account_id = new_id("a")
        token = "cat_" + secrets.token_urlsafe(32)
        digest = token_digest(token)
        account = {"id": account_id, "name": name, "created": now_iso(), "token_sha256": digest}
        pipe = self.r.pipeline()
        pipe.hset(f"account:{account_id}", mapping=dump_fields(account))
        pipe.set(f"account:token:{digest}", account_id)
        pipe.execute()
        return _public(account), token

    def account_for_token(self, token: str | None) -> dict | None:
        """The account owning `token`, or None (constant-time digest check)."""
        if not token or not isinstance(token, str) or len(token) > 200:
            return None
        digest = token_digest(token)
        account_id = self.r.get(f"account:token:{digest}")
        if account_id is None:
            return None
        raw = self.r.hgetall(f"account:{text(account_id)}")
        if not raw:
            return None
        account = load_fields(raw)
        if not hmac.compare_digest(account.get("token_sha256", ""), digest):
            return None
        return _public(account)

    def get_account(self, account_id: str | None) -> dict | None:
        """The account with this id (never its token's digest), or None."""
        if not isinstance(account_id, str) or len(account_id) > 64:
            return None
        raw = self.r.hgetall(f"account:{account_id}")
        return _public(load_fields(raw)) if raw else None

    def queued_match_count(self, account_id: str) -> int:
        """How many of the account's matches are still queued."""
        return int(self.r.scard(queued_key(account_id)))

    def open_tournament_count(self, account_id: str) -> int:
        """How many of the account's tournaments are queued or running."""
        return int(self.r.scard(open_tournaments_key(account_id)))


def _public(account: dict) -> dict:
    return {k: v for k, v in account.items() if k != "token_sha256"}
