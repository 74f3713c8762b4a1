"""Deadlines for bots running in this process, at almost no cost per decision.

Used by the worker for in-process bots and by local play (`sdk.local`). A
bot can loop forever. Running every `act` in a thread with a timeout would
cost tens of microseconds per decision, more than the engines spend
deciding. Instead one watchdog thread looks at a deadline the caller sets
before each call and, when a call overruns it, sends SIGUSR1 to the main
thread, whose handler raises `Overrun` inside the bot's code. Arming and
disarming are two attribute writes.

Only the main thread can receive the signal, which is where RQ runs a job
and where `cardarena play` runs. Elsewhere `limit` still lets the block run
(its caller measures it, so a late answer is a fault) but cannot stop a hang:
`sdk.local` then runs the bot in a helper thread instead. `watchdog()` is the
process's one watchdog, started on first use in the main thread. Standard
library only.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from types import FrameType
from typing import Any


class Overrun(BaseException):
    """A bot ran past its deadline and was interrupted.

    A `BaseException`, like `KeyboardInterrupt`, so a bot's own
    ``except Exception:`` cannot swallow it and run on.
    """


class Watchdog:
    #: how often the watchdog looks, and how far past the deadline it strikes
    TICK_S = 0.02

    def __init__(self) -> None:
        self._deadline: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._main: int | None = threading.main_thread().ident
        self._previous: Callable[[int, FrameType | None], Any] | int | None = None

    def _usable(self) -> bool:
        return threading.get_ident() == self._main and hasattr(signal, "pthread_kill")

    def _on_signal(self, signum, frame) -> None:
        deadline = self._deadline
        if deadline is not None and time.monotonic() > deadline:
            self._deadline = None
            raise Overrun()

    def _watch(self) -> None:
        while not self._stop.wait(self.TICK_S):
            deadline = self._deadline
            if deadline is not None and time.monotonic() > deadline + self.TICK_S and self._main is not None:
                signal.pthread_kill(self._main, signal.SIGUSR1)

    def start(self) -> Watchdog:
        if self._usable() and self._thread is None:
            self._previous = signal.signal(signal.SIGUSR1, self._on_signal)
            self._thread = threading.Thread(target=self._watch, name="watchdog", daemon=True)
            self._thread.start()
        return self

    @property
    def running(self) -> bool:
        """Whether it watches: `limit` then interrupts an overrun."""
        return self._thread is not None

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
            signal.signal(signal.SIGUSR1, self._previous or signal.SIG_DFL)
            self._thread = None

    @contextmanager
    def limit(self, seconds: float):
        """Run the block with a deadline; `Overrun` if it is interrupted for overrunning.

        Armed only in the main thread, the one the signal interrupts; elsewhere
        the block just runs (its caller measures it)."""
        if threading.get_ident() != self._main or self._thread is None:
            yield
            return
        self._deadline = time.monotonic() + seconds
        try:
            yield
        finally:
            self._deadline = None

    def __enter__(self) -> Watchdog:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


_watchdog: Watchdog | None = None
_pid: int | None = None


def watchdog() -> Watchdog:
    """This process's watchdog (a forked child starts its own)."""
    global _watchdog, _pid
    if _watchdog is None or _pid != os.getpid():
        _watchdog = Watchdog()
        _watchdog._main = threading.main_thread().ident
        _pid = os.getpid()
    if _watchdog._thread is None or not _watchdog._thread.is_alive():
        _watchdog._thread = None
        _watchdog.start()
    return _watchdog
