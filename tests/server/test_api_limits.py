"""Limits stop abuse and never cost a legitimate game (issue 13).

* limits key on the verified identity: a made-up credential counts against the address;
* a polling bot's turn traffic is bounded by its decisions, not a per-minute budget;
* long-polls are capped per bot and per server process, refused at once beyond;
* an account's tournament has at most 10,000 matches;
* a Redis outage is a 503, not a 500.

APIs with limits switched on run beside the session's (limits off) on the same
Redis: `cardarena serve` subprocesses given their limits in the environment
(CARDARENA_<KEY>, server/app.py `TUNABLE`), as an operator gives them.
"""

from __future__ import annotations

import secrets
import threading
import time
from contextlib import contextmanager

import pytest
import requests

from core.redis_server import EmbeddedRedis
from core.store.quotas import polls_key
from server import create_app
from tests.live import ADMIN_TOKEN, served_api
from tests.waiting import wait_until


def error_code(response) -> str:
    return response.json()["error"]["code"]


@contextmanager
def limited_server(redis_url: str, connections: int | None = None, **limits: str):
    """`cardarena serve` with rate limits on, each of `limits` set as CARDARENA_<KEY>
    (`connections`: its --connections); yields its /api/v1 URL."""
    with served_api(redis_url, {f"CARDARENA_{key}": value for key, value in limits.items()},
                    connections=connections, name="limited") as server:
        yield server.api


# -- keyed on who the caller proves to be ----------------------------------------------------------


def test_a_made_up_credential_counts_against_the_address(api, redis_url):
    """The issue: a random `Authorization` per request sent 3,558 requests in 30 s, all 200."""
    token = api.account("honest")
    with limited_server(redis_url, TOKEN_RATE_LIMIT="10 per minute") as base, requests.Session() as http:
        statuses = [http.get(base + "/games", headers={"Authorization": f"Bearer cat_{secrets.token_hex(16)}"},
                             timeout=10).status_code for _ in range(14)]
        assert statuses[:10] == [200] * 10 and set(statuses[10:]) == {429}
        assert http.get(base + "/games", timeout=10).status_code == 429  # no credential: the same address
        honest = http.get(base + "/games", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert honest.status_code == 200  # a real account has its own budget


# -- polling bots ----------------------------------------------------------------------------------


@pytest.fixture()
def polling_bot(api):
    token = api.account("poller")
    return api.bot(token, "poller", game="toy-high")


def poll(base: str, secret: str, wait: float, out: list, lock: threading.Lock) -> None:
    began = time.monotonic()
    r = requests.get(base + "/bots/me/turns", params={"wait": wait},
                     headers={"Authorization": f"Bearer {secret}"}, timeout=wait + 20)
    with lock:
        out.append((r.status_code, time.monotonic() - began, r.headers.get("Retry-After"),
                    r.json().get("error", {}).get("code")))


def concurrent_polls(base: str, secrets_: list[str], wait: float) -> list[tuple]:
    out: list[tuple] = []
    lock = threading.Lock()
    threads = [threading.Thread(target=poll, args=(base, s, wait, out, lock)) for s in secrets_]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=wait + 30)
    return out


@pytest.mark.slow
def test_long_polls_beyond_a_bots_cap_are_refused_at_once(api, polling_bot):
    """The issue: 70 `GET /bots/me/turns?wait=30` from one secret filled every server thread.
    The polls that get a place wait 6 s, so "refused before any wait ended" holds on a busy
    machine (with 2 s, a refusal took longer than a wait once at load 10)."""
    results = concurrent_polls(api.base, [polling_bot["secret"]] * 10, wait=6.0)
    waited = [r for r in results if r[0] == 200]
    refused = [r for r in results if r[0] == 429]
    assert len(waited) == 4 and len(refused) == 6  # LONG_POLLS_PER_BOT
    assert all(r[2] == "1" and r[3] == "too_many_polls" for r in refused)
    assert max(r[1] for r in refused) < min(r[1] for r in waited)  # refused before any wait ended
    # the slots are given back: the next polls wait again
    assert sorted(r[0] for r in concurrent_polls(api.base, [polling_bot["secret"]] * 4, wait=0.5)) == [200] * 4


