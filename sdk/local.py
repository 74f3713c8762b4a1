"""Offline play: a match between `Bot` objects in this process, refereed as the platform does.

For bot authors testing a bot without a server, and for `cardarena play`.
A seat's bot is a class (or zero-argument factory: `sdk.instances`), made
anew for this match and seat, or an instance (the caller's: one object may
hold several seats, and keeps what it learned from one match to the next).
The referee is the platform's own (`sdk.referee`), so a bot meets the same
rules here: each decision has `move_timeout_ms` plus what is left of a
`time_bank_ms` bank; an exception (`bot_error`), an illegal action
(`illegal`), an answer that is not an action (`bad_answer`) or no answer in
time (`timeout`) is a fault, for which the first legal action is played; after
`max_faults` faults the seat has forfeited and ranks last. The log comes back
as the platform writes it, `ms` included, beside the result.

A bot that overruns is cut off at its deadline. In the main thread the
SIGUSR1 watchdog (`sdk.watchdog`) interrupts it inside its own code. Off the
main thread (a notebook's worker, a test runner's thread) each call runs in a
helper thread and the referee stops waiting at the deadline; Python cannot
stop a thread, so an abandoned call runs on in the background until the bot
returns — its answer is dropped, and it may overlap the bot's next calls.
That thread is the local player's problem, and a reason to play from the
main thread.
"""

from __future__ import annotations

import copy
import os
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sdk import export
from sdk.bot import Bot
from sdk.clock import DEFAULT_TIME, elapsed_ms
from sdk.debug import Notes, collecting
from sdk.faults import decision_timeout, fault, fault_kind
from sdk.instances import BotSource, is_shared, new_bot, source_label
from sdk.referee import MatchReferee
from sdk.watchdog import Overrun, watchdog

#: the platform's defaults (docs/api.md §3, §5)
#: how long `on_match_over` may take before it is left behind
MATCH_OVER_S = 1.0
#: the SDK's folder: its frames (the caller's, `Bot.decide`) are cut from a bot's traceback
_SDK = os.path.dirname(os.path.abspath(__file__))


@dataclass
class LocalFault:
    """One fault of a local match, with what only local play can show: the bot's traceback."""

    turn: int
    seat: int
    kind: str
    reason: str  # the fault text as the log has it: "<kind>: <detail>"
    traceback: str | None = None


@dataclass
class LocalMatch:
    """The outcome of one offline match: the log as the platform writes it, and the result."""

    result: dict
    log: list[dict]
    details: list[LocalFault] = field(default_factory=list)
    #: the match as an export document (`sdk.export`): what `sdk.replay.load` and
    #: `cardarena replay` read, as they read the platform's
    export: dict | None = None
    #: what the bots wrote with `Bot.debug`: `{"turn", "seat", "text"}` per turn that has some
    debug: list[dict] = field(default_factory=list)

    @property
    def actions(self) -> list[dict]:
        return [entry["action"] for entry in self.log]

    @property
    def faults(self) -> list[list[str]]:
        """Per seat, the reasons of its faults."""
        out: list[list[str]] = [[] for _ in self.result["scores"]]
        for f in self.details:
            out[f.seat].append(f.reason)
        return out

    @property
    def forfeits(self) -> list[int]:
        return list(self.result.get("forfeits", []))


