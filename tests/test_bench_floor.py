"""bench/floor.py: the floor's work is the work a match needs: each match's log archived whole,
Redis keeping its summary, its counts added, one RQ job a batch.

No figure is asserted here: the figures live in docs/performance.md.
"""

from __future__ import annotations

import redis
from rq import Queue

from core.store.archive import Archive
from core.store.keys import load_fields
from example_bots.random import RandomBot
from sdk.local import play_local
from tests.scripts import load_script

bench = load_script("bench/floor.py", "bench_floor")


def test_the_floor_archives_each_match_keeps_its_summary_and_counts_it(redis_url, tmp_path):
    r = redis.Redis.from_url(redis_url)
    played = [play_local("soupe-gertrude", [RandomBot() for _ in range(4)], seed=s) for s in range(5)]
    before = int(r.hget("bot:b0", "matches") or 0)
    archive = Archive(tmp_path)
    cpu = bench.floor(r, int(r.info("server")["process_id"]), archive, "soupe-gertrude", played, 2, "test")
    assert cpu > 0
    for i, match in enumerate(played):
        doc = archive.read(f"m_test_{i}")
        assert doc["log"] == match.log and doc["match"]["result"] == match.result
        kept = load_fields(r.hgetall(f"match:m_test_{i}"))
        assert kept["archived"] is True and kept["status"] == "finished"
        assert not r.exists(f"match:m_test_{i}:log")
    assert int(r.hget("bot:b0", "matches")) == before + 5
    assert int(r.hget("tally:t_test:b3", "points")) == 5
    assert Queue("floor-test", connection=r).finished_job_registry.count == 3  # a job a batch of 2
