"""Twins in sequence (docs/api.md §5 "Scheduling"): the rotations of one deal at one table never
overlap in time, in a seeded random order, and no twin's result shows before its whole deal is over.

Recorded from the bots' side: three webhook bots served in this process note
when each decision of each match reached them. If two twins were in play at
once, a bot would hold, in one match, the hand its opponent holds in the other.
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

import sdk
from sdk import Bot
from tests.worker.test_worker_e2e import matches_of, tournament

GAME = "duck-soup"


class Recorder(Bot):
    """Plays the first legal action a little slowly; notes when each match's decisions came."""

    def __init__(self) -> None:
        self.seen: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    def decide(self, decision):
        with self.lock:
            self.seen.setdefault(decision["match_id"], []).append(time.monotonic())
        time.sleep(0.005)
        return decision["legal_actions"][0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_twins_never_overlap_and_show_no_result_before_their_deal_is_over(api, worker_pool):
    token = api.account("author")
    bots, servers, ids = [], [], []
    for name in ("north", "east", "south"):
        port = _free_port()
        registered = api.bot(token, name, GAME, kind="webhook", url=f"http://127.0.0.1:{port}/")
        bot = Recorder()
        servers.append(sdk.serve(bot, port=port, secret=registered["secret"], block=False))
        bots.append(bot)
        ids.append(registered["id"])
    shown_counts = []  # every bot's match count in the standings and its record, while it runs
    try:
        tid = tournament(api, token, ids, game=GAME, seats=2, deals=2, duplicate=True, seed=7)
        end = time.monotonic() + 180
        while True:
            t = api.ok(api.get(f"/tournaments/{tid}"), 200)
            shown_counts += [row["matches"] for row in t["standings"]]
            shown_counts += [api.ok(api.get(f"/bots/{b}"), 200)["matches"] for b in ids]
            if t["status"] in ("finished", "aborted"):
                break
            assert time.monotonic() < end, f"tournament still {t['status']} at {t['progress']}"
            time.sleep(0.05)
    finally:
        for server in servers:
            server.stop()
    assert t["status"] == "finished"
    # a deal's two rotations count together: with 2 seats each adds 2 matches to each of its bots
    assert shown_counts and all(n % 2 == 0 for n in shown_counts), sorted(set(shown_counts))
    matches = matches_of(api, tid)
    assert len(matches) == 12  # 3 tables × 2 deals × 2 rotations
    spans = {}
    for match in matches:
        times = [at for bot in bots for at in bot.seen.get(match["id"], [])]
        spans[match["id"]] = (min(times), max(times))
    deals: dict[tuple, list[dict]] = {}
    for match in matches:
        deals.setdefault((match["seed"], frozenset(s["bot"] for s in match["seats"])), []).append(match)
    assert len(deals) == 6 and all(len(twins) == 2 for twins in deals.values())
    first_seated = set()
    for twins in deals.values():
        a, b = sorted(twins, key=lambda m: spans[m["id"]][0])
        assert spans[a["id"]][1] < spans[b["id"]][0], "two rotations of one deal were in play at once"
        first_seated.add(a["seats"][0]["bot"] == min(s["bot"] for s in a["seats"]))
    assert first_seated == {True, False}  # the order is random: not always the same rotation first
