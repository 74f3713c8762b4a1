"""Checks every engine must pass, written once for all games.

Each game's property test drives random games through these and adds what
only it knows (which cards a seat may not see, where every card is).
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from collections.abc import Callable, Iterable

import pytest

from games.base import State
from games.errors import IllegalAction


def json_strings(value) -> Counter:
    """Every string leaf of a JSON value (dict keys excluded), with multiplicity."""
    out: Counter = Counter()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out[str(v)] += 1
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return out


def assert_json_safe(value) -> None:
    """The value survives a JSON round trip unchanged."""
    assert json.loads(json.dumps(value)) == value


def observable(state: State) -> dict:
    """Everything observable about a state: whose turn, the legal actions, every seat's view
    and the public one (built afresh, but it may share lists with the state)."""
    views = [state.view(s) for s in range(state.seats)] + [state.view(None)]
    return {"to_act": state.to_act, "legal": state.legal_actions(), "views": views}


def snapshot(state: State) -> str:
    """`observable` as a JSON text, which no later change to the state can reach: to check an
    illegal action changed nothing."""
    return json.dumps(observable(state), sort_keys=True)


def assert_illegal_rejected(state: State, action) -> None:
    """`action` raises IllegalAction and leaves the state exactly as it was."""
    assert_all_illegal_rejected(state, [action])


def assert_all_illegal_rejected(state: State, actions: Iterable) -> None:
    """Each of `actions`, tried in turn, raises IllegalAction and leaves the state exactly as it
    was (one snapshot before them all: each must leave the state as the first found it)."""
    before = snapshot(state)
    for action in actions:
        with pytest.raises(IllegalAction):
            state.apply(copy.deepcopy(action))
        assert snapshot(state) == before, action


def play_random(
    state: State,
    rng: random.Random,
    on_step: Callable[[State], None] | None = None,
    max_steps: int = 100_000,
    choose: Callable[[list[dict]], dict] | None = None,
) -> list[dict]:
    """Play random legal actions to the end (uniformly, or as `choose(legal)` picks with
    `rng`); returns the actions."""
    actions = []
    while not state.is_over:
        if on_step:
            on_step(state)
        legal = state.legal_actions()
        assert legal, "a live state must offer at least one action"
        for a in legal:
            assert_json_safe(a)
        action = choose(legal) if choose else rng.choice(legal)
        state.apply(copy.deepcopy(action))  # apply must not depend on object identity
        actions.append(action)
        assert len(actions) <= max_steps, "the game did not end"
    if on_step:
        on_step(state)
    return actions


def assert_result_shape(result: dict, seats: int) -> None:
    assert_json_safe(result)
    assert len(result["scores"]) == seats
    ranks = result["ranks"]
    assert len(ranks) == seats
    # 1 = best; ties share and the next rank is skipped (1, 1, 3)
    for seat, rank in enumerate(ranks):
        better = sum(1 for r in ranks if r < rank)
        assert rank == better + 1, (seat, ranks)
    assert isinstance(result["decks"], list) and result["decks"]


def assert_replays_identically(new_state: Callable[[], State], actions: Iterable[dict]) -> None:
    """The same seed, options and actions give the same views and result."""
    a, b = new_state(), new_state()
    for action in actions:
        assert observable(a) == observable(b)
        a.apply(action)
        b.apply(action)
    assert json.dumps(a.result(), sort_keys=True) == json.dumps(b.result(), sort_keys=True)
