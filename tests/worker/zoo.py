"""A zoo of misbehaving webhook bots.

`Zoo`: one loopback WSGI app, one path per misbehaviour:

    /hang      answers after 5 s (past any deadline the tests set)
    /500       HTTP 500 with a body that must never reach a public record (`LEAK`)
    /garbage   200 with a body that is not JSON
    /illegal   200 {"action": {"nope": true}}
    /huge      200 with a 10 MB body, streamed
    /redirect  302 to /ok (which would answer well: it must never be called)
    /nested    200 {"action": [[[…]]]}: 40 KB of nesting (RecursionError in a plain json.loads)
    /bignum    200 {"action": 1234…}: a 5,000-digit integer (ValueError in a plain json.loads)
    /ok        a correct answer (the first legal action); counts its calls

A bot whose URL is a port nobody listens on completes the zoo ("refused").

`RawServer`: a loopback TCP server below HTTP, for what a WSGI server will not
do — trickle the status line and headers a byte at a time, answer bytes that
are not HTTP, never finish the TLS handshake. It records, per connection,
when the request arrived and when the referee hung up (a send that failed),
so a test can see how long a decision really held the worker.
"""

from __future__ import annotations

import json
import socket
import threading
import time

PATHS = ("hang", "500", "garbage", "illegal", "huge", "redirect", "nested", "bignum")
#: the text of the zoo's error page: no public record may ever contain it
LEAK = b"SECRET-INTERNAL-PAGE db_password=hunter2"
NESTED = b'{"action": ' + b"[" * 20_000 + b"]" * 20_000 + b"}"
BIGNUM = b'{"action": ' + b"7" * 5000 + b"}"


class Zoo:
    def __init__(self) -> None:
        self.calls: dict[str, int] = {}  # every call, per path
        self.decisions: dict[str, int] = {}  # the decisions among them ("type": "turn")
        self.pings: dict[str, int] = {}  # the pings among them ("type": "ping")

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "/").strip("/")
        self.calls[path] = self.calls.get(path, 0) + 1
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        if b'"type":"turn"' in body:
            self.decisions[path] = self.decisions.get(path, 0) + 1
        if b'"type":"ping"' in body:
            self.pings[path] = self.pings.get(path, 0) + 1
        if path == "hang":
            time.sleep(5)
            return self._json(start_response, {"action": {"nope": True}})
        if path == "500":
            start_response("500 Internal Server Error", [("Content-Type", "text/plain")])
            return [LEAK]
        if path == "garbage":
            start_response("200 OK", [("Content-Type", "application/json")])
            return [b"<html>certainly not json " + LEAK]
        if path == "illegal":
            return self._json(start_response, {"action": {"nope": True}})
        if path == "huge":
            start_response("200 OK", [("Content-Type", "application/json")])
            return (b"x" * 65536 for _ in range(160))  # 10 MB, never all read
        if path == "redirect":
            start_response("302 Found", [("Location", "/ok"), ("Content-Length", "0")])
            return [b""]
        if path in ("nested", "bignum"):
            data = NESTED if path == "nested" else BIGNUM
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
            return [data]
        if path == "ok":
            message = json.loads(body or b"{}")
            if message.get("type") == "turn":
                return self._json(start_response, {"action": message["legal_actions"][0]})
            start_response("200 OK", [("Content-Length", "0")])
            return [b""]
        start_response("404 Not Found", [("Content-Length", "0")])
        return [b""]

    @staticmethod
    def _json(start_response, payload):
        data = json.dumps(payload).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]


# -- below HTTP ------------------------------------------------------------------------------


def trickle(data: bytes, every_s: float):
    """A behaviour: send `data` one byte every `every_s` seconds (status line and headers included)."""
    def behave(conn: socket.socket, request: bytes) -> None:
        for i in range(len(data)):
            time.sleep(every_s)
            conn.sendall(data[i:i + 1])
    return behave


def answer_bytes(data: bytes):
    """A behaviour: send `data` as it is (not necessarily HTTP), then close."""
    def behave(conn: socket.socket, request: bytes) -> None:
        conn.sendall(data)
    return behave


def silent(seconds: float):
    """A behaviour: read the request, say nothing for `seconds` (a TLS client waits for a handshake)."""
    def behave(conn: socket.socket, request: bytes) -> None:
        time.sleep(seconds)
    return behave


