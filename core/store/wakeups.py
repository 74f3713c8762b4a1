"""One pub/sub listener per process and kind of channel, shared by everything in it that waits
for a wake-up on such a channel.

Channels heard (published by the writers; nothing is stored):
    bot:{id}:wake            a decision was published for the bot (core/store/decisions.py)
    match:{id}:events        a match's log grew or its status changed (core/store/events.py)
    tournament:{id}:events   one of a tournament's matches started or ended, its standings
                             or status changed

A long-poll (`GET /bots/me/turns`) or an event stream does not open a pub/sub
connection of its own and block on it: thousands of waiting polls would be
thousands of Redis connections and, under a threaded server, threads. One connection
per process and kind of channel pattern-subscribes to that kind, and one
reader (a thread; a greenlet under gevent, whose monkey-patching turns
`threading` into greenlets) hands each message to whoever in the process waits
on that channel: a waiter is an entry in a dict and an event, not a
connection.

The price: the process hears every wake-up of a kind it waits on, waited for
here or not — a few short messages per decision played, each a dict lookup.
A kind nobody waits on is not heard at all: an API holding only long-polls
reads no match's events (one message per log append of every match).

Nothing is missed:
* a waiter registers *before* it reads the state it waits on: a publish after
  that read finds it registered (the writers publish after the change, so a
  publish before the read is seen by the read);
* until the listener's subscriptions are confirmed — at its start, and again
  after Redis went away and it reconnected — publishes may be lost, so every
  waiter is woken the moment they are, to read again; `ready()` says whether
  they are, and a waiter looks again on its own at least every few seconds
  while they are not (`Subscription.wait`'s `timeout`: the caller's choice);
* a reader that hears nothing, not even the answer to its own PING, for
  `DEAD_S` takes its connection for dead and reconnects.

A listener starts with the first waiter on its kind and ends when nobody has
waited on it for `IDLE_S`; it is per process (a forked
process starts its own), per Redis client and per kind (`wakeups(client).listen(channel)`
finds the channel's).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections import deque

import redis

#: every channel a waiter may wait on matches one of these: one listener each
PATTERNS = ("bot:*:wake", "match:*:events", "tournament:*:events")
#: the reader looks up from its socket this often (idle check, its own PING)
TICK_S = 1.0
#: the reader PINGs its connection this often, and takes it for dead after DEAD_S of silence
PING_S = 5.0
DEAD_S = 20.0
#: the listener stops after this long with nobody waiting (it starts again with the next waiter)
IDLE_S = 60.0
#: a waiter reads again on its own this often (a safety net: the listener wakes it; 5,000 polls
#: reading every 10 s cost more than everything else they do), and this often while the listener
#: is not subscribed (starting, or reconnecting to Redis)
RECHECK_S = 30.0
UNSURE_S = 0.5
#: at most this many messages are kept for one waiter between two of its looks (a burst of
#: log appends): only "look again" matters, the newest are kept
KEEP = 1000

log = logging.getLogger("cardarena.wakeups")


class Subscription:
    """One waiter's place on a channel: the messages published there since its last look."""

    __slots__ = ("channel", "messages", "event", "listener")

    def __init__(self, listener: Wakeups, channel: str) -> None:
        self.listener, self.channel = listener, channel
        self.messages: deque[str] = deque(maxlen=KEEP)
        self.event = threading.Event()

    def wake(self, message: str | None) -> None:
        if message is not None:
            self.messages.append(message)
        self.event.set()

    def wait(self, timeout: float) -> list[str] | None:
        """The messages published since the last look, waiting up to `timeout` s for one:
        a list (maybe empty: the listener asked everyone to look again), None if nothing came."""
        if not self.event.wait(max(0.0, timeout)):
            return None
        self.event.clear()
        out = []
        while self.messages:
            out.append(self.messages.popleft())
        return out

    def close(self) -> None:
        self.listener.leave(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Listeners:
    """The listeners of one Redis client in one process (`wakeups(client)`), one per kind of channel
    (`PATTERNS`), each started by its first waiter."""

    def __init__(self, client: redis.Redis) -> None:
        self.by_pattern = {pattern: Wakeups(client, pattern) for pattern in PATTERNS}

    def listen(self, channel: str) -> Subscription:
        """A subscription to `channel`, registered at once on its kind's listener (read the state
        after this call; `Subscription.listener.ready()` says whether that listener hears it)."""
        return self.by_pattern[pattern_of(channel)].listen(channel)

    def waiters(self) -> int:
        """How many wait in this process."""
        return sum(listener.waiters() for listener in self.by_pattern.values())


def pattern_of(channel: str) -> str:
    """The pattern of `PATTERNS` that `channel` matches (ValueError if none)."""
    for pattern in PATTERNS:
        head, _, tail = pattern.partition("*")
        if channel.startswith(head) and channel.endswith(tail) and len(channel) > len(head) + len(tail):
            return pattern
    raise ValueError(f"no listener hears {channel!r}")


class Wakeups:
    """The listener of one kind of channel (`pattern`) of one Redis client in one process."""

    def __init__(self, client: redis.Redis, pattern: str) -> None:
        self.client = weakref.ref(client)  # the registry's key: held strongly only while reading
        self.pattern = pattern
        self.lock = threading.Lock()
        self.waiting: dict[str, set[Subscription]] = {}
        self.count = 0
        self.idle_since = time.monotonic()
        self.running = False
        self.subscribed = False

    def ready(self) -> bool:
        """Whether every publish from now on reaches the waiters (the subscriptions are confirmed)."""
        return self.subscribed

    def listen(self, channel: str) -> Subscription:
        """A subscription to `channel`, registered at once (read the state after this call)."""
        sub = Subscription(self, channel)
        with self.lock:
            self.waiting.setdefault(channel, set()).add(sub)
            self.count += 1
            if not self.running:
                self.running = True
                threading.Thread(target=self._run, name=f"cardarena-wakeups {self.pattern}", daemon=True).start()
        return sub

    def leave(self, sub: Subscription) -> None:
        with self.lock:
            subs = self.waiting.get(sub.channel)
            if subs is None or sub not in subs:
                return
            subs.discard(sub)
            if not subs:
                del self.waiting[sub.channel]
            self.count -= 1
            if not self.count:
                self.idle_since = time.monotonic()

    def waiters(self) -> int:
        """How many wait in this process."""
        return self.count

    def _deliver(self, channel: str, message: str | None) -> None:
        with self.lock:
            subs = list(self.waiting.get(channel, ()))
        for sub in subs:
            sub.wake(message)

    def _wake_all(self) -> None:
        with self.lock:
            subs = [sub for group in self.waiting.values() for sub in group]
        for sub in subs:
            sub.wake(None)

    def _done(self) -> bool:
        """Stop now? (nobody has waited for IDLE_S): decided under the lock, so a waiter
        arriving meanwhile starts a new reader."""
        with self.lock:
            if self.count or time.monotonic() - self.idle_since < IDLE_S:
                return False
            self.running = False
            return True

    def _run(self) -> None:
        pause, warned = 0.1, False
        while True:
            pubsub, client = None, self.client()
            if client is None:  # its app is gone
                with self.lock:
                    self.running = False
                return
            try:
                pubsub = client.pubsub()
                pubsub.psubscribe(self.pattern)
                self._read(pubsub)
                return  # idle: ended
            except Exception as exc:  # Redis went away (or worse): reconnect, and wake everyone then
                if self.subscribed:  # it was up: a new outage
                    warned, pause = False, 0.1
                if not warned:
                    log.warning("wake-up listener lost its connection (%s); reconnecting", exc)
                    warned = True
                self.subscribed = False
                self._wake_all()  # they look again now, and keep looking on their own until ready
                if self._done():
                    return
                time.sleep(pause)
                pause = min(2.0, pause * 2)
            finally:
                self.subscribed = False
                if pubsub is not None:
                    try:
                        pubsub.close()
                    except Exception:
                        pass
                del client

    def _read(self, pubsub) -> None:
        confirmed: set[str] = set()
        heard = pinged = time.monotonic()
        while True:
            message = pubsub.get_message(timeout=TICK_S)
            now = time.monotonic()
            if message is not None:
                heard = now
                kind = message.get("type")
                if kind == "pmessage":
                    data = message["data"]
                    self._deliver(_text(message["channel"]),
                                  data.decode() if isinstance(data, bytes) else str(data))
                elif kind == "psubscribe":
                    confirmed.add(_text(message["pattern"] or message["channel"]))
                    if not self.subscribed and self.pattern in confirmed:
                        self.subscribed = True
                        self._wake_all()  # anything published before this moment: look again
                continue
            if now - heard > DEAD_S:
                raise redis.ConnectionError(f"no answer for {DEAD_S:.0f} s")
            if now - pinged >= PING_S:
                pubsub.ping()
                pinged = now
            if self._done():
                return


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


#: set when the process stops serving (`drain`): waits end at once with what they have
_draining = threading.Event()


def drain() -> None:
    """The process stops serving: every wait in it ends now, with what it has (an empty
    long-poll, an event stream's end), so no request is cut off with an error by the stop."""
    _draining.set()
    with _listeners_lock:
        registries = list(_listeners.values())
    for registry in registries:
        for listener in registry.by_pattern.values():
            listener._wake_all()


def draining() -> bool:
    """Whether the process is stopping (`drain`): a wait must not begin or go on."""
    return _draining.is_set()


_listeners: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_listeners_lock = threading.Lock()
_pid = os.getpid()


def wakeups(client: redis.Redis) -> Listeners:
    """The process' listeners on `client`'s Redis (one per client, process and kind of channel)."""
    global _pid
    with _listeners_lock:
        if _pid != os.getpid():  # a forked child: the parent's listener is not running here
            _listeners.clear()
            _pid = os.getpid()
        listeners = _listeners.get(client)
        if listeners is None:
            listeners = _listeners[client] = Listeners(client)
        return listeners
