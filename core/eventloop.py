"""The process's event loop: one asyncio loop in a daemon thread, for code that is not async.

    result = run(coroutine, timeout_s)      # from any thread but the loop's own
    future = submit(coroutine)              # a concurrent.futures.Future
    loop()                                  # the loop itself (started on first use)

The webhook call is asynchronous (core/calls.py): the dispatcher holds
thousands at once on this loop (worker/dispatch.py), and the synchronous
callers — the API's and the heartbeat's pings (core/liveness.py), the
webhook driver in tests and benchmarks — run the same coroutine here and
wait for it. One loop per process, so its kept-alive connections are shared
by everyone in it; a forked child starts its own (the parent's thread and
sockets are not the child's).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_pid = 0


def loop() -> asyncio.AbstractEventLoop:
    """The process's loop, running in its thread (started now if it is not yet)."""
    global _loop, _thread, _pid
    with _lock:
        if _loop is None or _pid != os.getpid() or _thread is None or not _thread.is_alive():
            ready = threading.Event()
            new = asyncio.new_event_loop()

            def run() -> None:
                asyncio.set_event_loop(new)
                new.call_soon(ready.set)
                new.run_forever()

            _thread = threading.Thread(target=run, name="event-loop", daemon=True)
            _thread.start()
            ready.wait()
            _loop, _pid = new, os.getpid()
        return _loop


def in_loop_thread() -> bool:
    return _thread is not None and threading.current_thread() is _thread and _pid == os.getpid()


def submit(coroutine) -> concurrent.futures.Future:
    """Schedule `coroutine` on the loop; its future."""
    if in_loop_thread():
        coroutine.close()
        raise RuntimeError("run() and submit() wait on the loop: they cannot be called from it")
    return asyncio.run_coroutine_threadsafe(coroutine, loop())


def run(coroutine, timeout_s: float | None = None):
    """Run `coroutine` on the loop and wait for its result (or its exception); past
    `timeout_s` it is cancelled and TimeoutError raised."""
    future = submit(coroutine)
    try:
        return future.result(timeout_s)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise TimeoutError(f"not done within {timeout_s} s") from None
