"""Per-tenant quotas (issue 28 item 2, docs/api.md §6 "Fair share"), each tried as an attacker would.

* an account has at most 100 active bots (409 `too_many_bots`);
* an account's bots together wait in at most 64 long-polls (429 `too_many_waiting`), and another
  account's poll still waits meanwhile;
* one address holds at most 16 event streams, over every API process (429 `too_many_waiting`);
* webhook pings (registration, a url change, a new version's url, `POST /bots/{id}/ping`) count
  against a per-account limit (429);
* new accounts are limited over every address together, not only per address (429).

The waiting counts live in Redis (core/store/quotas.py): the tests watch them there to know the
polls and streams are in, rather than sleeping. Limiter-based limits run on their own
`cardarena serve` (`limited_server`), as in test_api_limits.py.
"""

from __future__ import annotations

import socket
import threading
import time
from contextlib import ExitStack

import pytest
import requests

from core.store.quotas import polls_key, streams_key
from tests.live import served_api
from tests.server.driving import make_bots
from tests.server.test_api_limits import error_code, limited_server
from tests.sse import EventStream
from tests.waiting import wait_until

GAME = "toy-high"


# -- bots per account ------------------------------------------------------------------------------


def test_an_accounts_101st_active_bot_is_409_too_many_bots_and_a_retired_one_frees_its_place(api):
    """The issue: 300 bots registered in 8.8 s by one account, each pinging a URL it chose."""
    token = api.account("hoarder")
    bots = [api.bot(token, f"b{i}", game=GAME) for i in range(100)]
    refused = api.post("/bots", {"name": "b100", "game": GAME, "kind": "polling"}, token=token)
    assert refused.status_code == 409 and error_code(refused) == "too_many_bots"
    assert "at most 100 active bots" in refused.json()["error"]["message"]
    # a new version is the same bot, not a new one
    assert api.post(f"/bots/{bots[0]['id']}/versions", {}, token=token).status_code == 201
    # another account is not affected
    assert api.post("/bots", {"name": "mine", "game": GAME, "kind": "polling"},
                    token=api.account("neighbour")).status_code == 201
    assert api.delete(f"/bots/{bots[0]['id']}", token=token).status_code == 200
    assert api.post("/bots", {"name": "b100", "game": GAME, "kind": "polling"}, token=token).status_code == 201


def test_parallel_registrations_never_pass_an_accounts_bot_cap(api):
    """Registrations of one account sent at once take turns: at 95 bots, 12 parallel ones
    make exactly 5 bots and 7 are 409, rather than each counting 95 and all creating."""
    token = api.account("racer")
    for i in range(95):
        api.bot(token, f"r{i}", game=GAME)
    statuses: list[int] = []
    lock = threading.Lock()

    def register(i: int) -> None:
        status = requests.post(api.base + "/bots", json={"name": f"rush{i}", "game": GAME, "kind": "polling"},
                               headers={"Authorization": f"Bearer {token}"}, timeout=60).status_code
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=register, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)
    assert sorted(statuses) == [201] * 5 + [409] * 7


# -- long-polls per account ------------------------------------------------------------------------


def long_poll(base: str, secret: str, wait: float) -> requests.Response:
    return requests.get(base + "/bots/me/turns", params={"wait": wait},
                        headers={"Authorization": f"Bearer {secret}"}, timeout=wait + 30)


@pytest.mark.slow
def test_an_accounts_65th_concurrent_long_poll_is_429_too_many_waiting_while_another_account_still_waits(api):
    """The issue: 12 polling bots × 4 long-polls of one account filled every long-poll slot."""
    token = api.account("crowd")
    crowd = [api.bot(token, f"idle{i}", game=GAME) for i in range(17)]  # 4 polls each: 68 > 64
    account = api.store.get_bot(crowd[0]["id"])["owner"]
    other = api.bot(api.account("bystander"), "bystander", game=GAME)
    held = [bot["secret"] for bot in crowd[:16] for _ in range(4)]
    base = api.base  # the session's server: half its connections may wait in long-polls
    results: list[int] = []
    lock = threading.Lock()

    def hold(secret: str) -> None:
        # 20 s: on a busy machine the 64 threads take a while to be all waiting at once
        status = long_poll(base, secret, wait=20).status_code
        with lock:
            results.append(status)

    threads = [threading.Thread(target=hold, args=(secret,)) for secret in held]
    for thread in threads:
        thread.start()
    wait_until(lambda: api.store.r.zcard(polls_key(account)) == 64, what="64 waiting polls")
    started = time.monotonic()
    refused = long_poll(base, crowd[16]["secret"], wait=8)
    assert time.monotonic() - started < 4  # refused at once, not queued
    assert refused.status_code == 429 and error_code(refused) == "too_many_waiting"
    assert refused.headers["Retry-After"] == "1"
    assert "at most 64 long-polls" in refused.json()["error"]["message"]
    bystander = long_poll(base, other["secret"], wait=0.5)
    assert bystander.status_code == 200 and bystander.json() == {"turns": []}
    for thread in threads:
        thread.join(timeout=40)
    assert results == [200] * 64
    # every place is given back: the account waits again
    assert api.store.r.zcard(polls_key(account)) == 0
    assert long_poll(base, crowd[16]["secret"], wait=0.2).status_code == 200


