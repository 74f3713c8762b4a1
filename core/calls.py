"""One call to a bot's server with a whole-answer deadline — asynchronous, so waiting costs no thread.

    status, answer = await call_async(url, body, headers, deadline_s=2.0, max_bytes=64 * 1024)
    status, answer = await post_signed_async(url, secret, {"type": "ping", "protocol": 1}, 2.0, 1024)
    status, answer = call(...) / post_signed(...)     # the same, run on the process's loop and waited for

The dispatcher holds thousands of these at once on one event loop
(worker/dispatch.py); the API's and the heartbeat's pings (core/liveness.py)
and the webhook driver outside the dispatcher use the synchronous wrappers,
which run the very same coroutine on the process's loop (core/eventloop.py):
one implementation of the call. Signed as docs/api.md §3 says.

It returns or raises by `deadline_s`, whatever the bot does: a slow connect,
headers or a body trickled a byte at a time, a huge declared or streamed
body, a redirect (never followed: its status comes back), a name whose
resolution hangs. One `asyncio.timeout_at` bounds the whole answer —
resolving, connecting, the TLS handshake, sending, every read.

What else holds on every call:

* **where** — the URL is parsed again (`core.urls`), and with `public_only`
  every address connected to must be public, checked on the resolved address
  itself: the socket connects to that very address (the name is never
  resolved twice), so DNS cannot switch it after the check;
* **size** — an answer over `max_bytes` is refused on its declared length,
  unread, or cut while reading; headers and chunk framing count too (at most
  `max_bytes + HEAD_ROOM + max_bytes / 2` bytes are ever buffered);
* **kept-alive connections** are pooled per (scheme, host, port, path,
  owner): one bot version's own. A connection goes back to the pool only
  after a complete answer that left nothing behind it; one on which bytes
  arrive while it is idle (or that the bot closed) is closed, never reused;
* **name resolution** runs in a small pool of threads (`getaddrinfo` cannot
  be interrupted: a hanging one keeps its thread until the resolver gives
  up). A `party` (the dispatcher passes the bot's account) has at most
  `RESOLVERS_PER_PARTY` of them at once, and calls to one host share one
  resolution, so nobody's hanging DNS takes everybody's threads.

Errors are typed (`CallError` and its subclasses), each carrying the fault
`kind` of docs/api.md §5. Only a 2xx answer's body is read; any other status
comes back with an empty body, and no error text holds a byte of the bot's
answer (nothing from a bot's server reaches a public record). `NotMade` is
not a `CallError`: the platform could not make the call (out of file
descriptors) — the bot is not to be charged for it.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import hashlib
import json
import os
import socket
import ssl
import time
import weakref
from concurrent.futures import ThreadPoolExecutor

from core import eventloop
from core.urls import BadUrl, Target, address_problem, parse_target
from sdk.protocol import SIGNATURE_HEADER, sign  # the protocol's one definition of the signature

#: room for the status line and headers on top of the body's limit, and a chunked body's framing
HEAD_ROOM = 64 * 1024
#: an idle kept-alive connection older than this is closed rather than reused
IDLE_S = 30.0
#: idle connections kept per (scheme, host, port, path, owner)
MAX_IDLE = 32
#: the longest status or header line, and the most header lines (as http.client)
MAX_LINE = 65536
MAX_HEADERS = 100
#: threads resolving names, and how many of them one party may use at once
RESOLVERS = 64
RESOLVERS_PER_PARTY = 4
#: a synchronous caller waits this long past the deadline before giving up on the loop
WAIT_SLACK_S = 5.0
#: errors of the platform's own resources, not the bot's
PLATFORM_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


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


class NotMade(Exception):
    """The platform could not make the call (no file descriptor or buffer for a socket): no
    byte reached the bot, and it is not charged — the call is made again."""


# -- the call ---------------------------------------------------------------------------------


async def call_async(url: str, body: bytes, headers: dict[str, str], deadline_s: float, max_bytes: int,
                     *, public_only: bool = False, owner: str = "", party: str | None = None) -> tuple[int, bytes]:
    """POST `body` to `url`; (status, body of a 2xx answer) within `deadline_s` seconds.

    With `public_only` every address connected to must be public. A kept-alive
    connection is reused only for the same `owner` and URL (one bot version):
    whatever one bot's server does to a connection reaches no other bot, even
    behind the same host and port. `party` (default: `owner`) shares the name
    resolvers fairly.
    """
    loop = asyncio.get_running_loop()
    try:
        target = _target(url)
    except BadUrl as exc:
        raise RefusedUrl(str(exc)) from None
    request = _request_bytes(target, body, headers)
    key = (target.scheme, target.host, target.port, target.path, owner)
    pool = _pool_of(loop)
    try:
        async with asyncio.timeout(deadline_s):
            conn = pool.take(key)
            if conn is not None:
                try:
                    return await _exchange(conn, pool, key, request, max_bytes)
                except _Stale:
                    pass  # the bot closed a kept-alive connection: one fresh try
            conn = await _connect(target, public_only, party or owner)
            try:
                return await _exchange(conn, pool, key, request, max_bytes)
            except _Stale as exc:
                raise Unreachable(f"the connection closed before an answer ({exc})") from None
    except TimeoutError:
        raise CallTimeout("no complete answer before the deadline") from None


async def post_signed_async(url: str, secret: str, message: dict | bytes, deadline_s: float, max_bytes: int,
                            *, public_only: bool = False, party: str | None = None) -> tuple[int, bytes]:
    """`call_async` with `message` as JSON (or its JSON already: sent as it is), signed with
    the bot's `secret` (docs/api.md §3)."""
    body, headers, owner = _signed(secret, message)
    return await call_async(url, body, headers, deadline_s, max_bytes, public_only=public_only, owner=owner,
                            party=party)


