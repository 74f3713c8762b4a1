"""`sdk.connect`: the polling loop against the live API, and against a scripted loopback server
for what the API only does under load (429 with Retry-After, 5xx)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import sdk
from sdk import Bot, CardarenaError, Client, connect
from sdk.faults import fault_kind
from tests.sdk.conftest import Recorder, real_decision
from tests.server.driving import publish_next

GAME = "double-carre"


# -- a scripted server: answers from a list, records what it was asked ----------

class Scripted:
    """A loopback HTTP server answering each (method) from a script, then a default."""

    def __init__(self, script: dict[str, list[tuple[int, dict, dict]]]) -> None:
        self.script = script
        self.seen: list[tuple[float, str, str, dict, bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.seen.append((time.monotonic(), self.command, self.path, dict(self.headers), body))
                queue = outer.script.get(self.command, [])
                status, payload, headers = queue.pop(0) if len(queue) > 1 else queue[0]
                data = json.dumps(payload).encode()
                self.send_response(status)
                for k, v in {**headers, "Content-Type": "application/json",
                             "Content-Length": str(len(data))}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _reply

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def requests(self, method: str) -> list[tuple]:
        return [s for s in self.seen if s[1] == method]


NO_TURNS = (200, {"turns": []}, {})


def connect_once(script: dict, bot: Bot | None = None):
    """`connect` against a server answering from `script` until one action is accepted;
    (its stats, the server with what it was asked)."""
    server = Scripted(script)
    try:
        stats = connect(bot or Recorder(), server.url, secret="sek", wait=0, max_turns=1)
    finally:
        server.close()
    return stats, server


def test_a_429_is_waited_out_for_its_retry_after_then_the_turn_is_played():
    decision = real_decision(GAME)
    server = Scripted({
        "GET": [(429, {"error": {"code": "rate_limited", "message": "slow down"}}, {"Retry-After": "1"}),
                (200, {"turns": [decision]}, {}), NO_TURNS],
        "POST": [(429, {"error": {"code": "rate_limited", "message": "slow down"}}, {"Retry-After": "1"}),
                 (200, {}, {})],
    })
    try:
        bot = Recorder()
        stats = connect(bot, server.url, secret="sek", wait=0, max_turns=1)
    finally:
        server.close()
    gets, posts = server.requests("GET"), server.requests("POST")
    assert gets[1][0] - gets[0][0] >= 0.9  # the second poll came after Retry-After
    assert posts[1][0] - posts[0][0] >= 0.9  # and so did the second answer
    assert stats.answered == 1 and len(posts) == 2
    assert [c[0] for c in bot.calls] == ["start", "act"]  # asked once, posted twice
    for _, _, path, headers, body in posts:
        assert path == f"/api/v1/matches/{decision['match_id']}/turns/{decision['turn']}"
        assert headers["Authorization"] == "Bearer sek"
        assert json.loads(body) == {"action": decision["legal_actions"][-1]}
    assert gets[0][2] == "/api/v1/bots/me/turns?wait=0.0"


@pytest.mark.slow
def test_5xx_and_garbage_answers_are_retried_with_backoff_until_the_server_is_back():
    decision = real_decision(GAME)
    stats, server = connect_once({
        "GET": [(503, {}, {}), (502, {}, {}), (200, {"unexpected": 1}, {}),
                (200, {"turns": [decision]}, {}), NO_TURNS],
        "POST": [(200, {}, {})],
    })
    gets = server.requests("GET")
    assert len(gets) == 4 and stats.answered == 1
    assert stats.reconnects == 1
    assert gets[2][0] - gets[1][0] > (gets[1][0] - gets[0][0]) * 1.2  # the delay grows


@pytest.mark.slow
def test_a_long_retry_after_never_keeps_the_loop_from_its_decisions():
    """The issue: connect slept out a 429's `Retry-After: 59` and forfeited every decision meanwhile."""
    decision = real_decision(GAME)
    busy = {"error": {"code": "busy", "message": "later"}}
    stats, server = connect_once({
        "GET": [(429, busy, {"Retry-After": "59"}), (503, busy, {"Retry-After": "30"}),
                (200, {"turns": [decision]}, {}), NO_TURNS],
        "POST": [(200, {}, {})],
    })
    gets = server.requests("GET")
    assert stats.answered == 1 and len(gets) == 3
    assert gets[1][0] - gets[0][0] < 5 and gets[2][0] - gets[1][0] < 5  # not 59 s, not 30 s


def test_a_malformed_decision_is_skipped_and_the_rest_played():
    good = real_decision(GAME, match_id="m_good")
    server = Scripted({"GET": [(200, {"turns": [{"type": "turn", "protocol": 1}, good]}, {}), NO_TURNS],
                       "POST": [(200, {}, {})]})
    try:
        stats = connect(Recorder(), server.url, secret="sek", wait=0, max_turns=1)
    finally:
        server.close()
    assert stats.answered == 1
    assert [s[2] for s in server.requests("POST")] == ["/api/v1/matches/m_good/turns/0"]


# -- against the live API (this test plays the worker's part through the store) --

