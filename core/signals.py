"""How a command stops: on SIGTERM as on SIGINT, and never half-way.

A command that started processes (a Redis, workers, a server) must stop them
whether it is stopped with Ctrl-C (SIGINT) or by a process manager (SIGTERM,
whose default kills Python on the spot and orphans its children). Within
`stop_on_signals()`, the first of either signal raises `KeyboardInterrupt` in
the main thread, so the command unwinds through its `finally` blocks as on
Ctrl-C; later ones are ignored. Starting and stopping children runs inside
`shielded()`: a signal arriving then is held until the block ends, so a
child is never started without being recorded, nor a cleanup cut short.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
from collections.abc import Callable, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)

_shield_depth = 0
_pending = False  # a signal arrived inside a shielded block
_stopping = False  # the stop was raised already


def _on_signal(signum, frame) -> None:
    global _pending, _stopping
    if _stopping:
        return
    if _shield_depth:
        _pending = True
        return
    _stopping = True
    raise KeyboardInterrupt


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGINT or SIGTERM raises `KeyboardInterrupt`, once (enter it from the main thread)."""
    global _pending, _stopping
    previous = {sig: signal.signal(sig, _on_signal) for sig in SIGNALS}
    _pending = _stopping = False
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """A block no signal interrupts; one that arrived meanwhile is raised when it ends
    (unless the block is already ending by an exception, a stop included)."""
    global _shield_depth, _pending, _stopping
    _shield_depth += 1
    try:
        yield
    except BaseException:
        _shield_depth -= 1
        raise
    _shield_depth -= 1
    if _shield_depth == 0 and _pending and not _stopping:
        _pending, _stopping = False, True
        raise KeyboardInterrupt


#: Linux's prctl option: the signal a process gets when its parent dies
_PR_SET_PDEATHSIG = 1
#: the environment variable a process sets to its pid for the processes it starts that must die
#: with it (`die_with_parent`): a pool's workers, the demo's API, a test's demo
PARENT_ENV = "CARDARENA_PARENT_PID"


def die_with_parent(parent: int | str | None = None) -> None:
    """Ask the kernel to kill this process (SIGKILL) when its parent dies — a pool killed with
    `kill -9` then leaves no worker or dispatcher running unsupervised, and a new pool never
    doubles them. `parent` is the pid that started it (default: `PARENT_ENV`): if that parent
    is already gone, this process exits at once. Linux only (prctl); elsewhere it does nothing.

    The kernel's "parent" is the thread that forked the child: a pool starts its children
    from its main thread and its supervising thread, which both live as long as it does.
    """
    parent = parent if parent is not None else os.environ.get(PARENT_ENV)
    if not sys.platform.startswith("linux") or parent is None:
        return
    libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != int(parent):  # the parent died before the request was made
        os._exit(1)


def child_dies_with_this_process() -> Callable[[], None] | None:
    """A `preexec_fn` for `subprocess.Popen`: the child asks the kernel to kill it (SIGKILL) when
    this process dies (`die_with_parent`), before it runs its program — for a program that
    cannot ask itself, such as the embedded redis-server. None but on Linux. Start the child
    from a thread that lives as long as this process (see `die_with_parent`). The child runs it
    between fork and exec, where a process with threads should make system calls only: libc
    is loaded here, beforehand."""
    if not sys.platform.startswith("linux"):
        return None
    libc()
    return functools.partial(die_with_parent, os.getpid())


@functools.lru_cache(maxsize=1)
def libc():
    """The C library, to call `prctl` (Linux)."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True)
