"""The referee: how an answer is judged, a decision asked and a match refereed to its end.

Written once, for every place that referees: local play (`sdk.local`,
`cardarena play`) and the platform (the worker's match flow, the turns API).
Standard library and `games` only, so it ships with the SDK: a bot author's
machine judges a bot exactly as the platform does. Its parts, one module each:

* **Answers** (here) — `listed_action` (which listed action an answer is, or
  None; never raises), `judge` (that action, or `legal[0]` and the fault) and
  `judged_entry` (the one fault policy of an asked turn).
* **Faults** — `sdk.faults`: `"<kind>: <detail>"` texts and `SeatTally`.
* **Time** — `sdk.clock`: `TimeRules`, a `Clock` per seat (`move_ms` per
  decision plus a bank that pays for overruns).
* **A match** (here) — `MatchReferee`: state, tallies, clocks and turn, rebuilt
  from the log alone (`replay`) and advanced only by `record(entry)`. A log
  entry is `{"turn", "seat", "action"[, "fault"][, "ms"]}`; `"ms"`, the latency
  charged to a seat that was asked, makes the log the truth for time too.
  `outcome` is the result with forfeits ranked last.
* **Records and standings** — `sdk.standings`.
"""

from __future__ import annotations

from typing import Any

import games
from games.base import canonical
from games.ranking import forfeit_ranks
from sdk.clock import DEFAULT_TIME
from sdk.clock import seat_clocks as clocks_for
from sdk.faults import FORFEITED, SeatTally, fault, fault_kind, timeout_fault

#: the protocol version of the decisions the referee builds (docs/api.md §3)
PROTOCOL = 1


# -- answers -----------------------------------------------------------------

def offer(legal: list[dict]) -> list[dict]:
    """Copies of the legal actions to hand a bot in this process: a bot that edits
    the action it returns cannot edit the engine's."""
    copies = []
    for action in legal:  # dicts, most of them flat: copied whole, then their containers
        copy = action.copy()
        for key, value in copy.items():
            if type(value) in _CONTAINERS:
                copy[key] = _json_copy(value)
        copies.append(copy)
    return copies


