"""`cardarena replay`: a match's decisions, or a bot's answers to them beside the moves played.

SOURCE is a match on a platform (its page `http://host/matches/<id>` or its
API address), an exported file (`GET /matches/{id}/export`, or `cardarena
play --export`), or a tournament's URL or JSON Lines file with `--match ID`.
Without `--bot` it lists the decisions; `--turn K` prints decision K in full,
as the seat received it. With `--bot BOT` it gives BOT the decisions its
seat(s) received (`sdk.replay.Replay.rerun`) and shows each answer beside the
move played, marking where they differ, where the bot raised (with its
traceback) and where the referee would fault it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from typing import Any
from urllib.parse import quote

from sdk import export
from sdk.faults import fault_kind
from sdk.play import bot_class, make_bot
from sdk.replay import Replay, RerunRow, Step, load
from sdk.textout import print_table

HELP = "print a match's decisions, or run a bot on the decisions its seat received"
#: how wide a cell of the decisions' table may grow
CELL = 44


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", metavar="SOURCE",
                        help="a match's URL (http://host/matches/ID, or its /api/v1 address), an exported "
                             "file, or a tournament's URL or JSON Lines file (with --match)")
    parser.add_argument("--match", metavar="ID", help="the match to replay, when SOURCE holds several")
    parser.add_argument("--turn", type=int, metavar="K",
                        help="only decision K: printed in full as JSON, or with --bot the bot's answer "
                             "to it (after the seat's earlier decisions, as in the match)")
    parser.add_argument("--bot", metavar="BOT",
                        help="module:Class (importable from the current folder) or path/to/file.py:Class: "
                             "give it the decisions and show its answers beside the moves played")
    parser.add_argument("--seat", type=int, action="append", metavar="S",
                        help="only seat S's decisions (repeat for several; default every seat)")
    parser.add_argument("--no-deadline", action="store_true",
                        help="with --bot: let it think as long as it likes (to step through it in a "
                             "debugger); by default each answer has the decision's deadline_ms")


def run(args: argparse.Namespace) -> int:
    try:
        replay = load(args.source, args.match)
        names = seat_names(args.source, replay)
        seats = _seats(replay, args.seat)
        if args.bot is None:
            show_decisions(replay, seats, args.turn, names)
            return 0
        spec = args.bot
        cls = bot_class(spec, replay.game)
        if args.turn is not None:
            seats = [_seat_of(replay, args.turn, seats)]  # the rows up to it, of its seat only
        rows = replay.rerun(lambda: make_bot(spec, cls), seats, upto=args.turn,
                            deadline=not args.no_deadline)
    except ValueError as exc:  # ExportError too
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.turn is not None:
        show_one_answer(rows, args.turn)
    else:
        show_answers(replay, rows, spec, names)
    return 0


def seat_names(source: str, replay: Replay) -> list[str]:
    """Who sat where, as people know them: a platform's match names each bot by its name
    (its id beside it), asked of the platform it came from; a file's seats stay as the file
    names them (`cardarena play` names them by BOT). A bot the platform does not answer for
    keeps its id: the names only label the output."""
    import requests

    found = export._URL.match(str(source))
    if not found:
        return list(replay.seats)
    base = found["base"].rstrip("/") + "/api/v1/bots/"
    names: dict[str, str] = {}
    with requests.Session() as session:
        for bot in dict.fromkeys(replay.seats):
            try:
                response = session.get(base + quote(bot, safe=""), timeout=(5, 10))
                name = response.json()["name"] if response.status_code == 200 else None
            except (requests.RequestException, ValueError, KeyError, TypeError):
                name = None
            names[bot] = f"{name} ({bot})" if isinstance(name, str) and name != bot else bot
    return [names[bot] for bot in replay.seats]


def _seats(replay: Replay, chosen: list[int] | None) -> list[int]:
    seats = list(range(len(replay.seats)))
    if chosen is None:
        return seats
    wrong = sorted(set(chosen) - set(seats))
    if wrong:
        raise ValueError(f"--seat {wrong[0]}: match {replay.id} has seats 0 to {seats[-1]}")
    return sorted(set(chosen))


def _seat_of(replay: Replay, turn: int, seats: list[int]) -> int:
    """The seat asked at `turn`, which must be among `seats` (ValueError if none was asked)."""
    seat = replay.decision(turn)["seat"]
    if seat not in seats:
        raise ValueError(f"turn {turn} was seat {seat}'s decision, not seat {', '.join(map(str, seats))}'s")
    return seat


# -- the decisions -----------------------------------------------------------

def header(replay: Replay, names: list[str] | None = None) -> str:
    """Which match, who sat where (`names`, default as the document names them), its rules and
    its result, in two lines."""
    seated = ", ".join(f"{i} {bot}" for i, bot in enumerate(names or replay.seats))
    bank = "no bank" if replay.time_bank_ms is None else f"{replay.time_bank_ms} ms bank"
    if replay.result is None:
        ending = f"no result (aborted after {len(replay.log)} turns)"
    else:
        ending = f"ranks {replay.result['ranks']}, scores {replay.result['scores']}"
    return (f"match {replay.id}: {replay.game}, seed {replay.seed}, seats {seated}\n"
            f"{replay.move_timeout_ms} ms a move + {bank}, {replay.max_faults} faults forfeit; {ending}")


def show_decisions(replay: Replay, seats: list[int], turn: int | None, names: list[str] | None = None) -> None:
    """Every decision of `seats` a line, or decision `turn` in full."""
    if turn is not None:
        _seat_of(replay, turn, seats)
        print(json.dumps(replay.decision(turn), indent=2, ensure_ascii=False))
        return
    rows = [_decision_row(step) for step in replay.steps() if step.seat in seats]
    print_table(header(replay, names), ("turn", "seat", "decision", "legal", "played", "fault"), rows,
                left=("decision", "played", "fault"))


def _decision_row(step: Step) -> tuple[str, ...]:
    fault = step.entry.get("fault") or ""
    if step.decision is None:  # the referee played for a forfeited seat
        return (str(step.turn), str(step.seat), "(forfeited: not asked)", "", _json(step.entry["action"]),
                fault)
    return (str(step.turn), str(step.seat), summary(step.decision["view"]),
            str(len(step.decision["legal_actions"])), _json(step.entry["action"]), _cut(fault, 60))


def summary(view: dict, width: int = CELL) -> str:
    """A seat's view in a few words: what it must decide, and its hand."""
    parts = [view[key] for key in ("pending", "phase") if isinstance(view.get(key), str)]
    hand = view.get("hand")
    if isinstance(hand, list):
        parts.append("hand " + " ".join(str(card) for card in hand))
    return _cut(" · ".join(parts) or ", ".join(sorted(view)), width)


