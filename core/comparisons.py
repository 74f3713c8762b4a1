"""Running a comparison (docs/api.md §5 "Comparisons"): deals played until the SPRT decides.

    run_comparison(store, cid)        schedule deals up to the window (the RQ job's body)
    comparison_match_concluded(store, match)   after each of its matches ends

Without `opponents` (2-seat games) it is head to head: each deal is played in
both rotations, one after the other (twins), and its statistic is the
candidate's match points over the two, minus 1, halved. With `opponents`,
each deal is played at each table of opponents (`gauntlet_tables`) twice, the
candidate and then the baseline in the same seat (the seat turning with the
deal), the two in a seeded order and never at once (the opponents hold the
same hands in both); the statistic is the candidate's match points minus the
baseline's, averaged over the tables. Who sits where, the statistic and the test are
`sdk.comparison`'s, shared with `cardarena compare`.

`WINDOW` deals are in play at once: each deal's end counts its statistic once
(core/store/comparisons.py), updates the log-likelihood ratio
(`sdk.stats.Sprt`) and either decides — H1, H0, or inconclusive at
`max_deals` — aborting what is still in play, or schedules the next deal. All
of it is repeatable, so the recovery sweep may call `settle_comparison` again.
A decided comparison's matches still in play are stopped along the one path a
match ends by (core/conclusion.py `stop_if_decided`).
"""

from __future__ import annotations

import logging

from sdk.comparison import deal_seatings, sprt
from sdk.comparison import deal_statistic as statistic
from sdk.standings import seat_records
from sdk.stats import Sprt

log = logging.getLogger("cardarena.worker")

#: deals in play at once
WINDOW = 4
OVER_MATCH = ("finished", "aborted")


def deal_plan(c: dict, deal: int) -> list[dict]:
    """The matches of one deal: {"id", "seats", "versions", "twins", "who", "seat"} ("who":
    candidate or baseline, playing `seat`), the same every time (a retried job finds the matches
    it made). Who sits where is `sdk.comparison.deal_seatings`, as `cardarena compare` seats
    them. The candidate and the baseline may be two versions of one bot: a seat is told
    apart by its index, never by its bot."""
    cand = (c["candidate"], c.get("candidate_version"))
    base = (c["baseline"], c.get("baseline_version"))
    opponents = list(c.get("opponents") or [])
    pinned = dict(zip(opponents, c.get("opponent_versions") or [None] * len(opponents), strict=True))
    seed, seatings, orders = deal_seatings(c["seed"], deal, opponents, c.get("seats") or 2, cand, base)
    stem = f"m_{c['id'].removeprefix('c_')}_d{deal}"
    ids = [f"{stem}_{s.index}" if not opponents else f"{stem}_{s.table}_{s.index}" for s in seatings]
    plans = []
    for mid, s in zip(ids, seatings, strict=True):
        entrants = [e if isinstance(e, tuple) else (e, pinned[e]) for e in s.entrants]
        plans.append({"id": mid, "seats": [b for b, _ in entrants], "versions": [v for _, v in entrants],
                      "twins": [ids[i] for i in orders[s.table]], "who": s.who, "seed": seed,
                      "table": s.table, "seat": s.seat})
    return plans


def run_comparison(store, cid: str) -> str:
    """Settle what ended, then schedule deals up to the window; the comparison's status."""
    c = store.get_comparison(cid)
    if c is None:
        return "missing"
    if c["status"] == "queued":
        store.set_comparison(cid, status="running")
    return settle_comparison(store, cid)


def settle_comparison(store, cid: str) -> str:
    """Count every deal in play whose matches are all over, decide, or top the window up."""
    c = store.get_comparison(cid)
    if c is None:
        return "missing"
    done = store.deals_done(cid)
    for deal in range(int(c.get("started_deals") or 0)):
        if deal not in done:
            _count_if_over(store, c, deal)
    c = store.get_comparison(cid)
    if c["status"] in ("queued", "running"):
        _decide_or_top_up(store, c)
    return store.get_comparison(cid)["status"]


def comparison_match_concluded(store, match: dict) -> None:
    """A match of a comparison ended: its deal counted once all of the deal's matches have."""
    c = store.get_comparison(match["comparison"])
    if c is None or c["status"] not in ("queued", "running"):
        return
    if _count_if_over(store, c, int(match["deal"])):
        _decide_or_top_up(store, store.get_comparison(c["id"]))


def _count_if_over(store, c: dict, deal: int) -> bool:
    """Count the deal's statistic if all its matches are over (once); whether it is over."""
    plans = deal_plan(c, deal)
    matches = [store.get_match(p["id"]) for p in plans]
    if any(m is None or m["status"] not in OVER_MATCH for m in matches):
        return False
    statistic = deal_statistic(c, plans, matches)
    sums = store.count_deal(c["id"], deal, statistic)
    if sums is not None and statistic is not None:
        store.note_llr(c["id"], sums[0], _sprt(c).llr(*sums))
    return True


def deal_statistic(c: dict, plans: list[dict], matches: list[dict]) -> float | None:
    """The deal's statistic (see the module's docstring); None if one of its matches was aborted."""
    if any(m["status"] != "finished" or not m.get("result") for m in matches):
        return None
    points = [seat_records(match["result"], match["seats"])[plan["seat"]]["points"]
              for plan, match in zip(plans, matches, strict=True)]
    return statistic(points, bool(c.get("opponents")))


def _sprt(c: dict) -> Sprt:
    return sprt(c["delta0"], c["delta1"], c["alpha"], c["beta"], field=bool(c.get("opponents")))


def _decide_or_top_up(store, c: dict) -> None:
    cid = c["id"]
    n, total, squares = store.comparison_sums(cid)
    done = len(store.deals_done(cid))
    decision = _sprt(c).decide(n, total, squares, c["max_deals"])
    if decision is None and done >= c["max_deals"]:
        decision = "inconclusive"  # void deals count toward max_deals: it never runs for ever
    if decision is not None:
        if store.finish_comparison(cid, decision):  # what is still in play stops: core/conclusion.py
            log.info("comparison %s: %s after %d deals", cid, decision, n)
        return
    want = min(c["max_deals"], done + WINDOW)
    new = store.claim_deals(cid, want)
    if new and c["status"] == "queued":  # the sweep got here before the comparison's own job
        store.set_comparison(cid, status="running")
    to_run = []
    for deal in new:
        for plan in deal_plan(c, deal):
            match = store.get_match(plan["id"]) or store.create_match(
                c["game"], plan["seats"], plan["seed"], c["options"], move_timeout_ms=c["move_timeout_ms"],
                time_bank_ms=c["time_bank_ms"], max_faults=c.get("max_faults", 3), owner=None,
                match_id=plan["id"], twins=plan["twins"], comparison=(cid, deal), versions=plan["versions"])
            if match["status"] not in OVER_MATCH and plan["twins"][0] == plan["id"]:
                to_run.append(plan["id"])  # of each pair, the first in its seeded order; the other follows
    store.enqueue("match", to_run)


def in_play(store, c: dict) -> list[str]:
    """The comparison's matches not over yet (a decided comparison's are stopped)."""
    ids = [plan["id"] for deal in range(int(c.get("started_deals") or 0)) for plan in deal_plan(c, deal)]
    return [mid for mid, match in zip(ids, store.get_matches(ids, ("status",)), strict=True)  # archived: from Redis
            if match is not None and match["status"] not in OVER_MATCH]
