"""Bots: register (`POST /bots`), look up, list, retire, resume, new versions.

A bot's record shows whether it is alive (`status`, `status_reason`,
`last_seen`: core/liveness.py; a webhook bot is pinged at registration,
`reachable` and `warnings`, and by its owner at will, `POST /bots/{id}/ping`)
and whether it is `paused` from rated play (core/store/bots.py PROBATION:
forfeiting 5 ladder matches in a row) until its owner resumes it, and whether it
is on its game's `ladder` (the matchmaker pairs it: worker/matchmaker.py).

Four kinds: `hosted` (code its author uploads, run by the platform in a
sandbox: core/sandbox.py, core/hosted_code.py), `webhook` (the worker POSTs
each decision to `url`), `polling` (the bot long-polls `GET /bots/me/turns`)
and `python` (in-process code the operator installed, named `module:Class`;
only the admin registers those, since it runs inside the workers).

A bot's code changes by versions (`POST /bots/{id}/versions`): each is rated on
its own, matches record the one that played, and a webhook or in-process
version stays reachable as it was (its URL, its entrypoint), so "is the latest
version better than the one before?" is one comparison (server/api/comparisons.py).

Quotas (docs/api.md §6 Fair share): an account has at most 100 active bots
(409 `too_many_bots`), and every request that pings a URL the caller chose
(`pings_a_url`) counts against the account's ping budget (server/app.py), since
each makes the platform send a request on the caller's say.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import marshmallow as ma
from flask import Response, current_app, request
from flask_smorest import Blueprint
from marshmallow import validate
from redis.exceptions import LockError

from core import hosted_code, liveness, sandbox
from core.ratings import kind_of
from core.store.bots import ACCEPTS, DEFAULT_MAX_CONCURRENT, NameTaken, accepts_of, on_ladder
from core.store.keys import now_ms
from core.store.probation import PROBATION, is_paused, paused_reason
from core.store.versions import match_versions, version_of
from core.urls import public_url_problem, url_shape_problem
from server.api.common import (
    NAME,
    Name,
    PageQuerySchema,
    RatingSchema,
    cursor_of,
    errors,
    game_or_422,
    next_cursor_field,
)
from server.api.matches import KIND_DESCRIPTION, are_public, end_queued_guest_matches, seats_hidden
from server.auth import current_account, is_admin, require_account_or_admin, store
from server.errors import fail

blp = Blueprint("bots", __name__, description="Bots: webhook, polling or in-process")

MAX_CONCURRENT = validate.Range(min=1, max=64)
#: the most versions one bot has
MAX_VERSIONS = 1000
#: the most active (not retired) bots of one account (docs/api.md §6 Fair share; the admin: no cap).
#: Every webhook bot is pinged and every bot may be entered anywhere: one account must not flood the
#: platform with them. A new version is the same bot.
MAX_BOTS_PER_ACCOUNT = 100

KINDS = ("hosted", "webhook", "polling", "python")
#: the views that take a hosted bot's code, and the body they may have (its base64, and the rest)
UPLOAD_VIEWS = ("create_bot", "new_version", "upload_code")
UPLOAD_BODY = 2 * hosted_code.MAX_BYTES
CODE_DESCRIPTION = ("hosted bots: base64 of one Python file (stored as the entrypoint's module, e.g. mybot.py) "
                    f"or of a zip of a package; at most {hosted_code.MAX_BYTES} bytes packed and unpacked, "
                    f"{hosted_code.MAX_FILES} files, no symlinks, no absolute or .. paths")
ENTRYPOINT_DESCRIPTION = ("python bots: module:Class (admin only); hosted bots: the uploaded code's "
                          "module:Class, e.g. mybot:MyBot")
LADDER_DESCRIPTION = ("on its game's ladder: the platform's matchmaker pairs it (while it is online, not "
                      "paused, with a free slot) in rated matches against bots of similar strength; false "
                      "takes it off the ladder and its rankings (default true)")
ACCEPTS_DESCRIPTION = ('who may enter it in a challenge, tournament or comparison: "everyone", or "owner" '
                       "(its account and the admin only; others get 403 not_accepting)")


class BotRequestSchema(ma.Schema):
    name = Name(required=True)
    game = ma.fields.String(required=True, validate=NAME)
    kind = ma.fields.String(required=True, validate=validate.OneOf(KINDS))
    url = ma.fields.String(validate=validate.Length(min=1, max=2000),
                           metadata={"description": "webhook bots: where decisions are POSTed"})
    entrypoint = ma.fields.String(validate=validate.Length(min=3, max=200),
                                  metadata={"description": ENTRYPOINT_DESCRIPTION})
    code = ma.fields.String(metadata={"description": CODE_DESCRIPTION})
    max_concurrent = ma.fields.Integer(strict=True, load_default=DEFAULT_MAX_CONCURRENT, validate=MAX_CONCURRENT,
                                       metadata={"description": "the most matches it plays at once"})
    accepts = ma.fields.String(load_default="everyone", validate=validate.OneOf(ACCEPTS),
                               metadata={"description": ACCEPTS_DESCRIPTION})
    ladder = ma.fields.Boolean(load_default=True, truthy={True}, falsy={False},
                               metadata={"description": LADDER_DESCRIPTION})


class BotPatchSchema(ma.Schema):
    max_concurrent = ma.fields.Integer(strict=True, validate=MAX_CONCURRENT,
                                       metadata={"description": "the most matches it plays at once"})
    url = ma.fields.String(validate=validate.Length(min=1, max=2000),
                           metadata={"description": "webhook bots: where decisions are POSTed (pinged now)"})
    accepts = ma.fields.String(validate=validate.OneOf(ACCEPTS), metadata={"description": ACCEPTS_DESCRIPTION})
    ladder = ma.fields.Boolean(truthy={True}, falsy={False}, metadata={"description": LADDER_DESCRIPTION})

    @ma.validates_schema
    def not_empty(self, data: dict, **kwargs) -> None:
        if not data:
            raise ma.ValidationError("give max_concurrent, url, accepts, ladder or several")


class NewVersionSchema(ma.Schema):
    url = ma.fields.String(validate=validate.Length(min=1, max=2000), metadata={
        "description": "webhook bots: where the new version is reached (default: the same URL)"})
    entrypoint = ma.fields.String(validate=validate.Length(min=3, max=200), metadata={
        "description": "python bots: the new version's module:Class (admin only; default: the same); "
                       "hosted bots: its code's module:Class (default: the same)"})
    code = ma.fields.String(metadata={"description": CODE_DESCRIPTION + " (required for a hosted bot)"})


class VersionCreatedSchema(ma.Schema):
    bot = ma.fields.String(required=True)
    version = ma.fields.Integer(required=True)


class VersionSchema(ma.Schema):
    version = ma.fields.Integer(required=True)
    created = ma.fields.String(allow_none=True, required=True)
    rating = ma.fields.Nested(RatingSchema, required=True, metadata={"description": "this version's own rating"})


class BotSchema(ma.Schema):
    id = ma.fields.String(required=True)
    name = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    kind = ma.fields.String(required=True)
    owner = ma.fields.String(allow_none=True)
    url = ma.fields.String()
    entrypoint = ma.fields.String()
    created = ma.fields.String()
    retired = ma.fields.Boolean(required=True)
    version = ma.fields.Integer(required=True, metadata={"description": "its latest version (from 1)"})
    rating = ma.fields.Nested(RatingSchema, required=True, metadata={"description": "its latest version's rating"})
    matches = ma.fields.Integer(required=True)
    wins = ma.fields.Integer(required=True)
    faults = ma.fields.Integer(required=True)
    max_concurrent = ma.fields.Integer(required=True, metadata={
        "description": "the most matches it plays at once (webhook and polling bots; the platform never "
                       "puts it in more)"})
    status = ma.fields.String(required=True, validate=validate.OneOf(liveness.STATUSES), metadata={
        "description": "online: a webhook bot's last ping or answer, within 90 s, succeeded (it is pinged when "
                       "not called for 30 s); a polling bot has a long-poll open or ended within 30 s; a "
                       "hosted bot's latest code answered its probe decision. rejected: the webhook "
                       "answered 401 or 403 (the signature was refused: check the secret), or a hosted "
                       "bot's code did not answer its probe decision (its owner sees probe_error). "
                       "offline: otherwise"})
    status_reason = ma.fields.String(allow_none=True, required=True, metadata={
        "description": "why it is not online, or online but paused (`paused: …`, with how to resume it), "
                       "in words its author can act on (null when online and not paused)"})
    last_seen = ma.fields.String(allow_none=True, required=True, metadata={
        "description": "when it last answered anything (ISO 8601 UTC to the ms, as every timestamp)"})
    last_failed = ma.fields.String(allow_none=True, required=True, metadata={
        "description": "when a call to it last failed (null: never); it is online only if it answered since"})
    last_failure = ma.fields.String(allow_none=True, required=True, metadata={
        "description": "what that call's failure was, in the platform's words (e.g. unreachable, timeout)"})
    paused = ma.fields.Boolean(required=True, metadata={
        "description": f"{PROBATION} ladder matches forfeited in a row: paired by nobody and entered in no "
                       "rated match until its owner calls POST /bots/{id}/resume"})
    accepts = ma.fields.String(required=True, validate=validate.OneOf(ACCEPTS),
                               metadata={"description": ACCEPTS_DESCRIPTION})
    ladder = ma.fields.Boolean(required=True, metadata={"description": LADDER_DESCRIPTION})


class BotDetailSchema(BotSchema):
    probe_error = ma.fields.String(allow_none=True, metadata={
        "description": "a hosted bot whose code did not answer its probe decision: why (its traceback); "
                       "shown to its owner and the admin only, null for everyone else"})
    faults_by_kind = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.Integer(), required=True,
                                    metadata={"description": "its faults over its last 100 matches, by kind"})
    versions = ma.fields.List(ma.fields.Nested(VersionSchema), required=True,
                              metadata={"description": "every version, newest first, each with its own rating"})


class NewBotSchema(BotSchema):
    secret = ma.fields.String(required=True, metadata={"description": "shown once: the bot's credential and webhook signing key"})
    reachable = ma.fields.Boolean(allow_none=True, required=True, metadata={
        "description": "a webhook bot: whether it answered a ping now (it is registered either way); "
                       "null for a polling bot"})
    warnings = ma.fields.List(ma.fields.String(), required=True, metadata={
        "description": "what may keep it out of play, e.g. a webhook that did not answer its ping, and why"})


class PingSchema(ma.Schema):
    reachable = ma.fields.Boolean(required=True, metadata={
        "description": "a webhook bot answered the ping 200; a polling bot is online; an in-process bot: true"})
    status = ma.fields.String(required=True, validate=validate.OneOf(liveness.STATUSES),
                              metadata={"description": "its status after the ping (as GET /bots/{id})"})
    status_reason = ma.fields.String(allow_none=True, required=True)
    http_status = ma.fields.Integer(allow_none=True, required=True,
                                    metadata={"description": "the webhook's answer's HTTP status (null: no answer)"})
    latency_ms = ma.fields.Integer(allow_none=True, required=True,
                                   metadata={"description": "from sending the ping to its whole answer"})
    error = ma.fields.String(allow_none=True, required=True, metadata={
        "description": "what went wrong, for the owner (null when it answered 200)"})


class BotListSchema(ma.Schema):
    bots = ma.fields.List(ma.fields.Nested(BotSchema), required=True)
    next_cursor = next_cursor_field()


class BotQuerySchema(PageQuerySchema):
    game = ma.fields.String(validate=NAME)


@blp.post("/bots")
@blp.arguments(BotRequestSchema)
@blp.response(201, NewBotSchema)
@errors(blp, 401, 403, 409, 413, 422, 429, 503)
def create_bot(body):
    """Register a bot; its secret is in this answer only (409 `too_many_bots` beyond an account's
    100 active bots; a webhook bot's ping and a hosted bot's probe count against the account's
    ping budget, 429 beyond). A hosted bot's code is checked (413 `too_large`, 422 `bad_code`)
    and asked a probe decision in its sandbox (503 `sandbox_unavailable` where there is none)."""
    account = require_account_or_admin()
    game = game_or_422(body["game"]).name
    kind, url, entrypoint, code = body["kind"], body.get("url"), body.get("entrypoint"), body.get("code")
    if kind != "webhook" and url is not None:
        fail(422, "invalid", f"url is only for webhook bots, not {kind}")
    if kind not in ("python", "hosted") and entrypoint is not None:
        fail(422, "invalid", f"entrypoint is only for python and hosted bots, not {kind}")
    if kind != "hosted" and code is not None:
        fail(422, "invalid", f"code is only for hosted bots, not {kind}")
    if kind == "webhook":
        _check_url(url)
    if kind == "python":
        if not is_admin():
            fail(403, "forbidden", "only the admin registers in-process python bots")
        _check_entrypoint(entrypoint, game)
    digest = _stored_code(code, entrypoint) if kind == "hosted" else None
    owner = account["id"] if account else "admin"
    s = store()
    with _registering(s, account):
        try:
            bot, secret = s.create_bot(owner, body["name"], game, kind, url=url, entrypoint=entrypoint,
                                       code=digest, max_concurrent=body["max_concurrent"],
                                       accepts=body["accepts"], ladder=body["ladder"])
        except NameTaken as exc:
            fail(409, "name_taken", f"an active {game} bot is already named {body['name']!r} "
                 f"(bot {exc.holder}); names are unique per game, case-insensitive")
    reachable, pinged = (None if kind == "polling" else True), None
    if kind == "webhook":
        pinged = ping_bots([bot]).get(bot["id"])
        reachable = pinged.reachable
    if kind == "hosted":
        reachable = _probe(bot["id"], digest, entrypoint, game)
    bot = shown(s.get_bot(bot["id"]))
    return {**bot, "secret": secret, "reachable": reachable,
            "warnings": liveness.registration_warnings(bot, pinged)}


def _sandbox_or_503() -> None:
    reason = sandbox.unavailable()
    if reason is not None:
        fail(503, "sandbox_unavailable", f"hosted bots cannot run on this platform now: {reason}")


def _stored_code(code: str | None, entrypoint: str | None) -> str:
    """A hosted bot's upload checked and stored (core/hosted_code.py); its sha256. 503 first where
    no sandbox can run it: nothing is stored that cannot run."""
    if code is None or entrypoint is None:
        fail(422, "invalid", "a hosted bot needs its code (base64) and its entrypoint, module:Class")
    _sandbox_or_503()
    try:
        files = hosted_code.files_of(code, entrypoint)
    except hosted_code.BadCode as exc:
        fail(413 if exc.code == "too_large" else 422, exc.code, str(exc))
    return hosted_code.store(files)


def _probe(bot_id: str, digest: str, entrypoint: str, game: str) -> bool:
    """Ask the stored code a probe decision in its sandbox and note the outcome (its status);
    whether it answered. 503 `sandbox_unavailable` if no sandbox started at all."""
    try:
        failure = sandbox.probe(hosted_code.runnable_dir(digest), entrypoint, game)
    except sandbox.SandboxError as exc:
        fail(503, "sandbox_unavailable", f"the sandbox did not start: {exc}")
    store().note_probe(bot_id, failure)
    return failure is None


#: the views that may ping a webhook URL: always (ping), or when the body names a url
PINGING_VIEWS = ("create_bot", "update_bot", "new_version")


def pings_a_url() -> bool:
    """Whether this request may send a ping to a URL the caller chose, or probe a hosted bot's
    code (server/app.py counts these per account: each is work the platform does on the
    caller's say: an outgoing request, a sandbox started)."""
    view = (request.endpoint or "").rpartition(".")[2]
    if is_admin() or view not in ("ping_bot", *PINGING_VIEWS):
        return False
    body = request.get_json(silent=True) if view != "ping_bot" else None
    return view == "ping_bot" or (isinstance(body, dict) and (body.get("url") is not None
                                                              or body.get("code") is not None))


@contextmanager
def _registering(s, account: dict | None) -> Iterator[None]:
    """Around counting and creating an account's bot: 409 `too_many_bots` when it has its cap of
    active bots already. The account's registrations take turns (core/store/quotas.py), so
    parallel ones cannot all count 99 and all create; the admin has no cap."""
    if account is None:
        yield
        return
    lock = s.registering(account["id"])
    if not lock.acquire():
        fail(429, "too_many_waiting", "too many registrations of this account at once: retry shortly",
             {"Retry-After": "1"})
    try:
        cap = int(current_app.config.get("BOTS_PER_ACCOUNT", MAX_BOTS_PER_ACCOUNT))
        if s.active_bot_count(account["id"]) >= cap:
            fail(409, "too_many_bots", f"an account has at most {cap} active bots: retire one "
                 "(DELETE /bots/{id}) or register a new version of it (POST /bots/{id}/versions) instead")
        yield
    finally:
        try:
            lock.release()
        except LockError:  # held past its 10 s: it lapsed, and is somebody else's now
            pass


@blp.post("/bots/<string:bot_id>/ping")
@blp.response(200, PingSchema)
@errors(blp, 401, 403, 404, 429)
def ping_bot(bot_id: str):
    """Ping the bot now (its owner or the admin): a webhook bot is sent the signed ping and its
    status follows from the answer; a polling or in-process bot is judged as `GET /bots/{id}`."""
    bot = _owned_or_403(bot_id, "ping")
    pinged = ping_bots([bot]).get(bot_id) if bot["kind"] == "webhook" else None
    after = shown(store().get_bot(bot_id))
    if pinged is None:
        pinged = liveness.Pinged(after["status"] == "online", error=after["status_reason"])
    return {"reachable": pinged.reachable, "status": after["status"], "status_reason": after["status_reason"],
            "http_status": pinged.http_status, "latency_ms": pinged.latency_ms, "error": pinged.error}


def ping_bots(bots: list[dict]) -> dict[str, liveness.Pinged]:
    """`liveness.ping_and_note` with the app's store and URL policy."""
    return liveness.ping_and_note(store(), bots, public_only=bool(current_app.config.get("PUBLIC_URLS_ONLY")))


def shown(bot: dict) -> dict:
    """A bot's stored record as the API shows it: with `status`, `status_reason`, `last_seen`
    and `paused`."""
    state, reason = liveness.judge(bot, now_ms())
    if is_paused(bot) and not bot.get("retired"):  # said first: it is what keeps the bot from the ladder
        reason = paused_reason(bot) + (f"; and it {reason}" if reason else "")
    return {**bot, "max_concurrent": int(bot.get("max_concurrent") or DEFAULT_MAX_CONCURRENT),
            "status": state, "status_reason": reason, "last_seen": bot.get("last_seen"),
            "last_failed": bot.get("last_failed"), "last_failure": bot.get("last_failure"),
            "paused": is_paused(bot), "version": version_of(bot), "accepts": accepts_of(bot),
            "ladder": on_ladder(bot)}


def _check_url(url: str | None) -> None:
    if url is None:
        fail(422, "invalid", "a webhook bot needs a url")
    problem = url_shape_problem(url)
    if problem is None and current_app.config.get("PUBLIC_URLS_ONLY"):
        problem = public_url_problem(url)
    if problem:
        fail(422, "invalid_url", problem)


def _check_entrypoint(entrypoint: str | None, game: str) -> None:
    from sdk.bot import load_bot_class

    if entrypoint is None:
        fail(422, "invalid", "a python bot needs an entrypoint, module:Class")
    try:
        cls = load_bot_class(entrypoint)
    except ValueError as exc:
        fail(422, "invalid_entrypoint", str(exc))
    except Exception as exc:  # importing operator code may raise anything
        fail(422, "invalid_entrypoint", f"importing {entrypoint!r} failed: {type(exc).__name__}: {exc}")
    if cls.game is not None and cls.game != game:
        fail(422, "wrong_game", f"{entrypoint} plays {cls.game}, not {game}")


@blp.get("/bots")
@blp.arguments(BotQuerySchema, location="query")
@blp.response(200, BotListSchema)
def list_bots(query):
    """Bots (optionally of one game) in registration order, a page at a time."""
    bots, after = store().bot_page(query.get("game"), query["limit"], cursor_of(query))
    return {"bots": [shown(b) for b in bots], "next_cursor": None if after is None else str(after)}


@blp.get("/bots/<string:bot_id>")
@blp.response(200, BotDetailSchema)
@errors(blp, 404)
def get_bot(bot_id: str):
    """Public bot info: rating, record, liveness, faults by kind (never the secret)."""
    bot = _bot_or_404(bot_id)
    mine = is_admin() or (current_account() or {}).get("id") == bot["owner"]
    return {**shown(bot), "faults_by_kind": store().faults_by_kind(bot_id), "versions": store().bot_versions(bot),
            "probe_error": bot.get("probe_failure") if mine else None}


@blp.patch("/bots/<string:bot_id>")
@blp.arguments(BotPatchSchema)
@blp.response(200, BotSchema)
@errors(blp, 401, 403, 404, 422, 429)
def update_bot(body, bot_id: str):
    """Change its `max_concurrent` (from its next match), a webhook bot's `url` (pinged now),
    who it `accepts` matches from, or whether it is on the `ladder` (its owner or the admin)."""
    return apply_update(_owned_or_403(bot_id, "change"), body)


def apply_update(bot: dict, body: dict) -> dict:
    """Change a bot its owner (or the admin) may change, from `body` as `BotPatchSchema` loaded
    it: checked and stored, a new webhook URL pinged; the bot as `shown` after. The one path of
    `PATCH /bots/{id}` and of the bot page's switches (server/web/pages.py `switch_bot`)."""
    bot_id = bot["id"]
    url = body.get("url")
    if url is not None:
        if bot["kind"] != "webhook":
            fail(422, "invalid", f"url is only for webhook bots, not {bot['kind']}")
        _check_url(url)
    store().update_bot(bot_id, max_concurrent=body.get("max_concurrent"), url=url, accepts=body.get("accepts"),
                       ladder=body.get("ladder"))
    if body.get("accepts") == "owner":  # it takes effect on the matches others queued too
        end_queued_guest_matches(store(), bot)
    if url is not None:
        ping_bots([store().get_bot(bot_id)])
    return shown(store().get_bot(bot_id))


@blp.post("/bots/<string:bot_id>/versions")
@blp.arguments(NewVersionSchema)
@blp.response(201, VersionCreatedSchema)
@errors(blp, 401, 403, 404, 409, 413, 422, 429, 503)
def new_version(body, bot_id: str):
    """Start the bot's next version (its owner; a python bot's entrypoint: the admin; a hosted
    bot's new code, probed as at registration). Matches created from now on play it, rated on
    its own; the earlier versions stay reachable as they were, for comparisons (POST
    /comparisons with the bot as candidate and baseline)."""
    bot = _owned_or_403(bot_id, "version")
    if bot["retired"]:
        fail(409, "retired_bot", f"bot {bot_id!r} is retired: register a new bot")
    url, entrypoint, code = body.get("url"), body.get("entrypoint"), body.get("code")
    if url is not None:
        if bot["kind"] != "webhook":
            fail(422, "invalid", f"url is only for webhook bots, not {bot['kind']}")
        _check_url(url)
    if code is not None and bot["kind"] != "hosted":
        fail(422, "invalid", f"code is only for hosted bots, not {bot['kind']}")
    if entrypoint is not None and bot["kind"] == "python":
        if not is_admin():
            fail(403, "forbidden", "only the admin names in-process python code")
        _check_entrypoint(entrypoint, bot["game"])
    elif entrypoint is not None and bot["kind"] != "hosted":
        fail(422, "invalid", f"entrypoint is only for python and hosted bots, not {bot['kind']}")
    if bot["kind"] == "hosted":
        if code is None:
            fail(422, "invalid", "a hosted bot's new version needs its code (base64)")
        return {"bot": bot_id, "version": upload_version(bot, code, entrypoint or bot.get("entrypoint"))}
    _check_version_count(bot)
    version = store().new_version(bot_id, url=url, entrypoint=entrypoint)
    if url is not None:
        ping_bots([store().get_bot(bot_id)])
    return {"bot": bot_id, "version": version}


def _check_version_count(bot: dict) -> None:
    if version_of(bot) >= MAX_VERSIONS:
        fail(422, "too_many_versions", f"a bot has at most {MAX_VERSIONS} versions: register a new bot")


def upload_version(bot: dict, code: str, entrypoint: str | None) -> int:
    """A hosted bot's new version from `code` (base64) and `entrypoint`, checked, stored and
    probed; its number. The one path of `POST /bots/{id}/versions` and of the bot page's upload
    form (server/web/pages.py `upload_code`)."""
    _check_version_count(bot)
    digest = _stored_code(code, entrypoint)
    version = store().new_version(bot["id"], entrypoint=entrypoint, code=digest)
    _probe(bot["id"], digest, entrypoint, bot["game"])
    return version


@blp.get("/bots/<string:bot_id>/versions/<int:version>/code")
@blp.response(200, {"type": "string", "format": "binary"}, content_type="application/zip")
@errors(blp, 401, 403, 404)
def version_code(bot_id: str, version: int):
    """A hosted bot's code as that version was uploaded, as one zip (its owner and the admin
    only): an upload of one file is that file under the entrypoint's module's name."""
    bot = _owned_or_403(bot_id, "download the code of")
    record = store().version_record(bot_id, version) if 1 <= version <= version_of(bot) else None
    data = hosted_code.packed(record["code"]) if record and record.get("code") else None
    if data is None:
        fail(404, "not_found", f"bot {bot_id!r} has no uploaded code as version {version}")
    return Response(data, mimetype="application/zip", headers={
        "Content-Disposition": f'attachment; filename="{bot_id}-v{version}.zip"'})


@blp.post("/bots/<string:bot_id>/resume")
@blp.response(200, BotSchema)
@errors(blp, 401, 403, 404)
def resume_bot(bot_id: str):
    """Lift a pause (its owner or the admin): the matchmaker pairs it again, and it may be entered
    in rated matches again."""
    bot = _owned_or_403(bot_id, "resume")
    store().resume_bot(bot["id"])
    return shown(store().get_bot(bot_id))


def _owned_or_403(bot_id: str, verb: str) -> dict:
    """The bot, if the caller is its owner or the admin (401, 403, 404 otherwise)."""
    admin = is_admin()
    account = None if admin else require_account_or_admin()
    bot = _bot_or_404(bot_id)
    if not admin and bot["owner"] != account["id"]:
        fail(403, "forbidden", f"only the bot's owner or the admin may {verb} it")
    return bot


@blp.delete("/bots/<string:bot_id>")
@blp.response(200, BotSchema)
@errors(blp, 401, 403, 404)
def retire_bot(bot_id: str):
    """Retire a bot (its owner or the admin); its past matches stay."""
    _owned_or_403(bot_id, "retire")
    store().retire_bot(bot_id)
    return shown(store().get_bot(bot_id))



class BotMatchSchema(ma.Schema):
    id = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    status = ma.fields.String(required=True)
    seat = ma.fields.Integer(required=True, metadata={"description": "this bot's seat (its first, if it holds several)"})
    version = ma.fields.Integer(required=True, metadata={"description": "the bot's version in that seat"})
    seats = ma.fields.List(ma.fields.String(), required=True, metadata={"description": "bot ids in seat order"})
    tournament = ma.fields.String(allow_none=True)
    rated = ma.fields.Boolean()
    kind = ma.fields.String(required=True, metadata={"description": KIND_DESCRIPTION})
    created = ma.fields.String(allow_none=True)
    finished = ma.fields.String(allow_none=True)
    public = ma.fields.Boolean(required=True)
    rank = ma.fields.Integer(allow_none=True, required=True, metadata={"description": "this bot's rank once public"})
    result = ma.fields.Dict(allow_none=True, required=True, metadata={"description": "scores and ranks once public"})


class BotMatchesSchema(ma.Schema):
    bot = ma.fields.String(required=True)
    matches = ma.fields.List(ma.fields.Nested(BotMatchSchema), required=True, metadata={"description": "newest first"})
    next_cursor = next_cursor_field()


class BotMatchesQuerySchema(PageQuerySchema):
    limit = ma.fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))


