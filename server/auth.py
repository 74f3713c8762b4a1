"""Who is calling: `Authorization: Bearer <token>`.

Three kinds of credential share the header: an account token, a bot secret
and the admin token (`ADMIN_TOKEN`). A missing or unknown one is 401; a known
one without the right is 403 — checked by the views that need them.

`identity()` is who a credential proves the caller is, checked once per
request (the rate limiter keys on it before the view runs, and the views
reuse the lookup): a made-up bearer string proves nothing, so it is counted
against the caller's address like no credential at all.

Pages sign in differently (docs/api.md §6 "People at the table"): `POST
/sessions {token}` sets a session cookie — HttpOnly, SameSite=Strict, signed
and dated with the server key (`itsdangerous`), naming a session the store
keeps and expires (core/store/people.py). Only the web pages read it
(`session_account`): the API takes bearer credentials alone, so no API call
is ever made by a cookie a browser sends on its own. Every request a page
makes that changes something carries the session's CSRF token
(`X-CSRF-Token`, or a form's `csrf` field), checked by `check_csrf`, and
comes from the platform's own origin when the browser says where it comes from.
"""

from __future__ import annotations

import hmac
from urllib.parse import urlsplit

from flask import current_app, g, request
from itsdangerous import BadSignature, URLSafeTimedSerializer

from core.store import Store
from core.store.bots import SEEN_EVERY_MS, Credential
from core.store.keys import epoch_ms_of, now_iso, now_ms
from core.store.people import SESSION_TTL_S
from server.errors import fail

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="cardarena"'}


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


def credited_bot() -> Credential:
    """The calling bot's `Credential` (core/store/bots.py): its secret checked in constant time
    against the one this process derived for it before (no round trip), else as `require_bot`
    checks it (one); 401 otherwise. Whether it still holds — the bot not retired since — is the
    first step of the request's own script, which also notes the bot seen (`run_credited`:
    `NotCredited`, answered by `not_credited`)."""
    token = bearer()
    known = store().credential(token) if token and "." in token else None
    if known is None:
        fail(401, "unauthorized", _missing_or_wrong("a bot secret"), CHALLENGE)
    if "bot" not in g:  # who the request is (`identity`); seen now, by the request's script
        g.bot = {**known.bot, "last_seen": now_iso()}
    return known


def not_credited() -> None:
    """A credential `credited_bot` found, which the request's own script found no longer the bot's
    (the bot retired since): 401, as for any secret that is not a bot's (raises)."""
    g.bot = None
    fail(401, "unauthorized", _missing_or_wrong("a bot secret"), CHALLENGE)


def identity() -> str | None:
    """"admin", "bot:{id}" or "account:{id}" for a verified credential; None otherwise."""
    if "identity" not in g:
        g.identity = _identify()
    return g.identity


def _identify() -> str | None:
    if bearer() is None:
        account = session_account() if request.cookies.get(SESSION_COOKIE) else None
        return f"account:{account['id']}" if account is not None else None
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
    last = epoch_ms_of(bot.get("last_seen"))
    if last is None or now_ms() - last >= SEEN_EVERY_MS:  # one write a second is news enough
        store().bot_seen(bot["id"])
    return bot


def _missing_or_wrong(what: str) -> str:
    if bearer() is None:
        return f"this needs {what} in 'Authorization: Bearer <token>'"
    return f"the credential given is not {what} of this server"


# -- pages: the session cookie and CSRF ------------------------------------------

SESSION_COOKIE = "cardarena_session"
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf"
_SALT = "cardarena-page-session"


def session_ttl_s() -> int:
    return int(current_app.config.get("SESSION_TTL_S") or SESSION_TTL_S)


def _signer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.config["SECRET_KEY"], salt=_SALT)


def session_cookie(session_id: str) -> str:
    """The cookie's value for a session: its id, signed and dated."""
    return _signer().dumps(session_id)


def set_session_cookie(response, session_id: str) -> None:
    response.set_cookie(SESSION_COOKIE, session_cookie(session_id), max_age=session_ttl_s(), path="/",
                        httponly=True, samesite="Strict", secure=_secure_cookies())


def clear_session_cookie(response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="Strict", secure=_secure_cookies())


def _secure_cookies() -> bool:
    """`Secure` on an HTTPS request, or always with SESSION_COOKIE_SECURE (behind a TLS proxy)."""
    return bool(current_app.config.get("SESSION_COOKIE_SECURE")) or request.is_secure


def page_session() -> dict | None:
    """This request's page session `{"id", "account", "csrf"}` (the account's record), or None:
    no cookie, a cookie not signed by this server or too old, or a session ended."""
    if "page_session" not in g:
        g.page_session = _read_session()
    return g.page_session


def _read_session() -> dict | None:
    raw = request.cookies.get(SESSION_COOKIE)
    if not raw or len(raw) > 400:
        return None
    try:
        session_id = _signer().loads(raw, max_age=session_ttl_s())
    except BadSignature:  # forged, altered, or expired (SignatureExpired is one)
        return None
    kept = store().get_session(session_id)
    if kept is None:
        return None
    account = store().get_account(kept.get("account"))
    if account is None:
        return None
    return {"id": session_id, "account": account, "csrf": kept.get("csrf") or ""}


def session_account() -> dict | None:
    """The account signed in on this page (its session cookie), or None."""
    found = page_session()
    return found["account"] if found else None


def csrf_token() -> str | None:
    found = page_session()
    return found["csrf"] if found else None


def same_origin() -> bool:
    """False when the browser says the request comes from another site (`Origin`, else
    `Referer`); True when it matches this host, or says nothing (not a browser)."""
    source = request.headers.get("Origin") or request.headers.get("Referer")
    if not source:
        return True
    return source != "null" and urlsplit(source).netloc == request.host


def check_csrf() -> dict:
    """The signed-in account of a request that changes something, checked: 401 without a
    session, 403 from another origin or without the session's CSRF token."""
    found = page_session()
    if found is None:
        fail(401, "unauthorized", "sign in first: this page needs a signed-in session (POST /sessions)")
    if not same_origin():
        fail(403, "csrf", "this request comes from another site")
    given = request.headers.get(CSRF_HEADER) or request.form.get(CSRF_FIELD) or ""
    if not given or not hmac.compare_digest(given.encode("utf-8", "surrogatepass"), found["csrf"].encode()):
        fail(403, "csrf", "the page's CSRF token is missing or wrong: reload the page and try again")
    return found["account"]
