"""Holding a job's lease while working on it (see server/store/jobs.py).

A background thread renews the lease every few seconds. If a renewal finds
the lease gone (this process stalled past its expiry and the recovery sweep
gave the job to another worker), `lost` is set and the runner stops at its
next step: it must not act on a match someone else now drives.
"""

from __future__ import annotations

import os
import threading

#: the lease lives this long without renewal (`CARDARENA_LEASE_MS`); renewed every
#: third of it. It bounds how long a dead worker's match waits to be picked up.
TTL_MS = int(os.environ.get("CARDARENA_LEASE_MS") or 15_000)


class Lease:
    """`with Lease(store, "match", mid) as lease:` — `lease.held` False if another runner has it."""

    def __init__(self, store, kind: str, ident: str, ttl_ms: int = TTL_MS) -> None:
        self.store, self.kind, self.ident, self.ttl_ms = store, kind, ident, ttl_ms
        self.token: str | None = None
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def held(self) -> bool:
        return self.token is not None and not self.lost.is_set()

    def __enter__(self) -> Lease:
        self.token = self.store.take_lease(self.kind, self.ident, self.ttl_ms)
        if self.token is not None:
            self._thread = threading.Thread(target=self._renew, name=f"lease-{self.ident}", daemon=True)
            self._thread.start()
        return self

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl_ms / 3000):
            try:
                if not self.store.renew_lease(self.kind, self.ident, self.token, self.ttl_ms):
                    self.lost.set()
                    return
            except Exception:  # Redis away for a moment: try again at the next beat
                continue

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self.token is not None and not self.lost.is_set():
            try:
                self.store.release_lease(self.kind, self.ident, self.token)
            except Exception:
                pass  # it expires by itself
