"""Tournaments end to end: the API, a real Redis, real worker processes, bots on loopback.

Every test goes through the public API (register, schedule, read) while
the worker pool referees; only `kill -9` reaches under it.
"""

from __future__ import annotations

import collections
import json
import socket
import time
from pathlib import Path

import pytest

import games
from example_bots.random import RandomBot
from sdk import connect, serve
from tests.live import ADMIN_TOKEN, OUTPUT
from tests.waiting import wait_until
from tests.worker.zoo import LEAK, PATHS, Zoo
from tests.wsgi_loopback import serving

GAME = "double-carre"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def python_bot(api, name: str, entrypoint: str, game: str = GAME) -> str:
    body = {"name": name, "game": game, "kind": "python", "entrypoint": entrypoint}
    return api.ok(api.post("/bots", body, token=ADMIN_TOKEN), 201)["id"]


def tournament(api, token: str, bots: list[str], game: str = GAME, **fields) -> str:
    body = {"game": game, "bots": bots, "format": "round-robin", **fields}
    return api.ok(api.post("/tournaments", body, token=token), 202)["id"]


def wait_finished(api, tid: str, timeout: float = 180.0) -> dict:
    end = time.monotonic() + timeout
    while True:
        t = api.ok(api.get(f"/tournaments/{tid}"), 200)
        if t["status"] in ("finished", "aborted"):
            return t
        assert time.monotonic() < end, f"tournament still {t['status']} at {t['progress']}"
        time.sleep(0.1)


