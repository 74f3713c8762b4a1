"""Comparisons (docs/api.md §5): deals played until a sequential probability ratio test decides.

The statistics' own tests are tests/sdk/test_stats.py; here: which matches a deal is, what a
deal's statistic is, the API's checks, and comparisons decided on the real worker pool.
"""

from __future__ import annotations

import time

import pytest
import requests

from core.comparisons import deal_plan, deal_statistic
from sdk import Client
from tests.live import ADMIN_TOKEN

GAME = "duck-soup"


def comparison(**fields) -> dict:
    return {"id": "c_0123456789ab", "candidate": "b_cand", "baseline": "b_base", "opponents": [], "seats": 2,
            "seed": 7, **fields}


def test_head_to_head_plays_each_deal_in_both_rotations_one_after_the_other():
    plans = deal_plan(comparison(), 3)
    assert [p["seats"] for p in plans] == [["b_cand", "b_base"], ["b_base", "b_cand"]]
    assert len({p["seed"] for p in plans}) == 1 and plans[0]["seed"] != deal_plan(comparison(), 4)[0]["seed"]
    assert plans[0]["twins"] == plans[1]["twins"] and set(plans[0]["twins"]) == {p["id"] for p in plans}
    orders = {tuple(deal_plan(comparison(), d)[0]["twins"]) == tuple(p["id"] for p in deal_plan(comparison(), d))
              for d in range(40)}
    assert orders == {True, False}  # which rotation comes first is drawn, deal by deal
    assert deal_plan(comparison(), 3) == plans  # the same every time: a retried job finds its matches


def test_in_a_field_the_candidate_and_the_baseline_take_the_same_seat_at_the_same_table():
    c = comparison(opponents=["b_x", "b_y", "b_z"], seats=3)
    plans = deal_plan(c, 5)
    assert len(plans) == 2 * 3  # each table of opponents, once with each
    for table in range(3):
        cand, base = [p for p in plans if p["table"] == table]
        assert cand["seats"].index("b_cand") == base["seats"].index("b_base") == cand["seat"]
        assert [b for b in cand["seats"] if b != "b_cand"] == [b for b in base["seats"] if b != "b_base"]
        assert cand["seed"] == base["seed"] and cand["twins"] == base["twins"]


def _finished(seats: list[str], ranks: list[int]) -> dict:
    return {"status": "finished", "seats": seats, "result": {"scores": [0] * len(seats), "ranks": ranks}}


def test_a_deals_statistic():
    c = comparison()
    plans = deal_plan(c, 0)
    won_both = [_finished(plans[0]["seats"], [1, 2]), _finished(plans[1]["seats"], [2, 1])]
    assert deal_statistic(c, plans, won_both) == 0.5
    split = [_finished(plans[0]["seats"], [1, 2]), _finished(plans[1]["seats"], [1, 2])]
    assert deal_statistic(c, plans, split) == 0.0
    drawn = [_finished(plans[0]["seats"], [1, 1]), _finished(plans[1]["seats"], [1, 1])]
    assert deal_statistic(c, plans, drawn) == 0.0
    assert deal_statistic(c, plans, [won_both[0], {"status": "aborted", "seats": [], "result": None}]) is None
    field = comparison(opponents=["b_x"])
    plans = deal_plan(field, 0)  # candidate wins at its table, the baseline loses at the same seat
    cand, base = plans
    matches = [_finished(cand["seats"], [1, 2] if cand["seat"] == 0 else [2, 1]),
               _finished(base["seats"], [2, 1] if base["seat"] == 0 else [1, 2])]
    assert deal_statistic(field, plans, matches) == 1.0


@pytest.fixture()
def bots(api):
    def register(name: str, entrypoint: str, game: str = GAME) -> str:
        return api.ok(api.post("/bots", {"name": name, "game": game, "kind": "python", "entrypoint": entrypoint},
                               token=ADMIN_TOKEN), 201)["id"]

    return register


