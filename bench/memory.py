"""What a finished match costs Redis, with the archive and without, measured in one run.

    python bench/memory.py [--matches 2000] [--game duck-soup] [--bots 4] [--workers 2] [--reads 200]

Two tournaments of at least `--matches` matches (a duplicate round-robin of in-process
random bots), each on a fresh Redis of its own, run by the real worker pool:

1. **Before**: archiving off (`CARDARENA_ARCHIVE=off`): finished matches stay whole in
   Redis, as before issue 32. Redis bytes per finished match (`used_memory` after the
   tournament and its follow-ups, less before it, over the matches).
2. Then the same Redis's matches are read through the API (`GET /matches/{id}`, its
   export, its middle step), `--reads` of them, each request timed; every match is
   archived (`Store.archive_match`, timed) and the same requests are made again, now
   answered from the archive: cold (the process's cache of archive files emptied before
   each request) and as served (the cache kept). Target: ≤ 2× the time from Redis. The
   bodies must be the same bytes.
3. **After**: a second tournament, the same schedule, archiving on while it plays (a
   match is archived as its deal ends, by the worker that ended it). Redis bytes per
   finished match (target ≤ 1 KB) and archive bytes per match; matches/s of both
   tournaments (what archiving costs the workers: a file written and fsynced a match).

Both sides of each ratio run on this machine in this run; the machine's load is printed
with them.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis  # noqa: E402

import games  # noqa: E402
from core.redis_server import EmbeddedRedis  # noqa: E402
from core.store import Store, schema, secret_key  # noqa: E402
from core.store.archive import ARCHIVE_ENV, OFF, Archive  # noqa: E402
from core.store.jobs import enqueue_job  # noqa: E402
from worker.pool import WorkerPool  # noqa: E402
from worker.schedules import round_robin  # noqa: E402

RANDOM = "example_bots.random:RandomBot"
ADMIN = "bench-admin-token"


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.1f} {five:.1f} {fifteen:.1f}"


#: what Redis allocates besides its keys (MEMORY STATS): clients' buffers and the like, which
#: come and go with the connections, not with the matches
NOT_KEYS = ("clients.normal", "clients.slaves", "aof.buffer", "lua.caches", "replication.backlog")


def held(client: redis.Redis) -> int:
    """The bytes Redis allocates for its keys: everything but clients' buffers and caches."""
    stats = client.memory_stats()
    return stats["total.allocated"] - sum(int(stats.get(k) or 0) for k in NOT_KEYS)


def settled(client: redis.Redis, timeout: float = 120.0) -> None:
    """Wait until no job is active (every match's follow-ups, its archiving included, are done)."""
    end = time.monotonic() + timeout
    while client.scard("jobs:active") and time.monotonic() < end:
        time.sleep(0.05)


def tournament(url: str, game: str, bots: int, deals: int, workers: int, archive: str) -> dict:
    """Run one tournament with `CARDARENA_ARCHIVE=archive`; its figures."""
    os.environ[ARCHIVE_ENV] = archive  # the pool's processes inherit it
    client = redis.Redis.from_url(url)
    schema.stamp_if_empty(client)  # a new platform's Redis, as the API stamps it
    store = Store(client, secret_key(client))
    seats = games.get(game).min_seats
    ids = [store.create_bot("bench", f"random{i}", game, "python", entrypoint=RANDOM)[0]["id"] for i in range(bots)]
    with WorkerPool(url, n=workers, log_path="/dev/null", sweep_every_s=2.0):
        time.sleep(1.5)  # the workers are up and waiting, as in a running deployment
        settled(client)
        before, used_before = held(client), client.info("memory")["used_memory"]
        t = store.create_tournament(game, ids, seats=seats, deals=deals, duplicate=True, seed=1, options={})
        started = time.perf_counter()
        enqueue_job(client, "tournament", t["id"])
        while store.get_tournament(t["id"])["status"] != "finished":
            time.sleep(0.02)
        elapsed = time.perf_counter() - started
        settled(client)
        after, used_after = held(client), client.info("memory")["used_memory"]
    mids = store.tournament_matches(t["id"])
    return {"store": store, "client": client, "tid": t["id"], "matches": mids, "seconds": elapsed,
            "bytes": (after - before) / len(mids), "used": (used_after - used_before) / len(mids),
            "families": families(client, len(mids))}


def families(client: redis.Redis, matches: int) -> list[tuple[str, float, int]]:
    """(key family, bytes per match, keys) of the largest key families, by MEMORY USAGE."""
    import re

    sizes: dict[str, list[int]] = {}
    for key in client.scan_iter(count=1000):
        name = key.decode()
        family = re.sub(r"m_[0-9a-f]+_\d+|m_[0-9a-f]+", "{m}", name)
        family = re.sub(r"t_[0-9a-f]+", "{t}", family)
        family = re.sub(r"b_[0-9a-f]+", "{b}", family)
        family = re.sub(r"rq:worker:[0-9a-f]+", "rq:worker:{w}", family)
        family = re.sub(r"-\{m\}-\d+", "-{m}", family)
        sizes.setdefault(family, []).append(client.memory_usage(key) or 0)
    rows = [(f, sum(s) / matches, len(s)) for f, s in sizes.items()]
    return sorted(rows, key=lambda r: -r[1])[:8]