# -- streams per address ---------------------------------------------------------------------------


@pytest.mark.slow
def test_the_17th_stream_from_one_address_is_429_too_many_waiting_over_every_api_process(api, redis_url):
    """The issue: 16 event streams from two addresses took the threads everyone else needed.
    The address's count is shared: 8 streams on one API process and 8 on another fill it."""
    queued = api.store.create_match(GAME, make_bots(api.store), 1, {})["id"]
    key = streams_key("127.0.0.1")
    settings = {"CARDARENA_EVENT_STREAMS": "20", "CARDARENA_EVENT_HEARTBEAT_SECONDS": "0.2",
                "CARDARENA_RATE_LIMITS": "off"}
    with ExitStack() as stack:
        one, two = (stack.enter_context(served_api(redis_url, settings, name="streams")).api for _ in range(2))
        wait_until(lambda: api.store.r.zcard(key) == 0, what="no stream left from earlier tests")
        streams = [EventStream(f"{base}/matches/{queued}/events") for base in [one] * 8 + [two] * 8]
        stack.callback(lambda: [stream.close() for stream in streams])
        assert [s.response.status_code for s in streams] == [200] * 16
        for base in (one, two):
            refused = requests.get(f"{base}/matches/{queued}/events", timeout=10)
            assert refused.status_code == 429 and error_code(refused) == "too_many_waiting"
            assert refused.headers["Retry-After"] == "5"
            assert "at most 16 event streams" in refused.json()["error"]["message"]
        streams.pop().close()
        wait_until(lambda: api.store.r.zcard(key) == 15, what="the closed stream's place")
        again = EventStream(f"{one}/matches/{queued}/events")
        streams.append(again)
        assert again.response.status_code == 200


# -- pings per account -----------------------------------------------------------------------------


def closed_port() -> int:
    """A loopback port nobody listens on: a ping there fails at once (and still counts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_webhook_pings_beyond_an_accounts_limit_are_429_and_nothing_else_is_counted(api, redis_url):
    """The issue: every registration pinged a URL of the registrant's choice, without limit."""
    url = f"http://127.0.0.1:{closed_port()}/bot"
    token, neighbour = api.account("pinger"), api.account("neighbour")
    with limited_server(redis_url, PING_RATE_LIMIT="3 per minute") as base, requests.Session() as http:
        def call(method: str, path: str, body: dict | None = None, who: str = token) -> requests.Response:
            return http.request(method, base + path, json=body, headers={"Authorization": f"Bearer {who}"},
                                timeout=30)

        bot = call("POST", "/bots", {"name": "hook", "game": GAME, "kind": "webhook", "url": url})
        assert bot.status_code == 201  # ping 1
        bot_id = bot.json()["id"]
        assert call("PATCH", f"/bots/{bot_id}", {"url": url + "2"}).status_code == 200  # ping 2
        assert call("POST", f"/bots/{bot_id}/ping").status_code == 200  # ping 3
        # requests that ping nothing are not counted, and are not refused
        assert call("PATCH", f"/bots/{bot_id}", {"max_concurrent": 2}).status_code == 200
        assert call("POST", "/bots", {"name": "poller", "game": GAME, "kind": "polling"}).status_code == 201
        for method, path, body in [("POST", f"/bots/{bot_id}/ping", None),
                                   ("PATCH", f"/bots/{bot_id}", {"url": url}),
                                   ("POST", f"/bots/{bot_id}/versions", {"url": url}),
                                   ("POST", "/bots", {"name": "hook2", "game": GAME, "kind": "webhook", "url": url})]:
            refused = call(method, path, body)
            assert refused.status_code == 429, (method, path, refused.text)
            assert refused.headers.get("Retry-After") and "webhook pings" in refused.json()["error"]["message"]
        assert [b["name"] for b in api.get("/bots", params={"limit": 100}).json()["bots"]
                if b["name"].startswith("hook")] == ["hook"]  # the refused registration made nothing
        other = call("POST", "/bots", {"name": "their", "game": GAME, "kind": "webhook", "url": url}, who=neighbour)
        assert other.status_code == 201  # another account has its own budget


# -- a dead server's places ------------------------------------------------------------------------


@pytest.mark.slow
def test_a_place_whose_server_died_lapses_at_its_end_so_a_quota_never_leaks(api):
    """A server killed mid-poll never gives its place back: the place ends on its own, a few
    seconds past the wait it was taken for, and the tenant waits again."""
    key = polls_key("a_killed_server")
    assert api.store.take_place(key, 0, 1) is not None  # its server then dies: no give_place
    assert api.store.take_place(key, 0, 1) is None
    wait_until(lambda: api.store.take_place(key, 0, 1) is not None, seconds=30, what="the lapsed place")