@pytest.fixture()
def table(api):
    """A queued challenge between two polling bots: (match_id, bot a, bot b)."""
    token = api.account()
    a = api.bot(token, "a", game=GAME, kind="polling")
    b = api.bot(token, "b", game=GAME, kind="polling")
    match = api.match(token, GAME, [a["id"], b["id"]], seed=11, move_timeout_ms=10000)
    return match["id"], a, b


def _secret_of(bot_id: str, a: dict, b: dict) -> str:
    return a["secret"] if bot_id == a["id"] else b["secret"]


def test_connect_plays_a_published_decision_through_the_api(api, table):
    match_id, a, b = table
    decision, bot_id = publish_next(api.store, match_id)
    bot = Recorder()
    stats = connect(bot, api.live.url, secret=_secret_of(bot_id, a, b), wait=1, until_idle=True)
    assert stats.answered == 1 and stats.refused == 0
    [entry] = api.store.match_log(match_id)
    assert entry.pop("ms") >= 0  # the latency charged, from publication to the answer
    assert entry == {"turn": 0, "seat": decision["seat"], "action": decision["legal_actions"][-1]}
    assert bot.calls[0] == ("start", match_id, decision["seat"])


def test_a_wrong_secret_stops_connect_with_a_401(api):
    with pytest.raises(CardarenaError) as caught:  # a program managing its pollers gets the error
        connect(Recorder(), api.live.url, secret="not-a-secret", wait=0, block=False)
    assert caught.value.status == 401


def connect_in_a_script(url: str, secret: str) -> subprocess.CompletedProcess:
    """A bot author's script: connect(), blocking, as its last line."""
    script = ("from sdk import Bot, connect\n"
              "class Mine(Bot):\n"
              "    def act(self, view, legal_actions):\n"
              "        return legal_actions[0]\n"
              f"connect(Mine, {url!r}, secret={secret!r}, wait=0)\n")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)


def test_connects_refusals_end_the_script_with_one_line_each_and_no_traceback(api):
    client = Client(api.live.url)
    client.create_account("author")
    with socket.socket() as s:  # a webhook bot's URL nothing listens on: registered all the same
        s.bind(("127.0.0.1", 0))
        hook = client.register_bot("hook", "duck-soup", kind="webhook", url=f"http://127.0.0.1:{s.getsockname()[1]}/")
    for secret, said in (("not-a-secret", "the platform refused its secret (401"),
                         (hook.secret, "409 wrong_kind: ")):
        done = connect_in_a_script(api.live.url, secret)
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()  # "polling <server>", then why it stopped
        assert "Traceback" not in done.stderr and len(lines) == 2 and "polling" in lines[0], done.stderr
        assert "Mine stopped: " in lines[1] and said in lines[1], done.stderr


class Illegal(Bot):
    def act(self, view, legal_actions):
        return {"take": ["nothing"]}


def test_an_illegal_answer_is_refused_422_once_and_recorded_as_a_fault_at_once(api, table):
    match_id, a, b = table
    _, bot_id = publish_next(api.store, match_id)
    poller = connect(Illegal(), api.live.url, secret=_secret_of(bot_id, a, b), wait=0.2, block=False)
    _wait_for(lambda: poller.stats.polls >= 3)
    poller.stop()
    assert poller.stats.refused == 1 and poller.stats.answered == 0
    [entry] = api.store.match_log(match_id)  # no waiting out the deadline as a timeout
    assert entry["fault"].startswith("illegal: ")


class Raises(Recorder):
    def act(self, view, legal_actions):
        super().act(view, legal_actions)
        raise ValueError("no idea")


def test_a_bot_that_raises_is_asked_once_and_its_error_recorded_at_once(api, table):
    match_id, a, b = table
    _, bot_id = publish_next(api.store, match_id)
    bot = Raises()
    poller = connect(bot, api.live.url, secret=_secret_of(bot_id, a, b), wait=0.2, block=False)
    _wait_for(lambda: poller.stats.polls >= 3)
    poller.stop()
    assert [c[0] for c in bot.calls] == ["start", "act"]
    assert poller.stats.bot_errors == 1 and poller.error is None
    [entry] = api.store.match_log(match_id)
    assert fault_kind(entry["fault"]) == "bot_error" and "no idea" not in entry["fault"]  # public: no bot text
    assert "ValueError: no idea" in api.store.turn_debug(match_id, 0)["text"]  # its owner's


def test_stop_ends_a_background_loop_within_one_long_poll(api, table):
    _, a, _ = table
    poller = connect(Recorder(), api.live.url, secret=a["secret"], wait=1, block=False)
    _wait_for(lambda: poller.stats.polls >= 1)
    poller.stop(timeout=10)
    assert not poller.running