def call(url: str, body: bytes, headers: dict[str, str], deadline_s: float, max_bytes: int,
         *, public_only: bool = False, owner: str = "", party: str | None = None) -> tuple[int, bytes]:
    """`call_async`, run on the process's loop (core/eventloop.py) and waited for."""
    try:
        return eventloop.run(call_async(url, body, headers, deadline_s, max_bytes, public_only=public_only,
                                        owner=owner, party=party), deadline_s + WAIT_SLACK_S)
    except TimeoutError:  # the loop itself did not finish it: not the bot's answer either way
        raise CallTimeout("no complete answer before the deadline") from None


def post_signed(url: str, secret: str, message: dict, deadline_s: float, max_bytes: int,
                *, public_only: bool = False, party: str | None = None) -> tuple[int, bytes]:
    """`post_signed_async`, run on the process's loop and waited for."""
    body, headers, owner = _signed(secret, message)
    return call(url, body, headers, deadline_s, max_bytes, public_only=public_only, owner=owner, party=party)


def close_idle() -> None:
    """Close every kept-alive connection of the process's loop (tests, or a process winding down)."""
    async def clear() -> None:
        _pool_of(asyncio.get_running_loop()).clear()

    eventloop.run(clear(), 5.0)


@functools.lru_cache(maxsize=4096)
def _target(url: str) -> Target:
    """`parse_target`, kept per URL: a pure function of the string (a bad one is parsed each time)."""
    return parse_target(url)


def _signed(secret: str, message: dict | bytes) -> tuple[bytes, dict[str, str], str]:
    body = message if isinstance(message, bytes) else json.dumps(message, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sign(body, secret),
               "User-Agent": "cardarena-referee/1"}
    # its connections are this secret's (a bot's) at this URL (a version's) alone
    return body, headers, _owner(secret)


@functools.lru_cache(maxsize=4096)
def _owner(secret: str) -> str:
    """Whose kept-alive connections a call may reuse: a digest of the bot's secret (never the secret)."""
    return hashlib.sha256(secret.encode()).hexdigest()[:16]


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


class _Closed(Exception):
    """The connection ended (EOF, or the error it carries) while more was expected."""

    def __init__(self, error: BaseException | None) -> None:
        super().__init__(error)
        self.error = error


