"""worker/drivers/webhook.py: the referee's POST to a webhook bot, against real loopback servers.

A well-behaved bot is hosted with `sdk.serve`; the misbehaving ones are raw
WSGI apps (tests/wsgi_loopback.py), or raw TCP servers (tests/worker/zoo.py) for what
happens below HTTP, each doing one wrong thing the driver must turn into a
fault of its kind (docs/api.md §5: timeouts, HTTP errors, bad answers, oversize
answers, redirects, URLs it cannot or may not call).
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

import games
from sdk import Bot, serve, signature_ok
from tests.worker.zoo import BIGNUM, LEAK, NESTED, RawServer, answer_bytes, ok_answer, silent, trickle
from tests.wsgi_loopback import serving
from worker.drivers.webhook import MAX_ANSWER, SIGNATURE_HEADER, WebhookDriver

SECRET = "b_test.webhook-driver-secret"
DEADLINE_MS = 200


def decision(game: str = "double-carre", seed: int = 1, deadline_ms: int = DEADLINE_MS) -> dict:
    """The first decision of a real match, as the match runner builds it."""
    g = games.get(game)
    state = g.new(2, seed, {})
    seat = state.to_act
    return {"type": "turn", "protocol": 1, "match_id": "m_webhook", "game": game, "turn": 0,
            "seat": seat, "view": state.view(seat), "legal_actions": state.legal_actions(),
            "deadline_ms": deadline_ms}


def driver(url: str, secret: str = SECRET) -> WebhookDriver:
    return WebhookDriver({"id": "b_test", "url": url}, secret)


class Recorder:
    """A WSGI app: records each request (path, headers, body) and answers with `respond`."""

    def __init__(self, respond) -> None:
        self.respond = respond
        self.requests: list[dict] = []
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        with self.lock:
            self.requests.append({
                "path": environ.get("PATH_INFO", ""), "method": environ["REQUEST_METHOD"], "body": body,
                "signature": environ.get("HTTP_" + SIGNATURE_HEADER.upper().replace("-", "_")),
                "content_type": environ.get("CONTENT_TYPE"),
            })
        return self.respond(environ, start_response)

    def paths(self) -> list[str]:
        with self.lock:
            return [r["path"] for r in self.requests]




def answer(status: str, body: bytes, headers: list[tuple[str, str]] | None = None):
    def respond(environ, start_response):
        start_response(status, [("Content-Length", str(len(body)))] + (headers or []))
        return [body]
    return respond


def ask_timed(url: str, message: dict | None = None) -> tuple[object, float]:
    began = time.monotonic()
    reply = driver(url).ask(message or decision())
    return reply, time.monotonic() - began


# -- a bot that answers ----------------------------------------------------------------


class FirstBot(Bot):
    game = "double-carre"

    def act(self, view, legal_actions):
        return legal_actions[0]


def test_an_sdk_bot_verifies_the_signature_and_its_action_comes_back():
    message = decision(deadline_ms=2000)
    with serve(FirstBot(), port=0, secret=SECRET, block=False) as server:
        reply = driver(server.url).ask(message)
        # a wrong secret gives a signature the SDK refuses: the check is real
        refused = driver(server.url, secret="b_test.another-secret").ask(message)
    assert reply.fault is None
    assert reply.action == json.loads(json.dumps(message["legal_actions"][0]))
    assert refused.action is None
    assert refused.fault == "http_error: HTTP 401"


def test_the_call_is_the_decision_as_json_signed_with_the_bot_secret():
    app = Recorder(answer("200 OK", b'{"action": {"take": ["7H", "8H"]}}'))
    message = decision(deadline_ms=2000)
    with serving(app) as url:
        reply = driver(url + "/hook").ask(message)
    assert reply.fault is None
    assert reply.action == {"take": ["7H", "8H"]}  # unchecked here: judging is the runner's job
    [request] = app.requests
    assert request["method"] == "POST"
    assert request["path"] == "/hook"
    assert request["content_type"] == "application/json"
    assert json.loads(request["body"]) == json.loads(json.dumps(message))
    assert request["signature"].startswith("sha256=")
    assert signature_ok(request["body"], request["signature"], SECRET)
    assert not signature_ok(request["body"], request["signature"], "b_test.another-secret")


def test_match_over_is_posted_signed_and_a_dead_bot_is_no_error():
    app = Recorder(answer("200 OK", b""))
    with serving(app) as url:
        driver(url).match_over("m_over", {"scores": [1, 0], "ranks": [1, 2]})
    [request] = app.requests
    assert json.loads(request["body"]) == {"type": "match_over", "match_id": "m_over",
                                           "result": {"scores": [1, 0], "ranks": [1, 2]}}
    assert signature_ok(request["body"], request["signature"], SECRET)
    driver(closed_port_url()).match_over("m_over", {"ranks": [1, 2]})  # best effort: no raise


# -- faults ------------------------------------------------------------------------------------


def test_an_answer_slower_than_the_deadline_is_a_timeout():
    def slow(environ, start_response):
        time.sleep(1.5)
        return answer("200 OK", b'{"action": {}}')(environ, start_response)

    with serving(Recorder(slow)) as url:
        reply, elapsed = ask_timed(url)
    assert reply.fault == f"timeout: no answer within {DEADLINE_MS} ms"
    assert reply.action is None
    assert elapsed < 1.0  # it gave up at the deadline, not when the answer came (1.5 s)


def test_a_body_trickled_past_the_deadline_is_a_timeout():
    """Each piece comes well within the read timeout; the whole answer does not fit the deadline."""
    def trickle(environ, start_response):
        start_response("200 OK", [("Content-Type", "application/json")])

        def pieces():
            yield b'{"action": '
            for _ in range(40):
                time.sleep(0.05)
                yield b" "
            yield b"{}}"
        return pieces()

    with serving(Recorder(trickle)) as url:
        reply, elapsed = ask_timed(url)
    assert reply.fault is not None and reply.fault.startswith("timeout")
    assert elapsed < 1.2  # the trickle takes 2 s


def test_an_http_error_is_its_status_alone_never_the_bots_page():
    """A webhook may point inside the network: its error page's text must not be reflected."""
    with serving(Recorder(answer("500 Internal Server Error", LEAK))) as url:
        reply = driver(url).ask(decision())
    assert reply.fault == "http_error: HTTP 500"