def play_local(
    game: str,
    bots: list[BotSource],
    seed: int = 0,
    options: dict | None = None,
    max_faults: int = DEFAULT_TIME.max_faults,
    move_timeout_ms: int = DEFAULT_TIME.move_timeout_ms,
    time_bank_ms: int = DEFAULT_TIME.time_bank_ms,
    match_id: str = "local",
) -> LocalMatch:
    """Play one match; seat i is `bots[i]`: a class gets a new instance for this seat (made
    before its first decision, under its deadline: a class that raises is that seat's
    `bot_error`), an instance is used as it is (one object may hold several seats)."""
    for bot in bots:
        is_shared(bot)  # neither an instance nor a class or factory: a TypeError now
    players: dict[int, Bot] = {seat: bot for seat, bot in enumerate(bots) if isinstance(bot, Bot)}
    referee = MatchReferee(game, len(bots), seed, options, max_faults, move_timeout_ms, time_bank_ms)
    call = caller()
    started: set[int] = set()
    details: list[LocalFault] = []
    log: list[dict] = []
    debug: list[dict] = []
    while not referee.is_over:
        if referee.forfeited():
            entry = referee.forfeit_entry()
        else:
            seat = referee.to_act
            assert seat is not None  # the match is on
            first = seat not in started  # the same hook order as on the platform
            started.add(seat)
            entry, trace, text = _ask(referee, players, seat, bots[seat], first, call, match_id)
            if text:
                debug.append({"turn": entry["turn"], "seat": seat, "text": text})
            if "fault" in entry:
                kind = fault_kind(entry["fault"])
                details.append(LocalFault(entry["turn"], seat, kind, entry["fault"],
                                          trace if kind == "bot_error" else None))
        log.append(entry)
        referee.record(entry)
    result = referee.outcome()
    for bot in _distinct(list(players.values())):
        def over(bot: Bot = bot) -> None:  # a copy each: a bot that edits its result edits nobody else's
            bot.on_match_over(match_id, copy.deepcopy(result))

        try:
            call(over, MATCH_OVER_S)
        except (Exception, Overrun):  # the match is over: nothing a bot does now counts
            pass
    seats = [source_label(bot) for bot in bots]
    document = export.document(match_id, game, seats, seed, dict(options or {}), log, result,
                               move_timeout_ms, time_bank_ms, max_faults, debug=debug)
    return LocalMatch(result=result, log=log, details=details, export=document, debug=debug)


def _ask(referee: MatchReferee, players: dict[int, Bot], seat: int, source: BotSource, first: bool,
         call: Callable, match_id: str) -> tuple[dict, str | None, str | None]:
    """Ask the seat to act under its deadline: the entry its answer makes, the bot's
    traceback if it raised, and what it wrote with `Bot.debug` (kept even if it raised).
    A class's instance for the seat is made here, the first time (again at its next
    decision if making it raised)."""
    decision = referee.decision(match_id)
    notes = Notes()

    def ask() -> Any:
        with collecting(notes):  # in the thread that runs the bot (`call` may use a helper)
            bot = players.get(seat)
            if bot is None:
                assert not isinstance(source, Bot)  # an instance holds its seats from the start
                bot = players[seat] = new_bot(source)
                first_here = True
            else:
                first_here = first
            if first_here:
                bot.on_match_start(match_id, decision["seat"], decision["view"])
            return bot.decide(decision)

    answer, failure, trace, ms = timed(call, ask, decision)
    return referee.answered(answer, ms, failure), trace, notes.text


def timed(call: Callable, ask: Callable[[], Any], decision: dict
          ) -> tuple[Any, str | None, str | None, int]:
    """Ask under the decision's deadline: (answer, fault or None, the bot's traceback or None, ms)."""
    began = time.monotonic()
    try:
        answer = call(ask, decision["deadline_ms"] / 1000)
    except Overrun:
        return None, decision_timeout(decision), None, elapsed_ms(began)
    except Exception as exc:  # a bot's bug costs only its own match
        tb = exc.__traceback__
        while tb is not None and os.path.dirname(os.path.abspath(tb.tb_frame.f_code.co_filename)) == _SDK:
            tb = tb.tb_next  # from the bot's side of the call: the SDK's frames say nothing
        trace = "".join(traceback.format_exception(type(exc), exc, tb))
        return None, fault("bot_error", f"{type(exc).__name__}: {_text(exc)}"), trace, elapsed_ms(began)
    return answer, None, None, elapsed_ms(began)


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # an exception whose message itself raises
        return "(its message cannot be shown)"


def caller() -> Callable[[Callable[[], Any], float], Any]:
    """`call(fn, seconds)`: `fn()`, or `Overrun` once it has run `seconds`."""
    if threading.current_thread() is threading.main_thread():
        dog = watchdog()
        if dog.running:

            def under_watchdog(fn: Callable[[], Any], seconds: float) -> Any:
                with dog.limit(seconds):
                    return fn()

            return under_watchdog
    return in_helper_thread


def in_helper_thread(fn: Callable[[], Any], seconds: float) -> Any:
    """`fn()` run in a daemon thread; `Overrun` if it has not returned after `seconds`
    (it then runs on, abandoned: see the module's docstring)."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller, whatever it is
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="cardarena-bot", daemon=True).start()
    if not done.wait(seconds):
        raise Overrun()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _distinct(bots: list[Bot]) -> list[Bot]:
    seen: dict[int, Bot] = {}
    for bot in bots:
        seen.setdefault(id(bot), bot)
    return list(seen.values())
