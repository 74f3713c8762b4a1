"""`sdk.serve`: a webhook bot under waitress, called over real HTTP on loopback."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from example_bots.random import RandomBot
from sdk import Bot, serve, sign, signature_ok, webhook_app
from tests.sdk.conftest import SECRET, Recorder, post_signed, real_decision

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def hosted(recorder):
    server = serve(recorder, port=0, secret=SECRET, block=False)
    yield server
    server.stop()


def test_signed_decision_is_answered_with_one_of_the_legal_actions(hosted):
    decision = real_decision("double-carre")
    response = post_signed(hosted.url, decision)
    assert response.status_code == 200
    assert response.json() == {"action": decision["legal_actions"][-1]}


def test_every_registered_game_gets_a_legal_answer_from_the_random_bot():
    import games

    with serve(RandomBot(seed=3), port=0, secret=SECRET, block=False) as server:
        for name in games.names():
            decision = real_decision(name, seed=5)
            response = post_signed(server.url, decision)
            assert response.status_code == 200, response.text
            assert response.json()["action"] in decision["legal_actions"]


def test_on_match_start_runs_once_per_match_before_its_first_decision(hosted, recorder):
    first = real_decision(match_id="m_a", turn=0)
    for _ in range(2):  # the same decision sent twice (a retry) starts nothing new
        assert post_signed(hosted.url, first).status_code == 200
    assert post_signed(hosted.url, real_decision(match_id="m_b", turn=0)).status_code == 200
    seat = first["seat"]
    assert recorder.calls[0] == ("start", "m_a", seat)
    assert [c[0] for c in recorder.calls] == ["start", "act", "act", "start", "act"]
    assert recorder.calls[3] == ("start", "m_b", seat)


def test_match_over_is_answered_200_empty_and_reaches_the_bot(hosted, recorder):
    result = {"scores": [3, 1], "ranks": [1, 2]}
    response = post_signed(hosted.url, {"type": "match_over", "match_id": "m_over", "result": result})
    assert response.status_code == 200
    assert response.content == b""
    assert recorder.calls == [("over", "m_over", result)]


def test_a_match_seen_again_after_its_match_over_starts_again(hosted, recorder):
    post_signed(hosted.url, real_decision(match_id="m_r"))
    post_signed(hosted.url, {"type": "match_over", "match_id": "m_r", "result": {"ranks": [1, 2]}})
    post_signed(hosted.url, real_decision(match_id="m_r"))
    assert [c[0] for c in recorder.calls] == ["start", "act", "over", "start", "act"]


def test_an_unsigned_request_is_refused_401_and_never_reaches_the_bot(hosted, recorder):
    body = json.dumps(real_decision()).encode()
    response = requests.post(hosted.url, data=body, headers={"Content-Type": "application/json"}, timeout=10)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "bad_signature"
    assert recorder.calls == []


@pytest.mark.parametrize("how", ["other secret", "other body", "no prefix", "garbage", "empty"])
def test_a_wrongly_signed_request_is_refused_401(hosted, recorder, how):
    body = json.dumps(real_decision()).encode()
    header = {
        "other secret": sign(body, SECRET + "x"),
        "other body": sign(body + b" ", SECRET),
        "no prefix": sign(body, SECRET).removeprefix("sha256="),
        "garbage": "sha256=\u00e9\u00e9",
        "empty": "",
    }[how]
    response = requests.post(hosted.url, data=body, timeout=10,
                             headers={"X-Cardarena-Signature": header.encode("utf-8")})
    assert response.status_code == 401
    assert recorder.calls == []


def test_the_signature_covers_the_exact_bytes_not_the_json_they_parse_to(hosted):
    decision = real_decision()
    signed = json.dumps(decision).encode()
    reformatted = json.dumps(decision, indent=2).encode()  # the same JSON, other bytes
    response = requests.post(hosted.url, data=reformatted, timeout=10,
                             headers={"X-Cardarena-Signature": sign(signed, SECRET)})
    assert response.status_code == 401
    assert signature_ok(signed, sign(signed, SECRET), SECRET)
    assert not signature_ok(reformatted, sign(signed, SECRET), SECRET)


class Raises(Bot):
    def act(self, view, legal_actions):
        raise RuntimeError("my strategy table is empty")


def test_a_bot_that_raises_answers_500_with_the_reason_and_keeps_serving():
    with serve(Raises(), port=0, secret=SECRET, block=False) as server:
        for _ in range(2):
            response = post_signed(server.url, real_decision())
            assert response.status_code == 500
            error = response.json()["error"]
            assert error["code"] == "bot_error"
            assert "RuntimeError: my strategy table is empty" in error["message"]


class AnswersASet(Bot):
    def act(self, view, legal_actions):
        return {"take": {"8C", "9D"}}  # a set is not JSON


def test_an_answer_that_is_not_json_is_a_500_bot_error():
    with serve(AnswersASet(), port=0, secret=SECRET, block=False) as server:
        response = post_signed(server.url, real_decision())
        assert response.status_code == 500
        assert response.json()["error"]["code"] == "bot_error"


class Slow(Bot):
    """Holds decisions of match m_slow until released; answers the others at once."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def act(self, view, legal_actions):
        if view.get("_slow"):
            self.entered.set()
            assert self.release.wait(30)
        return legal_actions[0]