def reads(app, mids: list[str], cold: Archive | None = None) -> tuple[list[float], dict]:
    """Per match: seconds for GET /matches/{id}, /export and its middle step; and the bodies."""
    client = app.test_client()
    headers = {"Authorization": f"Bearer {ADMIN}"}
    times, bodies = [], {}
    for mid in mids:
        spent = 0.0
        for path in (f"/api/v1/matches/{mid}", f"/api/v1/matches/{mid}/export", None):
            if path is None:
                turns = bodies[f"/api/v1/matches/{mid}"].count(b'"turn":')
                path = f"/api/v1/matches/{mid}/steps/{turns // 2}"
            if cold is not None:
                cold._cache.clear()
                cold._cached = 0
            started = time.perf_counter()
            response = client.get(path, headers=headers)
            spent += time.perf_counter() - started
            assert response.status_code == 200, (path, response.status_code, response.data[:300])
            bodies[path] = response.data
        times.append(spent)
    return times, bodies


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="duck-soup", choices=games.names())
    p.add_argument("--bots", type=int, default=4)
    p.add_argument("--matches", type=int, default=2000, help="at least this many matches a tournament")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--reads", type=int, default=200, help="matches read from Redis and from the archive")
    args = p.parse_args(argv)
    seats = games.get(args.game).min_seats
    per_deal = len(round_robin([f"b{i}" for i in range(args.bots)], seats, 1, True, 1).matches)
    deals = math.ceil(args.matches / per_deal)
    print(f"{args.game}: round-robin of {args.bots} random bots, {deals} deals per table, duplicate: "
          f"{per_deal * deals} matches a tournament; {args.workers} workers; {os.cpu_count()} CPUs, {load()}")
    os.environ.setdefault("CARDARENA_ADMIN_TOKEN", ADMIN)
    with tempfile.TemporaryDirectory(prefix="cardarena-bench-archive-", dir=os.environ.get("BENCH_DIR")) as tmp:
        with EmbeddedRedis() as server:
            off = tournament(server.url, args.game, args.bots, deals, args.workers, OFF)
            n = len(off["matches"])
            print(f"1. archiving off: {n} matches in {off['seconds']:.1f} s ({n / off['seconds']:.0f} matches/s), {load()}")
            print(f"   Redis: {off['bytes']:,.0f} bytes per finished match (keys; used_memory: {off['used']:,.0f})")
            for family, per, keys in off["families"]:
                print(f"     {family:40s} {per:8,.0f} B/match  ({keys} keys)")

            from server import create_app

            os.environ[ARCHIVE_ENV] = str(Path(tmp) / "first")
            app = create_app({"REDIS_URL": server.url, "ADMIN_TOKEN": ADMIN, "RATELIMIT_ENABLED": False})
            store = app.extensions["cardarena.store"]
            sample = off["matches"][:: max(1, n // args.reads)][: args.reads]
            redis_s, redis_bodies = reads(app, sample)
            before = held(off["client"])
            started = time.perf_counter()
            sizes = [store.archive_match(mid) for mid in off["matches"]]
            archiving_s = time.perf_counter() - started
            after = held(off["client"])
            cold_s, cold_bodies = reads(app, sample, cold=store.archive)
            warm_s, warm_bodies = reads(app, sample)
            same = redis_bodies == cold_bodies == warm_bodies
            print(f"2. the same {n} matches archived by hand: {1000 * archiving_s / n:.1f} ms a match, "
                  f"Redis {(before - after) / n:,.0f} bytes a match less, {load()}")
            r50, c50, w50 = (statistics.median(x) * 1000 for x in (redis_s, cold_s, warm_s))
            print(f"   a finished match read ({len(sample)} matches: GET /matches/{{id}}, its export, its middle step):")
            print(f"     from Redis:                      median {r50:.2f} ms, mean {statistics.mean(redis_s) * 1000:.2f} ms")
            print(f"     from the archive, cold cache:     median {c50:.2f} ms, mean {statistics.mean(cold_s) * 1000:.2f} ms"
                  f"  ({c50 / r50:.2f}x)")
            print(f"     from the archive, as served:      median {w50:.2f} ms, mean {statistics.mean(warm_s) * 1000:.2f} ms"
                  f"  ({w50 / r50:.2f}x)")
            print(f"     the bodies byte for byte the same: {same}")
            print(f"     target <= 2x (cold): {'met' if c50 <= 2 * r50 else 'NOT MET'}")
            assert all(sizes), "every match is archived once"

        with EmbeddedRedis() as server:
            on = tournament(server.url, args.game, args.bots, deals, args.workers, str(Path(tmp) / "second"))
            n = len(on["matches"])
            files = [on["store"].archive.path(m) for m in on["matches"]]
            assert all(f.is_file() for f in files), "every match is in the archive"
            disk = sum(f.stat().st_size for f in files) / n
            print(f"3. archiving on: {n} matches in {on['seconds']:.1f} s ({n / on['seconds']:.0f} matches/s; "
                  f"{off['seconds'] / on['seconds']:.2f}x the rate without), {load()}")
            print(f"   Redis: {on['bytes']:,.0f} bytes per finished match (was {off['bytes']:,.0f}; used_memory: "
                  f"{on['used']:,.0f}); target <= 1 KB: {'met' if on['bytes'] <= 1024 else 'NOT MET'}")
            for family, per, keys in on["families"]:
                print(f"     {family:40s} {per:8,.0f} B/match  ({keys} keys)")
            print(f"   archive: {disk:,.0f} bytes per match (gzip JSON; {sum(sizes) / len(sizes):,.0f} in step 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
