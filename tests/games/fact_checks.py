"""Checking "what a seat can infer" (each rules page's section) on true states and samples.

Each game's fact test derives the facts from a seat's view alone (written
again there, independently of the sampler, from the rules page), then calls
`check_facts`: every fact must hold in the true state — so the fact is right —
and in every sample drawn from that view — so `sample()` respects it.
Positions come from seeded matches played by random moves and by the game's
heuristic bot, so both ordinary and odd lines of play are covered.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from games.base import Game, State

#: a fact: (a name saying what it claims, a test of a full state)
Fact = tuple[str, Callable[[State], bool]]


def positions(game: Game, seats: int, options: dict, matches: int, bot=None,
              every: int = 1, seed: str = "facts", mix: float = 0.25) -> Iterator[tuple[State, int]]:
    """(state, seat) at every `every`-th decision of seeded matches, each seat in turn.

    With `bot`, every seat plays the bot's move, or a random one with chance `mix`
    (so the lines differ); else all moves are random.
    """
    for m in range(matches):
        rng = random.Random(f"{seed}:{game.name}:{seats}:{options}:{m}:{bot is not None}")
        state = game.new(seats, rng.getrandbits(40), options)
        step = 0
        while not state.is_over:
            if step % every == 0:
                yield state, (step // every) % seats
            legal = state.legal_actions()
            if bot is not None and rng.random() >= mix:
                action = bot.act(state.view(state.to_act), legal)
            else:
                action = rng.choice(legal)
            state.apply(action)
            step += 1


def check_facts(game: Game, state: State, seat: int, facts: list[Fact], samples: int,
                rng: random.Random) -> int:
    """Each fact holds in `state` and in `samples` samples of `seat`'s view; returns the
    number of facts checked (so a test can insist that some were)."""
    for name, holds in facts:
        assert holds(state), f"the fact {name!r} is false in the true state (seat {seat})"
    if facts:
        view = state.view(seat)
        for _ in range(samples):
            seed = rng.getrandbits(32)
            sample = game.sample(view, seed)
            for name, holds in facts:
                assert holds(sample), f"sample({seed}) breaks the fact {name!r} (seat {seat})"
    return len(facts)
