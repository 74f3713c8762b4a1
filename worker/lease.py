"""Holding a job's lease while working on it (see core/store/jobs.py).

One renewer thread per process renews every lease the process holds, every
third of the lease's life; starting a thread for each job would cost more
than most matches. If a renewal finds a lease gone (this process stalled
past its expiry and the recovery sweep gave the job to another worker), the
lease's `lost` event is set and its runner stops at its next step: it must
not act on a match someone else now drives.
"""

from __future__ import annotations

import os
import threading

#: the lease lives this long without renewal (`CARDARENA_LEASE_MS`); renewed every
#: third of it. It bounds how long a dead worker's match waits to be picked up.
TTL_MS = int(os.environ.get("CARDARENA_LEASE_MS") or 15_000)


class Renewer:
    """The process's thread renewing its leases."""

    def __init__(self) -> None:
        self.held: dict[int, Lease] = {}
        self.lock = threading.Lock()
        self.pid = os.getpid()
        self.thread = threading.Thread(target=self._run, name="lease-renewer", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        wake = threading.Event()
        while True:
            with self.lock:
                leases = list(self.held.values())
            interval = min((lease.ttl_ms for lease in leases), default=TTL_MS) / 3000
            wake.wait(interval)
            for lease in leases:
                if lease.token is None or lease.lost.is_set() or id(lease) not in self.held:
                    continue
                try:
                    if not lease.store.renew_lease(lease.kind, lease.ident, lease.token, lease.ttl_ms):
                        lease.lost.set()
                except Exception:  # Redis away for a moment: try again at the next beat
                    continue


_renewer: Renewer | None = None
_renewer_lock = threading.Lock()


def renewer() -> Renewer:
    """This process's renewer (a forked child starts its own)."""
    global _renewer
    with _renewer_lock:
        if _renewer is None or _renewer.pid != os.getpid():
            _renewer = Renewer()
        return _renewer


class Lease:
    """`with Lease(store, "match", mid) as lease:` — `lease.held` False if another runner has it."""

    def __init__(self, store, kind: str, ident: str, ttl_ms: int = TTL_MS, token: str | None = None) -> None:
        self.store, self.kind, self.ident, self.ttl_ms = store, kind, ident, ttl_ms
        self.taken = token  # a lease taken already, with `ttl_ms`, for this token (`Store.take_run`)
        self.token: str | None = None
        self.lost = threading.Event()
        self.renewer: Renewer | None = None  # the one renewing it, while it is held

    @property
    def held(self) -> bool:
        return self.token is not None and not self.lost.is_set()

    def __enter__(self) -> Lease:
        self.token = self.taken or self.store.take_lease(self.kind, self.ident, self.ttl_ms)
        if self.token is not None:
            self.renewer = r = renewer()
            with r.lock:
                r.held[id(self)] = self
        return self

    def __exit__(self, *exc) -> None:
        if self.token is None:
            return
        self.stop_renewing()
        if not self.lost.is_set():
            try:
                self.store.release_lease(self.kind, self.ident, self.token)
            except Exception:
                pass  # it expires by itself
        self.token = None

    def stop_renewing(self) -> None:
        r, self.renewer = self.renewer, None
        if r is not None:
            with r.lock:
                r.held.pop(id(self), None)

    def give_back(self, release):
        """Give the lease back now with `release(token)` (a release that reads something in the
        same round trip), its answer; None, and nothing done, if the lease is not held. Its
        errors go on up (the lease then expires by itself)."""
        if not self.held:
            return None
        self.stop_renewing()
        token, self.token = self.token, None
        return release(token)