def test_the_api_refuses_a_comparison_it_cannot_run(api, bots):
    token = api.account("author")
    a, b = bots("a", "example_bots.random:RandomBot"), bots("b", "example_bots.random:RandomBot")
    three = bots("t", "example_bots.random:RandomBot", game="soupe-gertrude")
    cases = [
        ({"game": GAME, "candidate": a, "baseline": a}, "invalid"),
        ({"game": GAME, "candidate": a, "baseline": b, "delta0": 0.1, "delta1": 0.05}, "invalid"),
        ({"game": GAME, "candidate": a, "baseline": "b_nosuchbot"}, "unknown_bot"),
        ({"game": GAME, "candidate": a, "baseline": b, "opponents": [a]}, "invalid"),
        ({"game": "soupe-gertrude", "candidate": three, "baseline": three}, "invalid"),
    ]
    for body, code in cases:
        r = api.post("/comparisons", body, token=token)
        assert r.status_code == 422 and r.json()["error"]["code"] == code, (body, r.text)
    assert api.get("/comparisons/c_nosuchthing").status_code == 404
    queued = api.ok(api.post("/comparisons", {"game": GAME, "candidate": a, "baseline": b}, token=token), 202)
    shown = api.ok(api.get(f"/comparisons/{queued['id']}"), 200)
    assert (shown["status"], shown["deals"], shown["llr"], shown["history"]) == ("queued", 0, 0.0, [])
    page = requests.get(f"{api.live.url}/comparisons/{queued['id']}", timeout=10).text
    assert 'http-equiv="refresh"' in page  # a page people watch: it reloads itself until decided
    for _ in range(2):  # no worker here: they stay undecided
        api.ok(api.post("/comparisons", {"game": GAME, "candidate": a, "baseline": b}, token=token), 202)
    r = api.post("/comparisons", {"game": GAME, "candidate": a, "baseline": b}, token=token)
    assert r.status_code == 429 and r.json()["error"]["code"] == "too_many_comparisons"
    assert r.headers["Retry-After"] == "60"


@pytest.mark.slow
def test_the_heuristic_is_better_than_random_and_a_bot_is_not_better_than_its_copy(api, bots, worker_pool):
    client = Client(api.live.url, token=api.account("author"))
    heuristic = bots("heuristic", "example_bots.duck_soup:DuckSoupHeuristic")
    copy = bots("copy", "example_bots.duck_soup:DuckSoupHeuristic")
    random_bot = bots("random", "example_bots.random:RandomBot")
    better = client.compare(heuristic, random_bot, GAME, options={"deal_only": True}, seed=3, max_deals=200,
                            progress=False, timeout=240)
    assert better.status == "H1", better.verdict
    assert better.llr >= better.bounds[1] and better.mean > 0.05 and better.deals <= 200
    same = client.compare(heuristic, copy, GAME, options={"deal_only": True}, seed=3, max_deals=200,
                          progress=False, timeout=240)
    assert same.status == "H0", same.verdict  # a deterministic copy: every deal's statistic is 0
    history = api.ok(api.get(f"/comparisons/{better.id}"), 200)["history"]
    assert [d for d, _ in history] == list(range(1, better.deals + 1))
    page = requests.get(f"{api.live.url}/comparisons/{better.id}", timeout=10)
    assert page.status_code == 200 and 'id="llr-path"' in page.text and ">H1<" in page.text
    assert 'http-equiv="refresh"' not in page.text
    assert requests.get(f"{api.live.url}/comparisons/c_nosuchthing", timeout=10).status_code == 404
    # decided: nothing of it is still in play
    assert all(m["status"] in ("finished", "aborted")
               for m in api.ok(api.get("/matches", params={"limit": 100}), 200)["matches"])


