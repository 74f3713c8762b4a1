"""An admin stops a match or a tournament while the worker pool plays it (api.md §3:
a match is "aborted" only when an admin stops it or its job fails 3 times)."""

from __future__ import annotations

import time

from tests.live import ADMIN_TOKEN
from tests.worker.test_worker_e2e import python_bot, tournament, wait_finished

GAME = "duck-soup"  # long enough matches to be stopped in the middle


def wait_for(condition, timeout: float = 60.0):
    end = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < end, "condition not reached"
        time.sleep(0.02)
    return value


def test_an_admin_stops_a_running_match_and_its_worker_stops_playing(api, worker_pool):
    token = api.account("alice")
    bots = [python_bot(api, f"slow{i}", "tests.worker.e2e_bots:Slow", game=GAME) for i in range(2)]
    mid = api.ok(api.post("/matches", {"game": GAME, "bots": bots}, token=token), 202)["id"]
    wait_for(lambda: api.store.log_length(mid) >= 5)  # its moves show live (written every 0.2 s)
    assert api.post(f"/matches/{mid}/abort").status_code == 401
    assert api.post(f"/matches/{mid}/abort", token=token).status_code == 403  # an account is not the admin
    assert api.post("/matches/m_none/abort", token=ADMIN_TOKEN).status_code == 404
    stopped = api.ok(api.post(f"/matches/{mid}/abort", token=ADMIN_TOKEN), 200)
    assert stopped["status"] == "aborted" and stopped["reason"] == "stopped by the admin"
    assert stopped["result"] is None
    wait_for(lambda: not api.store.lease_held("match", mid))  # its runner let go
    length = api.store.log_length(mid)
    time.sleep(0.3)
    assert api.store.log_length(mid) == length  # and plays no more
    assert api.post(f"/matches/{mid}/abort", token=ADMIN_TOKEN).status_code == 409
    for bot in bots:  # an aborted match counts for nobody
        record = api.ok(api.get(f"/bots/{bot}"), 200)
        assert record["matches"] == 0 and record["rating"]["mu"] == 25.0


def test_an_admin_stops_a_running_tournament(api, worker_pool):
    token = api.account("organiser")
    bots = [python_bot(api, f"slow{i}", "tests.worker.e2e_bots:Slow", game=GAME) for i in range(3)]
    tid = tournament(api, token, bots, game=GAME, deals=10)  # 60 matches
    wait_for(lambda: api.ok(api.get(f"/tournaments/{tid}"), 200)["progress"]["done"] >= 2)
    assert api.post(f"/tournaments/{tid}/abort", token=token).status_code == 403
    stopped = api.ok(api.post(f"/tournaments/{tid}/abort", token=ADMIN_TOKEN), 200)
    assert stopped["status"] == "aborted"
    done = wait_finished(api, tid)
    assert done["status"] == "aborted"
    wait_for(lambda: api.ok(api.get(f"/tournaments/{tid}"), 200)["progress"]["done"] == 60)
    matches = api.ok(api.get(f"/tournaments/{tid}/matches"), 200)["matches"]
    finished = [m for m in matches if m["status"] == "finished"]
    assert finished and len(finished) < 60
    assert all(m["status"] in ("finished", "aborted") for m in matches)
    wait_for(lambda: not api.store.r.keys("lease:match:*"))  # every runner let go
    standings = api.ok(api.get(f"/tournaments/{tid}"), 200)["standings"]
    assert sum(row["matches"] for row in standings) == 2 * len(finished)  # only the finished count
    assert api.post(f"/tournaments/{tid}/abort", token=ADMIN_TOKEN).status_code == 409
    # the owner's slot is free again: three more unfinished tournaments are allowed
    for _ in range(3):
        tournament(api, token, bots, game=GAME, deals=1)
