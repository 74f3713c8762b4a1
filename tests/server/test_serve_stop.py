"""`cardarena serve` stopped (SIGTERM, as a process manager or a deploy stops it): the kept-alive
connections waiting for their next request are closed at once, so the stop is not held for the
grace the requests in progress get (server/serve.py `STOP_GRACE_S`)."""

from __future__ import annotations

import time

import requests

from server.serve import STOP_GRACE_S
from tests.live import served_api


def test_a_stop_closes_kept_alive_connections_between_requests_at_once(redis_url):
    with served_api(redis_url, {"CARDARENA_RATE_LIMITS": "off"}, name="stop") as server, \
            requests.Session() as http:
        assert http.get(server.api + "/games", timeout=10).status_code == 200  # its connection stays open
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < STOP_GRACE_S, "the stop waited on an idle connection"
