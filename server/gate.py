"""The gate of the waiting endpoints: their work never crowds out everyone else's.

Under gevent a waiting request costs nothing, but the work around the wait does:
a long-poll is admitted (credential, limits, quota places, a first read) and
an event stream renders each step for its spectator. One process runs its
greenlets in turn, so a burst of that work — 1,000 polls arriving at once,
100 streams woken by one step of a watched match — would put every other
request (a bystander's `GET /games`) behind a thousand others.

So at most `SIZE` requests to the waiting endpoints work at once in a process;
the rest queue, which costs them nothing but time, and no other request ever
waits behind more than `SIZE` of them. The queue is fair between tenants: one
lane per account (a long-poll's, known from the bot id its secret starts with)
or per address (a stream's), served in turn, so an honest bot's poll arriving
behind another account's thousand waits for one request of each other lane,
not for the thousand. The wait itself is outside
the gate: a long-poll leaves it as it starts waiting (`leave`) and queues
again to finish (`back`); a stream holds it only while it reads and renders
(`working`), never while it waits or writes.

Only under gevent (`cardarena serve`): a threaded
server bounds the same work by its threads (server/app.py).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict, deque
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask, current_app, request

#: waiting-endpoint requests doing work at once, per process
SIZE = 8
WAITING = re.compile(r"^/api/v1/(bots/me/turns|matches/[^/]+/events|tournaments/[^/]+/events)/?$")
ENVIRON_KEY = "cardarena.gate"


class FairGate:
    """At most `size` holders at once; the others queue in one lane per tenant, and a freed place
    goes to the lanes in turn (round robin), so a tenant arriving behind another's crowd of
    requests waits for one of each other tenant's, not for the whole crowd."""

    def __init__(self, size: int) -> None:
        self.lock = threading.Lock()
        self.free = size
        self.lanes: OrderedDict[str, deque[threading.Event]] = OrderedDict()

    def acquire(self, lane: str) -> None:
        with self.lock:
            if self.free > 0 and not self.lanes:
                self.free -= 1
                return
            turn = threading.Event()
            self.lanes.setdefault(lane, deque()).append(turn)
        try:
            turn.wait()  # the place is handed over by `release`
        except BaseException:  # killed while queued (a stopping server): leave no dead place behind
            with self.lock:
                waiting = self.lanes.get(lane)
                if waiting is not None and turn in waiting:
                    waiting.remove(turn)
                    if not waiting:
                        del self.lanes[lane]
                    handed = False
                else:
                    handed = True
            if handed:
                self.release()
            raise

    def release(self) -> None:
        with self.lock:
            if not self.lanes:
                self.free += 1
                return
            lane, waiting = next(iter(self.lanes.items()))
            turn = waiting.popleft()
            if waiting:
                self.lanes.move_to_end(lane)  # its next request waits for one of every other lane's
            else:
                del self.lanes[lane]
        turn.set()

    def waiting(self) -> int:
        with self.lock:
            return sum(len(q) for q in self.lanes.values())


class _Pass:
    """One request's place in the gate, in its lane: left (given back) once, taken again by `back`."""

    __slots__ = ("gate", "lane", "held")

    def __init__(self, gate: FairGate, lane: str) -> None:
        self.gate, self.lane, self.held = gate, lane, True

    def leave(self) -> None:
        if self.held:
            self.held = False
            self.gate.release()

    def back(self) -> None:
        if not self.held:
            self.gate.acquire(self.lane)
            self.held = True


#: bot id -> its account, per process (an owner never changes); cleared when it grows past this
OWNERS_KEEP = 100_000


def install(app: Flask, size: int = SIZE) -> None:
    """Gate `app`'s waiting endpoints (a WSGI middleware around its `wsgi_app`)."""
    gate = app.extensions[ENVIRON_KEY] = FairGate(size)
    owners: dict[str, str] = {}
    inner = app.wsgi_app

    def lane(environ) -> str:
        """A long-poll's account (from the bot id its secret starts with), a stream's address."""
        auth = environ.get("HTTP_AUTHORIZATION", "")
        if "/events" in environ.get("PATH_INFO", "") or not auth.startswith("Bearer "):
            return "address:" + environ.get("REMOTE_ADDR", "?")
        bot_id = auth[7:].strip().split(".", 1)[0][:80]
        if bot_id not in owners:
            if len(owners) >= OWNERS_KEEP:
                owners.clear()
            bot = app.extensions["cardarena.store"].get_bot(bot_id)
            owners[bot_id] = str((bot or {}).get("owner") or "bot:" + bot_id)
        return "account:" + owners[bot_id]

    def gated(environ, start_response):
        if environ.get("REQUEST_METHOD") != "GET" or not WAITING.match(environ.get("PATH_INFO", "")):
            return inner(environ, start_response)
        try:
            key = lane(environ)
        except Exception:  # Redis away: the view answers 503 itself
            key = "unknown"
        gate.acquire(key)
        held = environ[ENVIRON_KEY] = _Pass(gate, key)
        try:
            return inner(environ, start_response)  # a stream's body runs after this, outside the gate
        finally:
            held.leave()

    app.wsgi_app = gated


def leave() -> None:
    """The current request leaves the gate (it starts waiting); nothing without one."""
    held = request.environ.get(ENVIRON_KEY)
    if held is not None:
        held.leave()


def back() -> None:
    """The current request, done waiting, queues in its lane to finish its work (give its places
    back, answer) inside the gate: a crowd of polls ending together is drained `SIZE` at a time."""
    held = request.environ.get(ENVIRON_KEY)
    if held is not None:
        held.back()


@contextmanager
def working() -> Iterator[None]:
    """A stream's step of work (read, render) inside the gate, in its address' lane; nothing
    without one."""
    gate = current_app.extensions.get(ENVIRON_KEY)
    if gate is None:
        yield
        return
    gate.acquire("address:" + (request.remote_addr or "?"))
    try:
        yield
    finally:
        gate.release()