def ok_answer(body: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)


class RawServer:
    """A TCP server on 127.0.0.1 that hands each connection to `behave(conn, request)`.

    `read_request=False` leaves the request unread (for a TLS client, whose
    first bytes are a ClientHello). `.held` lists, per connection, the
    seconds from the request's arrival to the moment the client hung up (a
    send failed) or the behaviour ended.
    """

    def __init__(self, behave, read_request: bool = True) -> None:
        self.behave = behave
        self.read_request = read_request
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.held: list[float] = []
        self.hung_up: list[bool] = []
        self.requests: list[bytes] = []  # beside `held`: the request each connection brought
        self.opened: list[bytes] = []  # each connection's first request, noted as it arrives
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._accept = threading.Thread(target=self._loop, name="raw-server", daemon=True)
        self._accept.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        hung_up = False
        try:
            request = self._read(conn) if self.read_request else b""
            began = time.monotonic()
            with self._lock:
                self.opened.append(request)
            try:
                self.behave(conn, request)
            except OSError:  # the client closed: a send failed
                hung_up = True
            ended = time.monotonic()
        except OSError:
            return
        finally:
            conn.close()
        with self._lock:
            self.held.append(ended - began)
            self.hung_up.append(hung_up)
            self.requests.append(request)

    def decisions_held(self) -> list[float]:
        """`held` of the connections that brought a decision (not a match_over notice)."""
        with self._lock:
            return [h for h, r in zip(self.held, self.requests, strict=True) if b'"type":"turn"' in r]

    @staticmethod
    def _read(conn: socket.socket) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return data
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            body += chunk
        return head + b"\r\n\r\n" + body

    def close(self) -> None:
        self._stop.set()
        self._accept.join(timeout=5)
        self.sock.close()
        for thread in self._threads:
            thread.join(timeout=5)

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- holding calls -----------------------------------------------------------------------------


class HoldingServer:
    """An asyncio HTTP server on 127.0.0.1 that holds each decision it is sent until `release()`
    (then answers the first legal action) or until the caller hangs up; anything else (a ping,
    a notice) is answered 200 at once. One thread and one loop hold any number of them.

    `holding` is how many decisions it holds now, `most` the most at once, `received` how
    many it was sent in all, `answered` how many it answered.
    """

    def __init__(self) -> None:
        import asyncio

        self.holding = self.most = self.received = self.answered = 0
        self.loop = asyncio.new_event_loop()
        self._released = None
        ready = threading.Event()

        async def start() -> None:
            self._released = asyncio.Event()
            self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=4096)
            self.port = self.server.sockets[0].getsockname()[1]
            ready.set()

        self._thread = threading.Thread(target=self.loop.run_forever, name="holding-server", daemon=True)
        self._thread.start()
        self.loop.call_soon_threadsafe(lambda: self.loop.create_task(start()))
        ready.wait(10)
        self.url = f"http://127.0.0.1:{self.port}/"

    async def _serve(self, reader, writer) -> None:
        import asyncio

        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                body = await reader.readexactly(length)
                if b'"type":"turn"' not in body:
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                    continue
                message = json.loads(body)
                self.received += 1
                self.holding += 1
                self.most = max(self.most, self.holding)
                try:
                    hung_up = asyncio.ensure_future(reader.read(1))
                    released = asyncio.ensure_future(self._released.wait())
                    await asyncio.wait([hung_up, released], return_when=asyncio.FIRST_COMPLETED)
                    if not released.done():
                        released.cancel()
                        return  # the caller hung up (cancelled, or stopped)
                    hung_up.cancel()
                finally:
                    self.holding -= 1
                answer = json.dumps({"action": message["legal_actions"][0]}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(answer)).encode() + b"\r\nConnection: close\r\n\r\n" + answer)
                await writer.drain()
                self.answered += 1
                return
        except Exception:
            return
        finally:
            writer.close()

    def release(self) -> None:
        """Answer every decision held, and every one to come."""
        self.loop.call_soon_threadsafe(self._released.set)

    def close(self) -> None:
        import asyncio

        def stop() -> None:
            self.server.close()
            for task in asyncio.all_tasks(self.loop):
                task.cancel()
            self.loop.call_later(0.1, self.loop.stop)

        self.loop.call_soon_threadsafe(stop)
        self._thread.join(timeout=5)

    def __enter__(self) -> HoldingServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
