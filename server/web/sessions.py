"""Signing in for the pages: `POST /sessions {token}`, `DELETE /sessions` (docs/api.md §6).

A person signs in with their account's token, once; the browser then holds
a session cookie (server/auth.py: HttpOnly, SameSite=Strict, signed, dated,
naming a session the store expires — core/store/people.py). The token is
never kept by the page. Sign-in is rate-limited per address like account
creation (`SESSIONS_RATE_LIMIT`, server/app.py), so guessing tokens through
it is as slow as through the API.

Both a form and a script may sign in: a form's post is answered by a
redirect (303) to where the person was going, a JSON request by 201
`{"account": {"id", "name"}, "csrf"}`. Signing in from another site's page
is refused (403, by its `Origin`): nobody can sign a visitor in to an
account of their choosing. Signing out (`DELETE /sessions` with the CSRF
token, or the page's form: `POST /signout`) ends the session in the store,
not only in this browser.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, Response, jsonify, redirect, request

from server.auth import (
    check_csrf,
    clear_session_cookie,
    page_session,
    same_origin,
    session_ttl_s,
    set_session_cookie,
    store,
)
from server.errors import fail

blp = Blueprint("sessions", __name__)

#: the longest token looked up (an account token is 47 characters)
MAX_TOKEN = 200


def wants_json() -> bool:
    return request.is_json or request.accept_mimetypes.best_match(["text/html", "application/json"]) \
        == "application/json"


#: the longest `next` kept (a page's own paths are far shorter)
MAX_NEXT = 2000


def safe_next(target: str | None, default: str = "/play") -> str:
    r"""Where to go after signing in: a path of this site only, else `default`.

    A path starts with one `/` and holds no backslash, whitespace or control character:
    browsers drop tabs and newlines from a URL and read a backslash as a slash, so
    `/\t/evil.example/` or `/\evil.example` would reach another host, and a newline
    cannot go into a `Location` header at all."""
    if not isinstance(target, str) or not target.startswith("/") or len(target) > MAX_NEXT:
        return default
    if target.startswith("//") or any(c == "\\" or c.isspace() or not c.isprintable() for c in target):
        return default
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return default
    return target


@blp.post("/sessions")
def sign_in():
    """Sign in with an account token: a session cookie (201 JSON, or 303 for a form)."""
    if not same_origin():
        fail(403, "csrf", "signing in is only done from this site's own pages")
    if request.is_json:
        body = request.get_json(silent=True)
        token = body.get("token") if isinstance(body, dict) else None
    else:
        token = request.form.get("token")
    going_to = safe_next(request.form.get("next"))  # judged before anything is written
    if not isinstance(token, str) or not token.strip() or len(token) > MAX_TOKEN:
        fail(400, "bad_request", "send your account token: {\"token\": \"cat_…\"}")
    account = store().account_for_token(token.strip())
    if account is None:
        fail(401, "unauthorized", "that is not the token of an account of this server")
    old = page_session()
    if old is not None:  # a new session for a new sign-in: an old cookie never lives on
        store().end_session(old["id"])
    session_id, csrf = store().create_session(account["id"], session_ttl_s())
    if wants_json():
        response = jsonify({"account": {"id": account["id"], "name": account["name"]}, "csrf": csrf})
        response.status_code = 201
    else:
        response = redirect(going_to, 303)
    set_session_cookie(response, session_id)
    response.headers["Cache-Control"] = "no-store"
    return response


@blp.delete("/sessions")
def sign_out():
    """Sign out (the CSRF token in `X-CSRF-Token`): the session ends; 204."""
    return _end(Response(status=204))


@blp.post("/signout")
def sign_out_form():
    """The pages' sign-out form (its `csrf` field): the session ends, back to the leaderboards."""
    return _end(redirect("/", 303))


def _end(response: Response) -> Response:
    check_csrf()
    found = page_session()
    store().end_session(found["id"])
    clear_session_cookie(response)
    response.headers["Cache-Control"] = "no-store"
    return response
