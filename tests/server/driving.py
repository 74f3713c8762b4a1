"""Playing the worker's side of a match through the store, for API tests.

The worker drives every match; these helpers do what its polling seat
driver does (publish the decision holding `view(seat)`, append the default
on timeout, finish) so the API can be tested without a worker pool.
"""

from __future__ import annotations

import random
import time

import games


def next_decision(store, match_id: str, deadline_ms: int | None = None) -> tuple[dict, str]:
    """The decision pending in `match_id` now (its deadline the match's move time, or
    `deadline_ms`), and the bot whose seat it is."""
    match = store.get_match(match_id)
    state = store.replay(match_id)
    seat = state.to_act
    decision = {
        "type": "turn", "protocol": 1, "match_id": match_id, "game": match["game"],
        "turn": store.log_length(match_id), "seat": seat, "view": state.view(seat),
        "legal_actions": state.legal_actions(), "deadline_ms": deadline_ms or match["move_timeout_ms"],
    }
    return decision, match["seats"][seat]


def publish_next(store, match_id: str, deadline_ms: int | None = None) -> tuple[dict, str]:
    """Publish the pending decision to its polling bot, as the match runner does (`deadline_ms`:
    `next_decision`'s)."""
    decision, bot_id = next_decision(store, match_id, deadline_ms)
    store.await_answer(match_id, decision, {"id": bot_id, "kind": "polling"})
    return decision, bot_id


def wait_turn(store, match_id: str, turn: int, timeout_s: float) -> bool:
    """Whether `turn` of the match is appended within `timeout_s` (what a test standing in for
    the worker waits on; the platform's next run is enqueued instead)."""
    end = time.monotonic() + timeout_s
    while store.log_length(match_id) <= turn:
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


def finish(store, match_id: str) -> dict:
    """Play out the match with first legal actions and store its result."""
    state = store.replay(match_id)
    while not state.is_over:
        turn = store.log_length(match_id)
        action = state.legal_actions()[0]
        assert store.append_entry(match_id, {"turn": turn, "seat": state.to_act, "action": action})
        state.apply(action)
    return conclude(store, match_id)


def conclude(store, match_id: str, state=None) -> dict:
    """End the match as the worker does: the referee's outcome and seat records from the log,
    `Store.conclude_match` (the bots' records, the tournament's tallies, the ladder's queue).
    `state`, the caller's copy of the match, is only checked to be over."""
    assert state is None or state.is_over
    from sdk.referee import MatchReferee
    from sdk.standings import seat_records

    match = store.get_match(match_id)
    referee = MatchReferee(match["game"], len(match["seats"]), match["seed"], match["options"],
                           match["max_faults"], match["move_timeout_ms"], match.get("time_bank_ms") or 0)
    result = referee.replay(store.match_log(match_id)).outcome()
    assert store.conclude_match(match_id, "finished", result, records=seat_records(result, match["seats"]))
    return result


# -- a real game refereed by hand, one entry at a time (event streams, exports) --

#: the real game these helpers play
GAME = "duck-soup"


def make_bots(store, n: int = 2, game: str = GAME) -> list[str]:
    return [store.create_bot("acct", f"b{i}", game, "polling")[0]["id"] for i in range(n)]


def step(store, match_id: str, state, rng: random.Random, fault: str | None = None) -> dict:
    """Append one seeded random legal action (as the referee would) and apply it to `state`."""
    action = rng.choice(state.legal_actions())
    entry = {"turn": store.log_length(match_id), "seat": state.to_act, "action": action}
    if fault:
        entry["fault"] = fault
    assert store.append_entry(match_id, entry)
    state.apply(action)
    return entry


def running_match(store, bots: list[str], seed: int = 5, tournament: str | None = None) -> tuple[str, object]:
    match = store.create_match(GAME, bots, seed, {}, tournament_id=tournament)
    if tournament:
        store.add_tournament_match(tournament, match["id"])
    store.start_match(match["id"])
    return match["id"], games.get(GAME).new(2, seed, {})


def running_tournament(store, bots: list[str], total: int = 2) -> str:
    """A duplicate tournament of `bots` marked running with `total` matches (none played yet)."""
    tid = store.create_tournament(GAME, bots, seats=2, deals=1, duplicate=True, seed=1, options={})["id"]
    store.set_tournament(tid, status="running", total=total)
    return tid


def played(store, bots: list[str], seed: int, tournament: str | None = None) -> str:
    """A match of `bots` played to its end with seeded random actions and concluded."""
    mid, state = running_match(store, bots, seed=seed, tournament=tournament)
    rng = random.Random(seed)
    while not state.is_over:
        step(store, mid, state, rng)
    conclude(store, mid, state)
    return mid