class RatingPointSchema(RatingSchema):
    match = ma.fields.String(allow_none=True, metadata={"description": "the rated match that moved it"})
    version = ma.fields.Integer(load_default=1, dump_default=1, metadata={"description": "the bot's version it rates"})
    at = ma.fields.String(allow_none=True)


class RatingHistorySchema(ma.Schema):
    bot = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    history = ma.fields.List(ma.fields.Nested(RatingPointSchema), required=True,
                             metadata={"description": "one point per rated match, oldest first (every version's: "
                                                      "each point says which)"})


def _bot_or_404(bot_id: str) -> dict:
    bot = store().get_bot(bot_id)
    if bot is None:
        fail(404, "not_found", f"there is no bot {bot_id!r}")
    return bot


def recent_matches(bot_id: str, limit: int, before: int | None = None) -> tuple[list[dict], int | None]:
    """The bot's matches newest first, as `GET /bots/{id}/matches` shows them, and where the
    next page starts: from the bot's own index, in three round trips whatever the store holds."""
    s = store()
    ids, after = s.bot_match_page(bot_id, limit, before)
    matches = [m for m in s.get_matches(ids, brief=True) if m is not None and bot_id in (m.get("seats") or [])]
    # a live rated match is not listed: it would say who sits at that table (`seats_hidden`)
    matches = [m for m, hidden in zip(matches, seats_hidden(matches), strict=True) if not hidden]
    out = []
    for match, public in zip(matches, are_public(matches), strict=True):
        result = match.get("result") if public else None
        seat = match["seats"].index(bot_id)
        ranks = (result or {}).get("ranks") if isinstance(result, dict) else None
        out.append({"id": match["id"], "game": match["game"], "status": match["status"], "seat": seat,
                    "version": match_versions(match)[seat],
                    "seats": list(match["seats"]), "tournament": match.get("tournament"),
                    "rated": match.get("rated", False), "kind": kind_of(match), "created": match.get("created"),
                    "finished": match.get("finished"), "public": public,
                    "rank": ranks[seat] if isinstance(ranks, list) and seat < len(ranks) else None,
                    "result": {k: result[k] for k in ("scores", "ranks", "forfeits") if k in result}
                    if isinstance(result, dict) else None})
    return out, after


@blp.get("/bots/<string:bot_id>/matches")
@blp.arguments(BotMatchesQuerySchema, location="query")
@blp.response(200, BotMatchesSchema)
@errors(blp, 404, 422)
def bot_matches(query, bot_id: str):
    """The bot's matches, newest first, a page at a time (results only where the match is public)."""
    _bot_or_404(bot_id)
    matches, after = recent_matches(bot_id, query["limit"], cursor_of(query))
    return {"bot": bot_id, "matches": matches, "next_cursor": None if after is None else str(after)}


@blp.get("/bots/<string:bot_id>/ratings")
@blp.response(200, RatingHistorySchema)
@errors(blp, 404)
def bot_ratings(bot_id: str):
    """The bot's rating after each of its latest 2,000 rated deals, oldest first."""
    bot = _bot_or_404(bot_id)
    return {"bot": bot_id, "game": bot["game"], "history": store().rating_history(bot_id)}
