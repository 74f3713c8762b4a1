"""A bot's liveness is one kind of timestamp, and whatever landed last decides its status
(docs/api.md "Liveness").

* every liveness timestamp is held, shown by the API and by the bot's page in one form (ISO 8601
  UTC to the ms, as `created`), and `cardarena migrate` rewrites the epoch-ms numbers an older
  Redis holds;
* `judge` is right on every order in which a registration's ping, a heartbeat's ping and an
  answered decision land, each succeeding or failing;
* the race the issue found — the heartbeat's ping answered while the registration's ping, sent
  first, fails after it — answers 201 with the bot stored once and its status what its ping
  found, on a real heartbeat and a real loopback server;
* a bounded fuzz of concurrent registrations, pings and heartbeat cycles gets no 5xx.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from cardarena.cli import main
from core import liveness
from core.store import schema
from core.store.keys import epoch_ms_of, iso_ms, now_ms
from worker.heartbeat import Heartbeat

GAME = "duck-soup"
#: the longest any one wait of these tests lasts (seconds): a bound, never a pace
WAIT_S = 20


class Loopback:
    """A web server on loopback that answers each POST as `answer(n)` says, n counting from 0:
    "ok" (200), "drop" (the connection closed, no answer), "refuse" (401), a
    `threading.Event` (held until it is set, then closed with no answer), or `(seconds, how)`: a
    slow bot, `how` after that long. `arrived[n]` is set when request n came in."""

    def __init__(self, answer) -> None:
        self.answer, self.count, self.lock = answer, 0, threading.Lock()
        self.arrived = [threading.Event() for _ in range(64)]
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with outer.lock:
                    n, outer.count = outer.count, outer.count + 1
                if n < len(outer.arrived):
                    outer.arrived[n].set()
                how = outer.answer(n)
                if isinstance(how, tuple):
                    slow, how = how
                    threading.Event().wait(slow)  # the bot takes its time: nothing to wait for
                if isinstance(how, threading.Event):
                    how.wait(WAIT_S)
                    how = "drop"
                if how == "drop":
                    self.close_connection = True
                    return
                self.send_response(200 if how == "ok" else 401)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)

    def __enter__(self) -> Loopback:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- one form ---------------------------------------------------------------------------------

def test_every_liveness_timestamp_is_stored_shown_and_paged_in_one_form(api):
    token = api.account("author")
    with Loopback(lambda n: "ok" if n == 0 else "drop") as hook:
        bot = api.bot(token, "hook", kind="webhook", url=hook.url)
        assert bot["reachable"] is True
        api.ok(api.post(f"/bots/{bot['id']}/ping", token=token), 200)  # dropped: failed now
    stored = {k.decode(): json.loads(v) for k, v in api.store.r.hgetall(f"bot:{bot['id']}").items()
              if k.decode() in ("created", "last_seen", "last_failed", "last_pinged")}
    assert set(stored) >= {"created", "last_seen", "last_failed"}
    for stamp in stored.values():  # the one form: ISO 8601 UTC to the ms, as `created`
        assert stamp == iso_ms(epoch_ms_of(stamp))
    shown = api.ok(api.get(f"/bots/{bot['id']}"), 200)
    assert (shown["last_seen"], shown["last_failed"]) == (stored["last_seen"], stored["last_failed"])
    assert shown["status"] == "offline" and stored["last_failed"] in shown["status_reason"]
    page = api.session.get(f"{api.live.url}/bots/{bot['id']}", timeout=30).text
    assert f'<span id="last-seen">{stored["last_seen"]}</span>' in page
    assert f'<span id="last-failed">{stored["last_failed"]}</span>' in page


def test_migrate_rewrites_the_epoch_ms_an_older_redis_holds(api, redis_client, redis_url, capsys):
    token = api.account("author")
    bot = api.bot(token, "poller")["id"]
    other = api.bot(token, "fresh")["id"]
    seen, failed = now_ms() - 5000, now_ms() - 1000
    # as written before every liveness timestamp had the one form: epoch ms numbers
    redis_client.hset(f"bot:{bot}", mapping={"last_seen": seen, "last_failed": failed, "last_pinged": seen,
                                             "kind": json.dumps("webhook")})
    redis_client.hset(f"bot:{other}", "last_seen", json.dumps(iso_ms(seen)))
    redis_client.set(schema.SCHEMA_KEY, 2)
    assert main(["migrate", "--redis-url", redis_url]) == 0
    assert "version 3: write bots' liveness timestamps" in capsys.readouterr().out
    after = {k.decode(): json.loads(v) for k, v in redis_client.hgetall(f"bot:{bot}").items()}
    assert (after["last_seen"], after["last_failed"], after["last_pinged"]) == (iso_ms(seen), iso_ms(failed),
                                                                                iso_ms(seen))
    assert json.loads(redis_client.hget(f"bot:{other}", "last_seen")) == iso_ms(seen)  # left as it was
    shown = api.ok(api.get(f"/bots/{bot}"), 200)
    assert shown["status"] == "offline" and iso_ms(failed) in shown["status_reason"]


def test_judge_never_raises_on_a_timestamp_not_in_the_stored_form():
    now = now_ms()
    for odd in (None, 5, 1.5, True, "", "yesterday", "2026-13-40T99:99:99.000Z", [1], {"a": 1}, now):
        for kind in ("webhook", "polling"):
            state, _ = liveness.judge({"kind": kind, "last_seen": odd, "last_failed": iso_ms(now - 10)}, now)
            assert state in liveness.STATUSES
            state, _ = liveness.judge({"kind": kind, "last_seen": iso_ms(now - 10), "last_failed": odd}, now)
            assert state in liveness.STATUSES


# -- every order ------------------------------------------------------------------------------

EVENTS = ("registration ping", "heartbeat ping", "answered decision")
OUTCOMES = {"ok": None, "unreachable": "unreachable", "timeout": "timeout", "refused": "http_error: HTTP 401"}


def _landed(store, bot_id: str, outcome: str) -> None:
    """Note one call's outcome as the platform notes it: a ping (registration's, heartbeat's) by
    `liveness.note`, a decision's answer by the webhook driver's `note`; both come to
    `bot_seen` / `bot_failed`."""
    failure = OUTCOMES[outcome]
    if failure is None:
        liveness.note(store, bot_id, liveness.Pinged(True, 200, 1))
    else:
        store.bot_failed(bot_id, failure)


@pytest.mark.slow
def test_whatever_landed_last_decides_on_every_order_and_outcome(api):
    token = api.account("author")
    bot_id = api.bot(token, "hook", kind="webhook", url="http://127.0.0.1:9/")["id"]
    expected_state = {"ok": "online", "unreachable": "offline", "timeout": "offline", "refused": "rejected"}
    checked = 0
    for order in itertools.permutations(EVENTS):
        for outcomes in itertools.product(OUTCOMES, repeat=len(order)):
            api.store.r.hdel(f"bot:{bot_id}", "last_seen", "last_failed", "last_failure")
            for outcome in outcomes:  # back to back: often in one millisecond, as on a busy platform
                _landed(api.store, bot_id, outcome)
            bot = api.store.get_bot(bot_id)
            state, reason = liveness.judge(bot, now_ms())
            assert state == expected_state[outcomes[-1]], (order, outcomes, bot)
            if order == EVENTS:  # the API judges the same record alike (once per outcome is enough)
                shown = api.ok(api.get(f"/bots/{bot_id}"), 200)
                assert (shown["status"], shown["status_reason"]) == (state, reason)
            checked += 1
    assert checked == 6 * 4 ** 3


# -- the race, on a real heartbeat and a real server ----------------------------------------

def test_a_registration_whose_ping_fails_after_the_heartbeats_was_answered_is_201(api, monkeypatch):
    """The registration's ping reaches the bot's server first and is held; the heartbeat pings the
    new bot meanwhile and is answered; then the registration's ping is dropped unanswered."""
    monkeypatch.setattr(liveness, "PING_S", WAIT_S)  # the held ping outlasts a heartbeat on a busy machine
    token = api.account("author")
    release = threading.Event()
    with Loopback(lambda n: release if n == 0 else "ok") as hook:
        answer: dict = {}
        registering = threading.Thread(target=lambda: answer.setdefault("r", api.post(
            "/bots", {"name": "racer", "game": GAME, "kind": "webhook", "url": hook.url}, token=token)))
        registering.start()
        try:
            assert hook.arrived[0].wait(WAIT_S)  # the registration's ping, held
            (stored,) = api.store.list_bots(GAME)
            found = Heartbeat(api.store, every_s=0).cycle()  # the real heartbeat: the bot is due
            assert found[stored["id"]].reachable and hook.count == 2
        finally:
            release.set()
            registering.join(WAIT_S)
    response = answer["r"]
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["reachable"] is False and body["status"] == "offline", body  # what its ping found, last
    assert body["last_seen"] is not None and body["last_failed"] >= body["last_seen"]
    assert any("did not answer its ping" in w for w in body["warnings"])
    assert [b["id"] for b in api.store.list_bots(GAME)] == [body["id"]]  # stored once


