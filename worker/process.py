"""One worker process of the pool: an RQ worker on the cardarena queue.

    python -m worker.process REDIS_URL [NAME]

The pool (worker/pool.py) starts N of these. Each forks a work horse per
job, as RQ does, so a job that crashes takes only its horse down.
"""

from __future__ import annotations

import logging
import sys


def preload() -> None:
    """Import, once in the worker, what every job needs: a forked horse then
    starts with it loaded (the SDK alone, which in-process bots import, takes
    ~0.1 s to import, more than a whole match of most games)."""
    import importlib
    import pkgutil

    import example_bots
    import games
    import worker.drivers.inprocess  # noqa: F401
    import worker.drivers.polling  # noqa: F401
    import worker.drivers.webhook  # noqa: F401
    import worker.jobs  # noqa: F401
    import worker.match_runner  # noqa: F401
    from worker.ratings import model

    for game in games.names():
        games.get(game)
    for module in pkgutil.iter_modules(example_bots.__path__):
        importlib.import_module(f"example_bots.{module.name}")
    model()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    url, name = argv[0], (argv[1] if len(argv) > 1 else None)
    import redis
    from rq import Queue, Worker

    from server.store.jobs import QUEUE

    preload()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    connection = redis.Redis.from_url(url)
    rq_worker = Worker([Queue(QUEUE, connection=connection)], connection=connection, name=name)
    rq_worker.work(logging_level="WARNING", with_scheduler=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
