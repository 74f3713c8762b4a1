"""The `memory` figure of standings rows (docs/api.md §5 "Scheduling"): does a bot score better on deals
it has already played? Duplicate play's weakness: twins in sequence stop a bot seeing both
rotations of a deal at once, not remembering the first.

On the real worker pool: a deliberately cheating bot (tests/worker/e2e_bots.py `Cheater`) is
flagged; the example bots, over the same deals, are not.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sdk.standings import memory_differences, standings_from_tallies
from tests.live import ADMIN_TOKEN
from tests.sdk.test_sdk_play import cardarena_command
from tests.worker.test_worker_e2e import OUTPUT, tournament, wait_finished

GAME = "duck-soup"


def test_a_deals_memory_difference_is_later_rotations_minus_the_first():
    rotations = [[{"bot": "a", "points": 0.0}, {"bot": "b", "points": 1.0}],  # played first
                 [{"bot": "b", "points": 0.5}, {"bot": "a", "points": 0.5}],
                 [{"bot": "a", "points": 1.0}, {"bot": "c", "points": 0.0}]]
    assert memory_differences(rotations) == {"a": 0.75, "b": -0.5}  # c played the deal once
    assert memory_differences(rotations[:1]) == {}


def test_a_standings_row_shows_memory_and_flags_only_a_clear_gain_over_30_deals():
    base = {"points": 1.0, "matches": 2, "wins": 1, "draws": 0, "faults": 0, "forfeits": 0, "score": 0.0,
            "score2": 0.0}
    rows = {r["bot"]: r for r in standings_from_tallies({
        "fresh": base,
        "cheat": {**base, "memory_n": 40, "memory": 20.0, "memory2": 12.0},  # +0.5 a deal, sd ~0.24
        "few": {**base, "memory_n": 10, "memory": 5.0, "memory2": 3.0},  # as clear, too few deals
        "honest": {**base, "memory_n": 40, "memory": 0.5, "memory2": 10.0},
    })}
    assert rows["fresh"]["memory"] == {"diff": None, "ci95": None, "flag": False}
    assert rows["cheat"]["memory"]["flag"] and rows["cheat"]["memory"]["diff"] == 0.5
    lo, hi = rows["cheat"]["memory"]["ci95"]
    assert 0 < lo < 0.5 < hi
    assert not rows["few"]["memory"]["flag"] and not rows["honest"]["memory"]["flag"]


def test_conclusion_of_a_deals_last_twin_tallies_each_bots_memory(api):
    store = api.store
    token = api.account("organiser")
    bots = [api.ok(api.post("/bots", {"name": f"p{i}", "game": GAME, "kind": "python",
                                      "entrypoint": "example_bots.random:RandomBot"}, token=ADMIN_TOKEN), 201)["id"]
            for i in range(2)]
    tid = api.ok(api.post("/tournaments", {"game": GAME, "bots": bots, "format": "round-robin", "deals": 1,
                                           "seed": 1}, token=token), 202)["id"]
    twins = [f"m_t{tid}_{i}" for i in range(2)]
    for i, seats in enumerate([bots, bots[::-1]]):
        store.create_match(GAME, seats, 1, {}, tournament_id=tid, match_id=twins[i], twins=twins)
    first = [{"bot": bots[0], "won": True, "faults": 0, "points": 1.0, "score": 1.0},
             {"bot": bots[1], "won": False, "faults": 0, "points": 0.0, "score": 0.0}]
    second = [{"bot": bots[1], "won": False, "faults": 0, "points": 0.5, "score": 0.0},
              {"bot": bots[0], "won": False, "faults": 0, "points": 0.5, "score": 0.0}]
    assert store.conclude_match(twins[0], "finished", {"scores": [1, 0]}, records=first)
    assert "memory_n" not in store.tournament_tallies(tid).get(bots[0], {})  # the deal is not over
    assert store.conclude_match(twins[1], "finished", {"scores": [0, 0]}, records=second)
    tallies = store.tournament_tallies(tid)
    assert (tallies[bots[0]]["memory_n"], tallies[bots[0]]["memory"]) == (1, -0.5)
    assert (tallies[bots[1]]["memory_n"], tallies[bots[1]]["memory"]) == (1, 0.5)


@pytest.fixture()
def cheater_pool(api, redis_url, tmp_path):
    from worker.pool import WorkerPool

    OUTPUT.mkdir(exist_ok=True)
    with WorkerPool(redis_url, n=2, sweep_every_s=0.5, log_path=str(OUTPUT / "worker-memory.log"), grace_s=5.0,
                    env={"CARDARENA_TEST_CHEATER_FILE": str(tmp_path / "deals-seen.txt")}) as pool:
        yield pool


def _python_bot(api, name: str, entrypoint: str) -> str:
    return api.ok(api.post("/bots", {"name": name, "game": GAME, "kind": "python", "entrypoint": entrypoint},
                           token=ADMIN_TOKEN), 201)["id"]


def _memory_by_bot(api, bots: list[str], seed: int) -> dict[str, dict]:
    token = api.account(f"organiser{seed}-{bots[0]}")
    tid = tournament(api, token, bots, game=GAME, seats=2, deals=60, seed=seed, options={"deal_only": True})
    done = wait_finished(api, tid, timeout=240)
    assert done["status"] == "finished"
    return {row["bot"]: row["memory"] for row in done["standings"]}


@pytest.mark.slow
def test_a_bot_that_remembers_deals_is_flagged_and_the_example_bots_are_not(api, cheater_pool):
    cheater = _python_bot(api, "cheater", "tests.worker.e2e_bots:Cheater")
    heuristic = _python_bot(api, "heuristic", "example_bots.duck_soup:DuckSoupHeuristic")
    caught = _memory_by_bot(api, [cheater, heuristic], seed=21)
    assert caught[cheater]["flag"], caught
    assert caught[cheater]["diff"] > 0.2 and caught[cheater]["ci95"][0] > 0
    assert not caught[heuristic]["flag"]
    # the same deals (the same seed), honest bots: the example heuristic against another of itself
    other = _python_bot(api, "heuristic2", "example_bots.duck_soup:DuckSoupHeuristic")
    honest = _memory_by_bot(api, [heuristic, other], seed=21)
    assert not any(m["flag"] for m in honest.values()), honest
    assert all(m["diff"] is not None for m in honest.values())


@pytest.mark.slow
def test_local_play_flags_the_cheater_too_and_not_the_honest_heuristic(tmp_path, monkeypatch):
    """`cardarena play` tallies the platform's memory figure (its rotations in the same seeded order)."""
    from sdk.play import run_matches, standings_rows

    monkeypatch.setenv("CARDARENA_TEST_CHEATER_FILE", str(tmp_path / "deals-seen.txt"))
    specs = ["tests.worker.e2e_bots:Cheater", "example_bots.duck_soup:DuckSoupHeuristic"]
    rows = {r["bot"]: r["memory"] for r in standings_rows(
        run_matches(GAME, specs, deals=60, seed=21, options={"deal_only": True}))}
    assert rows[specs[0]]["flag"] and rows[specs[0]]["diff"] > 0.2, rows
    assert not rows[specs[1]]["flag"], rows
    honest = standings_rows(run_matches(GAME, [specs[1], specs[1]], deals=60, seed=21, options={"deal_only": True}))
    assert not any(r["memory"]["flag"] for r in honest) and all(r["memory"]["diff"] is not None for r in honest)
    (tmp_path / "deals-seen.txt").unlink()
    printed = subprocess.run([*cardarena_command(), "play", GAME, *specs, "--games", "60", "--seed", "21",
                              "--option", "deal_only=true"], capture_output=True, text=True, timeout=300,
                             cwd=Path(__file__).resolve().parents[2])  # the checkout: tests.worker imports
    assert printed.returncode == 0, printed.stderr
    assert f"memory: {specs[0]} scores +0.48 match points a deal better" in printed.stdout, printed.stdout
