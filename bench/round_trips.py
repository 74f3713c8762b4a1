"""Redis round trips an in-process match costs, and who makes them.

    python bench/round_trips.py [--game duck-soup] [--bots 16] [--deals 2] [--rounds 3]

A duplicate round-robin of in-process random bots is run by one RQ
`SimpleWorker` in this process, `--rounds` times, on a Redis client whose
connections count what they send (redis-py's documented `connection_class`):
every command or pipeline sent is one round trip. It prints min/median/max
over the rounds of the round trips a match, RQ's share (its worker loop and
job bookkeeping), and the platform's callers by function, with the load.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import tempfile
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis  # noqa: E402
from redis.connection import Connection  # noqa: E402

from core.redis_server import EmbeddedRedis  # noqa: E402
from core.store import Store, secret_key  # noqa: E402
from core.store.jobs import enqueue_job, queue_name  # noqa: E402

ROOT = str(Path(__file__).resolve().parents[1]) + os.sep
RANDOM = "example_bots.random:RandomBot"
#: who sent each round trip: "rq" or the platform's "file:function", counted
sent: collections.Counter[str] = collections.Counter()


class CountingConnection(Connection):
    """A connection that counts each command or pipeline it sends, by its caller."""

    def send_packed_command(self, command, check_health=True):
        sent[caller()] += 1
        return super().send_packed_command(command, check_health)


def caller() -> str:
    """The innermost frame of RQ or of the platform's own code that is sending."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        if f"{os.sep}rq{os.sep}" in frame.filename:
            return "rq"
        if frame.filename.startswith(ROOT) and "site-packages" not in frame.filename \
                and not frame.filename.startswith(ROOT + "bench"):
            return f"{frame.filename.removeprefix(ROOT)}:{frame.name}"
    return "other"


def main() -> None:
    from rq import Queue, SimpleWorker

    import worker.process

    p = argparse.ArgumentParser()
    p.add_argument("--game", default="duck-soup")
    p.add_argument("--bots", type=int, default=16)
    p.add_argument("--deals", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    os.environ.setdefault("CARDARENA_ARCHIVE", tempfile.mkdtemp(prefix="cardarena-bench-archive-"))
    worker.process.preload()
    per_match, rq_share, by_caller = [], [], collections.Counter()
    with EmbeddedRedis() as server:
        client = redis.Redis(connection_pool=redis.ConnectionPool.from_url(
            server.url, connection_class=CountingConnection))
        store = Store(client, secret_key(client))
        bots = [store.create_bot("bench", f"random{i}", args.game, "python", entrypoint=RANDOM)[0]["id"]
                for i in range(args.bots)]
        for round_ in range(args.rounds):
            t = store.create_tournament(args.game, bots, seats=2, deals=args.deals, duplicate=True,
                                        seed=round_, options={})
            enqueue_job(client, "tournament", t["id"])
            sent.clear()
            SimpleWorker([Queue(queue_name(), connection=client)], connection=client).work(
                burst=True, logging_level="WARNING")
            n = store.tournament_progress(t["id"])["total"]
            assert store.get_tournament(t["id"])["status"] == "finished"
            per_match.append(sum(sent.values()) / n)
            rq_share.append(sent["rq"] / n)
            by_caller.update({k: v / n / args.rounds for k, v in sent.items()})
            print(f"  round {round_ + 1}: {n} matches, {per_match[-1]:.1f} round trips a match "
                  f"(RQ {rq_share[-1]:.1f}) [{load()}]")

    def spread(values: list[float]) -> str:
        return " / ".join(f"{v:.1f}" for v in (min(values), statistics.median(values), max(values)))

    print(f"{args.game}, {args.bots} bots, {args.deals} deals, duplicate, one SimpleWorker [{load()}]:")
    print(f"  round trips a match: {spread(per_match)}; RQ's: {spread(rq_share)} (min / median / max)")
    print("  by caller, a match (mean over the rounds):")
    for name, count in by_caller.most_common(20):
        print(f"    {count:6.2f}  {name}")


def load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


if __name__ == "__main__":
    main()
