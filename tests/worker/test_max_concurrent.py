"""`max_concurrent` (docs/api.md §5 "Bots", "Scheduling"): the platform never puts a bot in more matches
at once, never deadlocks, and no worker waits for a slot — recorded from the bots' side.

Each match a bot plays is, seen from the bot, the time from its first decision
to its last; the most such spans open at once can never exceed the bot's
`max_concurrent` (its slot is held from before its first decision to after
its last).
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

import sdk
from sdk import Bot
from tests.live import ADMIN_TOKEN
from tests.worker.test_worker_e2e import tournament, wait_finished

GAME = "duck-soup"


class Spans(Bot):
    """Plays the first legal action after a short think; notes each match's first and last decision."""

    def __init__(self) -> None:
        self.spans: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    def decide(self, decision):
        time.sleep(0.01)
        with self.lock:
            span = self.spans.setdefault(decision["match_id"], [time.monotonic(), 0.0])
            span[1] = time.monotonic()
        return decision["legal_actions"][0]

    def most_at_once(self) -> int:
        events = sorted([(a, 1) for a, _ in self.spans.values()] + [(b, -1) for _, b in self.spans.values()],
                        key=lambda e: (e[0], e[1]))
        now = most = 0
        for _, step in events:
            now += step
            most = max(most, now)
        return most


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _python_bots(api, n: int) -> list[str]:
    return [api.ok(api.post("/bots", {"name": f"first{i}", "game": GAME, "kind": "python",
                                      "entrypoint": "tests.worker.bots:First"}, token=ADMIN_TOKEN), 201)["id"]
            for i in range(n)]


@pytest.mark.slow
def test_no_bot_is_ever_in_more_matches_than_its_max_concurrent(api, worker_pool):
    token = api.account("author")
    port = _free_port()
    hooked = api.bot(token, "hooked", GAME, kind="webhook", url=f"http://127.0.0.1:{port}/", max_concurrent=1)
    polled = api.bot(token, "polled", GAME, kind="polling", max_concurrent=1)
    assert hooked["max_concurrent"] == polled["max_concurrent"] == 1
    bots = {"hooked": Spans(), "polled": Spans()}
    server = sdk.serve(bots["hooked"], port=port, secret=hooked["secret"], block=False)
    poller = sdk.connect(bots["polled"], api.live.url, secret=polled["secret"], wait=1, block=False, concurrency=4)
    try:
        # two tournaments at once: each bot's one slot is wanted by both, and neither may deadlock
        entrants = [hooked["id"], polled["id"], *_python_bots(api, 2)]
        first = tournament(api, token, entrants, game=GAME, seats=2, deals=1, seed=3)
        second = tournament(api, token, [hooked["id"], polled["id"]], game=GAME, seats=2, deals=2, seed=4)
        done = [wait_finished(api, first, timeout=240), wait_finished(api, second, timeout=240)]
    finally:
        poller.stop(timeout=30)
        server.stop()
    assert [t["status"] for t in done] == ["finished", "finished"]
    assert len(bots["hooked"].spans) == 6 + 4 and len(bots["polled"].spans) == 6 + 4
    assert bots["hooked"].most_at_once() == 1 and bots["polled"].most_at_once() == 1
    assert all(row["faults"] == 0 for t in done for row in t["standings"])


def test_max_concurrent_is_validated_and_changed_by_its_owner(api):
    token = api.account("author")
    for bad in (0, 65, "4", True):
        r = api.post("/bots", {"name": "x", "game": GAME, "kind": "polling", "max_concurrent": bad}, token=token)
        assert r.status_code == 422, bad
    bot = api.bot(token, "p", GAME, kind="polling")
    assert bot["max_concurrent"] == 4  # the default
    client = sdk.Client(api.live.url, token=token)
    assert client.update_bot(bot["id"], max_concurrent=8).max_concurrent == 8
    assert api.ok(api.get(f"/bots/{bot['id']}"), 200)["max_concurrent"] == 8
    assert api.session.patch(f"{api.live.url}/api/v1/bots/{bot['id']}", json={"url": "http://127.0.0.1:9/"},
                             headers={"Authorization": f"Bearer {token}"}, timeout=10).status_code == 422
    other = api.account("other")
    assert api.session.patch(f"{api.live.url}/api/v1/bots/{bot['id']}", json={"max_concurrent": 2},
                             headers={"Authorization": f"Bearer {other}"}, timeout=10).status_code == 403
    assert api.session.patch(f"{api.live.url}/api/v1/bots/{bot['id']}", json={},
                             headers={"Authorization": f"Bearer {token}"}, timeout=10).status_code == 422