def matches_of(api, tid: str) -> list[dict]:
    """Every match of the tournament, its list read page by page."""
    listed, cursor = [], None
    while True:
        page = api.ok(api.get(f"/tournaments/{tid}/matches", params={"cursor": cursor} if cursor else None), 200)
        listed += page["matches"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    return [api.ok(api.get(f"/matches/{m['id']}"), 200) for m in listed]


def replays_to_its_result(match: dict) -> bool:
    """The public log and seed rebuild the stored result (modulo the referee's forfeit ranks)."""
    return replay_mismatch(match) is None


def replay_mismatch(match: dict) -> str | None:
    """Why the public log and seed do not rebuild the stored result; None when they do."""
    state = games.get(match["game"]).new(len(match["seats"]), match["seed"], match["options"])
    for k, entry in enumerate(match["log"]):
        try:
            state.apply(entry["action"])
        except Exception as exc:
            return f"{match['id']}: log entry {k} {entry} does not apply: {exc!r}"
    if not state.is_over:
        return f"{match['id']}: the log's {len(match['log'])} entries leave the game unfinished"
    if state.result()["scores"] != match["result"]["scores"]:
        return (f"{match['id']}: the log's {len(match['log'])} entries score {state.result()['scores']}, "
                f"the stored result {match['result']}")
    return None


def replay_mismatches(matches: list[dict]) -> list[str]:
    """`replay_mismatch` of every match that has one."""
    return [why for why in map(replay_mismatch, matches) if why]


def expected_standings(matches: list[dict]) -> dict[str, dict]:
    """Match points and wins per bot, recomputed from the public results (docs/api.md §4)."""
    out: dict[str, dict] = collections.defaultdict(lambda: {"points": 0.0, "matches": 0, "wins": 0})
    for m in matches:
        ranks, bots = m["result"]["ranks"], [s["bot"] for s in m["seats"]]
        for i, bot in enumerate(bots):
            others = [r for j, r in enumerate(ranks) if j != i]
            out[bot]["points"] += (sum(r > ranks[i] for r in others) + 0.5 * sum(r == ranks[i] for r in others)) / len(others)
            out[bot]["matches"] += 1
            out[bot]["wins"] += ranks[i] == 1 and ranks.count(1) == 1
    return out


@pytest.mark.slow
def test_in_process_webhook_and_polling_bots_play_a_tournament_with_correct_standings(api, worker_pool):
    token = api.account("organiser")
    heuristic = python_bot(api, "heuristic", "example_bots.double_carre:DoubleCarreHeuristic")
    rand = python_bot(api, "random", "example_bots.random:RandomBot")
    port = free_port()
    hook = api.bot(token, "hook", game=GAME, kind="webhook", url=f"http://127.0.0.1:{port}/")
    poll = api.bot(token, "poll", game=GAME, kind="polling")
    hosted = serve(RandomBot(), port=port, secret=hook["secret"], block=False)
    poller = connect(RandomBot(), api.live.url, secret=poll["secret"], wait=1, block=False)
    try:
        # the admin's on the standard clock, so rated (an account's is not: docs/api.md §6)
        tid = tournament(api, ADMIN_TOKEN, [heuristic, rand, hook["id"], poll["id"]], deals=2)
        done = wait_finished(api, tid)
    finally:
        poller.stop(timeout=10)
        hosted.stop()
    assert done["status"] == "finished"
    assert done["progress"] == {"done": 24, "total": 24}  # 6 pairs × 2 deals × 2 seat rotations
    matches = matches_of(api, tid)
    assert len(matches) == 24 and all(m["status"] == "finished" and m["public"] for m in matches)
    assert not replay_mismatches(matches), replay_mismatches(matches)
    assert [e for m in matches for e in m["log"] if "fault" in e] == []  # every kind of bot played its turns
    expected = expected_standings(matches)
    for row in done["standings"]:
        assert row["points"] == pytest.approx(expected[row["bot"]]["points"])
        assert row["matches"] == expected[row["bot"]]["matches"] == 12
        assert row["wins"] == expected[row["bot"]]["wins"]
        assert row["faults"] == 0 and row["mean_score"] is not None and row["ci95"] is not None
    points = [row["points"] for row in done["standings"]]
    assert points == sorted(points, reverse=True) and sum(points) == pytest.approx(24)
    assert done["standings"][0]["bot"] == heuristic
    ladder = api.ok(api.get(f"/games/{GAME}/rankings"), 200)["rankings"]
    assert {r["bot"] for r in ladder} == {heuristic, rand, hook["id"], poll["id"]}
    assert all(r["matches"] == 12 for r in ladder) and ladder[0]["bot"] == heuristic
    for bot in (heuristic, rand, hook["id"], poll["id"]):
        assert len(api.ok(api.get(f"/bots/{bot}/ratings"), 200)["history"]) == 6  # one rating per deal (its two rotations)


#: the zoo's bad bots, a tournament each group: every kind of misdeed beside others in one tournament
ZOO_GROUPS = (("hang", "500", "refused"), ("garbage", "illegal", "huge"), ("redirect", "nested", "bignum"))


def test_the_zoo_groups_hold_every_bad_bot():
    assert sorted(p for group in ZOO_GROUPS for p in group) == sorted([*PATHS, "refused"])


@pytest.mark.slow
@pytest.mark.parametrize("group", ZOO_GROUPS, ids="-".join)
def test_a_zoo_of_bad_webhook_bots_is_contained(api, worker_pool, group):
    """Each bad bot's every misdeed is a fault of its kind in its own matches: no match is
    aborted (40 KB of nesting and a 5,000-digit number used to crash the worker three times),
    and no text of a bot's error page reaches a public record."""
    token = api.account("zookeeper")
    zoo = Zoo()
    bad = {}
    with serving(zoo) as zoo_url:
        for path in group:
            url = f"http://127.0.0.1:{free_port()}/" if path == "refused" else f"{zoo_url}/{path}"
            bad[path] = api.bot(token, path, game=GAME, kind="webhook", url=url)["id"]
        good = [python_bot(api, "heuristic", "example_bots.double_carre:DoubleCarreHeuristic"),
                python_bot(api, "random", "example_bots.random:RandomBot")]
        # 2 s: the hanging bot (5 s) still times out, while the zoo's one server, loaded by
        # 40 KB answers and hung requests on a busy machine (load 10 cut 800 ms), answers the
        # others in time; house bots on a short clock: the admin's to choose (docs/api.md §6)
        tid = tournament(api, ADMIN_TOKEN, good + list(bad.values()), deals=1, move_timeout_ms=2000, time_bank_ms=0,
                         max_faults=2)
        done = wait_finished(api, tid)
    entrants = len(good) + len(bad)
    opponents = entrants - 1
    total = entrants * opponents  # every pair, both rotations
    assert done["status"] == "finished" and done["progress"]["done"] == done["progress"]["total"] == total
    matches = matches_of(api, tid)
    assert len(matches) == total and all(m["status"] == "finished" for m in matches)
    kinds = {"hang": ("timeout",), "500": ("http_error",), "garbage": ("bad_answer",), "illegal": ("illegal",),
             "huge": ("too_large", "timeout"),  # 10 MB may not even come in time
             "redirect": ("http_error",), "nested": ("bad_answer",), "bignum": ("bad_answer",),
             "refused": ("unreachable",)}
    for path, bot in bad.items():
        record = api.ok(api.get(f"/bots/{bot}"), 200)
        assert record["matches"] == 2 * opponents and record["faults"] == 2 * 2 * opponents, path
        for m in matches:
            seats = [s["bot"] for s in m["seats"]]
            if bot in seats:
                seat = seats.index(bot)
                assert seat in m["result"]["forfeits"], (path, m["id"])
                faults = [e["fault"] for e in m["log"] if e["seat"] == seat and "fault" in e]
                assert faults[:2] and all(f.split(":")[0] in kinds[path] for f in faults[:2]), (path, faults[:2])
                assert all(f == "forfeited" for f in faults[2:])
    assert all(f == "http_error: HTTP 500" for m in matches for e in m["log"] for f in [e.get("fault")]
               if f and f.startswith("http_error") and "302" not in f)
    assert LEAK.decode() not in json.dumps(matches)  # the error page is nowhere in the public record
    ranked = [row["bot"] for row in done["standings"]]
    assert set(ranked[:2]) == set(good)  # the healthy bots rank above every bad one
    assert zoo.calls.get("ok", 0) == 0  # the redirect was never followed
    if "hang" in bad:
        assert zoo.decisions["hang"] == 2 * 2 * opponents  # asked until it forfeited, then never again
        # and told each match is over (each notice held 5 s by the bot, so the last may still be
        # on its way); besides, pinged at registration and when the tournament was created
        told = lambda: zoo.calls["hang"] - zoo.pings.get("hang", 0)  # noqa: E731
        wait_until(lambda: told() >= 3 * 2 * opponents, what="the hanging bot's match_over notices")
        pings = zoo.pings.get("hang", 0)  # the heartbeat may ping it once more on a slow machine
        assert told() == 3 * 2 * opponents and pings >= 2


def wait_dead(pid: int, timeout: float = 10.0) -> None:
    """Until process `pid` is gone or a zombie (killed, not yet reaped by its supervisor)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.002)
    raise AssertionError(f"process {pid} outlived kill -9")


def busy_worker(api, pool, besides: list[str] = (), timeout: float = 60.0) -> tuple[int, str]:
    """(pool index, match id) of a worker that has begun refereeing a match other than
    `besides` (RQ's registry of workers says which job each runs; the match's `attempts`
    says its runner has started)."""
    from rq import Worker

    from core.store.jobs import job_ident

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        alive = {proc.pid: i for i, proc in enumerate(pool.procs) if proc is not None and proc.poll() is None}
        for worker in Worker.all(connection=api.store.r):
            job = worker.get_current_job_id() or ""
            mid = job_ident(job)[1]
            if worker.pid in alive and job.startswith("match-") and mid not in besides \
                    and api.store.r.hget(f"match:{mid}", "attempts"):
                return alive[worker.pid], mid
        time.sleep(0.005)
    raise AssertionError("no worker ran a match")


@pytest.mark.slow
@pytest.mark.parametrize("fork", [False, True], ids=["simple", "fork"])
def test_kill_9_of_workers_during_a_tournament_loses_nothing(api, redis_url, fork):
    """Two workers are killed (with their running matches) mid-tournament; every match
    still finishes exactly once, the interrupted ones resuming from their logs."""
    from worker.pool import WorkerPool

    bots = [python_bot(api, f"slow{i}", "tests.worker.e2e_bots:Slow") for i in range(3)]
    OUTPUT.mkdir(exist_ok=True)
    with WorkerPool(redis_url, n=2, sweep_every_s=0.3, log_path=str(OUTPUT / "worker-kill.log"),
                    grace_s=5.0, env={"CARDARENA_LEASE_MS": "1500"}, fork=fork) as pool:
        tid = tournament(api, ADMIN_TOKEN, bots, deals=4)  # 3 pairs × 4 deals × 2 rotations = 24 matches, rated
        interrupted, tried = [], []
        while len(interrupted) < 2:  # two workers killed in the middle of a match
            assert len(tried) < 10, "no kill landed in the middle of a match"
            victim, mid = busy_worker(api, pool, besides=tried)
            time.sleep(0.03)  # into the match (it lasts ~0.2 s)
            wait_dead(pool.kill(victim))
            tried.append(mid)
            # on a busy machine the match may have ended before the kill landed: then it was
            # not interrupted (once its runner is dead, nobody else ends it that soon)
            if api.store.get_match(mid)["status"] not in ("finished", "aborted"):
                interrupted.append(mid)
        done = wait_finished(api, tid)
        assert pool.restarts >= 2
        # a deal whose rating a killed worker held the game's ratings lock for is rated by the
        # pool's sweep once that lock lapses (core/ratings.py: 60 s): while the pool still runs
        history = lambda bot: api.ok(api.get(f"/bots/{bot}/ratings"), 200)["history"]  # noqa: E731
        wait_until(lambda: all(len(history(bot)) >= 8 for bot in bots), seconds=120, what="every deal rated")
    assert done["status"] == "finished" and done["progress"] == {"done": 24, "total": 24}
    matches = matches_of(api, tid)
    assert all(m["status"] == "finished" for m in matches)
    assert not replay_mismatches(matches), replay_mismatches(matches)
    resumed = [m["id"] for m in matches if int(api.store.get_match(m["id"])["attempts"]) > 1]
    assert set(interrupted) <= set(resumed), "a killed match was not resumed from its log"
    for bot in bots:  # each match counted once: in records, standings and the ladder
        assert api.ok(api.get(f"/bots/{bot}"), 200)["matches"] == 16
        assert len(history(bot)) == 8  # one per deal
    assert sum(row["matches"] for row in done["standings"]) == 48
    assert sum(row["points"] for row in done["standings"]) == pytest.approx(24)


def test_duplicate_deals_give_each_bot_each_hand(api, worker_pool):
    # the admin's: an account's tournament of others' bots plays the standard options only
    bots = [python_bot(api, f"r{i}", "example_bots.random:RandomBot", game="double") for i in range(3)]
    tid = tournament(api, ADMIN_TOKEN, bots, game="double", seats=3, deals=2, options={"rounds": [1, 2]})
    done = wait_finished(api, tid)
    assert done["progress"] == {"done": 6, "total": 6}
    by_seed = collections.defaultdict(list)
    for m in matches_of(api, tid):
        by_seed[m["seed"]].append(m)
    assert len(by_seed) == 2
    for twins in by_seed.values():
        assert len(twins) == 3
        assert all(m["decks"] == twins[0]["decks"] for m in twins)  # the same cards dealt
        hands = {}  # bot -> the first hands it was dealt, seat by seat over the rotations
        for m in twins:
            state = games.get("double").new(3, m["seed"], m["options"])
            for seat, s in enumerate(m["seats"]):
                hands.setdefault(s["bot"], set()).add(tuple(state.view(seat)["hand"]))
        first_hands = {tuple(games.get("double").new(3, twins[0]["seed"], twins[0]["options"]).view(s)["hand"])
                       for s in range(3)}
        assert all(h == first_hands for h in hands.values())  # each bot held each of the three hands


def test_a_gauntlet_plays_its_candidate_against_each_entrant_on_the_pool(api, worker_pool):
    token = api.account("organiser")
    bots = [python_bot(api, f"g{i}", "example_bots.random:RandomBot") for i in range(4)]
    for bad, code in [({}, "invalid"), ({"candidate": "b_nosuchbot"}, "invalid")]:
        r = api.post("/tournaments", {"game": GAME, "bots": bots, "format": "gauntlet", **bad}, token=token)
        assert r.status_code == 422 and r.json()["error"]["code"] == code, r.text
    r = api.post("/tournaments", {"game": GAME, "bots": bots, "candidate": bots[0]}, token=token)
    assert r.status_code == 422  # a round-robin has no candidate
    tid = tournament(api, token, bots, format="gauntlet", candidate=bots[2], deals=2)
    done = wait_finished(api, tid)
    assert done["status"] == "finished" and done["candidate"] == bots[2]
    assert done["progress"] == {"done": 12, "total": 12}  # 3 opponents × 2 deals × 2 rotations
    assert done["schedule"] == f"gauntlet: {bots[2]} at each of 3 tables"
    matches = matches_of(api, tid)
    assert all(bots[2] in [s["bot"] for s in m["seats"]] for m in matches)
    rows = {row["bot"]: row for row in done["standings"]}
    assert rows[bots[2]]["matches"] == 12 and all(rows[b]["matches"] == 4 for b in bots if b != bots[2])
