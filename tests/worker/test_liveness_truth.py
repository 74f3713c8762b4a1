"""A bot's `status` tells the truth (docs/api.md §6 "Liveness"), on real HTTP and the real store.

* a webhook bot registered before it is served is warned of, then comes
  online by the heartbeat's ping or its owner's (`POST /bots/{id}/ping`,
  `Client.ping`), with no other call;
* a webhook that refuses the referee's signature (401) is `rejected`, and
  `status_reason` says to check the secret;
* the heartbeat pings only active webhook bots that were quiet for its
  period, at most its batch a cycle;
* a polling request made with a webhook bot's secret is 409 `wrong_kind`.
"""

from __future__ import annotations

import logging
import time

import pytest

import sdk
from core import liveness
from core.store.keys import iso_ms
from sdk import CardarenaError, Client
from tests.live import ADMIN_TOKEN
from tests.sdk.conftest import real_decision
from tests.worker.test_liveness_and_probation import First, _free_port
from worker.drivers.webhook import WebhookDriver
from worker.heartbeat import TICK_S, Heartbeat

GAME = "duck-soup"


def _unserved(client: Client, name: str):
    """A webhook bot registered at a port nothing listens on yet, and that port."""
    port = _free_port()
    return client.register_bot(name, GAME, kind="webhook", url=f"http://127.0.0.1:{port}/"), port


def test_registering_an_unreachable_webhook_warns_and_the_sdk_says_so(api, caplog):
    client = Client(api.live.url)
    client.create_account("author")
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        bot, _ = _unserved(client, "early")
    assert bot.reachable is False and bot.status == "offline"
    (warning,) = bot.warnings
    assert "did not answer its ping (unreachable" in warning and f"/bots/{bot.id}/ping" in warning
    assert any(warning in record.getMessage() for record in caplog.records)  # printed, not only returned
    polled = client.register_bot("poller", GAME, kind="polling")
    assert polled.warnings == ()  # a polling bot that has not connected yet is the normal case


def test_a_bot_served_after_registration_is_online_once_its_owner_pings_it(api):
    client = Client(api.live.url)
    client.create_account("author")
    bot, port = _unserved(client, "early")
    assert client.ping(bot).reachable is False
    with sdk.serve(First(), port=port, secret=bot.secret, block=False):
        pinged = client.ping(bot)
        assert pinged.reachable and pinged.status == "online" and pinged.http_status == 200
        assert pinged.error is None and isinstance(pinged.latency_ms, int) and pinged.latency_ms >= 0
        assert client.bot(bot).status == "online" and client.bot(bot).status_reason is None
    assert [b.id for b in client.bots(GAME) if b.status == "online"] == [bot.id]  # the docs' filter keeps it


def test_only_its_owner_or_the_admin_may_ping_a_bot(api):
    client = Client(api.live.url)
    client.create_account("author")
    bot, _ = _unserved(client, "mine")
    other = Client(api.live.url)
    other.create_account("other")
    with pytest.raises(CardarenaError) as refused:
        other.ping(bot)
    assert refused.value.status == 403
    assert api.post(f"/bots/{bot.id}/ping").status_code == 401
    assert api.ok(api.post(f"/bots/{bot.id}/ping", token=ADMIN_TOKEN), 200)["reachable"] is False


def test_a_webhook_refusing_the_signature_is_rejected_and_told_to_check_its_secret(api):
    client = Client(api.live.url)
    client.create_account("author")
    port = _free_port()
    with sdk.serve(First(), port=port, secret="not-the-bots-secret", block=False):
        bot = client.register_bot("wrong-secret", GAME, kind="webhook", url=f"http://127.0.0.1:{port}/")
        assert bot.reachable is False and bot.status == "rejected"
        assert "check the secret" in bot.status_reason and "HTTP 401" in bot.status_reason
        assert any("HTTP 401" in w and "check the secret" in w for w in bot.warnings)
        pinged = client.ping(bot)
    assert (pinged.reachable, pinged.status, pinged.http_status) == (False, "rejected", 401)
    assert "check the secret" in pinged.error
    assert client.bot(bot).status == "rejected"  # as every listing shows it
    page = api.session.get(f"{api.live.url}/bots/{bot.id}", timeout=30).text
    assert '>rejected</span>' in page and "check the secret" in page  # and the bot's page


def test_a_decision_answered_401_makes_the_bot_rejected_not_online(api):
    client = Client(api.live.url)
    client.create_account("author")
    port = _free_port()
    bot = client.register_bot("later", GAME, kind="webhook", url=f"http://127.0.0.1:{port}/")
    with sdk.serve(First(), port=port, secret=bot.secret, block=False):
        assert client.ping(bot).status == "online"
    with sdk.serve(First(), port=port, secret="not-the-bots-secret", block=False):
        driver = WebhookDriver(api.store.bot_record(bot.id), bot.secret, store=api.store)
        try:
            reply = driver.ask(real_decision(GAME))
        finally:
            driver.close()
    assert reply.fault == "http_error: HTTP 401"  # the match's record, as before
    shown = client.bot(bot)
    assert shown.status == "rejected" and "check the secret" in shown.status_reason