@pytest.mark.slow
def test_idle_long_polls_never_hold_the_threads_everything_else_needs(api, redis_url):
    """Many bots waiting at once take at most half the server's connections (LONG_POLL_SLOTS):
    GET /games still answers while they wait, and the polls beyond the slots are refused at
    once (503)."""
    token = api.account("crowd")
    bots = [api.bot(token, f"idle{i}", game="toy-high") for i in range(12)]
    crowd, owner = [b["secret"] for b in bots], api.store.get_bot(bots[0]["id"])["owner"]
    with limited_server(redis_url, connections=8, TOKEN_RATE_LIMIT="1000 per minute") as base:  # 4 polls
        results: list = []
        waiting = threading.Thread(target=lambda: results.extend(concurrent_polls(base, crowd, wait=3.0)))
        waiting.start()
        wait_until(lambda: api.store.r.zcard(polls_key(owner)) == 4, what="four polls waiting")
        games = requests.get(base + "/games", timeout=10)
        answered_while_waiting = waiting.is_alive()
        waiting.join(timeout=40)
    assert games.status_code == 200 and answered_while_waiting
    assert sorted(r[0] for r in results) == [200] * 4 + [503] * 8
    assert all(r[3] == "busy" and r[2] == "1" for r in results if r[0] == 503)


def test_a_spinning_poller_is_limited_but_useful_turn_traffic_never_is(api, redis_url, polling_bot):
    """Quick empty polls count against TURN_WASTE_LIMIT; polls that bring decisions and accepted
    answers do not, however many (the SDK was rate-limited into 18 forfeits)."""
    from tests.server.driving import publish_next

    secret = polling_bot["secret"]
    other = api.bot(api.account("other"), "other", game="toy-high")
    auth = {"Authorization": f"Bearer {secret}"}
    with limited_server(redis_url, TOKEN_RATE_LIMIT="3 per minute", TURN_WASTE_LIMIT="5 per minute") as base, \
            requests.Session() as http:
        # two accounts' bots on a long clock: only the admin chooses that clock (docs/api.md §6)
        match = api.match(api.admin_token, "toy-high", [polling_bot["id"], other["id"]], seed=3,
                          move_timeout_ms=10_000)
        api.store.set_match_status(match["id"], "running")
        played = 0
        while not api.store.replay(match["id"]).is_over and played < 40:
            decision, bot_id = publish_next(api.store, match["id"])
            headers = auth if bot_id == polling_bot["id"] else {"Authorization": f"Bearer {other['secret']}"}
            turns = http.get(base + "/bots/me/turns", params={"wait": 5}, headers=headers, timeout=10)
            assert turns.status_code == 200 and turns.json()["turns"], turns.text
            pending = turns.json()["turns"][0]
            answer = http.post(f"{base}/matches/{pending['match_id']}/turns/{pending['turn']}",
                               json={"action": pending["legal_actions"][0]}, headers=headers, timeout=10)
            assert answer.status_code == 200, answer.text
            played += 1
        assert played > 3  # more turns than the per-minute budget allows requests
        spins = [http.get(base + "/bots/me/turns", params={"wait": 0}, headers=auth, timeout=10)
                 for _ in range(7)]
    assert [r.status_code for r in spins] == [200] * 5 + [429] * 2
    assert spins[-1].headers.get("Retry-After")
    assert "X-RateLimit-Limit" not in spins[0].headers  # turn traffic reads no limiter window
    # counted: the 6 wasted polls, not the useful traffic before them, nor the 7th, refused at once
    # by the process that knows the budget is spent (server/turn_waste.py)
    assert int(api.store.r.get(f"quota:turn_waste:bot:{polling_bot['id']}")) == 6


# -- tournament size -------------------------------------------------------------------------------


def test_an_accounts_tournament_over_10000_matches_is_refused_before_anything_is_stored(api):
    """The issue: 64 bots (owned by nobody in particular) with deals=100 scheduled 403,200 matches."""
    owner = api.account("owner")
    bots = [api.bot(owner, f"entrant{i}", game="toy-high")["id"] for i in range(64)]
    stranger = api.account("stranger")
    body = {"game": "toy-high", "bots": bots, "deals": 100}
    r = api.post("/tournaments", body, token=stranger)
    assert r.status_code == 422 and error_code(r) == "tournament_too_large"
    message = r.json()["error"]["message"]
    assert "403,200" in message and "10,000" in message
    assert api.store.r.zcard("tournaments") == 0
    fits = api.post("/tournaments", {**body, "deals": 2}, token=stranger)  # 2016 tables × 2 deals × 2 = 8,064
    assert fits.status_code == 202
    assert api.post("/tournaments", body, token=ADMIN_TOKEN).status_code == 202  # the admin has no cap


