"""bench/round_trips.py: its counting connection sees every round trip, and knows who sent it.

No count is asserted here: the figure lives in docs/performance.md.
"""

from __future__ import annotations

import redis

from tests.scripts import load_script

bench = load_script("bench/round_trips.py", "bench_round_trips")


def test_a_command_and_a_pipeline_are_one_round_trip_each_and_ours_are_named(redis_url):
    client = redis.Redis(connection_pool=redis.ConnectionPool.from_url(
        redis_url, connection_class=bench.CountingConnection))
    client.ping()
    bench.sent.clear()
    client.set("test:round-trips", 1)
    with client.pipeline() as pipe:
        pipe.get("test:round-trips").incr("test:round-trips").execute()
    assert sum(bench.sent.values()) == 2
    assert set(bench.sent) == {"tests/test_bench_round_trips.py:test_a_command_and_a_pipeline_are_one_round_trip_each_and_ours_are_named"}