# -- a bot's answers ---------------------------------------------------------

def verdict(row: RerunRow) -> str:
    """`=` the move played, `≠` another legal move, or the fault the answer would be."""
    if row.fault is not None:
        return fault_kind(row.fault)
    return "=" if row.same else "≠"


def show_answers(replay: Replay, rows: list[RerunRow], spec: str, names: list[str] | None = None) -> None:
    """The bot's answers beside the moves played, its tracebacks, and a count of each verdict."""
    table = [(str(r.turn), str(r.seat), _played(r), _json(r.answered), verdict(r), _cut(r.fault or "", 60))
             for r in rows]
    print_table(header(replay, names) + f"\n{spec} on {len(rows)} decisions",
                ("turn", "seat", "played", "bot", "", "fault"), table, left=("played", "bot", "", "fault"))
    for r in rows:
        if r.traceback:
            print(f"\nturn {r.turn}, seat {r.seat}: {spec} raised\n{r.traceback.rstrip()}")
    counts = Counter(verdict(r) for r in rows)
    named = {"=": "as played", "≠": "different"}
    print("\n" + ", ".join(f"{n} {named.get(v, v)}" for v, n in sorted(counts.items(), key=lambda kv: -kv[1]))
          if rows else "\nnone of these seats was sent a decision")


def _played(row: RerunRow) -> str:
    """The move played, and the kind of fault it was played for (the referee's default then)."""
    return _json(row.played) + (f" ({fault_kind(row.logged_fault)})" if row.logged_fault else "")


def show_one_answer(rows: list[RerunRow], turn: int) -> None:
    """The bot's answer to decision `turn` in full: played, answered, verdict, traceback."""
    row = rows[-1]  # the seat's earlier decisions came first, as in the match
    assert row.turn == turn
    print(f"turn {turn}, seat {row.seat} (the decision: cardarena replay SOURCE --turn {turn})")
    print(f"played: {_json(row.played, None)}" + (f"  (the referee's, for {row.logged_fault})"
                                                   if row.logged_fault else ""))
    print(f"bot:    {_json(row.answered, None)}  ({row.ms} ms)")
    if row.fault is not None:
        print(f"fault:  {row.fault}")
    else:
        print("the same move" if row.same else "a different legal move")
    if row.traceback:
        print(row.traceback.rstrip())


# -- text --------------------------------------------------------------------

def _json(value: Any, width: int | None = CELL) -> str:
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):  # what a bot answered may not be JSON
        try:
            text = repr(value)
        except Exception:  # nor even printable
            text = f"<{type(value).__name__}>"
    return text if width is None else _cut(text, width)


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
