"""What a finished match costs Redis: fixed bytes apart from bytes per match, with the archive (and without).

    python bench/memory.py [--sizes 600,2000] [--rounds 3] [--game duck-soup] [--bots 4] [--workers 2]
                           [--without-archive] [--reads 200]

Each round runs, on a fresh Redis each, one tournament of each of `--sizes` matches (a
duplicate round-robin of in-process random bots, at least that many matches), run by the
real worker pool with archiving on, as a deployment runs (a match is archived as its deal
ends, by the worker that ended it), and measures Redis's keys by the sum of their
`MEMORY USAGE` (every element counted; the allocator's total, `MEMORY STATS` less clients'
buffers and caches, moves by some 100 KB with RQ's and the allocator's comings and goings,
and is printed beside it):

* fixed: an empty platform (the schema's stamp, its secret key, the workers registered and
  waiting), then the bots; and the tournament's own record, from the fit below;
* per finished match: the tournament's bytes (after it, every match archived and every job
  done, less before it) at each size, fitted as fixed + per match × matches over every
  round and size (least squares); then at each size (bytes − the fitted fixed) / matches.
  Target: ≤ 1 KB a match at every size. Sizes past 256 matches fit a line: below, Redis
  keeps the sorted sets that list a bot's matches (128 entries or fewer) in a compact
  encoding, and a match costs less. The key families (`MEMORY USAGE` of every key, by
  pattern) are printed at each size.

Figures are min / median / max over the rounds, with the machine's load after each round.

`--without-archive` then also measures what archiving saves, at the largest size:

1. archiving off (`CARDARENA_ARCHIVE=off`): finished matches stay whole in Redis, as before
   issue 32. Redis bytes per finished match.
2. the same Redis's matches read through the API (`GET /matches/{id}`, its export, its
   middle step), `--reads` of them, each request timed; every match is archived
   (`Store.archive_match`, timed) and the same requests are made again, now answered from
   the archive: cold (the process's cache of archive files emptied before each request) and
   as served (the cache kept). Target: ≤ 2× the time from Redis. The bodies must be the same
   bytes.
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
from rq import Worker  # noqa: E402

import games  # noqa: E402
from core.redis_server import EmbeddedRedis  # noqa: E402
from core.store import Store, schema, secret_key  # noqa: E402
from core.store.archive import ARCHIVE_ENV, OFF, Archive  # noqa: E402
from core.store.jobs import QUEUE, active_key, enqueue_job  # noqa: E402
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


def keys_bytes(client: redis.Redis) -> int:
    """The sum of `MEMORY USAGE` (every element counted) over every key: what the keys hold,
    without the allocator's and RQ's comings and goings that `held` sees."""
    return sum(client.memory_usage(key, samples=0) or 0 for key in client.scan_iter(count=1000))


def settled(client: redis.Redis, timeout: float = 600.0) -> None:
    """Wait until no job is active (every match's follow-ups, its archiving included, are done)."""
    end = time.monotonic() + timeout
    while client.scard(active_key(QUEUE)):
        if time.monotonic() > end:
            raise RuntimeError(f"jobs still active after {timeout:.0f} s")
        time.sleep(0.05)


def all_archived(store: Store, mids: list[str], timeout: float = 600.0) -> None:
    """Wait until Redis keeps only the archived record of every match in `mids`."""
    end = time.monotonic() + timeout
    left = list(mids)
    while left:
        left = [m for m in left if store.redis_or_archived(m, lambda pipe: pipe.ping())[1] is None]
        if left and time.monotonic() > end:
            raise RuntimeError(f"{len(left)} matches not archived after {timeout:.0f} s")
        if left:
            time.sleep(0.1)


def workers_up(client: redis.Redis, workers: int, timeout: float = 300.0) -> None:
    """Wait until `workers` RQ workers have registered: up and waiting, as in a deployment."""
    end = time.monotonic() + timeout
    while Worker.count(connection=client) < workers:
        if time.monotonic() > end:
            raise RuntimeError(f"{workers} workers did not register within {timeout:.0f} s")
        time.sleep(0.05)


def tournament(url: str, game: str, bots: int, deals: int, workers: int, archive: str) -> dict:
    """Run one tournament with `CARDARENA_ARCHIVE=archive` on a fresh Redis; its figures."""
    os.environ[ARCHIVE_ENV] = archive  # the pool's processes inherit it
    client = redis.Redis.from_url(url)
    schema.stamp_if_empty(client)  # a new platform's Redis, as the API stamps it
    store = Store(client, secret_key(client))
    seats = games.get(game).min_seats
    with WorkerPool(url, n=workers, log_path="/dev/null", sweep_every_s=2.0):
        workers_up(client, workers)
        settled(client)
        platform = keys_bytes(client)
        ids = [store.create_bot("bench", f"random{i}", game, "python", entrypoint=RANDOM)[0]["id"]
               for i in range(bots)]
        settled(client)
        with_bots = keys_bytes(client)
        before, used_before = held(client), client.info("memory")["used_memory"]
        t = store.create_tournament(game, ids, seats=seats, deals=deals, duplicate=True, seed=1, options={})
        started = time.perf_counter()
        enqueue_job(client, "tournament", t["id"])
        while store.get_tournament(t["id"])["status"] != "finished":
            time.sleep(0.02)
        elapsed = time.perf_counter() - started
        mids = store.tournament_matches(t["id"])
        if archive != OFF:
            all_archived(store, mids)
        settled(client)
        after, used_after = held(client), client.info("memory")["used_memory"]
        keys_after = keys_bytes(client)
    return {"store": store, "client": client, "tid": t["id"], "matches": mids, "seconds": elapsed,
            "platform": platform, "bots": with_bots - platform, "grew": keys_after - with_bots,
            "allocated": after - before,
            "bytes": (after - before) / len(mids), "used": (used_after - used_before) / len(mids),
            "families": families(client, len(mids))}


def families(client: redis.Redis, matches: int) -> list[tuple[str, float, int]]:
    """(key family, bytes per match, keys) of every key family, largest first, by MEMORY USAGE (every
    element counted: sampling misjudged a sorted set by some 10%)."""
    import re

    sizes: dict[str, list[int]] = {}
    for key in client.scan_iter(count=1000):
        name = key.decode()
        family = re.sub(r"m_[0-9a-f]+_\d+|m_[0-9a-f]+", "{m}", name)
        family = re.sub(r"t_[0-9a-f]+", "{t}", family)
        family = re.sub(r"b_[0-9a-f]+", "{b}", family)
        family = re.sub(r"rq:worker:[0-9a-f]+", "rq:worker:{w}", family)
        family = re.sub(r"-\{m\}-\d+", "-{m}", family)
        sizes.setdefault(family, []).append(client.memory_usage(key, samples=0) or 0)
    rows = [(f, sum(s) / matches, len(s)) for f, s in sizes.items()]
    return sorted(rows, key=lambda r: -r[1])


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


def deals_for(game: str, bots: int, matches: int) -> tuple[int, int]:
    """(deals a table, matches a tournament) for at least `matches` matches."""
    seats = games.get(game).min_seats
    per_deal = len(round_robin([f"b{i}" for i in range(bots)], seats, 1, True, 1).matches)
    deals = math.ceil(matches / per_deal)
    return deals, per_deal * deals


def fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares bytes = fixed + per_match × matches over (matches, bytes): (fixed, per_match)."""
    xs, ys = [x for x, _ in points], [y for _, y in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    per = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)
    return my - per * mx, per


def spread(values: list[float]) -> str:
    return f"{min(values):,.0f} / {statistics.median(values):,.0f} / {max(values):,.0f}"


def fixed_and_per_match(args: argparse.Namespace, tmp: str) -> None:
    """The rounds of tournaments at every size, archiving on; the fit and its figures."""
    runs: dict[int, list[dict]] = {}
    loads = [os.getloadavg()[0]]
    for round_ in range(args.rounds):
        for size in args.sizes:
            deals, _ = deals_for(args.game, args.bots, size)
            with EmbeddedRedis() as server:
                found = tournament(server.url, args.game, args.bots, deals, args.workers,
                                   str(Path(tmp) / f"r{round_}-{size}"))
            found.pop("store"), found.pop("client")
            runs.setdefault(size, []).append(found)
        loads.append(os.getloadavg()[0])
        print(f"round {round_ + 1}: " + ", ".join(
            f"{len(r[-1]['matches'])} matches {r[-1]['grew']:,} B of keys ({r[-1]['allocated']:,} allocated) in "
            f"{r[-1]['seconds']:.1f} s" for r in runs.values())
            + f"; load {loads[-1]:.2f}", flush=True)
    every = [found for rows in runs.values() for found in rows]
    fixed, per = fit([(len(f["matches"]), f["grew"]) for f in every])
    fixed_allocated, per_allocated = fit([(len(f["matches"]), f["allocated"]) for f in every])
    print(f"min / median / max over {args.rounds} rounds (archiving on; load {min(loads):.2f}-{max(loads):.2f}):")
    record = [per_match * len(f["matches"]) for f in every for family, per_match, _ in f["families"]
              if family == "tournament:{t}"]
    print(f"  fixed: an empty platform {spread([f['platform'] for f in every])} B; "
          f"{args.bots} bots {spread([f['bots'] for f in every])} B; a tournament's own record "
          f"(its hash) {spread(record)} B; the fit's fixed part {fixed:,.0f} B (mostly the hash tables of "
          f"the per-match sets, which grow by doubling)")
    print(f"  per finished match, fitted over every round and size: {per:,.0f} B of keys' MEMORY USAGE "
          f"({per_allocated:,.0f} B of the allocator's total, fixed {fixed_allocated:,.0f} B)")
    worst = 0.0
    for rows in runs.values():
        n = len(rows[0]["matches"])
        net = [(f["grew"] - fixed) / n for f in rows]
        worst = max(worst, *net)
        print(f"  {n:6,} matches: {spread([f['grew'] / n for f in rows])} B a match in all, "
              f"{spread(net)} B less the fit's fixed part (allocator: {spread([f['allocated'] / n for f in rows])} B in all); "
              f"{spread([n / f['seconds'] for f in rows])} matches/s")
    print(f"  target <= 1 KB a finished match at every size: {'met' if max(worst, per) <= 1024 else 'NOT MET'}")
    for rows in runs.values():
        print(f"  key families at {len(rows[-1]['matches']):,} matches (last round), by MEMORY USAGE:")
        for family, per_match, keys in rows[-1]["families"][:8]:
            print(f"     {family:40s} {per_match:8,.0f} B/match  ({keys} keys)")


def without_archive(args: argparse.Namespace, tmp: str) -> None:
    """Archiving off at the largest size; then the same matches read from Redis and from the archive."""
    deals, _ = deals_for(args.game, args.bots, max(args.sizes))
    with EmbeddedRedis() as server:
        off = tournament(server.url, args.game, args.bots, deals, args.workers, OFF)
        n = len(off["matches"])
        print(f"1. archiving off: {n} matches in {off['seconds']:.1f} s ({n / off['seconds']:.0f} matches/s), {load()}")
        print(f"   Redis: {off['bytes']:,.0f} bytes per finished match (keys; used_memory: {off['used']:,.0f})")
        for family, per, keys in off["families"][:8]:
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
        print(f"   archive: {sum(sizes) / len(sizes):,.0f} bytes per match (gzip JSON)")
        assert all(sizes), "every match is archived once"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="duck-soup", choices=games.names())
    p.add_argument("--bots", type=int, default=4)
    p.add_argument("--sizes", type=lambda text: sorted({int(x) for x in text.split(",")}), default=[600, 2000],
                   help="matches a tournament, at least (two sizes or more: the fit needs them)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--without-archive", action="store_true", help="also measure archiving off, and reads")
    p.add_argument("--reads", type=int, default=200, help="matches read from Redis and from the archive")
    args = p.parse_args(argv)
    if len(args.sizes) < 2:
        p.error("--sizes needs two sizes or more")
    sizes = ", ".join(str(deals_for(args.game, args.bots, size)[1]) for size in args.sizes)
    print(f"{args.game}: round-robins of {args.bots} random bots, duplicate, {sizes} matches; "
          f"{args.workers} workers; {os.cpu_count()} CPUs, {load()}", flush=True)
    os.environ.setdefault("CARDARENA_ADMIN_TOKEN", ADMIN)
    with tempfile.TemporaryDirectory(prefix="cardarena-bench-archive-", dir=os.environ.get("BENCH_DIR")) as tmp:
        fixed_and_per_match(args, tmp)
        if args.without_archive:
            without_archive(args, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
