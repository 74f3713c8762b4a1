"""Holding a match's (or a tournament's) lock while a job works on it.

    with Held(store.lock("match", mid, TTL_MS)) as held:
        if held.taken: ...          # else another runner has it: leave
        if held.lost.is_set(): ...  # it expired under us: stop, someone else drives it now

The lock is redis-py's `Lock` (core/store/jobs.py `Jobs.lock`): it expires
`TTL_MS` after it was last renewed, so a worker killed while it holds one
frees its match that long after (the recovery sweep then enqueues it again).
One renewer thread per process renews every lock the process holds, every
third of its life (`Lock.reacquire`); a thread per job would cost more than
most runs. A renewal that finds the lock gone (this process stalled past its
expiry and another runner took the match) sets `lost`: the runner stops at its
next step, as it must not act on a match someone else now drives.
"""

from __future__ import annotations

import os
import threading

from redis.exceptions import LockError, RedisError

#: a lock lives this long without renewal (`CARDARENA_LEASE_MS`): it bounds how long a dead
#: worker's match waits to be picked up again
TTL_MS = int(os.environ.get("CARDARENA_LEASE_MS") or 15_000)


class Held:
    """A lock taken, if free, for a `with` block (see above); released at its end."""

    def __init__(self, lock, wait_s: float = 0.0) -> None:
        self.lock, self.wait_s = lock, wait_s
        self.taken = False
        self.lost = threading.Event()

    def __enter__(self) -> Held:
        if self.wait_s > 0:
            self.taken = self.lock.acquire(blocking=True, blocking_timeout=self.wait_s)
        else:
            self.taken = self.lock.acquire(blocking=False)
        if self.taken:
            renewer().hold(self)
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def release(self) -> None:
        """Give the lock back now (once; nothing if it was not taken or was lost)."""
        if not self.taken:
            return
        self.taken = False
        renewer().drop(self)
        if not self.lost.is_set():
            try:
                self.lock.release()
            except (LockError, RedisError):
                pass  # it expired, or Redis is away: it expires by itself


class Renewer:
    """The process's thread renewing its locks."""

    def __init__(self) -> None:
        self.held: set[Held] = set()
        self.guard = threading.Lock()
        self.pid = os.getpid()
        threading.Thread(target=self._run, name="lock-renewer", daemon=True).start()

    def hold(self, held: Held) -> None:
        with self.guard:
            self.held.add(held)

    def drop(self, held: Held) -> None:
        with self.guard:
            self.held.discard(held)

    def _run(self) -> None:
        wake = threading.Event()
        while True:
            wake.wait(TTL_MS / 3000)
            with self.guard:
                held = list(self.held)
            for h in held:
                try:
                    h.lock.reacquire()
                except LockError:  # expired, and maybe taken by another runner: ours no more
                    h.lost.set()
                except RedisError:  # Redis away for a moment: try again at the next beat
                    continue


_renewer: Renewer | None = None
_renewer_guard = threading.Lock()


def renewer() -> Renewer:
    """This process's renewer (a forked child starts its own)."""
    global _renewer
    with _renewer_guard:
        if _renewer is None or _renewer.pid != os.getpid():
            _renewer = Renewer()
        return _renewer
