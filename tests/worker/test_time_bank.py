"""The platform's time bank (docs/api.md §5 "Time and faults"), on the live pool over real HTTP.

A remote bot that overruns `move_timeout_ms` is not faulted while its bank
pays: the next decision it is sent shows the bank drawn on and the latency
it was charged, and `GET /matches/{id}` shows each seat's latencies and the
bank left. Past `move_timeout_ms` + bank it is a timeout, and the bank is empty.
Both kinds of remote bot are measured: a webhook from the call to the end of
its answer, a polling bot from the decision's publication to its POST.
"""

from __future__ import annotations

import logging
import socket
import threading
import time

import pytest

import sdk
from sdk import Bot

MOVE_MS = 500
OVER_S = 0.9  # each of a bot's first decisions takes this long: 400 ms over its move time


class Overruns(Bot):
    """Takes OVER_S on its first `slow` decisions, then answers at once; keeps every decision."""

    def __init__(self, slow: int) -> None:
        self.slow = slow
        self.decisions: list[dict] = []
        self.lock = threading.Lock()

    def decide(self, decision):
        with self.lock:
            self.decisions.append(decision)
            n = len(self.decisions)
        if n <= self.slow:
            time.sleep(OVER_S)
        return decision["legal_actions"][0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _play(api, slow: int, time_bank_ms: int) -> tuple[dict, list[Overruns]]:
    """A duck-soup match between a webhook bot (seat 0) and a polling bot (seat 1), both
    overrunning their first `slow` decisions; the finished match and the two bots."""
    token = api.account("author")
    port = _free_port()
    hooked = api.bot(token, "hooked", kind="webhook", url=f"http://127.0.0.1:{port}/")
    polled = api.bot(token, "polled", kind="polling")
    bots = [Overruns(slow), Overruns(slow)]
    server = sdk.serve(bots[0], port=port, secret=hooked["secret"], block=False)
    poller = sdk.connect(bots[1], api.live.url, secret=polled["secret"], wait=1, block=False)
    try:
        match_id = api.match(token, "duck-soup", [hooked["id"], polled["id"]], seed=3,
                             move_timeout_ms=MOVE_MS, time_bank_ms=time_bank_ms, max_faults=10)["id"]
        sdk.Client(api.live.url).wait_match(match_id, timeout=120)
    finally:
        poller.stop(timeout=30)
        server.stop()
    return api.ok(api.get(f"/matches/{match_id}"), 200), bots


@pytest.mark.slow
def test_the_bank_pays_for_overruns_and_each_decision_shows_it(api, worker_pool, caplog):
    caplog.set_level(logging.WARNING, logger="sdk.connect")
    match, bots = _play(api, slow=2, time_bank_ms=5000)
    assert match["status"] == "finished" and match["result"]["faults"] == [0, 0]
    for seat, bot in enumerate(bots):
        first, second, third = bot.decisions[:3]
        assert first["clock"] == {"move_ms": MOVE_MS, "bank_ms": 5000} and first["last_latency_ms"] is None
        assert first["deadline_ms"] == MOVE_MS + 5000
        # the second decision shows what the first was charged and the bank it drew on
        assert second["last_latency_ms"] >= OVER_S * 1000
        assert second["clock"]["bank_ms"] == 5000 - (second["last_latency_ms"] - MOVE_MS)
        assert second["deadline_ms"] == MOVE_MS + second["clock"]["bank_ms"]
        assert third["clock"]["bank_ms"] <= 5000 - 2 * (OVER_S * 1000 - MOVE_MS)
        mine = [e for e in match["log"] if e["seat"] == seat]
        assert all(type(e["ms"]) is int for e in mine)  # the log holds each charge: it is the truth
        assert [e["ms"] for e in mine[:2]] == [second["last_latency_ms"], third["last_latency_ms"]]
        shown = match["seats"][seat]
        assert shown["latency_ms"]["max"] >= OVER_S * 1000
        assert shown["latency_ms"]["p50"] < OVER_S * 1000  # most decisions were answered at once
        assert shown["bank_ms"] <= third["clock"]["bank_ms"]
    # the polling bot's SDK said so on its side, as the decisions came
    said = [r.getMessage() for r in caplog.records if "over the move time" in r.getMessage()]
    assert len(said) >= 2 and all(match["id"] in m for m in said)


@pytest.mark.slow
def test_past_the_move_time_and_the_bank_is_a_timeout_and_empties_the_bank(api, worker_pool):
    match, bots = _play(api, slow=1, time_bank_ms=100)  # 900 ms against a deadline of 600
    assert match["status"] == "finished" and match["result"]["faults"] == [1, 1]
    for seat, bot in enumerate(bots):
        first = next(e for e in match["log"] if e["seat"] == seat)
        assert first["fault"].startswith("timeout: ") and first["ms"] == MOVE_MS + 100
        later = bot.decisions[1]
        assert later["last_latency_ms"] == MOVE_MS + 100
        assert later["clock"]["bank_ms"] == 0 and later["deadline_ms"] == MOVE_MS
        assert match["seats"][seat]["bank_ms"] == 0
    page = api.session.get(f"{api.live.url}/matches/{match['id']}", timeout=10).text  # the match page
    assert page.count('<td class="num bank">0 ms</td>') == 2
    assert page.count('<td class="num latency">') == 2 and f" / {MOVE_MS + 100} ms</td>" in page
