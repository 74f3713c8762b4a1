"""Accounts: a name and a bearer token, the token kept only as its SHA-256.

Keys:
    account:{id}                hash (JSON values): id, name, created, invite? (the invite it
                                was made with: core/store/invites.py)
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

import redis

from core.store.invites import invite_code_key, use_invite
from core.store.keys import dump_fields, load_fields, new_id, now_iso, text


class InviteInvalid(ValueError):
    """The invite code is not one of an open invite (unknown, used, revoked or expired)."""


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def queued_key(account_id: str) -> str:
    return f"account:{account_id}:queued"


def open_tournaments_key(account_id: str) -> str:
    return f"account:{account_id}:open_tournaments"


class Accounts:
    r: redis.Redis

    def create_account(self, name: str, invite: str | None = None) -> tuple[dict, str]:
        """A new account and its token; the token is returned here only.

        With `invite` (a code, core/store/invites.py) the account is made only if the code
        opens an invite, which it uses up in the same transaction; `InviteInvalid` otherwise."""
        account_id = new_id("a")
        token = "cat_" + secrets.token_urlsafe(32)
        digest = token_digest(token)
        account = {"id": account_id, "name": name, "created": now_iso(), "token_sha256": digest}
        if invite is None:
            pipe = self.r.pipeline()
            _write_account(pipe, account)
            pipe.execute()
            return _public(account), token
        if not isinstance(invite, str) or len(invite) > 200:
            raise InviteInvalid(invite)
        code_key = invite_code_key(invite)
        with self.r.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(code_key)
                    invite_id = pipe.get(code_key)
                    if invite_id is None:
                        raise InviteInvalid(invite)
                    account["invite"] = text(invite_id)
                    pipe.multi()
                    use_invite(pipe, account["invite"], code_key)
                    _write_account(pipe, account)
                    pipe.execute()
                    return _public(account), token
                except redis.WatchError:  # the code was used or revoked meanwhile: look again
                    continue

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


def _write_account(pipe, account: dict) -> None:
    pipe.hset(f"account:{account['id']}", mapping=dump_fields(account))
    pipe.set(f"account:token:{account['token_sha256']}", account["id"])


def _public(account: dict) -> dict:
    return {k: v for k, v in account.items() if k != "token_sha256"}