def test_a_match_gives_its_slots_back_and_wakes_its_waiters_in_one_step(redis_client):
    """`release_slots`: the match leaves its bots' playing sets, and the oldest match waiting for
    each of them leaves its queue, each once (one Lua step); the others wait on (`waiting_for`
    takes them all)."""
    from core.store import Store, secret_key
    from core.store.slots import WAITING_BOTS, playing_key, waiting_key

    store = Store(redis_client, secret_key(redis_client))
    a, b = {"id": "b_a", "kind": "polling", "max_concurrent": 1}, {"id": "b_b", "kind": "webhook", "max_concurrent": 1}
    assert store.take_slots("m1", [a, b]) is None
    redis_client.set("lease:match:m1", "runner")  # m1 is live: its slots stay taken
    assert store.take_slots("m2", [a, b]) == a
    assert store.take_slots("m3", [b]) == b
    assert store.take_slots("m4", [a]) == a
    assert store.release_slots("m1", ["b_a", "b_b", "b_a"]) == ["m2", "m3"]
    assert not redis_client.exists(playing_key("b_a"), playing_key("b_b"), waiting_key("b_b"))
    assert redis_client.smembers(WAITING_BOTS) == {b"b_a"}  # m4 still waits for a
    assert store.waiting_for(["b_a"]) == ["m4"] and not redis_client.exists(WAITING_BOTS, waiting_key("b_a"))
    assert store.release_slots("m1", ["b_a", "b_b"]) == [] and store.waiting_for([]) == []


def test_a_woken_match_that_finds_another_bot_full_passes_the_wake_up_on(redis_client):
    """`pass_wake`: a match woken by a's free slot finds b full and waits for b; the oldest match
    waiting for a, which has a slot free, is woken instead — never the match itself, and never
    for a bot with no slot free."""
    from core.store import Store, secret_key
    from core.store.slots import WAITING_BOTS, waiting_key

    store = Store(redis_client, secret_key(redis_client))
    a, b, c = ({"id": f"b_{x}", "kind": "polling", "max_concurrent": 1} for x in "abc")
    for live, bots in (("m1", [a]), ("m2", [b])):
        assert store.take_slots(live, bots) is None
        redis_client.set(f"lease:match:{live}", "runner")
    assert store.take_slots("m3", [a, c]) == a and store.take_slots("m4", [a, c]) == a  # both wait for a
    assert store.release_slots("m1", ["b_a"]) == ["m3"]  # a is free: m3 woken, m4 waits on
    assert store.take_slots("m5", [a, b]) == b  # a newcomer finds b full: it waits for b
    assert store.pass_wake("m5", [a, b], b) == ["m4"]  # a's slot goes to the match waiting for it
    assert store.take_slots("m4", [a, c]) is None
    assert store.take_slots("m6", [c, b]) == b
    assert store.pass_wake("m6", [c, b], b) == []  # c is taken by m4: nobody to wake
    assert redis_client.zrange(waiting_key("b_b"), 0, -1) == [b"m5", b"m6"]
    assert redis_client.smembers(WAITING_BOTS) == {b"b_b"}


def test_a_wake_up_arriving_while_the_waiting_matchs_own_job_ends_is_not_lost(store, monkeypatch):
    """A match finds its bot full and waits; the match holding the slot ends while the waiting
    match's job is still ending. The wake-up must survive that job's end: RQ deletes a finished
    job under its id, so the woken run is queued under an id of its own (`enqueue_woken`)."""
    from rq import Queue, SimpleWorker

    from core import conclusion
    from core.store import Store
    from worker.match_runner import MatchRunner

    poller = store.create_bot("acct_wake", "poller", GAME, "polling", max_concurrent=1)[0]["id"]
    house = store.create_bot("admin", "house", GAME, "python", entrypoint="example_bots.random:RandomBot")[0]["id"]
    holder = store.create_match(GAME, [poller, house], 1, {}, time_bank_ms=0)["id"]
    waiter = store.create_match(GAME, [poller, house], 2, {}, time_bank_ms=0)["id"]
    MatchRunner(store, holder).run()
    if store.waiting_on(holder) is None:  # the house bot moved first: on to the poller's turn
        MatchRunner(store, holder).run()
    assert store.waiting_on(holder) is not None and store.playing(poller) == [holder]

    real_pass_wake = Store.pass_wake

    def holder_ends_meanwhile(self, match_id, bots, full):
        woken = real_pass_wake(self, match_id, bots, full)
        if match_id == waiter:  # the waiting match's job is ending: the slot frees and wakes it now
            conclusion.end_match(self, holder, "aborted", reason="stopped by a test")
        return woken

    monkeypatch.setattr(Store, "pass_wake", holder_ends_meanwhile)
    store.enqueue("match", [waiter])
    SimpleWorker([Queue(store.queue, connection=store.r)], connection=store.r).work(burst=True, max_jobs=5)
    assert store.get_match(waiter)["status"] == "running" and store.playing(poller) == [waiter]
