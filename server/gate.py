"""The gate of the waiting endpoints: their work never crowds out everyone else's.

Under gevent a waiting request costs nothing, but the work around the wait does:
a long-poll is admitted (credential, limits, quota places, a first read) and
an event stream renders each step for its spectator. One process runs its
greenlets in turn, so a burst of that work — 1,000 polls arriving at once,
100 streams woken by one step of a watched match — would put every other
request (a bystander's `GET /games`) behind a thousand others.

So at most `SIZE` requests to the waiting endpoints work at once in a process;
the rest queue on a semaphore, which costs them nothing but time, and no other
request ever waits behind more than `SIZE` of them. The wait itself is outside
the gate: a long-poll leaves it as it starts waiting (`leave`), a stream holds
it only while it reads and renders (`working`), never while it waits or writes.

Only under gevent (`cardarena serve`, gunicorn's gevent worker): a threaded
server bounds the same work by its threads (server/app.py).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask, current_app, request

#: waiting-endpoint requests doing work at once, per process
SIZE = 8
WAITING = re.compile(r"^/api/v1/(bots/me/turns|matches/[^/]+/events|tournaments/[^/]+/events)/?$")
ENVIRON_KEY = "cardarena.gate"


class _Pass:
    """One request's pass through the gate: given back once."""

    __slots__ = ("semaphore", "held")

    def __init__(self, semaphore) -> None:
        self.semaphore, self.held = semaphore, True

    def leave(self) -> None:
        if self.held:
            self.held = False
            self.semaphore.release()


def install(app: Flask, size: int = SIZE) -> None:
    """Gate `app`'s waiting endpoints (a WSGI middleware around its `wsgi_app`)."""
    semaphore = threading.BoundedSemaphore(size)  # gevent's, in a patched process
    app.extensions[ENVIRON_KEY] = semaphore
    inner = app.wsgi_app

    def gated(environ, start_response):
        if environ.get("REQUEST_METHOD") != "GET" or not WAITING.match(environ.get("PATH_INFO", "")):
            return inner(environ, start_response)
        semaphore.acquire()
        held = environ[ENVIRON_KEY] = _Pass(semaphore)
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


@contextmanager
def working() -> Iterator[None]:
    """A stream's step of work (read, render) inside the gate; nothing without one."""
    semaphore = current_app.extensions.get(ENVIRON_KEY)
    if semaphore is None:
        yield
        return
    semaphore.acquire()
    try:
        yield
    finally:
        semaphore.release()
