"""A comparison's deal stays secret until the comparison is decided (docs/api.md §6).

The attack: a comparison's first rotation was public (seed, decks, every hand in `/steps`,
`/export`) while its twin was still to play, and `match_over` carried `decks`: a bot could
play the second rotation knowing every card. Here the twin is held at its first decision
while everything public about the first rotation is read; then the comparison is let decide.
"""

from __future__ import annotations

import threading
import time

import requests

from sdk import Bot, serve
from tests.live import ADMIN_TOKEN
from tests.sse import EventStream
from tests.worker.test_worker_e2e import free_port

GAME = "duck-soup"
HOLD_S = 60  # the twin's decision is held at most this long (its clock allows 70 s)


class Shared:
    """What the two served bots report: every `match_over`, and a gate on the twin's turns."""

    def __init__(self) -> None:
        self.over: list[tuple[str, dict]] = []
        self.first_over = threading.Event()
        self.release = threading.Event()


class Holding(Bot):
    """Plays the first legal action; once a match it played is over, holds every decision
    until released — so the deal's other rotation stays unplayed while the test looks."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared

    def act(self, view: dict, legal_actions: list[dict]) -> dict:
        if self.shared.first_over.is_set():
            self.shared.release.wait(HOLD_S)
        return legal_actions[0]

    def on_match_over(self, match_id: str, result: dict) -> None:
        self.shared.over.append((match_id, result))
        self.shared.first_over.set()


def wait_for(predicate, timeout: float = 120.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_a_comparisons_first_rotation_reveals_nothing_until_the_comparison_is_decided(api, worker_pool):
    token = api.account("author")
    shared = Shared()
    servers, bots = [], []
    try:
        for name in ("candidate", "baseline"):
            port = free_port()
            bot = api.bot(token, name, GAME, kind="webhook", url=f"http://127.0.0.1:{port}/")
            servers.append(serve(Holding(shared), port=port, secret=bot["secret"], block=False))
            bots.append(bot["id"])
        # its own bots: the account may give them a long clock, so the held twin waits without a fault
        cid = api.ok(api.post("/comparisons", {"game": GAME, "candidate": bots[0], "baseline": bots[1],
                                               "max_deals": 1, "options": {"deal_only": True},
                                               "move_timeout_ms": 10000, "time_bank_ms": 60000},
                              token=token), 202)["id"]
        assert shared.first_over.wait(120), "the first rotation never ended"
        first, notice = shared.over[0]
        assert set(notice) == {"scores", "ranks"}  # no decks, no hands
        twins = api.store.get_match(first)["twins"]
        assert len(twins) == 2 and api.store.match_status(next(t for t in twins if t != first)) != "finished"

        shown = api.ok(api.get(f"/matches/{first}"), 200)
        assert shown["status"] == "finished" and shown["public"] is False
        assert shown["seed"] is None and shown["decks"] is None and shown["log"] is None and shown["result"] is None
        assert "deck" not in shown["options"]
        assert api.get(f"/matches/{first}/steps/0").json()["error"]["code"] == "not_public"
        assert api.get(f"/matches/{first}/export").json()["error"]["code"] == "not_public"
        with EventStream(f"{api.live.api}/matches/{first}/events") as stream:
            events = []
            while (event := stream.next(timeout=30)) is not None:
                events.append(event)
        over = [e.data for e in events if e.name == "over"]
        assert over and over[0]["result"] is None and over[0]["public"] is False
        assert all("action" not in e.data["entry"] for e in events if e.name == "step")
        listed = api.ok(api.get("/matches", params={"game": GAME}), 200)["matches"]
        assert [m["public"] for m in listed if m["id"] == first] == [False]
        page = requests.get(f"{api.live.url}/matches/{first}", timeout=30).text
        assert "seed <code>" not in page and "/export" not in page
        assert api.ok(api.get(f"/matches/{first}", token=ADMIN_TOKEN), 200)["seed"] is not None  # the admin sees

        shared.release.set()
        decided = wait_for(lambda: (c := api.ok(api.get(f"/comparisons/{cid}"), 200))["status"]
                           in ("H0", "H1", "inconclusive", "aborted") and c)
        assert decided["status"] != "aborted"
    finally:
        shared.release.set()
        for server in servers:
            server.stop()
    shown = api.ok(api.get(f"/matches/{first}"), 200)
    assert shown["public"] is True and shown["seed"] is not None and shown["decks"]
    assert api.get(f"/matches/{first}/export").status_code == 200
    assert "seed <code>" in requests.get(f"{api.live.url}/matches/{first}", timeout=30).text
    assert all(set(result) == {"scores", "ranks"} for _, result in shared.over)  # the twin's notice too


def test_match_over_carries_the_deal_only_for_a_lone_match_without_twins():
    from worker.match_runner import notice_result

    result = {"scores": [3, 1], "ranks": [1, 2], "decks": [["x"]], "hands": [["y"], ["z"]]}
    assert notice_result({"id": "m_1"}, result) == result
    for shared_deal in ({"tournament": "t_1"}, {"comparison": "c_1"}, {"twins": ["m_1", "m_2"]}):
        assert notice_result({"id": "m_1", **shared_deal}, result) == {"scores": [3, 1], "ranks": [1, 2]}
