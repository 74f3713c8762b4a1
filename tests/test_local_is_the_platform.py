"""Local play is the platform (issue 17): the same seeded match, played by `cardarena play`'s
referee (`sdk.play_local`) and by the worker pool with the same in-process bots, gives the
same log and the same result — faults included, kind and reason alike."""

from __future__ import annotations

import json

import pytest

import sdk
from sdk.bot import load_bot_class
from sdk.faults import fault_kind
from sdk.local import play_local
from tests.live import ADMIN_TOKEN

CASES = [
    # (game, seed, bots): well-behaved heuristics, then bots that fault in every way an in-process
    # bot can (raising, answering an action not listed), until they forfeit
    ("duck-soup", 5, ["example_bots.duck_soup:DuckSoupHeuristic", "tests.worker.bots:Last"]),
    ("double-carre", 3, ["tests.worker.bots:Raises", "example_bots.double_carre:DoubleCarreHeuristic"]),
    ("double", 7, ["tests.worker.bots:Illegal", "example_bots.double:DoubleHeuristic", "tests.worker.bots:First"]),
]
MAX_FAULTS = 2


def without_time(log: list[dict]) -> list[dict]:
    """The log less each entry's `ms`: how long a bot took is the one thing that may differ."""
    return [{k: v for k, v in e.items() if k != "ms"} for e in json.loads(json.dumps(log))]


@pytest.mark.parametrize("game, seed, entrypoints", CASES, ids=[c[0] for c in CASES])
def test_a_seeded_match_gives_the_same_log_and_result_locally_and_on_the_pool(api, worker_pool, game, seed,
                                                                               entrypoints):
    bots = [api.ok(api.post("/bots", {"name": f"b{i}", "game": game, "kind": "python", "entrypoint": e},
                            token=ADMIN_TOKEN), 201)["id"] for i, e in enumerate(entrypoints)]
    match_id = api.match(ADMIN_TOKEN, game, bots, seed=seed, max_faults=MAX_FAULTS)["id"]  # house bots, own clock
    local = play_local(game, [load_bot_class(e)() for e in entrypoints], seed=seed, max_faults=MAX_FAULTS)

    platform = sdk.Client(api.live.url).wait_match(match_id, timeout=120).raw
    assert platform["status"] == "finished"
    assert without_time(platform["log"]) == without_time(local.log)
    for key in ("ranks", "scores", "faults", "forfeits"):
        assert platform["result"].get(key) == local.result.get(key), key
    faults = [e["fault"] for e in local.log if "fault" in e and e["fault"] != "forfeited"]
    kinds = {"Raises": {"bot_error"}, "Illegal": {"illegal"}}
    assert {fault_kind(f) for f in faults} == set().union(*(kinds.get(e.split(":")[1], set()) for e in entrypoints))