# -- Redis down -------------------------------------------------------------------------------------


@pytest.mark.parametrize("limits", [False, True], ids=["limits-off", "limits-on"])
def test_a_redis_outage_is_a_503_with_retry_after_not_a_500(limits):
    redis_server = EmbeddedRedis().start()
    settings = {"CARDARENA_SECRET_KEY": "k" * 32, **({} if limits else {"CARDARENA_RATE_LIMITS": "off"})}
    try:
        with served_api(redis_server.url, settings, name="outage") as server:
            assert requests.get(server.url + "/api/v1/bots", timeout=10).status_code == 200
            redis_server.stop()
            for path in ("/api/v1/bots", "/api/v1/games/double/rankings", "/"):
                r = requests.get(server.url + path, timeout=30)
                assert r.status_code == 503, (path, r.status_code)
                assert r.json()["error"]["code"] == "unavailable" and r.headers["Retry-After"], path
            r = requests.post(server.url + "/api/v1/accounts", json={"name": "x"}, timeout=30)
            assert r.status_code == 503
    finally:
        redis_server.stop()


def test_an_operator_may_turn_the_rate_limits_off_from_the_environment(redis_url, monkeypatch):
    """`CARDARENA_RATE_LIMITS=off`: a bench hammering `cardarena serve`, or limits kept by a proxy."""
    config = {"REDIS_URL": redis_url, "TOKEN_RATE_LIMIT": "2 per minute",
              "RATELIMIT_KEY_PREFIX": "limits-" + secrets.token_hex(4)}
    limited = create_app(config).test_client()
    assert [limited.get("/api/v1/games").status_code for _ in range(3)] == [200, 200, 429]
    monkeypatch.setenv("CARDARENA_RATE_LIMITS", "off")
    free = create_app({**config, "RATELIMIT_KEY_PREFIX": "limits-" + secrets.token_hex(4)}).test_client()
    assert [free.get("/api/v1/games").status_code for _ in range(3)] == [200] * 3


def test_an_operator_may_set_each_limit_from_the_environment(redis_url, monkeypatch):
    """CARDARENA_<KEY> for each of `server.app.TUNABLE`: how `cardarena serve` is given its limits."""
    from server.app import TUNABLE, tuned_limits

    monkeypatch.setenv("CARDARENA_TOKEN_RATE_LIMIT", "2 per minute")
    monkeypatch.setenv("CARDARENA_BOTS_PER_ACCOUNT", "3")
    app = create_app({"REDIS_URL": redis_url, "RATELIMIT_KEY_PREFIX": "limits-" + secrets.token_hex(4)})
    assert (app.config["TOKEN_RATE_LIMIT"], app.config["BOTS_PER_ACCOUNT"]) == ("2 per minute", 3)
    client = app.test_client()
    assert [client.get("/api/v1/games").status_code for _ in range(3)] == [200, 200, 429]
    assert set(tuned_limits({f"CARDARENA_{key}": "7" if key.endswith("ACCOUNT") or key.endswith("BOT")
                             else "7 per hour" for key in TUNABLE})) == set(TUNABLE)
    for key, wrong in [("CARDARENA_ACCOUNTS_RATE_LIMIT", "lots"), ("CARDARENA_LONG_POLLS_PER_BOT", "-1"),
                       ("CARDARENA_TURN_WASTE_LIMIT", "300 per fortnight")]:
        with pytest.raises(ValueError, match=key):
            tuned_limits({key: wrong})


def test_health_probes_are_never_limited_nor_counted(redis_url):
    """A load balancer (or a test waiting for its server) probes `GET /health` from one address."""
    client = create_app({"REDIS_URL": redis_url, "TOKEN_RATE_LIMIT": "2 per minute",
                         "RATELIMIT_KEY_PREFIX": "limits-" + secrets.token_hex(4)}).test_client()
    assert [client.get("/api/v1/health").status_code for _ in range(5)] == [200] * 5
    assert [client.get("/api/v1/games").status_code for _ in range(3)] == [200, 200, 429]
