"""One call to a bot's server with a whole-answer deadline: `call(url, body, headers, deadline_s, max_bytes)`.

    status, answer = call(url, body, headers, deadline_s=2.0, max_bytes=64 * 1024)
    status, answer = post_signed(url, secret, {"type": "ping", "protocol": 1}, 2.0, 1024)

Both the referee's webhook driver (worker/drivers/webhook.py) and the API's
ping (core/liveness.py) call bots through here, signed as docs/api.md §3 says.

returns or raises by `deadline_s` (plus the scheduler's slack), whatever the
bot does: a slow connect, headers or a body trickled a byte at a time, a huge
declared or streamed body, a redirect (never followed: its status comes
back), a name whose resolution hangs. requests' `timeout` bounds each socket
read, not the answer, so a bot trickling one byte a second held a worker for
as long as it liked; here every blocking step — resolving, connecting, the
TLS handshake, sending, each read — is given only the time left before the
deadline, set on the socket just before it runs.

Errors are typed (`CallError` and its subclasses), each carrying the fault
`kind` of docs/api.md §5. Only a 2xx answer's body is read; any other status
comes back with an empty body (nothing from a bot's server is worth keeping).

Thread-safe and self-contained (no signals, no global state but the pool of
kept-alive connections, guarded by a lock), so a dispatcher can hold many
calls at once in threads.
"""

from __future__ import annotations

import hashlib
import http.client
import io
import json
import os
import select
import socket
import ssl
import threading
import time

from core.urls import BadUrl, Target, address_problem, parse_target
from sdk.protocol import SIGNATURE_HEADER, sign  # the protocol's one definition of the signature

#: room for the status line and headers on top of the body's limit, and a chunked body's framing
HEAD_ROOM = 64 * 1024
#: an idle kept-alive connection older than this is closed rather than reused
IDLE_S = 30.0
#: idle connections kept per (scheme, host, port)
MAX_IDLE = 32


class CallError(Exception):
    """A webhook call without a usable HTTP answer; `kind` is its fault kind."""

    kind = "unreachable"


class CallTimeout(CallError):
    """No complete answer before the deadline (resolving, connecting and reading included)."""

    kind = "timeout"


class Unreachable(CallError):
    """Refused, reset, closed, not resolved, or a TLS failure."""

    kind = "unreachable"


class TooLarge(CallError):
    """An answer (declared or read) over `max_bytes`."""

    kind = "too_large"


class RefusedUrl(CallError):
    """A URL the referee cannot or may not call."""

    kind = "refused_url"


class BadResponse(CallError):
    """The bytes that came back are not an HTTP answer."""

    kind = "bad_answer"


def call(url: str, body: bytes, headers: dict[str, str], deadline_s: float, max_bytes: int,
         *, public_only: bool = False, owner: str = "") -> tuple[int, bytes]:
    """POST `body` to `url`; (status, body of a 2xx answer) within `deadline_s` seconds.

    With `public_only` every address connected to must be public (checked on
    the resolved address itself, so DNS cannot switch it after the check).
    A kept-alive connection is reused only for the same `owner` and URL (one
    bot version): whatever one bot's server does to a connection reaches no
    other bot, even behind the same host and port.
    """
    deadline = time.monotonic() + deadline_s
    try:
        target = parse_target(url)
    except BadUrl as exc:
        raise RefusedUrl(str(exc)) from None
    request = _request_bytes(target, body, headers)
    pool_key = (target.scheme, target.host, target.port, target.path, owner)
    conn = _pool.take(pool_key)
    if conn is not None:
        try:
            return _exchange(conn, pool_key, request, deadline, max_bytes)
        except _Stale:
            conn.close()  # the bot closed a kept-alive connection: one fresh try
    conn = _connect(target, deadline, public_only)
    try:
        return _exchange(conn, pool_key, request, deadline, max_bytes)
    except _Stale as exc:
        raise Unreachable(f"the connection closed before an answer ({exc})") from None


def post_signed(url: str, secret: str, message: dict, deadline_s: float, max_bytes: int,
                *, public_only: bool = False) -> tuple[int, bytes]:
    """`call` with `message` as JSON, signed with the bot's `secret` (docs/api.md §3)."""
    body = json.dumps(message, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sign(body, secret),
               "User-Agent": "cardarena-referee/1"}
    # its connections are this secret's (a bot's) at this URL (a version's) alone
    owner = hashlib.sha256(secret.encode()).hexdigest()[:16]
    return call(url, body, headers, deadline_s, max_bytes, public_only=public_only, owner=owner)


def close_idle() -> None:
    """Close every kept-alive connection (tests, or a process winding down)."""
    _pool.clear()


# -- the request and the answer ------------------------------------------------------------


def _request_bytes(target: Target, body: bytes, headers: dict[str, str]) -> bytes:
    lines = [f"POST {target.path} HTTP/1.1", f"Host: {target.host_header}",
             f"Content-Length: {len(body)}", "Connection: keep-alive", "Accept-Encoding: identity"]
    for name, value in headers.items():
        if any(c in f"{name}{value}" for c in "\r\n"):
            raise ValueError(f"header {name!r} holds a line break")
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class _Stale(Exception):
    """A reused connection failed before any byte of the answer came."""


