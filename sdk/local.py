"""Offline play: run a match between `Bot` objects in this process.

For bot authors testing a bot without a server, and for `cardarena play`.
It applies the platform's fault policy (api.md §3) so a bot behaves the same
here as on the platform: an exception or an illegal answer is a fault, the
first legal action is played instead, and after `max_faults` the seat has
forfeited and ranks last.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import games
from games.base import canonical
from games.ranking import forfeit_ranks
from sdk.bot import Bot


@dataclass
class LocalMatch:
    """The outcome of one offline match."""

    result: dict
    actions: list[dict]
    faults: list[list[str]] = field(default_factory=list)  # per seat, the reasons
    forfeits: list[int] = field(default_factory=list)


def play_local(
    game: str,
    bots: list[Bot],
    seed: int = 0,
    options: dict | None = None,
    max_faults: int = 3,
) -> LocalMatch:
    """Play one match; seat i is `bots[i]`."""
    state = games.get(game).new(seats=len(bots), seed=seed, options=options or {})
    faults: list[list[str]] = [[] for _ in bots]
    forfeited: list[int] = []
    actions: list[dict] = []
    started: set[int] = set()
    while not state.is_over:
        seat = state.to_act
        legal = state.legal_actions()
        action = None
        if seat not in forfeited:
            try:
                view = state.view(seat)
                if seat not in started:  # the same hook order as on the platform
                    started.add(seat)
                    bots[seat].on_match_start("local", seat, view)
                answer = bots[seat].act(view, list(legal))
                key = canonical(answer)
                action = next((a for a in legal if canonical(a) == key), None)
                if action is None:
                    faults[seat].append(f"illegal action {answer!r}")
            except Exception as exc:  # a bot's bug costs only its own match
                faults[seat].append(f"{type(exc).__name__}: {exc}")
            if action is None and len(faults[seat]) >= max_faults:
                forfeited.append(seat)
        if action is None:
            action = legal[0]
        state.apply(action)
        actions.append(action)
    result = dict(state.result())
    if forfeited:
        result["ranks"] = forfeit_ranks(result["ranks"], forfeited)
        result["forfeits"] = sorted(forfeited)
    for bot in bots:
        try:
            bot.on_match_over("local", result)
        except Exception:
            pass
    return LocalMatch(result=result, actions=actions, faults=faults, forfeits=sorted(forfeited))
