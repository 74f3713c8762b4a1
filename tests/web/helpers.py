"""Building what the web pages show, straight through the store (no worker).

`play_out` does what the worker's match runner does for a finished match:
append each action to the event log, then store the result. It picks
actions with a seeded RNG rather than always the first legal one, so a
duck-soup match has calls (coin, soupe…) to show, and it can record a
fault on chosen turns the way the referee does.
"""

from __future__ import annotations

import random

import games
from tests.server.driving import conclude

SCRIPT_NAME = "<script>alert(1)</script>"


def make_bot(store, name: str, game: str) -> str:
    bot, _secret = store.create_bot("acct", name, game, "polling")
    return bot["id"]


def play_out(store, match_id: str, rng_seed: int = 1, fault_turns: tuple[int, ...] = (),
             calls: bool = True, bots=None) -> dict:
    """Play the match to its end with seeded random legal actions (a call whenever
    one is legal, with `calls`) — or, given `bots` (sdk Bots, one a seat), with
    their choices; return its result."""
    rng = random.Random(rng_seed)
    store.set_match_status(match_id, "running")
    state = store.replay(match_id)
    while not state.is_over:
        turn = store.log_length(match_id)
        legal = state.legal_actions()
        entry = {"turn": turn, "seat": state.to_act}
        if turn in fault_turns:
            entry.update(action=legal[0], fault="timeout: no answer within 2000 ms")
        elif bots:
            entry["action"] = bots[state.to_act].act(state.view(state.to_act), legal)
        else:
            called = [a for a in legal if "call" in a] if calls else []
            entry["action"] = rng.choice(called or legal)
        assert store.append_entry(match_id, entry)
        state.apply(entry["action"])
    return conclude(store, match_id)


def finished_match(store, game: str, bots: list[str], seed: int = 7, options: dict | None = None,
                   tournament: str | None = None, rng_seed: int = 1, fault_turns=(), players=None) -> str:
    match = store.create_match(game, bots, seed, options or {}, tournament_id=tournament)
    if tournament:
        store.add_tournament_match(tournament, match["id"])
    play_out(store, match["id"], rng_seed, fault_turns, bots=players)
    return match["id"]


def state_at(store, match_id: str, step: int):
    """The engine's state after the first `step` actions, replayed independently of the pages."""
    match = store.get_match(match_id)
    state = games.get(match["game"]).new(len(match["seats"]), match["seed"], match["options"])
    for entry in store.match_log(match_id)[:step]:
        state.apply(entry["action"])
    return state


def standings_of(store, bots: list[str], match_ids: list[str]) -> list[dict]:
    """docs/api.md's match points summed per bot, best first (what the worker saves)."""
    points = dict.fromkeys(bots, 0.0)
    played = dict.fromkeys(bots, 0)
    for mid in match_ids:
        match = store.get_match(mid)
        ranks = (match.get("result") or {}).get("ranks")
        if not ranks:
            continue
        seats = match["seats"]
        for i, bot in enumerate(seats):
            above = sum(1 for j in range(len(seats)) if ranks[i] < ranks[j])
            ties = sum(1 for j in range(len(seats)) if j != i and ranks[i] == ranks[j])
            points[bot] += (above + ties / 2) / (len(seats) - 1)
            played[bot] += 1
    order = sorted(bots, key=lambda b: -points[b])
    return [{"rank": i + 1, "bot": b, "points": points[b], "matches": played[b]} for i, b in enumerate(order)]