def test_a_long_error_body_is_not_read_into_the_reason():
    with serving(Recorder(answer("404 Not Found", b"nothing here " * 500))) as url:
        reply = driver(url).ask(decision())
    assert reply.fault == "http_error: HTTP 404"


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


def test_nobody_listening_is_unreachable():
    reply, elapsed = ask_timed(closed_port_url())
    assert reply.fault.startswith("unreachable: ")
    assert "0x" not in reply.fault  # no object addresses in a reason shown to people
    assert elapsed < 1.0


@pytest.mark.parametrize("body, content_type", [
    (b"<html>not json</html>", "text/html"),
    (b"\xff\xfe\x00garbage", "application/octet-stream"),
    (b"", "application/json"),
])
def test_an_answer_that_is_not_json_is_a_bad_answer(body, content_type):
    with serving(Recorder(answer("200 OK", body, [("Content-Type", content_type)]))) as url:
        reply = driver(url).ask(decision())
    assert reply.fault == f"bad_answer: the answer is not JSON ({len(body)} bytes)", reply.fault
    assert reply.action is None


@pytest.mark.parametrize("body", [b'{"move": {"take": ["7H", "8H"]}}', b"[1, 2]", b'"action"', b"null"])
def test_json_without_an_action_is_a_bad_answer(body):
    with serving(Recorder(answer("200 OK", body, [("Content-Type", "application/json")]))) as url:
        reply = driver(url).ask(decision())
    assert reply.fault.startswith("bad_answer: expected"), reply.fault
    assert reply.action is None


TEN_MB = 10 * 1024 * 1024


def test_a_10_mb_answer_with_its_length_declared_is_refused_unread():
    big = b'{"action": "' + b"x" * TEN_MB + b'"}'
    with serving(Recorder(answer("200 OK", big, [("Content-Type", "application/json")]))) as url:
        reply, elapsed = ask_timed(url, decision(deadline_ms=5000))
    # refused on its Content-Length, before reading any of the body
    assert reply.fault == f"too_large: answer of {len(big)} bytes, over the {MAX_ANSWER // 1024} KB limit"
    assert elapsed < 2.0


def test_a_10_mb_answer_streamed_without_a_length_is_cut_at_the_limit():
    def endless(environ, start_response):
        start_response("200 OK", [("Content-Type", "application/json")])

        def chunks():
            yield b'{"action": "'
            for _ in range(10):
                yield b"x" * (1024 * 1024)
            yield b'"}'
        return chunks()

    with serving(Recorder(endless)) as url:
        reply, elapsed = ask_timed(url, decision(deadline_ms=5000))
    assert reply.fault == f"too_large: answer over the {MAX_ANSWER // 1024} KB limit"  # cut while reading
    assert elapsed < 2.0