def _exchange(conn: _Connection, pool_key: tuple, request: bytes, deadline: float,
              max_bytes: int) -> tuple[int, bytes]:
    keep = False
    try:
        conn.arm(deadline, max_bytes + HEAD_ROOM + max_bytes // 2)
        try:
            conn.send(request)
            response = http.client.HTTPResponse(conn, method="POST")
            response.begin()
        except CallError:
            raise
        except (ConnectionError, http.client.RemoteDisconnected) as exc:
            if conn.reused and conn.received == 0:
                raise _Stale(type(exc).__name__) from None
            raise Unreachable(f"the connection broke: {_describe(exc)}") from None
        except OSError as exc:
            raise Unreachable(f"the connection broke: {_describe(exc)}") from None
        except (http.client.HTTPException, ValueError) as exc:
            raise BadResponse(f"not an HTTP answer ({type(exc).__name__})") from None
        status = response.status
        if not 200 <= status < 300:
            return status, b""
        data = _read_body(response, max_bytes)
        # bytes past the answer (buffered, or readable already) mean the stream is not where
        # HTTP says it is: a connection reused then would hand them to the next call as its answer
        keep = not response.will_close and conn.clean()
        return status, data
    finally:
        if keep:
            _pool.give(pool_key, conn)
        else:
            conn.close()


def _read_body(response: http.client.HTTPResponse, max_bytes: int) -> bytes:
    declared = response.getheader("Content-Length")
    if declared is not None and declared.strip().isdigit() and int(declared.strip()[:30]) > max_bytes:
        raise TooLarge(f"answer of {int(declared.strip()[:30])} bytes, over the {max_bytes // 1024} KB limit")
    chunks, size = [], 0
    try:
        while True:
            chunk = response.read(min(16 * 1024, max_bytes + 1 - size))
            if not chunk:
                break
            size += len(chunk)
            if size > max_bytes:
                raise TooLarge(f"answer over the {max_bytes // 1024} KB limit")
            chunks.append(chunk)
    except CallError:
        raise
    except (http.client.HTTPException, ValueError) as exc:
        raise BadResponse(f"the answer's body is cut or malformed ({type(exc).__name__})") from None
    except OSError as exc:
        raise Unreachable(f"the connection broke: {_describe(exc)}") from None
    return b"".join(chunks)


# -- connections ---------------------------------------------------------------------------


class _Connection:
    """A socket whose every read and write is bounded by the call's deadline.

    `http.client.HTTPResponse` parses the answer from `makefile()`: a buffered
    reader over `_DeadlineReader`, which sets the time left on the socket
    before each `recv` and counts the bytes, so neither slowness nor size can
    run past the call's bounds inside the parser's loops.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.deadline = 0.0
        self.limit = 0
        self.received = 0
        self.reused = False
        self.idle_since = 0.0

    def arm(self, deadline: float, limit: int) -> None:
        self.deadline, self.limit, self.received = deadline, limit, 0

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise CallTimeout("no complete answer before the deadline")
        return left

    def send(self, data: bytes) -> None:
        self.sock.settimeout(self.remaining())
        try:
            self.sock.sendall(data)  # since 3.5 the timeout bounds the whole sendall
        except TimeoutError:
            raise CallTimeout("the bot did not take the request before the deadline") from None

    def recv_into(self, buffer) -> int:
        self.sock.settimeout(self.remaining())
        try:
            n = self.sock.recv_into(buffer)
        except TimeoutError:
            raise CallTimeout("no complete answer before the deadline") from None
        self.received += n
        if self.received > self.limit:
            raise TooLarge(f"answer over the {self.limit // 1024} KB limit, headers included")
        return n

    def makefile(self, mode: str = "rb", *args, **kwargs):
        self.reader = _AnswerReader(_DeadlineReader(self), 8192)
        return self.reader

    def clean(self) -> bool:
        """Nothing past the answer: none left in the reader's buffer, none readable now."""
        reader = getattr(self, "reader", None)
        if reader is None or reader.leftover is None:
            return False
        if not reader.closed:  # the body's end did not close it: look at its buffer now
            reader.close()
        return reader.leftover == 0 and self.quiet()

    def alive(self) -> bool:
        """Idle and still open: nothing to read (EOF or stray bytes would be readable)."""
        return time.monotonic() - self.idle_since <= IDLE_S and self.quiet()

    def quiet(self) -> bool:
        """Open, with nothing to read now (an EOF, an error or stray bytes would be)."""
        try:
            poller = select.poll()
            poller.register(self.sock, select.POLLIN | select.POLLERR | select.POLLHUP)
            return not poller.poll(0)
        except (OSError, ValueError):
            return False

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class _DeadlineReader(io.RawIOBase):
    def __init__(self, conn: _Connection) -> None:
        self.conn = conn
        self.probing = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int | None:
        if self.probing:  # looking at what is buffered only: "nothing available now"
            return None
        return self.conn.recv_into(buffer)


class _AnswerReader(io.BufferedReader):
    """The buffered reader an answer is parsed from; on closing it notes how many bytes it
    held past the answer (`leftover`), without reading the socket."""

    leftover: int | None = 0

    def close(self) -> None:
        if not self.closed:
            raw = self.raw
            raw.probing = True
            try:
                self.leftover = len(self.peek(1))
            except Exception:  # a reader that cannot say: do not trust the connection
                self.leftover = None
            finally:
                raw.probing = False
        super().close()


def _connect(target: Target, deadline: float, public_only: bool) -> _Connection:
    addresses = [(target.host, target.port)] if target.is_ip else _resolve(target, deadline)
    failure: Exception | None = None
    for address in addresses:
        if public_only:
            problem = address_problem(address[0])
            if problem:
                raise RefusedUrl(f"{target.host} resolves to {address[0]}, which is not a public address")
        left = deadline - time.monotonic()
        if left <= 0:
            raise CallTimeout("could not connect before the deadline")
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(left)
            sock.connect(address)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if target.scheme == "https":
                sock = _tls(sock, target, deadline)
            return _Connection(sock)
        except TimeoutError:
            sock.close()
            raise CallTimeout("could not connect before the deadline") from None
        except CallError:
            sock.close()
            raise
        except OSError as exc:
            sock.close()
            failure = exc
    raise Unreachable(_describe(failure) if failure else f"{target.host} has no address")


def _tls(sock: socket.socket, target: Target, deadline: float) -> socket.socket:
    wrapped = _tls_context().wrap_socket(sock, server_hostname=target.host,
                                         do_handshake_on_connect=False)
    wrapped.settimeout(max(0.001, deadline - time.monotonic()))  # one deadline for the whole handshake
    try:
        wrapped.do_handshake()
    except TimeoutError:
        wrapped.close()
        raise CallTimeout("the TLS handshake did not finish before the deadline") from None
    except (ssl.SSLError, ssl.CertificateError) as exc:
        wrapped.close()
        raise Unreachable(f"TLS failed: {_describe(exc)}") from None
    return wrapped


_tls_lock = threading.Lock()
_tls_ctx: ssl.SSLContext | None = None


def _tls_context() -> ssl.SSLContext:
    global _tls_ctx
    with _tls_lock:
        if _tls_ctx is None:
            _tls_ctx = ssl.create_default_context()
        return _tls_ctx


def _resolve(target: Target, deadline: float) -> list[tuple[str, int]]:
    """The host's addresses, waiting no later than the deadline (a bot owns its DNS too).

    `getaddrinfo` cannot be interrupted, so it runs in a helper thread that
    is abandoned (it ends when the resolver gives up) if the deadline comes.
    """
    found: list = []

    def resolve() -> None:
        try:
            found.append(socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError) as exc:
            found.append(exc)

    thread = threading.Thread(target=resolve, name="webhook-resolve", daemon=True)
    thread.start()
    thread.join(max(0.0, deadline - time.monotonic()))
    if not found:
        raise CallTimeout(f"resolving {target.host} took past the deadline")
    result = found[0]
    if isinstance(result, Exception):
        raise Unreachable(f"cannot resolve {target.host}: {_describe(result)}")
    seen, out = set(), []
    for family, _, _, _, sockaddr in result:
        if family in (socket.AF_INET, socket.AF_INET6) and sockaddr[0] not in seen:
            seen.add(sockaddr[0])
            out.append((sockaddr[0], sockaddr[1]))
    return out


class _Pool:
    """Kept-alive connections per (scheme, host, port, path, owner) — one bot version's;
    a forked child starts empty."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self.pid = os.getpid()

    def take(self, key: tuple) -> _Connection | None:
        with self.lock:
            self._check_fork()
            stack = self.idle.get(key) or []
            while stack:
                conn = stack.pop()
                if conn.alive():
                    conn.reused = True
                    return conn
                conn.close()
        return None

    def give(self, key: tuple, conn: _Connection) -> None:
        conn.idle_since = time.monotonic()
        with self.lock:
            self._check_fork()
            stack = self.idle.setdefault(key, [])
            if len(stack) < MAX_IDLE:
                stack.append(conn)
                return
        conn.close()

    def clear(self) -> None:
        with self.lock:
            for stack in self.idle.values():
                for conn in stack:
                    conn.close()
            self.idle.clear()

    def _check_fork(self) -> None:
        if self.pid != os.getpid():  # the parent's sockets are not ours to use
            self.idle = {}
            self.pid = os.getpid()


_pool = _Pool()


def _describe(exc: BaseException | None) -> str:
    """An OS error in words, without object addresses or errno noise."""
    if exc is None:
        return "unknown error"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc) or type(exc).__name__
    return text.split(" object at 0x")[0]
