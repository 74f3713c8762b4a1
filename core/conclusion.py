"""What follows a match's end: its tournament's standings and end, its comparison's next
deal or decision, the ladder, the next twin.

`match_concluded` runs after `Store.conclude_match` has ended the match (once);
it only ever recomputes things or enqueues a job with a fixed id, so the
runner, a retried job or the recovery sweep may repeat it.
"""

from __future__ import annotations

import logging

from core.comparisons import comparison_match_concluded
from core.ratings import update_ratings
from core.store import Store
from sdk.standings import standings_from_tallies

log = logging.getLogger("cardarena.worker")

OVER = ("finished", "aborted")


def due_twin(store: Store, match: dict) -> str | None:
    """Of the match's twins (the rotations of its deal, in playing order), the one to play now:
    the first not over (None when all are, or the match has no twins)."""
    for mid in match.get("twins") or ():
        twin = store.get_match(mid)
        if twin is not None and twin["status"] not in OVER:
            return mid
    return None


def match_concluded(store: Store, match: dict) -> None:
    """After a match's end: its tournament's standings (and end), the ladder. Repeatable."""
    if match.get("rated") and match["status"] == "finished":  # rated before its tournament may end
        update_ratings(store, match["game"])
    if match.get("comparison"):  # its deal's statistic, the test's decision, the next deal
        comparison_match_concluded(store, match)
    tid = match.get("tournament")
    if tid:
        refresh_standings(store, tid)
        finish_tournament_if_complete(store, tid)
    store.forget_wait(match["id"])  # no turn of it pending any more: its slots are free
    woken = store.release_slots(match["id"], match["seats"])  # matches waiting for these bots
    if woken:
        store.enqueue("match", woken)
    following = due_twin(store, match)
    if following is not None:  # the next rotation of this deal (repeated by a retry: one job id)
        store.enqueue("match", [following])
    store.job_done("match", match["id"])


def refresh_standings(store: Store, tid: str) -> None:
    store.save_standings(tid, standings_from_tallies(store.tournament_tallies(tid)))


def finish_tournament_if_complete(store: Store, tid: str) -> bool:
    t = store.get_tournament(tid)
    if t is None or t["status"] in ("finished", "aborted") or not store.tournament_complete(tid):
        return False
    refresh_standings(store, tid)
    store.set_tournament(tid, status="finished")
    log.info("tournament %s finished", tid)
    return True