def test_a_redirect_is_a_fault_and_never_followed():
    def redirect(environ, start_response):
        if environ["PATH_INFO"] == "/target":
            return answer("200 OK", b'{"action": {}}')(environ, start_response)
        start_response("302 Found", [("Location", "/target"), ("Content-Length", "0")])
        return [b""]

    app = Recorder(redirect)
    with serving(app) as url:
        reply = driver(url + "/bot").ask(decision())
        time.sleep(0.05)
    assert reply.fault == "http_error: HTTP 302 (redirects are not followed)", reply.fault
    assert app.paths() == ["/bot"]  # the target was never called


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_public_urls_only_refuses_a_loopback_bot_at_each_call(monkeypatch, host):
    app = Recorder(answer("200 OK", b'{"action": {}}'))
    with serving(app) as url:
        port = url.rsplit(":", 1)[1]
        monkeypatch.setenv("CARDARENA_PUBLIC_URLS_ONLY", "1")
        reply = driver(f"http://{host}:{port}/").ask(decision())
        monkeypatch.delenv("CARDARENA_PUBLIC_URLS_ONLY")
        allowed = driver(f"http://{host}:{port}/").ask(decision())
    assert reply.fault.startswith("refused_url: "), reply.fault
    assert reply.action is None
    assert allowed.fault is None  # the same bot, called once the setting is off
    assert app.paths() == ["/"]  # only the allowed call reached it


@pytest.mark.parametrize("address", ["64:ff9b::7f00:1", "2002:7f00:1::1", "::127.0.0.1", "::ffff:0:7f00:1",
                                     "::ffff:127.0.0.1", "fec0::1"])
def test_public_urls_only_refuses_an_ipv6_form_of_a_private_ipv4_at_each_call(monkeypatch, address):
    """A URL stored before the rule (or through a DNS name answering so) is refused at the call,
    before any connection: not an `unreachable` fault after trying one."""
    monkeypatch.setenv("CARDARENA_PUBLIC_URLS_ONLY", "1")
    reply = driver(f"http://[{address}]:8000/").ask(decision())
    assert reply.fault.startswith("refused_url: ") and "not a public address" in reply.fault, reply.fault
    assert reply.action is None


# -- the whole-answer deadline: no decision holds a worker past deadline + 0.5 s ---------------------

#: what docs/api.md §5 allows past the deadline
MARGIN_S = 0.5
HUNDRED_BYTES = ok_answer(b'{"action": {}}' + b" " * 20)[:100]


@pytest.mark.parametrize("what, behave", [
    ("status line and headers a byte every 0.3 s", trickle(HUNDRED_BYTES, 0.3)),
    ("headers at once, then the body a byte every 0.05 s",
     lambda conn, request: (conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 60\r\n\r\n"),
                            trickle(b" " * 60, 0.05)(conn, request))),
    ("a header every 0.05 s, never the end of them",
     lambda conn, request: (conn.sendall(b"HTTP/1.1 200 OK\r\n"),
                            [(time.sleep(0.05), conn.sendall(b"X-Slow: 1\r\n")) for _ in range(90)])),
])
def test_a_trickled_answer_is_a_timeout_at_the_deadline(what, behave):
    """The issue's bot: a 100-byte answer at 1 byte / 0.3 s held a worker ~30 s per decision."""
    with RawServer(behave) as bot:
        reply, elapsed = ask_timed(bot.url, decision(deadline_ms=1000))
    assert reply.fault == "timeout: no answer within 1,000 ms", (what, reply.fault)
    assert elapsed < 1.0 + MARGIN_S, (what, elapsed)


@pytest.mark.slow
def test_a_tls_handshake_that_never_finishes_is_a_timeout_at_the_deadline():
    """A slow connect: TCP accepted, the TLS handshake never answered."""
    with RawServer(silent(5.0), read_request=False) as bot:
        url = bot.url.replace("http://", "https://")
        reply, elapsed = ask_timed(url, decision(deadline_ms=500))
    assert reply.fault == "timeout: no answer within 500 ms"
    # the contract's margin, plus what a busy machine adds to a TLS client's wall time (1.1 s
    # seen beside a second suite at load 20): still far from the 5 s the server holds it
    assert elapsed < 0.5 + MARGIN_S + 1.5


@pytest.mark.parametrize("body, detail", [
    (NESTED, "nested deeper than 32 levels"),
    (BIGNUM, "a number has more than 100 digits"),
    (b'{"action": NaN}', "NaN is not JSON"),
    (b'{"action": 1e999}', "the number 1e999 is out of range"),
])
def test_an_answer_that_json_loads_would_choke_on_is_a_bad_answer(body, detail):
    """The issue's bot: 40 KB of nesting raised RecursionError in the worker and aborted the match."""
    with serving(Recorder(answer("200 OK", body, [("Content-Type", "application/json")]))) as url:
        reply = driver(url).ask(decision(deadline_ms=2000))
    assert reply.fault == f"bad_answer: {detail}"
    assert reply.action is None


