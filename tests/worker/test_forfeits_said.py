"""Every state is said to the bot's author: a forfeit and a pause reach the log of the process that
hosts the bot (`sdk.serve`, `sdk.connect`), through `match_over`'s `you` (docs/api.md §3)."""

from __future__ import annotations

import logging
import time

import pytest

import sdk
from core.redis_server import free_port
from core.store.probation import PROBATION
from sdk import Bot, Client
from sdk.protocol import BotHooks
from tests.live import ADMIN_TOKEN
from worker.match_runner import seat_notices

GAME = "duck-soup"


class First(Bot):
    def act(self, view, legal_actions):
        return legal_actions[0]


class Raises(Bot):
    def act(self, view, legal_actions):
        raise RuntimeError("nope")


def said(caplog, level: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelname == level and r.name.startswith("sdk")]


def test_a_hosts_log_says_a_forfeit_and_a_pause(caplog):
    hooks = BotHooks(First)
    hooks.decide({"type": "turn", "match_id": "m_1", "turn": 0, "seat": 1, "view": {}, "game": GAME,
                  "legal_actions": [{"a": 1}], "deadline_ms": 1000})
    with caplog.at_level(logging.INFO, logger="sdk"):
        hooks.match_over({"type": "match_over", "match_id": "m_1", "result": {},
                          "you": {"seat": 1, "forfeited": True, "paused": True}})
        hooks.match_over({"type": "match_over", "match_id": "m_2", "result": {},
                          "you": {"seat": 0, "forfeited": False, "paused": False}})
    (forfeit,) = said(caplog, "WARNING")
    (pause,) = said(caplog, "ERROR")
    assert forfeit.startswith("m_1: forfeited (seat 1)")
    assert pause.startswith("m_1: the bot is paused") and "Client.resume_bot" in pause


def test_each_seat_is_told_its_own_forfeit_and_whether_its_bot_is_paused(redis_client):
    from core.store import Store, secret_key

    store = Store(redis_client, secret_key(redis_client))
    ok, paused = (store.create_bot("a_1", name, GAME, "polling")[0]["id"] for name in ("ok", "paused"))
    store.r.hset(f"bot:{paused}", "forfeit_streak", PROBATION)
    told = seat_notices(store, [ok, paused], {"ranks": [1, 2], "forfeits": [1]})
    assert told == {0: {"seat": 0, "forfeited": False, "paused": False},
                    1: {"seat": 1, "forfeited": True, "paused": True}}


def wait_for(check, what: str, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, what
        time.sleep(0.05)


@pytest.mark.slow
def test_serve_and_connect_log_their_bots_forfeit_and_pause(api, worker_pool, caplog):
    client = Client(api.live.url)
    client.create_account("author")
    rival = api.ok(api.post("/bots", {"name": "first", "game": GAME, "kind": "python",
                                      "entrypoint": "tests.worker.bots:First"}, token=ADMIN_TOKEN), 201)["id"]
    polling = client.register_bot("raiser", GAME, kind="polling")
    api.store.r.hset(f"bot:{polling.id}", "forfeit_streak", PROBATION)  # as forfeited ladder matches leave it
    rules = {"move_timeout_ms": 1000, "time_bank_ms": 0, "max_faults": 1}  # the admin's clock: one fault forfeits
    with caplog.at_level(logging.INFO, logger="sdk"):
        poller = sdk.connect(Raises, api.live.url, secret=polling.secret, wait=1, block=False)
        try:
            mid = api.match(ADMIN_TOKEN, GAME, [polling.id, rival], **rules)["id"]
            assert Client(api.live.url).wait_match(mid, timeout=60).result["forfeits"] == [0]
            wait_for(lambda: any(mid in m and "forfeited" in m for m in said(caplog, "WARNING")),
                     "connect logs the forfeit")
            wait_for(lambda: any(mid in m and "paused" in m for m in said(caplog, "ERROR")), "and the pause")
        finally:
            poller.stop(timeout=30)
        port = free_port()
        hook = client.register_bot("hooked", GAME, kind="webhook", url=f"http://127.0.0.1:{port}/")
        with sdk.serve(Raises, port=port, secret=hook.secret, block=False):  # answers 500: a fault
            mid = api.match(ADMIN_TOKEN, GAME, [hook.id, rival], **rules)["id"]
            assert Client(api.live.url).wait_match(mid, timeout=60).result["forfeits"] == [0]
            wait_for(lambda: any(mid in m and "forfeited" in m for m in said(caplog, "WARNING")),
                     "serve logs the forfeit, told by the platform's match_over")
        assert not any(mid in m and "paused" in m for m in said(caplog, "ERROR"))  # a challenge pauses nobody