def _wait_for(condition, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "condition not reached"
        time.sleep(0.02)


@pytest.mark.slow
def test_connect_plays_a_whole_tournament_on_a_rate_limited_api_without_a_fault(api, redis_url, worker_pool):
    """The issue: on an ordinary tournament `sdk.connect` hit the per-secret limit (1,200/min),
    waited out `Retry-After: 59` and forfeited (56 faults, 18 forfeits). Here the per-minute
    budget is 20 requests and the bot needs well over 100: its turn traffic is not counted."""
    from tests.live import ADMIN_TOKEN
    from tests.server.test_api_limits import limited_server

    token = api.account("organiser")
    poller_bot = api.bot(token, "poller", game=GAME, kind="polling")
    randoms = [api.ok(api.post("/bots", {"name": f"random{i}", "game": GAME, "kind": "python",
                                         "entrypoint": "example_bots.random:RandomBot"}, token=ADMIN_TOKEN),
                      201)["id"] for i in range(2)]
    with limited_server(redis_url, TOKEN_RATE_LIMIT="20 per minute") as base:
        poller = connect(Recorder(), base.removesuffix("/api/v1"), secret=poller_bot["secret"], wait=5,
                         block=False)
        try:
            tid = api.ok(api.post("/tournaments", {"game": GAME, "bots": [poller_bot["id"], *randoms],
                                                   "deals": 3, "move_timeout_ms": 5000}, token=ADMIN_TOKEN),
                         202)["id"]  # house bots on a clock of its own: the admin's to choose
            end = time.monotonic() + 240
            while (t := api.ok(api.get(f"/tournaments/{tid}"), 200))["status"] not in ("finished", "aborted"):
                assert time.monotonic() < end, t["progress"]
                time.sleep(0.2)
        finally:
            poller.stop(timeout=30)
    row = next(r for r in t["standings"] if r["bot"] == poller_bot["id"])
    assert t["status"] == "finished" and row["matches"] == 12
    assert row["faults"] == 0 and row["forfeits"] == 0
    assert poller.stats.answered == 6 * 12 and poller.stats.refused == 0


class Overlaps(sdk.Bot):
    """Thinks 0.3 s a decision; keeps the most decisions it was thinking about at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = 0

    def act(self, view, legal_actions):
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.3)
        with self.lock:
            self.now -= 1
        return legal_actions[0]


@pytest.mark.slow
def test_connect_answers_the_decisions_of_several_matches_at_once(api, worker_pool):
    from tests.live import ADMIN_TOKEN

    token = api.account("author")
    rival = api.ok(api.post("/bots", {"name": "first", "game": GAME, "kind": "python",
                                      "entrypoint": "tests.worker.bots:First"}, token=ADMIN_TOKEN), 201)
    mine = api.bot(token, "busy", GAME, kind="polling")
    bot = Overlaps()
    poller = sdk.connect(bot, api.live.url, secret=mine["secret"], wait=1, block=False, concurrency=3)
    try:
        # the admin's three challenges: an account may have only two at once with another's bot
        ids = [api.match(ADMIN_TOKEN, GAME, [mine["id"], rival["id"]], seed=s)["id"] for s in (1, 2, 3)]
        for match_id in ids:
            assert sdk.Client(api.live.url).wait_match(match_id, timeout=120).status == "finished"
    finally:
        poller.stop(timeout=30)
    assert bot.most >= 2 and bot.most <= 3  # its three matches' decisions overlapped, never beyond 3
    assert poller.stats.refused == 0 and poller.stats.bot_errors == 0
    faults = [api.ok(api.get(f"/matches/{m}"), 200)["result"]["faults"] for m in ids]
    assert faults == [[0, 0]] * 3


class SlowOnFirst(Bot):
    """Thinks until told to stop on the first match it sees; answers others at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.slow: str | None = None
        self.answered: list[str] = []

    def decide(self, decision):
        if self.slow in (None, decision["match_id"]):
            self.slow = decision["match_id"]
            self.release.wait(30)
        self.answered.append(decision["match_id"])
        return decision["legal_actions"][0]


@pytest.mark.slow
def test_while_the_bot_thinks_the_poll_waits_for_new_decisions_instead_of_spinning(api):
    token = api.account()
    mine = api.bot(token, "mine", game=GAME, kind="polling")
    rival = api.bot(token, "rival", game=GAME, kind="polling")
    matches = [api.match(token, GAME, [rival["id"], mine["id"]], seed=11, move_timeout_ms=10000)["id"]
               for _ in range(2)]
    bot = SlowOnFirst()
    first, who = publish_next(api.store, matches[0])
    assert who == mine["id"]  # seat 1 acts first in this seeded deal
    poller = connect(bot, api.live.url, secret=mine["secret"], wait=5, block=False, concurrency=2)
    try:
        _wait_for(lambda: bot.slow == matches[0])
        time.sleep(1.0)  # the bot thinks: a spinning loop would poll a few times a second here
        polls_while_thinking = poller.stats.polls
        publish_next(api.store, matches[1])
        _wait_for(lambda: bot.answered == [matches[1]])  # the other match's decision, answered meanwhile
        assert polls_while_thinking <= 3, polls_while_thinking  # its first poll, and one long-poll waiting
        bot.release.set()
        _wait_for(lambda: bot.answered == [matches[1], matches[0]])
    finally:
        bot.release.set()
        poller.stop(timeout=10)
    assert poller.stats.answered == 2 and poller.stats.refused == 0
