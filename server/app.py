"""The app factory: config, the store, the extensions, the blueprints.

Config keys (all optional):
    REDIS_URL          env REDIS_URL, else the embedded shared server
    SECRET_KEY         the server key deriving bot secrets (env CARDARENA_SECRET_KEY,
                       else one random key kept in Redis, shared with the workers)
    ADMIN_TOKEN        env CARDARENA_ADMIN_TOKEN; empty = no admin
    PUBLIC_URLS_ONLY   env CARDARENA_PUBLIC_URLS_ONLY=1: refuse private webhook URLs
    QUEUE              the RQ queue jobs go to (env CARDARENA_QUEUE, else "cardarena";
                       server/store/jobs.py `queue_name`)
    RATELIMIT_ENABLED  Flask-Limiter's switch (default on)
    ACCOUNTS_RATE_LIMIT, TOKEN_RATE_LIMIT   the two limits, in Flask-Limiter's syntax
    TESTING
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import redis
from flask import Flask, request, send_from_directory
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

from server.auth import bearer
from server.errors import Api
from server.store import Store, secret_key

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
    "TOKEN_RATE_LIMIT": "1200 per minute",
    "PUBLIC_URLS_ONLY": False,
    "JSON_SORT_KEYS": False,
}


def build_app(config: dict | None = None) -> Flask:
    app = Flask("server")
    app.config.update(DEFAULTS)
    app.config["ADMIN_TOKEN"] = os.environ.get("CARDARENA_ADMIN_TOKEN", "")
    app.config["PUBLIC_URLS_ONLY"] = os.environ.get("CARDARENA_PUBLIC_URLS_ONLY") == "1"
    app.config.update(config or {})
    app.json.sort_keys = False
    if not app.config.get("REDIS_URL"):
        from cardarena.redis_server import shared_url

        app.config["REDIS_URL"] = os.environ.get("REDIS_URL") or shared_url()

    client = redis.Redis.from_url(app.config["REDIS_URL"], health_check_interval=30)
    key = app.config.get("SECRET_KEY") or secret_key(client)
    app.config["SECRET_KEY"] = key
    app.extensions["cardarena.redis"] = client
    app.extensions["cardarena.store"] = Store(client, key, queue=app.config.get("QUEUE"))
    app.extensions["cardarena.store"].index_lists()  # once per database: records stored before the lists

    _init_limiter(app)
    api = Api(app, spec_kwargs={"info": {"description": (
        "The referee of cardarena. Credentials travel as `Authorization: Bearer <token>`; "
        "errors are `{\"error\": {\"code\", \"message\"}}`.")}})
    api.spec.components.security_scheme("bearer", {"type": "http", "scheme": "bearer"})
    from server.api import BLUEPRINTS, SCHEMAS

    for name, schema in SCHEMAS.items():
        api.spec.components.schema(name, schema=schema)
    for blueprint in BLUEPRINTS:
        api.register_blueprint(blueprint, url_prefix="/api/v1")
    _register_docs_assets(app)
    _register_web(app)
    return app


def _rate_key() -> str:
    """Per credential when there is one (hashed: keys are visible in Redis), else per address."""
    token = bearer()
    if token:
        return "token:" + hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return "ip:" + (get_remote_address() or "?")


def _init_limiter(app: Flask) -> None:
    from server.api import accounts

    limiter = Limiter(
        key_func=_rate_key,
        app=app,
        storage_uri=app.config["REDIS_URL"],
        application_limits=[app.config["TOKEN_RATE_LIMIT"]],
        strategy="fixed-window",
    )
    limiter.limit(app.config["ACCOUNTS_RATE_LIMIT"], key_func=get_remote_address,
                  methods=["POST"], exempt_when=lambda: request.endpoint is None,
                  error_message=lambda: _accounts_limit_message(limiter, app.config["ACCOUNTS_RATE_LIMIT"])
                  )(accounts.blp)


def _accounts_limit_message(limiter: Limiter, limit: str) -> str:
    """The 429 of `POST /accounts`: when to retry, and that nobody needs a second account.

    A user who lost the token shown once is the one who meets this limit, so
    the message says both how long to wait (as `Retry-After` does) and how to
    keep the next token.
    """
    import math
    import time

    current = limiter.current_limit
    wait = max(1, math.ceil(current.reset_at - time.time())) if current is not None else None
    when = f"retry in {wait} s (Retry-After)" if wait is not None else "retry after the Retry-After seconds"
    return (f"too many new accounts from this address ({limit}): {when}. An account's token does not "
            "expire: keep it (e.g. export CARDARENA_TOKEN=<token>, which sdk.Client reads) and reuse it "
            "instead of creating another account")


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
