"""A work horse (`cardarena worker --fork`) dies with the worker that forked it.

kill -9 of a worker must leave no horse refereeing on unsupervised: the recovery sweep gives
its match to another worker. The worker records its pid as it starts (worker/process.py);
each job calls `horse_dies_with_worker()` (worker/jobs.py), which acts once per horse and
does nothing in a worker that runs its jobs itself.
"""

from __future__ import annotations

import os

#: the worker's pid, set as it starts (inherited by the work horses it forks)
worker_pid: int | None = None


def horse_dies_with_worker() -> None:
    """In a work horse: ask the kernel to kill it when its worker dies."""
    global worker_pid
    if worker_pid is not None and os.getpid() != worker_pid and os.getppid() == worker_pid:
        from core.signals import die_with_parent

        die_with_parent(worker_pid)
        worker_pid = None  # set for this horse: once is enough
