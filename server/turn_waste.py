"""A polling bot's turn traffic against its waste budget (`TURN_WASTE_LIMIT`, 300 a minute).

The turn endpoints (server/api/turns.py: `GET /bots/me/turns`, `POST
/matches/{id}/turns/{turn}`) are outside the per-minute budget: a bot's useful
traffic there is bounded by the decisions it is sent. Only a request that
brought or settled no decision — an empty quick poll, a refused answer, a
401 — is counted (the views set `g.turn_traffic_useful` when one did), per
caller as the limiter keys it (`server.app._rate_key`: the bot, else the
address), in a fixed window starting at its first (core/store/quotas.py
`quota:turn_waste:{who}`). The request that goes past the budget, and every
later one of that caller reaching this process until the window ends, is
429 `rate_limited` with `Retry-After`.

Why not Flask-Limiter: it reads the window before every turn request and
twice more after it for its `X-RateLimit-*` headers — three Redis round trips
on each poll and each answer, useful or not. Here a useful request costs no
round trip at all, a wasted one costs one (an atomic increment that also
says how long the window has left), and a caller known to be over its budget
is refused without any. Turn requests carry no `X-RateLimit-*` headers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from flask import Flask, current_app, g, jsonify, request
from limits import parse

from server.auth import store

#: callers this process knows to be over budget -> until when (monotonic s); cleared past this many
OVER_KEEP = 100_000


def install(app: Flask, key_func: Callable[[], str]) -> None:
    """Count `app`'s wasted turn requests against `TURN_WASTE_LIMIT` (when `RATELIMIT_ENABLED`).
    Its hooks must be registered after server/headers.py's, so those run after them."""
    if not app.config.get("RATELIMIT_ENABLED", True):
        return
    budget = parse(app.config["TURN_WASTE_LIMIT"])
    window_ms = int(budget.get_expiry() * 1000)
    over: dict[str, float] = {}  # caller -> monotonic time its window ends
    lock = threading.Lock()

    def refused(left_s: float):
        wait = max(1, int(left_s + 0.999))
        response = jsonify({"error": {"code": "rate_limited", "message": (
            f"too many turn requests that brought or settled no decision ({app.config['TURN_WASTE_LIMIT']}: "
            f"empty quick polls, refused answers): retry in {wait} s (Retry-After). Long-poll with a wait "
            "of a second or more, and answer each decision once")}})
        response.status_code = 429
        response.headers["Retry-After"] = str(wait)
        g.retry_after = str(wait)  # server/headers.py keeps it
        g.turn_waste_refused = True  # counted once: a refusal is not counted again
        return response

    @app.before_request
    def known_over_budget():
        if request.blueprint != "turns" or not over:
            return None
        who = key_func()
        with lock:
            until = over.get(who)
            if until is not None and until <= time.monotonic():
                del over[who]
                until = None
        return None if until is None else refused(until - time.monotonic())

    @app.after_request
    def count_waste(response):
        if request.blueprint != "turns" or g.get("turn_traffic_useful", False) or response.status_code >= 500 \
                or g.get("turn_waste_refused"):
            return response  # useful, the server's failure (not the caller's waste), or refused here
        who = key_func()
        count, left_ms = store().waste_turn(who, window_ms)
        if count <= budget.amount:
            return response
        with lock:
            if len(over) >= OVER_KEEP:
                over.clear()
            over[who] = time.monotonic() + left_ms / 1000
        current_app.logger.info("turn waste budget spent by %s (%d in its window)", who, count)
        return refused(left_ms / 1000)
