"""The app factory: config, the store, the extensions, the blueprints.

Config keys (all optional):
    REDIS_URL          env REDIS_URL, else the embedded shared server
    SECRET_KEY         the server key deriving bot secrets (env CARDARENA_SECRET_KEY,
                       else one random key kept in Redis, shared with the workers)
    ADMIN_TOKEN        env CARDARENA_ADMIN_TOKEN; empty = no admin
    PUBLIC_URLS_ONLY   env CARDARENA_PUBLIC_URLS_ONLY=1: refuse private webhook URLs
    QUEUE              the RQ queue jobs go to (env CARDARENA_QUEUE, else "cardarena";
                       core/store/jobs.py `queue_name`)
    RATELIMIT_ENABLED  Flask-Limiter's switch (default on; env CARDARENA_RATE_LIMITS=off turns it off)
    ACCOUNTS_RATE_LIMIT  new accounts from one network (an IPv4 /24, an IPv6 /64: server/signup.py),
                       in Flask-Limiter's syntax ("30 per hour")
    TOKEN_RATE_LIMIT   requests of one identity (below), in Flask-Limiter's syntax
    PROXIES            env CARDARENA_PROXIES: how many reverse proxies stand in front of the API (0);
                       their X-Forwarded-For and -Proto then name the caller (`_trust_proxies`)
    SIGNUP             env CARDARENA_SIGNUP: "open" (anyone may create an account, the default)
                       or "invite" (only with an invite the admin made: server/signup.py)
    SESSIONS_RATE_LIMIT  page sign-ins (`POST /sessions`) from one address
    SESSION_TTL_S      how long a page session lasts (core/store/people.py, 7 days)
    SESSION_COOKIE_SECURE  env CARDARENA_SECURE_COOKIES=1: the session cookie only over HTTPS
                       (it is anyway on an HTTPS request; say so behind a TLS proxy)
    PING_RATE_LIMIT    webhook URL pings one account may cause (`server.api.bots.pings_a_url`)
    BOTS_PER_ACCOUNT   active bots per account (server/api/bots.py, 100)
    LONG_POLLS_PER_ACCOUNT  long-polls one account's bots may hold at once, together (64)
    TURN_WASTE_LIMIT   a polling bot's requests that bring or settle no decision (server/turn_waste.py)
    LONG_POLL_SLOTS    long-polls this process holds at once: under a threaded server keep it
                       below its threads; under gevent (`cardarena serve`) it
                       defaults to half of 12,000 connections (server/serve.py)
    LONG_POLLS_PER_BOT long-polls one bot may hold at once (across processes)
    TESTING

Each key of `TUNABLE` may also be set in the environment as CARDARENA_<KEY>
(CARDARENA_TOKEN_RATE_LIMIT="600 per minute"); a value that does not parse stops the start.
The games besides the shipped ones come from env CARDARENA_GAMES (`games.PLUGINS_ENV`).

Limits key on the verified identity (`server.auth.identity`): an account,
a bot, the admin; a missing or made-up credential counts against the address.
A polling bot's turn traffic is outside Flask-Limiter altogether: what it does
is bounded by the decisions it is sent, and only its requests that bring or
settle no decision (an empty quick poll, a refused answer) are counted, against
`TURN_WASTE_LIMIT` (server/turn_waste.py: no Redis round trip for a useful one).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import redis
from flask import Flask, g, jsonify, request, send_from_directory
from flask.json.provider import DefaultJSONProvider
from flask.sessions import SessionInterface
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from limits import parse_many

import games
from core.jsonsafe import JSONTooComplex, is_json_mimetype, safe_loads
from core.store import Store, secret_key
from core.store import schema as data_schema
from server import headers, signup, turn_waste
from server.auth import identity
from server.errors import Api, fail

#: request bodies above this are refused with 413 before any parsing
MAX_BODY = 64 * 1024

DEFAULTS = {
    "API_TITLE": "cardarena referee API",
    "API_VERSION": "v1",
    "OPENAPI_VERSION": "3.0.3",
    "OPENAPI_URL_PREFIX": "/",
    "OPENAPI_JSON_PATH": "api/v1/openapi.json",
    "OPENAPI_SWAGGER_UI_PATH": "docs",
    "OPENAPI_SWAGGER_UI_URL": "/docs/assets/",
    "MAX_CONTENT_LENGTH": MAX_BODY,
    "RATELIMIT_ENABLED": True,
    "RATELIMIT_HEADERS_ENABLED": True,
    "RATELIMIT_KEY_PREFIX": "ratelimit",
    "ACCOUNTS_RATE_LIMIT": "30 per hour",
    "SESSIONS_RATE_LIMIT": "20 per minute",
    "PING_RATE_LIMIT": "30 per minute",
    "TOKEN_RATE_LIMIT": "1200 per minute",
    "TURN_WASTE_LIMIT": "300 per minute",
    "LONG_POLL_SLOTS": 16,
    "LONG_POLLS_PER_BOT": 4,
    "LONG_POLLS_PER_ACCOUNT": 64,
    "PUBLIC_URLS_ONLY": False,
    "JSON_SORT_KEYS": False,
}

#: the limits an operator may set in the environment as CARDARENA_<KEY>: rate limits in
#: Flask-Limiter's syntax, counts as whole numbers
TUNABLE = ("ACCOUNTS_RATE_LIMIT", "SESSIONS_RATE_LIMIT", "PING_RATE_LIMIT", "TOKEN_RATE_LIMIT",
           "TURN_WASTE_LIMIT", "LONG_POLLS_PER_BOT", "LONG_POLLS_PER_ACCOUNT", "BOTS_PER_ACCOUNT")


def build_app(config: dict | None = None) -> Flask:
    app = Flask("server")
    app.session_interface = NoFlaskSession()
    app.config.update(DEFAULTS)
    if waits_in_greenlets():  # waiting costs no thread: the caps are gevent's (server/serve.py)
        from server.serve import CONNECTIONS, capacity

        app.config.update(capacity(CONNECTIONS))
    app.config["ADMIN_TOKEN"] = os.environ.get("CARDARENA_ADMIN_TOKEN", "")
    app.config["PUBLIC_URLS_ONLY"] = os.environ.get("CARDARENA_PUBLIC_URLS_ONLY") == "1"
    app.config["SESSION_COOKIE_SECURE"] = os.environ.get("CARDARENA_SECURE_COOKIES") == "1"
    app.config["SIGNUP"] = os.environ.get("CARDARENA_SIGNUP", "").strip() or "open"
    if os.environ.get("CARDARENA_RATE_LIMITS", "").strip() == "off":  # a bench, or limits kept by a proxy
        app.config["RATELIMIT_ENABLED"] = False
    app.config["PROXIES"] = os.environ.get("CARDARENA_PROXIES", "").strip() or 0
    app.config.update(tuned_limits(os.environ))
    app.config.update(config or {})
    if app.config["SIGNUP"] not in signup.MODES:
        raise ValueError(f"CARDARENA_SIGNUP is {app.config['SIGNUP']!r}: it is one of {', '.join(signup.MODES)}")
    _trust_proxies(app)
    games.names()  # a game module CARDARENA_GAMES names that does not load stops the start
    if not app.config.get("REDIS_URL"):
        from core.redis_server import shared_url

        app.config["REDIS_URL"] = os.environ.get("REDIS_URL") or shared_url()

    client = _redis_client(app.config["REDIS_URL"])
    key = app.config.get("SECRET_KEY") or secret_key(client)
    app.config["SECRET_KEY"] = key
    app.extensions["cardarena.redis"] = client
    app.extensions["cardarena.store"] = Store(client, key, queue=app.config.get("QUEUE"))
    _check_schema(app, client)
    app.extensions["cardarena.poll_slots"] = threading.BoundedSemaphore(max(1, int(app.config["LONG_POLL_SLOTS"])))

    _init_uploads(app)
    _init_json(app)
    _init_unavailable(app)
    headers.install(app)  # before the limiter: its hooks then run after the limiter's
    _init_limiter(app)
    turn_waste.install(app, _rate_key)  # after headers too, for the same reason
    api = Api(app, spec_kwargs={"info": {"description": (
        "The referee of cardarena. Credentials travel as `Authorization: Bearer <token>`; "
        "errors are `{\"error\": {\"code\", \"message\"}}`.")}})
    api.spec.components.security_scheme("bearer", {"type": "http", "scheme": "bearer"})
    from server.api import BLUEPRINTS, SCHEMAS

    for name, schema in SCHEMAS.items():
        api.spec.components.schema(name, schema=schema)
    for blueprint in BLUEPRINTS:
        api.register_blueprint(blueprint, url_prefix="/api/v1")
    _init_archive_missing(app, api)
    _register_docs_assets(app)
    _register_web(app)
    if waits_in_greenlets():
        from server import gate

        gate.install(app)  # the waiting endpoints' work never crowds out the rest
    return app


def tuned_limits(environ) -> dict:
    """The `TUNABLE` limits `environ` sets (CARDARENA_<KEY>), checked: a mistyped limit
    is a `ValueError` at start, never a limit silently off or a 500 at the first request."""
    tuned: dict = {}
    for key in TUNABLE:
        raw = environ.get("CARDARENA_" + key, "").strip()
        if not raw:
            continue
        if key.endswith("_RATE_LIMIT") or key == "TURN_WASTE_LIMIT":
            try:
                parse_many(raw)
            except ValueError as exc:
                raise ValueError(f"CARDARENA_{key} is {raw!r}: a rate limit such as \"30 per minute\" "
                                 f"({exc})") from None
            tuned[key] = raw
        elif raw.isdigit() and int(raw) > 0:
            tuned[key] = int(raw)
        else:
            raise ValueError(f"CARDARENA_{key} is {raw!r}: a whole number above 0")
    return tuned


def _trust_proxies(app: Flask) -> None:
    """Behind `PROXIES` reverse proxies (a TLS terminator, a load balancer) the caller's address
    and scheme are the ones the nearest proxies wrote in `X-Forwarded-For`/`-Proto`: without that,
    every caller has the proxy's address, and the limits per address and per network (new
    accounts, sign-ins, streams) would count the whole world as one. Without proxies the headers
    are ignored, since any client could write them."""
    try:
        proxies = int(app.config["PROXIES"])
    except (TypeError, ValueError):
        proxies = -1
    if not 0 <= proxies <= 10:
        raise ValueError(f"CARDARENA_PROXIES is {app.config['PROXIES']!r}: the number of reverse proxies "
                         "in front of the API, from 0 (none, the default) to 10")
    if proxies:
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies)


#: Redis connections one process under gevent keeps at most (its greenlets queue for them)
GREEN_REDIS_CONNECTIONS = 256


def _redis_client(url: str) -> redis.Redis:
    """The process' client. Under gevent thousands of requests run at once: they share a bounded
    pool and wait their turn for a connection (redis-py's default pool refuses past 100)."""
    if waits_in_greenlets():
        pool = redis.BlockingConnectionPool.from_url(url, max_connections=GREEN_REDIS_CONNECTIONS, timeout=20,
                                                     health_check_interval=30)
        return redis.Redis(connection_pool=pool)
    return redis.Redis.from_url(url, health_check_interval=30)


def waits_in_greenlets() -> bool:
    """Whether this process runs requests as greenlets (gevent has patched its sockets:
    `cardarena serve`), where a waiting request holds no thread."""
    import sys

    monkey = sys.modules.get("gevent.monkey")
    return bool(monkey and monkey.is_module_patched("socket"))


def _check_schema(app: Flask, client: redis.Redis) -> None:
    """An empty database is stamped with the current schema; an older one is only reported:
    migrations run when asked (`cardarena migrate`), never at every start."""
    data_schema.stamp_if_empty(client)
    if data_schema.behind(client):
        app.logger.warning("the data in Redis is at schema version %d of %d: run `cardarena migrate`",
                           data_schema.schema_version(client), data_schema.SCHEMA_VERSION)


def _rate_key() -> str:
    """Per verified identity; per address without one (a made-up credential proves nothing)."""
    return identity() or "ip:" + (get_remote_address() or "?")


def _is_turn_traffic() -> bool:
    """A polling bot's turn request: no per-minute limit, only its waste budget (server/turn_waste.py)."""
    return request.blueprint == "turns"


def _init_limiter(app: Flask) -> None:
    from server.api import accounts, bots, health

    limiter = Limiter(
        key_func=_rate_key,
        app=app,
        storage_uri=app.config["REDIS_URL"],
        application_limits=[app.config["TOKEN_RATE_LIMIT"]],
        strategy="fixed-window",
        # under gevent, the store's bounded pool (`_redis_client`) rather than a pool of its own
        storage_options={"connection_pool": app.extensions["cardarena.redis"].connection_pool}
        if waits_in_greenlets() else {},
    )
    limiter.limit(app.config["ACCOUNTS_RATE_LIMIT"], key_func=signup.request_network,
                  methods=["POST"], exempt_when=lambda: request.endpoint is None,
                  error_message=lambda: _accounts_limit_message(limiter, app.config["ACCOUNTS_RATE_LIMIT"])
                  )(accounts.blp)
    limiter.shared_limit(app.config["PING_RATE_LIMIT"], "webhook-pings", key_func=_rate_key,
                         exempt_when=lambda: not bots.pings_a_url(),  # one budget over every pinging view
                         error_message=lambda: _pings_message(limiter, app.config["PING_RATE_LIMIT"]))(bots.blp)
    limiter.request_filter(_is_turn_traffic)  # no limit, window read nor header: not one round trip
    limiter.exempt(health.blp)  # a load balancer's probes: never refused, never counted against its address
    try:
        from server.web.sessions import blp as sessions
    except ModuleNotFoundError:  # the web pages are not installed: no page sign-in either
        return
    limiter.limit(app.config["SESSIONS_RATE_LIMIT"], key_func=get_remote_address, methods=["POST"],
                  error_message=lambda: f"too many sign-ins from this address "
                                        f"({app.config['SESSIONS_RATE_LIMIT']}): {_retry_in(limiter)}")(sessions)


def _retry_in(limiter: Limiter) -> str:
    """When the exceeded limit's window ends, in words (as `Retry-After` says it)."""
    import math
    import time

    current = limiter.current_limit
    wait = max(1, math.ceil(current.reset_at - time.time())) if current is not None else None
    return f"retry in {wait} s (Retry-After)" if wait is not None else "retry after the Retry-After seconds"


def _pings_message(limiter: Limiter, limit: str) -> str:
    """The 429 of a request that would ping a webhook URL (registration, a url change, a ping)."""
    return (f"an account causes at most {limit} webhook pings (POST /bots with a url, PATCH or a new "
            f"version with a url, POST /bots/{{id}}/ping): {_retry_in(limiter)}")


def _accounts_limit_message(limiter: Limiter, limit: str) -> str:
    """The 429 of `POST /accounts`: when to retry, and that nobody needs a second account.

    A user who lost the token shown once is the one who meets this limit, so
    the message says both how long to wait (as `Retry-After` does) and how to
    keep the next token.
    """
    return (f"too many new accounts from this network ({limit} from one IPv4 /24 or IPv6 /64): "
            f"{_retry_in(limiter)}. An account's token does not "
            "expire: keep it (e.g. export CARDARENA_TOKEN=<token>, which sdk.Client reads) and reuse it "
            "instead of creating another account")




class NoFlaskSession(SessionInterface):
    """No `flask.session`: nothing here uses it (a page's sign-in is its own signed cookie,
    server/auth.py), and Flask's default builds a signing serializer and reads a cookie at every
    request."""

    def open_session(self, app, request):
        return None  # Flask then puts a null session in its place: nothing to save either

    def save_session(self, app, session, response) -> None:
        return None


class SafeJSONProvider(DefaultJSONProvider):
    """Flask's JSON, parsing with `safe_loads` (so `request.get_json` is safe too)."""

    def loads(self, s, **kwargs):
        return safe_loads(s)


def _init_uploads(app: Flask) -> None:
    """A hosted bot's code (`server.api.bots.UPLOAD_VIEWS`) may be a larger body than the rest:
    up to `UPLOAD_BODY`, raised before any hook reads the body."""
    from server.api.bots import UPLOAD_BODY, UPLOAD_VIEWS

    @app.before_request
    def allow_code_uploads() -> None:
        if (request.endpoint or "").rpartition(".")[2] in UPLOAD_VIEWS and request.method == "POST":
            request.max_content_length = UPLOAD_BODY


def _init_json(app: Flask) -> None:
    """Refuse a JSON body that is too deep or holds a giant number before any work
    (webargs' own `json.loads` would raise RecursionError or ValueError: a 500). What it parsed
    is kept as `g.checked_json` (server/api/common.py `arguments` loads it, not parsing again)."""
    app.json = SafeJSONProvider(app)
    app.json.sort_keys = False

    @app.before_request
    def check_json_body() -> None:
        if request.method in ("GET", "HEAD", "OPTIONS") or not is_json_mimetype(request.mimetype):
            return
        data = request.get_data(cache=True)
        if not data:
            return
        try:
            g.checked_json = safe_loads(data)
        except JSONTooComplex as exc:
            fail(400, "invalid_json", f"the JSON body is refused: {exc}")
        except ValueError:
            return  # plain bad syntax: the arguments parser answers it (400 bad_request)


#: what a Redis outage raises (BusyLoadingError, a Redis still loading its data, is a ConnectionError)
REDIS_DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


def _init_unavailable(app: Flask) -> None:
    """A Redis outage is a 503 (`unavailable`, retry shortly), not a 500 with a traceback."""

    def unavailable(error):
        app.logger.warning("Redis unavailable: %s", error)
        body = {"error": {"code": "unavailable",
                          "message": "the service is unavailable for a moment (its database cannot be "
                                     "reached); retry shortly"}}
        response = jsonify(body)
        response.status_code = 503
        response.headers["Retry-After"] = "5"
        return response

    for error in REDIS_DOWN:
        app.register_error_handler(error, unavailable)


def _init_archive_missing(app: Flask, api: Api) -> None:
    """A match whose archive file is gone (a lost volume, a host without the archive mounted)
    is a 404 `archive_missing` saying so, not a 500 (core/store/archive.py)."""
    from werkzeug.exceptions import NotFound

    from core.store.archive import ArchiveMissing

    def missing(error: ArchiveMissing):
        app.logger.error("%s", error)
        not_found = NotFound()
        not_found.data = {"code": "archive_missing", "message": str(error)}
        return api.handle_http_exception(not_found)

    app.register_error_handler(ArchiveMissing, missing)


def _register_docs_assets(app: Flask) -> None:
    """Swagger UI's files from the flask-swagger-ui wheel: /docs works offline."""
    try:
        import flask_swagger_ui
    except ImportError:
        return
    dist = Path(flask_swagger_ui.__file__).with_name("dist")

    @app.get("/docs/assets/<path:filename>")
    def docs_assets(filename: str):
        return send_from_directory(dist, filename, max_age=3600)


def _register_web(app: Flask) -> None:
    """The web pages (server.web) when that part is installed."""
    import importlib

    try:
        web = importlib.import_module("server.web")
    except ModuleNotFoundError as exc:
        if exc.name == "server.web":
            return
        raise
    register = getattr(web, "register", None)
    if register is not None:
        register(app)
    elif hasattr(web, "bp"):
        app.register_blueprint(web.bp)