def test_the_heartbeat_brings_a_bot_served_after_registration_online(api):
    client = Client(api.live.url)
    client.create_account("author")
    bot, port = _unserved(client, "early")
    heartbeat = Heartbeat(api.store, every_s=0)  # every bot is due: no waiting 30 s in a test
    with sdk.serve(First(), port=port, secret=bot.secret, block=False):
        found = heartbeat.cycle()
    assert found[bot.id].reachable and client.bot(bot).status == "online"


@pytest.fixture()
def quick_heartbeat(monkeypatch):
    """The pool's heartbeat pings a bot quiet for `QUICK_S` (CARDARENA_HEARTBEAT_S), not 30 s:
    set before `worker_pool` starts its processes."""
    monkeypatch.setenv("CARDARENA_HEARTBEAT_S", str(QUICK_S))


QUICK_S = 2.0


@pytest.mark.slow
def test_the_worker_pools_heartbeat_brings_a_bot_served_after_registration_online_by_itself(
        api, quick_heartbeat, worker_pool):
    client = Client(api.live.url)
    client.create_account("author")
    bot, port = _unserved(client, "early")
    with sdk.serve(First(), port=port, secret=bot.secret, block=False):
        end = time.monotonic() + QUICK_S + TICK_S + 30  # the period, a cycle, and room for a busy machine
        while client.bot(bot).status != "online":  # nobody but the pool's dispatcher pings it
            assert time.monotonic() < end, client.bot(bot).status_reason
            time.sleep(0.5)


def test_the_heartbeat_pings_only_quiet_active_webhook_bots_and_at_most_its_batch(api):
    client = Client(api.live.url)
    client.create_account("author")
    quiet = [_unserved(client, f"quiet{i}")[0] for i in range(3)]
    retired, _ = _unserved(client, "retired")
    client.retire_bot(retired)
    client.register_bot("poller", GAME, kind="polling")
    assert Heartbeat(api.store).cycle() == {}  # each was just pinged at registration: not due for 30 s
    heartbeat = Heartbeat(api.store, every_s=0, batch=2)
    first = heartbeat.cycle()
    assert len(first) == 2 and set(first) < {b.id for b in quiet}
    assert set(heartbeat.cycle()) | set(first) == {b.id for b in quiet}  # the scan goes on from there


def test_the_heartbeat_pings_bots_on_the_ladder_or_entered_in_something_unfinished(api):
    client = Client(api.live.url)
    client.create_account("author")
    on, _ = _unserved(client, "on")
    idle, _ = _unserved(client, "idle")
    entered, _ = _unserved(client, "entered")
    for bot in (idle, entered):
        client.update_bot(bot, ladder=False)
    rival = client.register_bot("rival", GAME, kind="polling", ladder=False)
    client.challenge(GAME, [entered, rival], seed=1)  # queued: not over
    assert set(Heartbeat(api.store, every_s=0).cycle()) == {on.id, entered.id}  # idle, off the ladder: left alone


def test_status_follows_the_last_call_within_the_windows():
    now = 1_000_000_000
    hook = {"kind": "webhook", "last_seen": iso_ms(now - 89_000)}
    assert liveness.judge(hook, now) == ("online", None)
    state, reason = liveness.judge({**hook, "last_seen": iso_ms(now - 91_000)}, now)
    assert state == "offline" and "not answered since" in reason
    failed = {**hook, "last_failed": iso_ms(now - 1000), "last_failure": "timeout"}
    assert liveness.judge(failed, now)[0] == "offline" and "timeout" in liveness.judge(failed, now)[1]
    refused = {**hook, "last_failed": iso_ms(now - 1000), "last_failure": "http_error: HTTP 403"}
    assert liveness.judge(refused, now)[0] == "rejected"
    poller = {"kind": "polling", "last_seen": iso_ms(now - 30_000)}
    assert liveness.judge(poller, now)[0] == "online"  # a long-poll ended within the last 30 s
    assert liveness.judge({**poller, "last_seen": iso_ms(now - 60_000)}, now)[0] == "offline"
    assert liveness.judge({"kind": "polling"}, now) == ("offline", "has never polled for its turns")


def test_a_polling_request_with_a_webhook_bots_secret_is_409_wrong_kind(api):
    client = Client(api.live.url)
    client.create_account("author")
    bot, _ = _unserved(client, "hook")
    for response in (api.get("/bots/me/turns", token=bot.secret),
                     api.post("/matches/m_1/turns/0", {"action": {}}, token=bot.secret)):
        assert response.status_code == 409 and response.json()["error"]["code"] == "wrong_kind"
        assert "serve()" in response.json()["error"]["message"]
    with pytest.raises(CardarenaError) as stopped:  # connect stops at once instead of polling forever
        sdk.connect(First(), api.live.url, secret=bot.secret, wait=0, block=False)
    assert stopped.value.code == "wrong_kind"


def test_the_heartbeats_period_is_its_setting_else_30_s(monkeypatch):
    from worker.heartbeat import EVERY_S, period

    for value, expected in (("", EVERY_S), ("5", 5.0), ("0.5", 0.5), ("0", EVERY_S), ("soon", EVERY_S)):
        monkeypatch.setenv("CARDARENA_HEARTBEAT_S", value)
        assert period() == expected
