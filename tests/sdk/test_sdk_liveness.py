"""`sdk.connect` tells a bot author when it cannot work, and `cardarena` from the SDK alone
says where the platform's subcommands are.

* a server connect() never reached (a mistyped address) is given up with a
  clear `CardarenaError` ("unreachable", naming the address), blocking or not;
* a server it reached once is retried for as long as it takes, however long
  it is away;
* `cardarena serve` from the SDK's install says it comes with the platform's.
"""

from __future__ import annotations

import socket
import time

import pytest

import sdk.polling
from sdk import CardarenaError, Client, connect
from sdk.cli import main as sdk_main
from tests.live import served_api
from tests.worker.test_liveness_and_probation import First

#: how long a test lets connect() try a server it never reached
GIVE_UP_S = 0.5


def _nowhere() -> str:
    """The address of a loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_connect_gives_up_on_a_server_it_never_reached(monkeypatch):
    monkeypatch.setattr(sdk.polling, "NEVER_REACHED_S", GIVE_UP_S)
    url = _nowhere()
    began = time.monotonic()
    with pytest.raises(CardarenaError) as caught:
        connect(First(), url, secret="b_1.x", wait=1, block=False)
    assert caught.value.code == "unreachable" and caught.value.status is None
    assert url in caught.value.message and "check its address" in caught.value.message
    assert time.monotonic() - began < 30  # bounded: a few backoff steps past GIVE_UP_S


def test_a_blocking_connect_ends_the_program_saying_why_in_one_line(monkeypatch, caplog):
    monkeypatch.setattr(sdk.polling, "NEVER_REACHED_S", GIVE_UP_S)
    url = _nowhere()
    with pytest.raises(SystemExit) as exited:
        connect(First(), url, secret="b_1.x", wait=1)
    assert exited.value.code == 1
    (said,) = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert said.startswith("First stopped: never reached the server at") and url in said


@pytest.mark.slow
def test_connect_keeps_retrying_a_server_it_reached_however_long_it_is_away(api, redis_url, monkeypatch):
    monkeypatch.setattr(sdk.polling, "NEVER_REACHED_S", GIVE_UP_S)
    with served_api(redis_url, {"CARDARENA_RATE_LIMITS": "off"}, name="away") as server:
        client = Client(server.url)
        client.create_account("author")
        bot = client.register_bot("poller", "duck-soup", kind="polling")
        poller = connect(First(), server.url, secret=bot.secret, wait=1, block=False)
    # away from now on
    try:
        end = time.monotonic() + 60
        while poller._backoff <= sdk.polling.BACKOFF_START * 4:  # three failed tries: > 1.5 s away
            assert time.monotonic() < end and poller.running, poller.error
            time.sleep(0.05)
        assert poller.running and poller.error is None  # still retrying, long past GIVE_UP_S
    finally:
        poller.stop(timeout=30)


def test_cardarena_serve_from_the_sdk_install_says_it_comes_with_the_platform(capsys):
    with pytest.raises(SystemExit) as exited:
        sdk_main(["serve"])  # the SDK's own table: play and replay
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "'serve' comes with the platform's install" in err and "play, replay" in err
    assert "invalid choice" not in err