def test_a_slow_decision_does_not_hold_up_the_others():
    bot = Slow()
    with serve(bot, port=0, secret=SECRET, block=False) as server:
        slow = real_decision(match_id="m_slow")
        slow["view"]["_slow"] = True
        answers: list[requests.Response] = []
        thread = threading.Thread(target=lambda: answers.append(post_signed(server.url, slow)))
        thread.start()
        assert bot.entered.wait(10)
        fast = post_signed(server.url, real_decision(match_id="m_fast"))  # answered while m_slow waits
        assert fast.status_code == 200
        assert not answers
        bot.release.set()
        thread.join(30)
        assert answers[0].status_code == 200
        assert answers[0].json() == {"action": slow["legal_actions"][0]}


@pytest.mark.parametrize("body, reason", [
    (b"not json at all", "not JSON"),
    (b"\xff\xfe\x00", "not JSON"),
    (b"[1, 2, 3]", "JSON object"),
    (b'{"type": "bid"}', "'type'"),
    (b"", "not JSON"),
])
def test_garbage_bodies_are_400(hosted, recorder, body, reason):
    response = post_signed(hosted.url, None, body=body)
    assert response.status_code == 400
    assert reason in response.json()["error"]["message"]
    assert recorder.calls == []


@pytest.mark.parametrize("field, value", [
    ("legal_actions", []), ("legal_actions", [1, 2]), ("legal_actions", None),
    ("view", "hand"), ("turn", "0"), ("turn", True), ("seat", None),
    ("match_id", 7), ("protocol", 2), ("deadline_ms", 1.5),
])
def test_a_decision_with_a_bad_field_is_400_naming_it(hosted, recorder, field, value):
    decision = real_decision()
    decision[field] = value
    response = post_signed(hosted.url, decision)
    assert response.status_code == 400
    assert field in response.json()["error"]["message"] or "protocol" in response.json()["error"]["message"]
    assert recorder.calls == []


def test_a_decision_for_another_game_is_400_wrong_game():
    class DoubleCarreOnly(Recorder):
        game = "double-carre"

    bot = DoubleCarreOnly()
    with serve(bot, port=0, secret=SECRET, block=False) as server:
        response = post_signed(server.url, real_decision("soupe-gertrude"))
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "wrong_game"
        assert bot.calls == []


def test_a_body_over_the_size_cap_is_413_before_any_signature_check():
    bot = Recorder()
    with serve(bot, port=0, secret=SECRET, block=False, max_body=2000) as server:
        decision = real_decision()
        decision["view"]["padding"] = "x" * 5000
        for secret in (SECRET, "wrong"):
            response = post_signed(server.url, decision, secret=secret)
            assert response.status_code == 413
        assert bot.calls == []


