"""Replays: every decision of a match rebuilt exactly, and a bot run on them again.

    from sdk.replay import load

    replay = load("http://127.0.0.1:5000/matches/m_3f9c2a")  # or an export file, or a document
    replay.decision(17)                         # decision 17, exactly as its seat received it
    for row in replay.rerun(MyBot, seats=[1]):  # MyBot fed every decision seat 1 received
        print(row.turn, row.played, row.answered, row.fault)

A match's log holds its actions, faults and the time charged each answer;
the referee (`sdk.referee.MatchReferee`) rebuilt from it is the one that
wrote it, so the decision it builds at turn k — view, legal actions,
deadline, clock, last latency — is the one the seat was sent. Reading the
document is `sdk.export`'s job; checking that its log replays is this
module's, so a log that does not is refused at load, saying at which turn.
`cardarena replay` (`sdk.replay_command`) prints all this.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from games.base import canonical
from sdk import export
from sdk.bot import Bot
from sdk.export import ExportError
from sdk.faults import FORFEITED
from sdk.instances import BotSource, is_shared, new_bot
from sdk.local import caller, timed
from sdk.referee import MatchReferee

#: what a decision of a match from before the time bank did not hold
_CLOCK_KEYS = ("clock", "last_latency_ms")


@dataclass
class Step:
    """One log entry, and the decision its seat was sent (None where the referee played
    for a forfeited seat: nobody was asked)."""

    entry: dict
    decision: dict | None

    @property
    def turn(self) -> int:
        return self.entry["turn"]

    @property
    def seat(self) -> int:
        return self.entry["seat"]


@dataclass
class RerunRow:
    """A decision given again to a bot: the move played then, and the bot's answer now.

    `fault` is the referee's judgement of the answer now (None for a legal
    one); `logged_fault` the fault the log holds for the move played.
    """

    turn: int
    seat: int
    played: dict
    answered: Any
    fault: str | None
    logged_fault: str | None = None
    traceback: str | None = None
    ms: int = 0
    #: the listed action the answer is (None when faulted)
    action: dict | None = None

    @property
    def same(self) -> bool:
        """Whether the bot now plays what was played then."""
        return self.fault is None and canonical(self.action) == canonical(self.played)


class Replay:
    """One match, from its export document; its log is checked as it is loaded."""

    def __init__(self, document: dict) -> None:
        self.document = export.check(document)
        self.id: str = document["id"]
        self.game: str = document["game"]
        self.seats: list[str] = export.bots(document)
        self.seed: int = document["seed"]
        self.options: dict = document["options"]
        self.log: list[dict] = document["log"]
        self.result: dict | None = document["result"]
        self.move_timeout_ms, self.time_bank_ms, self.max_faults = export.rules(document)
        self.seat_clocks = export.seat_clocks(document)
        self._check()

    def __repr__(self) -> str:
        return f"<Replay {self.id} {self.game}, {len(self.log)} turns>"

    def referee(self) -> MatchReferee:
        """A referee at the match's start, under the match's rules."""
        return MatchReferee(self.game, len(self.seats), self.seed, self.options, self.max_faults,
                            self.move_timeout_ms, self.time_bank_ms or 0, self.seat_clocks)

    def steps(self) -> Iterator[Step]:
        """Every log entry in order, with the decision its seat was sent."""
        referee = self.referee()
        for entry in self.log:
            yield Step(entry, None if referee.forfeited() else self._decision(referee))
            referee.record(entry)

    def decisions(self) -> Iterator[dict]:
        """Every decision a seat was sent, in order, each exactly as it was sent."""
        return (step.decision for step in self.steps() if step.decision is not None)

    def decision(self, turn: int) -> dict:
        """Decision `turn`, exactly as its seat received it."""
        step = self.step(turn)
        if step.decision is None:
            raise ExportError(f"turn {turn} of match {self.id} was played by the referee for seat "
                              f"{step.seat}, which had forfeited: no decision was sent")
        return step.decision

    def step(self, turn: int) -> Step:
        """Log entry `turn` with its decision (rebuilt from the start: the log is the state)."""
        if not 0 <= turn < len(self.log):
            raise ExportError(f"match {self.id} has turns 0 to {len(self.log) - 1}, not {turn}")
        return next(step for step in self.steps() if step.turn == turn)

    def rerun(self, bot: BotSource, seats: Iterable[int] | None = None,
              upto: int | None = None, deadline: bool = True) -> list[RerunRow]:
        """Give `bot` every decision `seats` (default all) received, up to turn `upto`; a row each.

        `bot` is a `Bot`, which then holds every seat asked, or a class (any
        callable making one), called once per seat as in a match. Each seat's
        first decision is preceded by `on_match_start`, as in a match. With
        `deadline`, an answer has the decision's `deadline_ms` (a timeout is
        a fault, as in a match); without, the bot may take as long as it
        likes (to step through it in a debugger). The moves played stay the
        logged ones, whatever the bot answers.
        """
        wanted = set(range(len(self.seats)) if seats is None else seats)
        unknown = sorted(wanted - set(range(len(self.seats))))
        if unknown:
            raise ValueError(f"match {self.id} has seats 0 to {len(self.seats) - 1}, not {unknown}")
        is_shared(bot)  # neither an instance nor a class or factory: a TypeError now
        players: dict[int, Bot] = {}
        call = caller() if deadline else (lambda fn, seconds: fn())
        rows = []
        referee = self.referee()
        for entry in self.log:
            if upto is not None and entry["turn"] > upto:
                break
            seat = entry["seat"]
            if seat in wanted and not referee.forfeited():
                first = seat not in players
                if first:
                    players[seat] = bot if isinstance(bot, Bot) else new_bot(bot)
                rows.append(self._ask(referee, players[seat], first, call, entry, deadline))
            referee.record(entry)
        return rows

    # -- inside ---------------------------------------------------------------
    def _decision(self, referee: MatchReferee) -> dict:
        decision = referee.decision(self.id)
        if self.time_bank_ms is None:  # sent before decisions had a clock: as it was sent
            for key in _CLOCK_KEYS:
                decision.pop(key)
        return decision

    def _ask(self, referee: MatchReferee, bot: Bot, first: bool, call: Callable, entry: dict,
             deadline: bool) -> RerunRow:
        decision = self._decision(referee)

        def ask() -> Any:
            if first:
                bot.on_match_start(self.id, decision["seat"], decision["view"])
            return bot.decide(decision)

        answer, failure, trace, ms = timed(call, ask, decision)
        judged = referee.answered(answer, ms if deadline else 0, failure)
        failure = judged.get("fault")
        return RerunRow(turn=entry["turn"], seat=entry["seat"], played=entry["action"],
                        answered=_kept(answer), fault=failure, logged_fault=entry.get("fault"),
                        traceback=trace, ms=ms, action=None if failure else judged["action"])

    def _check(self) -> None:
        """Refuse a log that does not replay, saying at which turn; and a result it does not make."""
        referee = self.referee()
        where = f"match {self.id}"
        for i, entry in enumerate(self.log):
            if referee.is_over:
                raise ExportError(f"{where}: turn {i}: the match was already over")
            marked = entry.get("fault") == FORFEITED
            if marked != referee.forfeited():
                seat = referee.to_act
                assert seat is not None  # the match is not over (checked above)
                raise ExportError(f"{where}: turn {i}: seat {seat} " + (
                    f"is marked forfeited after {referee.tally.faults[seat]} faults "
                    f"(max_faults {self.max_faults})" if marked else "had forfeited, yet was asked"))
            ms = entry.get("ms")
            if ms is not None and (type(ms) is not int or ms < 0):
                raise ExportError(f"{where}: turn {i}: 'ms' must be a whole number of at least 0, not {ms!r}")
            try:
                referee.record(entry)
            except Exception as exc:  # whatever a hostile action does to an engine
                raise ExportError(f"{where}: turn {i} does not replay: {type(exc).__name__}: "
                                  f"{str(exc)[:300]}") from None
        if self.result is None:
            return  # aborted: the log is what was played
        if not referee.is_over:
            raise ExportError(f"{where}: the log ends at turn {len(self.log)} before the match is over, "
                              "yet it has a result")
        replayed = referee.outcome()
        for key in ("scores", "ranks"):
            if self.result.get(key) != replayed[key]:
                raise ExportError(f"{where}: the log replays to {key} {replayed[key]}, "
                                  f"not the result's {self.result.get(key)}")


def load(source: Any, match: str | None = None) -> Replay:
    """The replay of a match: `source` is its URL on a platform (its page or API
    address), a tournament's URL with `match`, an export file (JSON, or JSON
    Lines with `match`), or a document already loaded. `ExportError` says
    what is wrong with one that is not a match."""
    return Replay(export.read(source, match))


def _kept(answer: Any) -> Any:
    """The answer as it was, whatever the bot does with it later."""
    try:
        return copy.deepcopy(answer)
    except Exception:  # a hostile object that refuses copying: shown as it is now
        return answer
