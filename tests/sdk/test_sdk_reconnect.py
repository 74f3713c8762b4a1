"""`sdk.connect` survives the API going away in the middle of a match.

The API runs on a fixed port, is stopped while a match is under way and
started again on the same port; the polling bots must reconnect on their own
and the match must finish with every turn played by the bots (no fault).

Two referees drive the match: the real worker pool (`worker_pool`), and a
plain loop doing the polling seat driver's job through the store, which lets
the test stop the API at an exact turn.
"""

from __future__ import annotations

import threading
import time

import pytest

from sdk import Client, connect
from sdk.polling import BACKOFF_START
from tests.live import served_api
from tests.sdk.conftest import Recorder
from tests.server.driving import finish, publish_next, wait_turn

GAME = "double-carre"


@pytest.fixture()
def fixed_api(api, redis_url):
    """A `cardarena serve` of its own (on the database `api` emptied), to stop and start again
    on its port."""
    with served_api(redis_url, {"CARDARENA_RATE_LIMITS": "off"}, name="restarted") as server:
        yield server


def _wait_for(condition, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "condition not reached"
        time.sleep(0.02)


def _both_away(pollers) -> bool:
    return all(p._backoff > BACKOFF_START for p in pollers)  # each has failed at least once


@pytest.mark.slow
def test_polling_bots_reconnect_after_a_restart_and_the_match_finishes(api, fixed_api):
    """The test referees through the store, stopping the API after turn 2."""
    client = Client(fixed_api.url)
    client.create_account("alice")
    a, b = (client.register_bot(n, GAME, kind="polling") for n in "ab")
    match = client.challenge(GAME, [a, b], seed=5, move_timeout_ms=10000)
    bots = {a.id: Recorder(), b.id: Recorder()}
    pollers = [connect(bots[x.id], fixed_api.url, secret=x.secret, wait=1, block=False) for x in (a, b)]
    store = api.store
    faults = []
    try:
        turn = 0
        while not store.replay(match.id).is_over:
            decision, _ = publish_next(store, match.id)
            if not wait_turn(store, match.id, turn, 10):
                faults.append(turn)
                break
            turn += 1
            if turn == 2:  # mid-match: the API goes away, the next decision is published meanwhile
                fixed_api.stop()
                # its deadline a minute away: on a busy machine the restart and the bots' backoff
                # can outlast a move's 10 s, and no clock here ends a turn that timed out
                publish_next(store, match.id, deadline_ms=60_000)
                _wait_for(lambda: _both_away(pollers))
                fixed_api.start()
                assert wait_turn(store, match.id, turn, 60)
                turn += 1
        finish(store, match.id)
        _wait_for(lambda: all(match.id in p.stats.matches_over for p in pollers))
    finally:
        for p in pollers:
            p.stop(timeout=10)
    assert faults == []
    assert sum(p.stats.reconnects for p in pollers) >= 2
    assert all(p.error is None for p in pollers)
    result = client.match(match.id)
    assert result.status == "finished" and len(result.log) == turn
    for bot in bots.values():
        assert bot.calls[0][0] == "start" and bot.calls[-1] == ("over", match.id, result.result)


@pytest.mark.slow
def test_with_the_worker_pool_a_restart_mid_match_costs_nothing(api, fixed_api, worker_pool):
    """The real worker referees; the API is stopped once the match is under way."""
    client = Client(fixed_api.url)
    client.create_account("alice")
    a, b = (client.register_bot(n, GAME, kind="polling") for n in "ab")
    gate = threading.Event()

    class Held(Recorder):
        """Holds its second decision until the API is back: the match waits on this bot."""

        def act(self, view, legal_actions):
            if len([c for c in self.calls if c[0] == "act"]) == 1:
                held.set()
                assert gate.wait(30)
            return super().act(view, legal_actions)

    held = threading.Event()
    bot_a, bot_b = Held(), Recorder()
    poll_a = connect(bot_a, fixed_api.url, secret=a.secret, wait=1, block=False)
    poll_b = connect(bot_b, fixed_api.url, secret=b.secret, wait=1, block=False)
    try:
        # a's held turn must outlast the restart: on a busy machine the stop, the start and the
        # pollers' backoff can take more than the default 10 s move + 10 s bank
        match = client.challenge(GAME, [a, b], seed=5, move_timeout_ms=10000, time_bank_ms=60000)
        assert held.wait(60)  # a is thinking about its second turn: the match is under way
        fixed_api.stop()
        _wait_for(lambda: _both_away([poll_b]))
        gate.set()  # a answers while the API is down: its post must be retried
        _wait_for(lambda: poll_a._backoff > BACKOFF_START)
        fixed_api.start()
        done = client.wait_match(match.id, timeout=120)
        _wait_for(lambda: match.id in poll_a.stats.matches_over and match.id in poll_b.stats.matches_over)
    finally:
        gate.set()
        poll_a.stop(timeout=10)
        poll_b.stop(timeout=10)
    assert done.status == "finished"
    assert [e for e in done.log if "fault" in e] == []
    assert poll_a.stats.reconnects >= 1 and poll_b.stats.reconnects >= 1
    assert bot_a.calls[-1] == ("over", match.id, done.result)
