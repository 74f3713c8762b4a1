"""Comparisons: is the candidate better than the baseline? (docs/api.md §5 "Comparisons")

Keys:
    comparison:{id}           hash (JSON values): id, game, owner, candidate, baseline,
                              candidate_version, baseline_version, opponents, opponent_versions
                              (the versions that play: core/store/versions.py), seats, delta0, delta1, alpha, beta, max_deals, options,
                              move_timeout_ms, time_bank_ms, seed, status, created, finished,
                              started_deals (deals scheduled so far)
    comparison:{id}:deals     hash deal number -> its statistic (JSON): counted once
    comparison:{id}:sums      hash n, total, squares: the statistics' running sums
    comparison:{id}:llr       list of [deals, llr] after each deal counted (the page's chart)
    comparisons               sorted set of every comparison id by creation order
    comparisons:running       set of the comparisons still deciding (the recovery sweep's list)

A deal's statistic is counted once (`count_deal`: one Lua step adds it only if
that deal was not counted yet), so two workers concluding a deal's last two
matches at once, or a retried job, never count it twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import redis
from redis.commands.core import Script

from core.store.keys import dump_fields, load_fields, new_id, now_iso, text
from core.store.lua import args, source

OVER = ("H0", "H1", "inconclusive", "aborted")


def comparison_key(cid: str) -> str:
    return f"comparison:{cid}"


class Comparisons:
    r: redis.Redis
    script: Callable[[str], Script]

    def create_comparison(self, fields: dict, owner: str | None) -> dict:
        cid = new_id("c")
        record = {**fields, "id": cid, "owner": owner, "status": "queued", "created": now_iso(),
                  "finished": None, "started_deals": 0}
        seq = self.r.incr("comparisons:seq")
        pipe = self.r.pipeline()
        pipe.hset(comparison_key(cid), mapping=dump_fields(record))
        pipe.zadd("comparisons", {cid: seq})
        pipe.sadd("comparisons:running", cid)
        pipe.execute()
        return record

    def get_comparison(self, cid: str) -> dict | None:
        if not isinstance(cid, str) or len(cid) > 64:
            return None
        raw = self.r.hgetall(comparison_key(cid))
        return load_fields(raw) if raw else None

    def comparison_statuses(self, cids: list[str]) -> dict[str, str | None]:
        """comparison id -> status (None if missing), in one round trip (whether a
        comparison's matches are public yet: server/api/matches.py `are_public`)."""
        if not cids:
            return {}
        pipe = self.r.pipeline(transaction=False)
        for cid in cids:
            pipe.hget(comparison_key(cid), "status")
        return {cid: json.loads(raw) if raw else None for cid, raw in zip(cids, pipe.execute(), strict=True)}

    def set_comparison(self, cid: str, **fields) -> None:
        self.r.hset(comparison_key(cid), mapping=dump_fields(fields))

    def finish_comparison(self, cid: str, status: str) -> bool:
        """Decide the comparison once: True only for the call that set its final status."""
        key = comparison_key(cid)
        with self.r.pipeline() as pipe:
            pipe.watch(key)
            current = pipe.hget(key, "status")
            if current is None or json.loads(current) in OVER:
                pipe.unwatch()
                return False
            pipe.multi()
            pipe.hset(key, mapping=dump_fields({"status": status, "finished": now_iso()}))
            pipe.srem("comparisons:running", cid)
            try:
                pipe.execute()
            except Exception:  # noqa: BLE001 - another caller decided it meanwhile
                return False
        return True

    def claim_deals(self, cid: str, upto: int) -> list[int]:
        """The deal numbers to schedule now so that `upto` deals are scheduled in all (each
        claimed by exactly one caller)."""
        key = comparison_key(cid)
        out: list[int] = []
        while True:
            started = int(json.loads(self.r.hget(key, "started_deals") or "0"))
            if started >= upto:
                return out
            with self.r.pipeline() as pipe:
                pipe.watch(key)
                now = int(json.loads(pipe.hget(key, "started_deals") or "0"))
                if now != started:
                    pipe.unwatch()
                    continue
                pipe.multi()
                pipe.hset(key, "started_deals", json.dumps(upto))
                try:
                    pipe.execute()
                except Exception:  # noqa: BLE001 - raced: read again
                    continue
            return list(range(started, upto))

    def count_deal(self, cid: str, deal: int, statistic: float | None) -> tuple[int, float, float] | None:
        """Count a deal's statistic once (None: the deal is void, done but not counted);
        (n, total, squares) after it, or None if that deal was done already."""
        sums = self.script(source("count_deal"))(
            keys=[f"comparison:{cid}:deals", f"comparison:{cid}:sums"],
            args=[args(deal=str(deal), record=json.dumps(statistic),
                       statistic=None if statistic is None else float(statistic))])
        if sums is None:
            return None
        return int(sums[0] or 0), float(sums[1] or 0.0), float(sums[2] or 0.0)

    def deals_done(self, cid: str) -> set[int]:
        return {int(text(d)) for d in self.r.hkeys(f"comparison:{cid}:deals")}

    def comparison_sums(self, cid: str) -> tuple[int, float, float]:
        n, total, squares = self.r.hmget(f"comparison:{cid}:sums", "n", "total", "squares")
        return int(n or 0), float(total or 0.0), float(squares or 0.0)

    def note_llr(self, cid: str, deals: int, llr: float) -> None:
        self.r.rpush(f"comparison:{cid}:llr", json.dumps([deals, round(llr, 4)]))

    def llr_history(self, cid: str) -> list[list]:
        return sorted((json.loads(v) for v in self.r.lrange(f"comparison:{cid}:llr", 0, -1)), key=lambda p: p[0])

    def running_comparisons(self) -> list[str]:
        return sorted(text(c) for c in self.r.smembers("comparisons:running"))