# -- fuzz ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_concurrent_registrations_pings_and_heartbeats_never_answer_5xx(api):
    """Seeded: 3 accounts register 8 webhook bots each, in parallel, at a server answering at
    random (200, 401, dropped, each after up to 0.2 s), and ping them while heartbeat cycles run;
    bounded in count (24 registrations, 48 pings, 40 cycles) and in time."""
    rng = random.Random(43)
    answers = [(rng.random() * 0.2, rng.choice(("ok", "ok", "refuse", "drop"))) for _ in range(4096)]
    end = time.monotonic() + 25
    statuses: list[int] = []
    heartbeat = Heartbeat(api.store, every_s=0)
    with Loopback(lambda n: answers[n % len(answers)]) as hook:
        tokens = [api.account(f"fuzz{i}") for i in range(3)]

        def account_work(i: int) -> None:
            mine, auth = [], {"Authorization": f"Bearer {tokens[i]}"}
            with requests.Session() as session:  # one a thread: a Session is not shared
                for j in range(8):
                    if time.monotonic() > end:
                        return
                    r = session.post(f"{api.base}/bots", json={"name": f"f{i}-{j}", "game": GAME, "kind": "webhook",
                                                               "url": hook.url}, headers=auth, timeout=30)
                    statuses.append(r.status_code)
                    if r.status_code == 201:
                        mine.append(r.json()["id"])
                    for bot_id in mine[-2:]:
                        statuses.append(session.post(f"{api.base}/bots/{bot_id}/ping", headers=auth,
                                                     timeout=30).status_code)
                        statuses.append(session.get(f"{api.base}/bots/{bot_id}", timeout=30).status_code)

        def beats() -> None:
            for _ in range(40):
                if time.monotonic() > end or not any(t.is_alive() for t in workers):
                    return
                heartbeat.cycle()

        workers = [threading.Thread(target=account_work, args=(i,)) for i in range(3)]
        beat = threading.Thread(target=beats)
        for t in (*workers, beat):
            t.start()
        for t in (*workers, beat):
            t.join(WAIT_S + 10)
    assert statuses and not [s for s in statuses if s >= 500], statuses
    assert statuses.count(201) == 24