def test_in_a_field_the_candidate_is_compared_at_the_baselines_seat(api, bots, worker_pool, capsys):
    client = Client(api.live.url, token=api.account("author"))
    heuristic, random_bot = bots("heuristic", "example_bots.duck_soup:DuckSoupHeuristic"), \
        bots("random", "example_bots.random:RandomBot")
    field = [bots(f"field{i}", "example_bots.random:RandomBot") for i in range(2)]
    done = client.compare(heuristic, random_bot, GAME, opponents=field, options={"deal_only": True}, seed=5,
                          max_deals=200, progress=True, timeout=240)
    assert done.status == "H1", done.verdict
    printed = capsys.readouterr().out.strip().splitlines()[-1]  # by name, as registered
    assert printed.startswith(f"H1: heuristic ({heuristic}) is better than random ({random_bot}) after "
                              f"{done.deals} deals"), printed
    assert done.verdict.startswith(f"H1: {heuristic} is better than {random_bot} after {done.deals} deals")


def _version_seats(api, cid: str) -> set[tuple]:
    """(bot, version) per seat of each of the comparison's first deal's matches."""
    mids = [f"m_{cid.removeprefix('c_')}_d0_{j}" for j in range(2)]
    return {tuple((s["bot"], s["version"]) for s in api.ok(api.get(f"/matches/{m}"), 200)["seats"]) for m in mids}


def test_the_latest_version_against_the_one_before_is_one_call(api, bots, worker_pool, capsys):
    client = Client(api.live.url, token=ADMIN_TOKEN)
    evolving = bots("evolving", "example_bots.random:RandomBot")
    assert client.new_version(evolving, entrypoint="example_bots.duck_soup:DuckSoupHeuristic") == 2
    done = client.compare(evolving, evolving, options={"deal_only": True}, seed=3, max_deals=200, timeout=240)
    assert done.status == "H1", done.verdict  # version 2 (the heuristic) beats version 1 (random)
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    assert printed.startswith(f"H1: evolving ({evolving}) v2 is better than evolving ({evolving}) v1"), printed
    assert done.verdict.startswith(f"H1: {evolving} v2 is better than {evolving} v1"), done.verdict  # unnamed
    assert _version_seats(api, done.id) == {((evolving, 2), (evolving, 1)), ((evolving, 1), (evolving, 2))}


@pytest.mark.slow
def test_each_webhook_version_is_called_at_its_own_url(api, worker_pool):
    from example_bots.duck_soup import DuckSoupHeuristic
    from example_bots.random import RandomBot
    from sdk import serve

    token = api.account("author")
    client = Client(api.live.url, token=token)
    hook = client.register_bot("hook", GAME, url="http://127.0.0.1:9/unused-until-a-server-starts")
    old = serve(RandomBot(), port=0, secret=hook.secret, block=False)
    new = serve(DuckSoupHeuristic(), port=0, secret=hook.secret, block=False)
    try:
        client.update_bot(hook, url=old.url)
        assert client.new_version(hook, url=new.url) == 2
        done = client.compare(hook, hook, options={"deal_only": True}, seed=3, max_deals=200, progress=False,
                              timeout=240)
        # the decision stops what is still in play: wait for that before the bots' servers go,
        # else a call still under way meets a closed port (a busy machine takes its time)
        end = time.monotonic() + 60
        while any(m["status"] in ("queued", "running")
                  for m in api.ok(api.get("/matches", params={"limit": 100}), 200)["matches"]):
            assert time.monotonic() < end, "the decided comparison's matches did not stop"
            time.sleep(0.05)
    finally:
        old.stop()
        new.stop()
    # the heuristic at the new URL beats random at the old one (both at one URL would be a draw: H0)
    assert done.status == "H1", done.verdict
    assert _version_seats(api, done.id) == {((hook.id, 2), (hook.id, 1)), ((hook.id, 1), (hook.id, 2))}
    faults = [e for m in api.ok(api.get("/matches", params={"limit": 100}), 200)["matches"]
              for e in api.ok(api.get(f"/matches/{m['id']}"), 200).get("log") or [] if "fault" in e]
    assert faults == []