async def _exchange(conn: _Connection, pool: _Pool, key: tuple, request: bytes,
                    max_bytes: int) -> tuple[int, bytes]:
    keep = False
    try:
        conn.arm(max_bytes + HEAD_ROOM + max_bytes // 2)
        conn.made().write(request)
        try:
            status, fields, closing = await _read_head(conn)
        except _Closed as closed:
            if conn.reused and conn.received == 0:
                raise _Stale(type(closed.error).__name__ if closed.error else "closed") from None
            if closed.error is not None:
                raise Unreachable(f"the connection broke: {_describe(closed.error)}") from None
            if conn.received == 0:
                raise Unreachable("the connection broke: the bot closed it without an answer") from None
            raise BadResponse("not an HTTP answer (cut short)") from None
        if not 200 <= status < 300:
            return status, b""
        try:
            data, to_end = await _read_body(conn, fields, status, max_bytes)
        except _Closed as closed:
            if closed.error is not None and not isinstance(closed.error, ssl.SSLError):
                raise Unreachable(f"the connection broke: {_describe(closed.error)}") from None
            raise BadResponse("the answer's body is cut or malformed (IncompleteRead)") from None
        # bytes past the answer mean the stream is not where HTTP says it is: a connection
        # reused then would hand them to the next call as its answer
        keep = not closing and not to_end and conn.clean()
        return status, data
    finally:
        if keep:
            pool.give(key, conn)
        else:
            conn.close()


async def _read_head(conn: _Connection) -> tuple[int, dict[str, str], bool]:
    """The status, the header fields (lower-cased names) and whether the bot closes after it."""
    while True:
        line = await conn.readline()
        parts = line.decode("latin-1").rstrip("\r\n").split(None, 2)
        if len(parts) < 2 or parts[0] not in ("HTTP/1.0", "HTTP/1.1"):
            raise BadResponse("not an HTTP answer (BadStatusLine)")
        version, code = parts[0], parts[1]
        if len(code) != 3 or not code.isdigit() or not 100 <= int(code) <= 999:
            raise BadResponse("not an HTTP answer (BadStatusLine)")
        fields: dict[str, str] = {}
        for _ in range(MAX_HEADERS + 1):
            line = await conn.readline()
            if line in (b"\r\n", b"\n"):
                break
            name, sep, value = line.decode("latin-1").partition(":")
            if not sep or not name.strip():
                if line[:1] in (b" ", b"\t"):
                    continue  # an obsolete folded line: nothing we read is ever in one
                raise BadResponse("not an HTTP answer (a malformed header)")
            name, value = name.strip().lower(), value.strip()
            if name == "content-length" and fields.get(name, value) != value:
                raise BadResponse("not an HTTP answer (two lengths)")
            fields[name] = value
        else:
            raise BadResponse("not an HTTP answer (got more than 100 headers)")
        status = int(code)
        if 100 <= status < 200:
            continue  # an interim answer: the real one follows
        connection = fields.get("connection", "").lower()
        closing = "close" in connection or (version == "HTTP/1.0" and "keep-alive" not in connection)
        return status, fields, closing


async def _read_body(conn: _Connection, fields: dict[str, str], status: int,
                     max_bytes: int) -> tuple[bytes, bool]:
    """The body (at most `max_bytes`), and whether it was read to the connection's end."""
    if "chunked" in fields.get("transfer-encoding", "").lower():
        return await _read_chunked(conn, max_bytes), False
    if status == 204:
        return b"", False
    declared = fields.get("content-length")
    if declared is None:
        return await conn.read_to_end(max_bytes), True
    if not declared.isdigit():
        raise BadResponse("not an HTTP answer (a Content-Length that is not one)")
    if int(declared[:30]) > max_bytes:
        raise TooLarge(f"answer of {int(declared[:30])} bytes, over the {max_bytes // 1024} KB limit")
    return await conn.read_exactly(int(declared)), False


async def _read_chunked(conn: _Connection, max_bytes: int) -> bytes:
    chunks, size = [], 0
    while True:
        line = await conn.readline()
        try:
            length = int(line.split(b";", 1)[0].strip() or b"x", 16)
        except ValueError:
            raise BadResponse("the answer's body is cut or malformed (a chunk size that is not one)") from None
        if length < 0:
            raise BadResponse("the answer's body is cut or malformed (a chunk size that is not one)")
        if length == 0:
            break
        size += length
        if size > max_bytes:
            raise TooLarge(f"answer over the {max_bytes // 1024} KB limit")
        chunks.append(await conn.read_exactly(length))
        if await conn.readline() not in (b"\r\n", b"\n"):
            raise BadResponse("the answer's body is cut or malformed (a chunk without its end)")
    for _ in range(MAX_HEADERS + 1):  # trailers, up to the empty line
        if await conn.readline() in (b"\r\n", b"\n"):
            return b"".join(chunks)
    raise BadResponse("the answer's body is cut or malformed (too many trailers)")


# -- connections ---------------------------------------------------------------------------

#: what is buffered from a socket before reading from it pauses
BUFFER = 256 * 1024


class _Connection(asyncio.Protocol):
    """One connection to a bot's server, read by the call it is armed for.

    Bytes arriving while no call is armed on it (idle in the pool) close it:
    the stream is no longer where HTTP says it is. Every byte received counts
    against the armed call's `limit`.
    """

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.ended = False  # EOF, or the connection lost
        self.error: BaseException | None = None
        self.waiter: asyncio.Future | None = None
        self.armed = True  # a fresh connection is its first call's: idle only once in the pool
        self.paused = False
        self.received = 0
        self.limit = 0
        self.reused = False
        self.idle_since = 0.0

    # -- asyncio.Protocol
    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if not self.armed:  # idle: stray bytes, the connection is out of step
            self.close()
            return
        self.buffer += data
        self.received += len(data)
        if len(self.buffer) > BUFFER and not self.paused:
            self.made().pause_reading()
            self.paused = True
        self._wake()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False

    def connection_lost(self, exc: BaseException | None) -> None:
        self.ended = True
        self.error = exc
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    # -- the call's side
    def arm(self, limit: int) -> None:
        self.armed, self.limit, self.received = True, limit, len(self.buffer)

    async def _more(self) -> None:
        """Wait for more bytes; `_Closed` if none will come."""
        if self.received > self.limit:
            raise TooLarge(f"answer over the {self.limit // 1024} KB limit, headers included")
        if self.ended:
            raise _Closed(self.error)
        if self.paused:
            self.paused = False
            self.made().resume_reading()
        self.waiter = asyncio.get_running_loop().create_future()
        try:
            await self.waiter
        finally:
            self.waiter = None
        if self.received > self.limit:
            raise TooLarge(f"answer over the {self.limit // 1024} KB limit, headers included")

    async def readline(self) -> bytes:
        start = 0
        while True:
            end = self.buffer.find(b"\n", start)
            if end >= 0:
                if end >= MAX_LINE:
                    raise BadResponse("not an HTTP answer (LineTooLong)")
                line = bytes(self.buffer[:end + 1])
                del self.buffer[:end + 1]
                return line
            if len(self.buffer) > MAX_LINE:
                raise BadResponse("not an HTTP answer (LineTooLong)")
            start = len(self.buffer)
            await self._more()

    async def read_exactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            await self._more()
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        return data

    async def read_to_end(self, max_bytes: int) -> bytes:
        while True:
            if len(self.buffer) > max_bytes:
                raise TooLarge(f"answer over the {max_bytes // 1024} KB limit")
            try:
                await self._more()
            except _Closed as closed:
                if closed.error is not None and not isinstance(closed.error, ssl.SSLError):
                    raise
                data = bytes(self.buffer)
                self.buffer.clear()
                return data

    def clean(self) -> bool:
        """Open, with nothing past the answer: none buffered, no EOF."""
        return (not self.buffer and not self.ended and self.transport is not None
                and not self.transport.is_closing())

    def made(self) -> asyncio.Transport:
        """Its transport, once the connection is made (as it is before any call uses it)."""
        if self.transport is None:
            raise ConnectionError("the connection is not made yet")
        return self.transport

    def alive(self) -> bool:
        """Idle, still open, and not too old to be trusted."""
        return self.clean() and time.monotonic() - self.idle_since <= IDLE_S

    def close(self) -> None:
        self.armed = False
        if self.transport is not None:
            self.transport.abort()  # no lingering TLS close: the bot gets nothing more


async def _connect(target: Target, public_only: bool, party: str) -> _Connection:
    loop = asyncio.get_running_loop()
    addresses = [(target.host, target.port)] if target.is_ip else await _resolve(target, party)
    failure: Exception | None = None
    for address in addresses:
        if public_only:
            problem = address_problem(address[0])
            if problem:
                raise RefusedUrl(f"{target.host} resolves to {address[0]}, which is not a public address")
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        try:
            sock = _open_socket(family)
        except OSError as exc:
            if exc.errno in PLATFORM_ERRNOS:
                raise NotMade(f"no socket for the call: {_describe(exc)}") from None
            raise Unreachable(_describe(exc)) from None
        try:
            sock.setblocking(False)
            await loop.sock_connect(sock, address)  # the very address checked: never resolved again
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            tls = _tls_context() if target.scheme == "https" else None
            _, conn = await loop.create_connection(
                _Connection, sock=sock, ssl=tls, server_hostname=target.host if tls else None,
                ssl_handshake_timeout=3600 if tls else None)  # the call's deadline bounds it
            return conn
        except (ssl.SSLError, ssl.CertificateError) as exc:
            sock.close()
            raise Unreachable(f"TLS failed: {_describe(exc)}") from None
        except OSError as exc:
            sock.close()
            if exc.errno in PLATFORM_ERRNOS:
                raise NotMade(f"no socket for the call: {_describe(exc)}") from None
            failure = exc
        except BaseException:  # the deadline (cancelled), or anything else: no socket left open
            sock.close()
            raise
    raise Unreachable(_describe(failure) if failure else f"{target.host} has no address")


def _open_socket(family: int) -> socket.socket:
    return socket.socket(family, socket.SOCK_STREAM)


_tls_ctx: ssl.SSLContext | None = None


def _tls_context() -> ssl.SSLContext:
    global _tls_ctx
    if _tls_ctx is None:
        _tls_ctx = ssl.create_default_context()
    return _tls_ctx


# -- names ----------------------------------------------------------------------------------


class _Resolving:
    """One loop's resolutions under way: one per (host, port), at most `RESOLVERS_PER_PARTY`
    threads per party, each held until its `getaddrinfo` returns (not when a caller gives up)."""

    executor: ThreadPoolExecutor | None = None
    executor_pid = 0

    def __init__(self) -> None:
        self.pending: dict[tuple[str, int], asyncio.Future] = {}
        self.parties: dict[str, asyncio.Semaphore] = {}

    @classmethod
    def threads(cls) -> ThreadPoolExecutor:
        if cls.executor is None or cls.executor_pid != os.getpid():
            cls.executor = ThreadPoolExecutor(RESOLVERS, thread_name_prefix="webhook-resolve")
            cls.executor_pid = os.getpid()
        return cls.executor

    async def addresses(self, target: Target, party: str) -> list:
        key = (target.host, target.port)
        found = self.pending.get(key)
        if found is None:
            found = self.pending[key] = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().create_task(self._resolve(key, party, found))
        return await asyncio.shield(found)

    async def _resolve(self, key: tuple[str, int], party: str, found: asyncio.Future) -> None:
        semaphore = self.parties.setdefault(party, asyncio.Semaphore(RESOLVERS_PER_PARTY))
        result: list | OSError | UnicodeError  # the addresses, or why there are none
        try:
            async with semaphore:
                try:
                    result = await asyncio.get_running_loop().run_in_executor(
                        self.threads(), lambda: socket.getaddrinfo(key[0], key[1], type=socket.SOCK_STREAM))
                except (OSError, UnicodeError) as exc:
                    result = exc
        finally:
            self.pending.pop(key, None)
        if not found.done():
            found.set_result(result)


_resolvings: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


async def _resolve(target: Target, party: str) -> list[tuple[str, int]]:
    """The host's addresses (the call's deadline bounds the wait: a bot owns its DNS too)."""
    loop = asyncio.get_running_loop()
    resolving = _resolvings.get(loop)
    if resolving is None:
        resolving = _resolvings[loop] = _Resolving()
    result = await resolving.addresses(target, party)
    if isinstance(result, Exception):
        raise Unreachable(f"cannot resolve {target.host}: {_describe(result)}")
    seen, out = set(), []
    for family, _, _, _, sockaddr in result:
        if family in (socket.AF_INET, socket.AF_INET6) and sockaddr[0] not in seen:
            seen.add(sockaddr[0])
            out.append((sockaddr[0], sockaddr[1]))
    return out


# -- the pool of kept-alive connections ---------------------------------------------------------


class _Pool:
    """One loop's kept-alive connections per (scheme, host, port, path, owner): one bot version's."""

    def __init__(self) -> None:
        self.idle: dict[tuple, list[_Connection]] = {}
        self.swept = time.monotonic()

    def take(self, key: tuple) -> _Connection | None:
        stack = self.idle.get(key) or []
        while stack:
            conn = stack.pop()
            if conn.alive():
                conn.reused = True
                return conn
            conn.close()
        self.idle.pop(key, None)
        return None

    def give(self, key: tuple, conn: _Connection) -> None:
        conn.armed = False
        conn.idle_since = time.monotonic()
        stack = self.idle.setdefault(key, [])
        if len(stack) < MAX_IDLE:
            stack.append(conn)
        else:
            conn.close()
        if conn.idle_since - self.swept > IDLE_S:
            self.sweep()

    def sweep(self) -> None:
        """Close the connections too old or dead to be reused."""
        self.swept = time.monotonic()
        for key in list(self.idle):
            live = []
            for conn in self.idle[key]:
                if conn.alive():
                    live.append(conn)
                else:
                    conn.close()
            if live:
                self.idle[key] = live
            else:
                del self.idle[key]

    def clear(self) -> None:
        for stack in self.idle.values():
            for conn in stack:
                conn.close()
        self.idle.clear()


_pools: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _pool_of(loop: asyncio.AbstractEventLoop) -> _Pool:
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = _Pool()
    return pool


def _describe(exc: BaseException | None) -> str:
    """An OS error in words, without object addresses or errno noise."""
    if exc is None:
        return "unknown error"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc) or type(exc).__name__
    return text.split(" object at 0x")[0]