def _json_copy(value: Any) -> Any:
    """A copy of a JSON value deep enough that editing it edits nothing shared
    (the leaves are immutable); called only for containers, as it is hot."""
    if type(value) is dict:
        return {k: _json_copy(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    return [_json_copy(v) if type(v) in _CONTAINERS else v for v in value]


_CONTAINERS = (dict, list)


def listed_action(legal: list[dict], answer: Any, offered: list[dict] | None = None) -> dict | None:
    """The action of `legal` that `answer` is, or None; never raises, whatever `answer` is.

    A bot usually hands back one of the objects it was given, so identity is
    tried first (with `offered`, the copies it was given: an unedited copy
    stands for its original). Otherwise the rule of `State.apply`: equal with
    the same JSON types, lists in any order (`games.canonical`).
    """
    if offered is not None:
        for original, copy in zip(legal, offered, strict=False):
            if answer is copy:
                if copy == original:
                    return original
                break
    else:
        for action in legal:
            if action is answer:
                return action
    try:
        key = canonical(answer)
        for action in legal:
            if canonical(action) == key:
                return action
    except Exception:  # not JSON, too deep, keys that are not strings: no listed action
        return None
    return None


def judge(state: games.State, legal: list[dict], answer: Any,
          offered: list[dict] | None = None) -> tuple[dict, str | None]:
    """`(action, None)` for a listed answer, else `(legal[0], fault)`.

    A non-JSON answer (not an object, or holding what JSON cannot) is
    `bad_answer`; a JSON object that is not listed is `illegal`, with the
    engine's reason, which is built from the acting seat's view only.
    """
    action = listed_action(legal, answer, offered)
    if action is not None:
        return action, None
    if type(answer) is not dict:
        return legal[0], fault("bad_answer", f"an action is a JSON object, not {type(answer).__name__}")
    try:
        canonical(answer)
    except Exception as exc:
        reason = str(exc) if isinstance(exc, games.IllegalAction) else type(exc).__name__
        return legal[0], fault("bad_answer", f"not JSON: {reason}")
    try:
        state.apply(answer)  # not listed, so the engine refuses it, saying why, and changes nothing
    except games.IllegalAction as exc:
        return legal[0], fault("illegal", str(exc) or "not one of the legal actions")
    except Exception as exc:  # an engine's explanation that failed: still only this seat's fault
        return legal[0], fault("illegal", f"not one of the legal actions ({type(exc).__name__})")
    raise AssertionError(f"the engine applied an action that is not listed: {answer!r:.200}")


def judged_entry(turn: int, seat: int, legal: list[dict], deadline_ms: int, ms: int | None, answer: Any,
                 failure: str | None, judge_answer, bank_ms: int | None = None) -> dict:
    """The log entry of an asked seat's turn — the one fault policy, wherever the answer is judged
    (`MatchReferee.answered` here, a remote bot's on the platform: core/answers.py).

    Past the deadline, or a timeout `failure`, it is a timeout charged the whole deadline (`ms`
    None: nobody answered); another `failure` plays `legal[0]`; else `judge_answer()` gives the
    action played and its fault, if any.
    """
    if (ms is not None and ms > deadline_ms) or (failure is not None and fault_kind(failure) == "timeout"):
        action = legal[0]
        failure = failure or timeout_fault(deadline_ms, bank_ms, ms)
        ms = deadline_ms
    elif failure is None:
        action, failure = judge_answer()
    else:
        action = legal[0]
    entry = {"turn": turn, "seat": seat, "action": action}
    if failure is not None:
        entry["fault"] = failure
    if ms is not None:
        entry["ms"] = ms
    return entry


# -- a match -----------------------------------------------------------------

class MatchReferee:
    """One match as its log makes it: state, tallies, clocks and the turn.

    The only way it moves is `record(entry)`, so a referee rebuilt from a log
    (`replay`) is the one that wrote it. The caller asks bots; the referee
    says what to ask (`decision`), what an answer makes (`answered`), what to
    play for a forfeited seat (`forfeit_entry`), and how it ended (`outcome`).
    """

    def __init__(self, game: str, seats: int, seed: int = 0, options: dict | None = None,
                 max_faults: int = DEFAULT_TIME.max_faults, move_ms: int = DEFAULT_TIME.move_timeout_ms,
                 bank_ms: int = DEFAULT_TIME.time_bank_ms, seat_clocks: list[dict | None] | None = None) -> None:
        self.game = game
        self.state = games.get(game).new(seats, seed, dict(options or {}))
        self.tally = SeatTally(seats, max_faults)
        self.clocks = clocks_for(seats, move_ms, bank_ms, seat_clocks)
        self.turn = 0
        self._offered: tuple[int, list[dict]] | None = None

    def replay(self, log: list[dict]) -> MatchReferee:
        """Record every entry of `log` (a fresh referee: the match so far); itself."""
        for entry in log:
            self.record(entry)
        return self

    @property
    def is_over(self) -> bool:
        return self.state.is_over

    @property
    def to_act(self) -> int | None:
        return self.state.to_act

    def forfeited(self) -> bool:
        """Whether the seat to act has forfeited: the referee plays for it, nobody is asked."""
        return self.state.to_act in self.tally.forfeited

    def record(self, entry: dict) -> None:
        """Advance by one log entry: its action, its fault, its time."""
        seat = self.state.to_act
        assert seat is not None  # the match is on
        if entry.get("turn") != self.turn or entry.get("seat") != seat:
            raise ValueError(f"entry {entry.get('turn')!r} (seat {entry.get('seat')!r}) does not "
                             f"follow turn {self.turn - 1} (seat {seat} is to act at turn {self.turn})")
        self.state.apply(entry["action"])
        self.tally.count(entry)
        ms = entry.get("ms")
        if ms is not None:
            self.clocks[seat].charge(ms)
        self.turn += 1
        self._offered = None

    def decision(self, match_id: str) -> dict:
        """The decision for the seat to act (docs/api.md §3, §5), legal actions as copies."""
        seat = self.state.to_act
        assert seat is not None  # the match is on
        clock = self.clocks[seat]
        offered = offer(self.state.legal_actions())
        self._offered = (self.turn, offered)
        return {"type": "turn", "protocol": PROTOCOL, "match_id": match_id, "game": self.game,
                "turn": self.turn, "seat": seat, "view": self.state.view(seat),
                "legal_actions": offered, "deadline_ms": clock.deadline_ms,
                "clock": {"move_ms": clock.move_ms, "bank_ms": clock.bank_ms},
                "last_latency_ms": clock.last_latency_ms}

    def answered(self, answer: Any, ms: int, failure: str | None = None) -> dict:
        """The entry for the seat to act, asked and answering `answer` after `ms`
        (or failing: `failure`, a fault text). Not recorded yet.

        Past the deadline, or a timeout `failure`, is a timeout charged the whole deadline.
        """
        seat = self.state.to_act
        assert seat is not None  # the match is on
        legal = self.state.legal_actions()
        offered = self._offered[1] if self._offered and self._offered[0] == self.turn else None
        clock = self.clocks[seat]
        return judged_entry(self.turn, seat, legal, clock.deadline_ms, ms, answer, failure,
                            lambda: judge(self.state, legal, answer, offered), bank_ms=clock.bank_ms)

    def forfeit_entry(self) -> dict:
        """The entry the referee plays for a forfeited seat (no time: nobody was asked)."""
        return {"turn": self.turn, "seat": self.state.to_act,
                "action": self.state.legal_actions()[0], "fault": FORFEITED}

    def outcome(self) -> dict:
        return outcome(self.state, self.tally)


# -- the end -----------------------------------------------------------------

def outcome(state: games.State, tally: SeatTally) -> dict:
    """The match's result: the engine's, forfeiting seats ranked last and listed
    in `forfeits` (when there are any), and `faults` per seat."""
    result = dict(state.result())
    forfeits = sorted(tally.forfeited)
    if forfeits:
        result["ranks"] = forfeit_ranks(result["ranks"], forfeits)
        result["forfeits"] = forfeits
    result["faults"] = list(tally.faults)
    return result

