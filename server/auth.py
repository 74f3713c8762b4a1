"""Who is calling: `Authorization: Bearer <token>`.

Three kinds of credential share the header: an account token, a bot secret
and the admin token (`ADMIN_TOKEN`). A missing or unknown one is 401; a known
one without the right is 403 — checked by the views that need them.

`identity()` is who a credential proves the caller is, checked once per
request (the rate limiter keys on it before the view runs, and the views
reuse the lookup): a made-up bearer string proves nothing, so it is counted
against the caller's address like no credential at all.
"""

from __future__ import annotations

import hmac

from flask import current_app, g, request

from core.store import Store
from core.store.keys import now_ms
from server.errors import fail

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="cardarena"'}
#: a bot's requests note it seen at most this often (core/liveness.py reads it by the minute)
SEEN_EVERY_MS = 1000


def store() -> Store:
    return current_app.extensions["cardarena.store"]


def bearer() -> str | None:
    """The bearer token of this request, or None."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def is_admin() -> bool:
    """True if the request carries the configured admin token."""
    admin = current_app.config.get("ADMIN_TOKEN")
    token = bearer()
    if not admin or not token:
        return False
    return hmac.compare_digest(admin.encode(), token.encode("utf-8", "surrogatepass"))


def current_account() -> dict | None:
    if "account" not in g:
        g.account = store().account_for_token(bearer())
    return g.account


def current_bot() -> dict | None:
    """The (not retired) bot whose secret this request carries, or None."""
    if "bot" not in g:
        token = bearer()
        g.bot = store().bot_for_secret(token) if token and "." in token else None
    return g.bot


def identity() -> str | None:
    """"admin", "bot:{id}" or "account:{id}" for a verified credential; None otherwise."""
    if "identity" not in g:
        g.identity = _identify()
    return g.identity


def _identify() -> str | None:
    if bearer() is None:
        return None
    if is_admin():
        return "admin"
    bot = current_bot()
    if bot is not None:
        return f"bot:{bot['id']}"
    account = current_account()
    if account is not None:
        return f"account:{account['id']}"
    return None


def require_account_or_admin() -> dict | None:
    """The calling account (None for the admin); 401 for anyone else."""
    if is_admin():
        return None
    account = current_account()
    if account is None:
        fail(401, "unauthorized", _missing_or_wrong("an account token"), CHALLENGE)
    return account


def require_admin() -> None:
    """401 without a credential, 403 for an account or bot: only the admin may go on."""
    if is_admin():
        return
    if not bearer():
        fail(401, "unauthorized", _missing_or_wrong("the admin token"), CHALLENGE)
    fail(403, "forbidden", "only the admin may do this")


def require_bot() -> dict:
    """The bot whose secret this request carries (seen now: core/liveness.py); 401 otherwise."""
    bot = current_bot()
    if bot is None:
        fail(401, "unauthorized", _missing_or_wrong("a bot secret"), CHALLENGE)
    last = bot.get("last_seen")
    if not isinstance(last, int) or now_ms() - last >= SEEN_EVERY_MS:  # one write a second is news enough
        store().bot_seen(bot["id"])
    return bot


def _missing_or_wrong(what: str) -> str:
    if bearer() is None:
        return f"this needs {what} in 'Authorization: Bearer <token>'"
    return f"the credential given is not {what} of this server"
