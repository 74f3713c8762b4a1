"""Invites: what lets a person create an account when sign-up is invite-only
(`CARDARENA_SIGNUP=invite`, server/signup.py).

Keys:
    invite:{id}                  hash (JSON values): id, note, created, expires, code_key
    invite:code:{sha256 hex}     -> invite id
    invites                      set of the ids of invites made (an expired one is dropped
                                 when the list is read)

The admin makes an invite and is shown its code once; the store keeps only the
code's SHA-256, as it does for account tokens. Both keys expire when the invite
does. An invite is used once: the account it admits is written in the same
transaction that deletes it (`Accounts.create_account`), so two sign-ups racing
on one code make one account.
"""

from __future__ import annotations

import hashlib
import secrets
import time

import redis

from core.store.keys import dump_fields, load_fields, new_id, now_iso, text

INVITES = "invites"
#: how long an invite lasts unless the admin says otherwise, and at most
DEFAULT_DAYS, MAX_DAYS = 7, 90


def invite_key(invite_id: str) -> str:
    return f"invite:{invite_id}"


def invite_code_key(code: str) -> str:
    """The key naming the invite a code opens (the code itself is never stored)."""
    digest = hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()
    return f"invite:code:{digest}"


def use_invite(pipe, invite_id: str, code_key: str) -> None:
    """On a transaction: the invite is gone (the caller writes the account it admitted)."""
    pipe.delete(code_key, invite_key(invite_id))
    pipe.srem(INVITES, invite_id)


class Invites:
    r: redis.Redis

    def create_invite(self, note: str = "", days: int = DEFAULT_DAYS) -> tuple[dict, str]:
        """A new invite and its code; the code is returned here only."""
        invite_id = new_id("i")
        code = "cai_" + secrets.token_urlsafe(32)
        ttl_s = int(days) * 86_400
        expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + ttl_s))
        code_key = invite_code_key(code)
        invite = {"id": invite_id, "note": note, "created": now_iso(), "expires": expires,
                  "code_key": code_key}
        pipe = self.r.pipeline()
        pipe.hset(invite_key(invite_id), mapping=dump_fields(invite))
        pipe.expire(invite_key(invite_id), ttl_s)
        pipe.set(code_key, invite_id, ex=ttl_s)
        pipe.sadd(INVITES, invite_id)
        pipe.execute()
        return _public(invite), code

    def open_invites(self) -> list[dict]:
        """The invites not yet used, revoked or expired, oldest first."""
        ids = sorted(text(i) for i in self.r.smembers(INVITES))
        pipe = self.r.pipeline()
        for invite_id in ids:
            pipe.hgetall(invite_key(invite_id))
        found, gone = [], []
        for invite_id, raw in zip(ids, pipe.execute(), strict=True):
            if raw:
                found.append(_public(load_fields(raw)))
            else:
                gone.append(invite_id)
        if gone:
            self.r.srem(INVITES, *gone)
        return sorted(found, key=lambda invite: invite["created"])

    def revoke_invite(self, invite_id: str) -> bool:
        """End an invite before it is used; False if there is no such open invite."""
        if not isinstance(invite_id, str) or len(invite_id) > 64:
            return False
        raw = self.r.hgetall(invite_key(invite_id))
        if not raw:
            return False
        pipe = self.r.pipeline()
        use_invite(pipe, invite_id, load_fields(raw)["code_key"])
        pipe.execute()
        return True


def _public(invite: dict) -> dict:
    return {k: v for k, v in invite.items() if k != "code_key"}