@pytest.mark.parametrize("data", [
    b"SSH-2.0-OpenSSH_9.0\r\n",                          # not HTTP at all
    b"HTTP/1.1 200 OK\r\nContent-Length: nope\r\n\r\n",  # a length that is not one
    b"HTTP/1.1 200 OK\r\nX: " + b"y" * 70_000 + b"\r\n\r\n",  # a header line past any limit
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",  # a chunk size that is not hex
])
def test_bytes_that_are_not_an_http_answer_are_a_bad_answer(data):
    with RawServer(answer_bytes(data)) as bot:
        reply = driver(bot.url).ask(decision(deadline_ms=2000))
    assert reply.fault.startswith("bad_answer: "), reply.fault


def test_a_url_the_referee_cannot_call_is_a_refused_url_fault():
    """The issue's bot: a host label over 63 characters raised LocationParseError in the worker."""
    reply = driver(f"http://{'a' * 64}.example/").ask(decision())
    assert reply.fault.startswith("refused_url: "), reply.fault
    assert "1 to 63 characters" in reply.fault
    assert driver("not a url at all").ask(decision()).fault.startswith("refused_url: ")


def test_a_kept_alive_connection_the_bot_closed_is_no_fault():
    """The bot answers as if keeping the connection, then closes it: the next call connects again."""
    body = b'{"action": {"take": ["7H", "8H"]}}'
    keep = b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    with RawServer(answer_bytes(keep)) as bot:
        replies = [driver(bot.url).ask(decision(deadline_ms=2000)) for _ in range(3)]
    assert [r.fault for r in replies] == [None, None, None]
    assert all(r.action == {"take": ["7H", "8H"]} for r in replies)


def test_many_calls_at_once_from_threads_each_get_their_answer():
    """The call is made to be held many at a time by threads (a dispatcher's)."""
    message = decision(deadline_ms=5000)
    results: list = []
    with serve(FirstBot(), port=0, secret=SECRET, block=False) as server:
        threads = [threading.Thread(target=lambda: results.append(driver(server.url).ask(message)))
                   for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
    assert len(results) == 16 and all(r.fault is None for r in results)


def keep_alive_answer(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body


def serve_each_request(answer_for, then: bytes = b"", pause: float = 0.0):
    """A behaviour: answer every request on the kept-alive connection with `answer_for(n)`,
    then after `pause` seconds send `then` too, until the client hangs up."""
    count = [0]

    def behave(conn: socket.socket, request: bytes) -> None:
        while True:
            try:
                conn.sendall(answer_for(count[0]))
                count[0] += 1
                if then:
                    time.sleep(pause)
                    conn.sendall(then)
                data = b""
                conn.settimeout(5)
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
            except OSError:
                return
    return behave


def test_a_connection_with_stray_bytes_after_its_answer_is_never_reused():
    """A bot that sends the start of a second answer with its own, and the rest later: the
    bytes past its answer mark the connection as out of step, so the next call connects again
    (reused, it read the rest as its answer: a bad_answer fault)."""
    mine = b'{"action": {"take": ["7H", "8H"]}}'
    stray = keep_alive_answer(b'{"action": {"take": ["9H", "10H"]}}')
    behave = serve_each_request(lambda n: keep_alive_answer(mine) + stray[:20], then=stray[20:], pause=0.3)
    with RawServer(behave) as bot:
        replies = [driver(bot.url).ask(decision(deadline_ms=2000)) for _ in range(3)]
    assert [r.fault for r in replies] == [None, None, None]
    assert all(r.action == {"take": ["7H", "8H"]} for r in replies)
    assert len(bot.opened) == 3  # a connection each


@pytest.mark.slow
def test_bots_behind_one_host_and_port_never_share_a_connection():
    """Two bots served by one server (one host:port, two paths, two secrets): each bot's calls
    go on a connection of its own, so one bot's stray bytes can only ever reach itself."""
    mine = b'{"action": {"take": ["7H", "8H"]}}'
    with RawServer(serve_each_request(lambda n: keep_alive_answer(mine))) as server:
        for _ in range(2):
            assert driver(server.url + "/a", secret="one").ask(decision(deadline_ms=2000)).fault is None
        assert driver(server.url + "/b", secret="two").ask(decision(deadline_ms=2000)).fault is None
        assert driver(server.url + "/a", secret="one").ask(decision(deadline_ms=2000)).fault is None
        # a connection each (noted as each connection's first request arrives, not when it closes:
        # the kept-alive ones close only as the server stops): /a's kept for /a only
        assert sorted(r.split(b" ", 2)[1] for r in server.opened) == [b"/a", b"/b"]
