"""House bots (worker/house_bots.py): a new platform's ladders have somebody on them, placed once
ever by the worker pool, so a restart, a second machine or a retirement never multiplies them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

import games
from core.redis_server import EmbeddedRedis
from core.store import Store, secret_key
from tests.games.builtin import builtin_names
from worker.house_bots import house_bots, place_house_bots
from worker.matchmaker import Matchmaker

ROOT = Path(__file__).resolve().parents[2]


def house(store, game: str) -> list[dict]:
    return [b for b in store.list_bots(game) if b["owner"] == "admin" and b["name"].startswith("house ")]


def test_each_game_gets_its_example_bots_one_short_of_a_ladder_table(store):
    placed = place_house_bots(store)
    assert placed
    for game in builtin_names():  # a test's toy game, registered by another module, is not one
        spec = games.get(game)
        bots = house(store, game)
        assert len(bots) == spec.ladder_seats - 1, game
        assert bots[0]["name"] == "house heuristic" and bots[0]["entrypoint"] == spec.bots["heuristic"]
        assert all(b["kind"] == "python" and b["ladder"] and not b["retired"] for b in bots)
        assert {b["entrypoint"] for b in bots} <= set(spec.bots.values())
    assert [n for n, _ in house_bots("double")] == ["house heuristic", "house random", "house random 2"]


def test_placing_them_again_as_a_restart_does_registers_nothing(store):
    first = place_house_bots(store)
    assert place_house_bots(store) == [] and place_house_bots(Store(store.r, store.secret_key)) == []
    assert sum(len(house(store, g)) for g in games.names()) == len(first)


def test_a_house_bot_the_admin_retired_stays_retired(store):
    place_house_bots(store)
    game = games.names()[0]
    retired = house(store, game)[0]
    store.retire_bot(retired["id"])  # its name is free again, yet it is not placed again
    assert place_house_bots(store) == []
    assert retired["name"] not in [b["name"] for b in store.list_bots(game) if not b["retired"]]


def test_an_accounts_bot_holding_a_house_name_keeps_it(store):
    game = games.names()[0]
    mine = store.create_bot("acct_alice", "House Heuristic", game, "polling")[0]
    place_house_bots(store)
    named = [b for b in store.list_bots(game) if b["name"].casefold() == "house heuristic"]
    assert named == [store.get_bot(mine["id"])]


def test_house_bots_alone_make_no_ladder_table_and_one_new_bot_completes_one(store):
    place_house_bots(store)
    game = next(g for g in games.names() if games.get(g).ladder_seats > 2)
    matchmaker = Matchmaker(store, per_game=1, game_names=[game])
    assert matchmaker.cycle() == {game: []}  # an idle platform plays nothing
    newcomer = store.create_bot("acct_alice", "newcomer", game, "python",
                                entrypoint=games.get(game).bots["random"])[0]
    (pairing,) = matchmaker.cycle()[game]
    assert newcomer["id"] in pairing["bots"] and len(pairing["bots"]) == games.get(game).ladder_seats


def start_worker(url: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "REDIS_URL": url}
    return subprocess.Popen([sys.executable, "-m", "cardarena.cli", "worker", "-n", "1", "--grace", "1",
                             "--queue", "house-bots-test", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def started(worker: subprocess.Popen) -> str:
    """Its output up to the line saying it runs (the house bots are placed before it), then stopped."""
    try:
        lines = []
        for line in worker.stdout:  # bounded by the test's timeout
            lines.append(line)
            if line.startswith("cardarena worker:"):
                break
        return "".join(lines)
    finally:
        worker.terminate()
        worker.communicate(timeout=30)


@pytest.mark.slow
def test_cardarena_worker_places_the_house_bots_unless_told_not_to():
    with EmbeddedRedis() as server:
        client = redis.Redis.from_url(server.url)
        store = Store(client, secret_key(client))
        out = started(start_worker(server.url, "--no-house-bots"))
        assert "cardarena worker:" in out and store.list_bots() == [], out
        out = started(start_worker(server.url))
        assert "house bot 'house heuristic' registered" in out, out
        for game in builtin_names():  # a test's toy game, registered by another module, is not one
            assert len(house(store, game)) == games.get(game).ladder_seats - 1
        client.close()