def test_the_wsgi_app_also_caps_the_body_itself():
    """Under another WSGI server than waitress the app still refuses a huge body."""
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    server = make_server("127.0.0.1", 0, webhook_app(Recorder(), SECRET, max_body=100), handler_class=Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/"
        assert post_signed(url, real_decision()).status_code == 413
        small = post_signed(url, {"type": "match_over", "match_id": "m", "result": {}})
        assert small.status_code == 200
    finally:
        server.shutdown()
        server.server_close()


def test_get_says_which_bot_answers_here_and_other_methods_are_405(hosted):
    assert requests.get(hosted.url, timeout=10).json() == {"bot": "Recorder", "game": None, "protocol": 1}
    assert requests.put(hosted.url, data=b"{}", timeout=10).status_code == 405


def test_serve_needs_a_secret(monkeypatch):
    monkeypatch.delenv("CARDARENA_BOT_SECRET", raising=False)
    with pytest.raises(ValueError, match="secret"):
        serve(Recorder(), port=0, block=False)
    monkeypatch.setenv("CARDARENA_BOT_SECRET", SECRET)
    with serve(Recorder(), port=0, block=False) as server:  # from the environment
        assert post_signed(server.url, real_decision()).status_code == 200


def test_stop_frees_the_port():
    server = serve(Recorder(), port=0, secret=SECRET, block=False)
    port = int(server.url.rsplit(":", 1)[1].strip("/"))
    server.stop()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # would raise if still listening


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_example_bot_runs_from_the_command_line_and_stops_on_ctrl_c():
    port = _free_port()
    env = {**os.environ, "CARDARENA_BOT_SECRET": SECRET, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(as_from_a_terminal([sys.executable, "-m", "example_bots.random", "--serve", str(port)]),
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/"
    try:
        up_by = time.monotonic() + 60  # its start (imports, then the server), on a busy machine
        while True:
            try:
                requests.get(url, timeout=1)
                break
            except requests.ConnectionError:
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.monotonic() < up_by, "the example bot did not serve within 60 s"
                time.sleep(0.05)
        decision = real_decision("soupe-gertrude")
        response = post_signed(url, decision)
        assert response.status_code == 200
        assert response.json()["action"] in decision["legal_actions"]
        assert post_signed(url, decision, secret="not it").status_code == 401
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:  # no orphan left behind: killed, then the failure reported
            masks = signal_masks(proc.pid)  # SIGINT blocked or ignored by what started it?
            proc.kill()
            proc.communicate()
            raise AssertionError(f"the example bot ignored SIGINT for 20 s ({masks})") from None
    assert proc.returncode == 0, err.decode()
    log = err.decode()
    assert "serving RandomBot" in log and "m_test turn 0" in log and "stopped" in log


def as_from_a_terminal(command: list[str]) -> list[str]:
    """`command`, started with SIGINT at its default and unblocked, as a shell in a terminal starts
    it: a test runner launched in the background ignores SIGINT, and its children would inherit
    that (a Python started so never turns SIGINT into KeyboardInterrupt)."""
    reset = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
             "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT]); os.execv(sys.argv[1], sys.argv[1:])")
    return [sys.executable, "-c", reset, *command]


def signal_masks(pid: int) -> str:
    """The process's blocked, ignored and caught signals, as /proc shows them (hex masks)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError as exc:
        return f"no /proc status: {exc}"
    return ", ".join(line for line in status.splitlines() if line.startswith(("SigBlk", "SigIgn", "SigCgt")))


def test_the_command_line_refuses_to_run_without_a_secret():
    env = {k: v for k, v in os.environ.items() if k != "CARDARENA_BOT_SECRET"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-m", "example_bots.random", "--serve", "0"], cwd=ROOT,
                          env=env, capture_output=True, timeout=30)
    assert proc.returncode == 2
    assert b"secret" in proc.stderr
