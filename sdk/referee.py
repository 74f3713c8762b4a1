"""The referee: how an answer is judged, a decision timed, a fault counted and a match scored.

Written once, for every place that referees: local play (`sdk.local`,
`cardarena play`) and the platform (the worker's match flow, the turns API,
the standings). Standard library and `games` only, so it ships with the SDK:
a bot author's machine judges a bot exactly as the platform does.

* **Answers** — `listed_action` (which listed action an answer is, or None;
  never raises) and `judge` (that action, or `legal[0]` and the fault).
* **Faults** — `"<kind>: <detail>"` strings (`fault`, `fault_kind`,
  `KINDS`, `clean`); `SeatTally` counts them per seat and knows who forfeited.
* **Time** — a `Clock` per seat: `move_ms` per decision plus a bank that pays
  for overruns; a decision past `move_ms + bank` is a timeout and empties the bank.
* **A match** — `MatchReferee`: state, tallies, clocks and turn, rebuilt from
  the log alone (`replay`) and advanced only by `record(entry)`. A log entry is
  `{"turn", "seat", "action"[, "fault"][, "ms"]}`; `"ms"`, the latency charged
  to a seat that was asked, makes the log the truth for time too.
* **The end** — `outcome` (the result with forfeits ranked last),
  `seat_records`, `tally_increments` / `standings_from_tallies`, `mean_ci95`,
  `rotations` for duplicate play, and `memory_differences` / `memory_figure`
  (does a bot score better on deals it has already played?).
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Any

import games
from games.base import canonical
from games.ranking import alone_first, forfeit_ranks, match_points
from sdk.stats import Z95, mean_ci, memory

#: the protocol version of the decisions the referee builds (api.md §3)
PROTOCOL = 1
#: what a log entry's "fault" starts with (api.md §5): kind -> what it means
KINDS: dict[str, str] = {
    "timeout": "no complete answer within the decision's deadline",
    "illegal": "an answer that is not one of the legal actions",
    "bad_answer": "an answer that is not the protocol's {\"action\": …} (not JSON, wrong shape, too deep)",
    "bot_error": "the bot failed: it raised, could not be loaded, or said it failed",
    "http_error": "a webhook answered with an HTTP status other than 2xx (redirects are not followed)",
    "unreachable": "the bot's address could not be reached (refused, reset, name not resolved)",
    "too_large": "an answer over the size limit",
    "refused_url": "the referee will not call this URL (malformed, or private with public URLs only)",
}
FAULT_KINDS = tuple(KINDS)
FORFEITED = "forfeited"
#: a fault's detail is cut to this many characters: it is stored and shown with every entry
MAX_DETAIL = 200
#: fault texts written before the kinds existed, by their prefix
_LEGACY_KINDS = {"illegal action": "illegal", "error": "bot_error", "garbage": "bad_answer",
                 "too large": "too_large", "refused URL": "refused_url"}


# -- faults ------------------------------------------------------------------

def fault(kind: str, detail: object = "") -> str:
    """The fault text `"<kind>: <detail>"`, its detail on one line and at most `MAX_DETAIL` long."""
    if kind not in FAULT_KINDS:
        raise ValueError(f"unknown fault kind {kind!r}; the kinds are {', '.join(FAULT_KINDS)}")
    text = clean(detail)
    return f"{kind}: {text}" if text else kind


def clean(text: object, limit: int = MAX_DETAIL) -> str:
    """`text` as one printable line of at most `limit` characters.

    Non-printable characters (controls, lone surrogates, line separators)
    become spaces and runs of spaces one space, so whatever a bot put in its
    answer (an engine's reason quotes it) cannot forge lines or break a page's encoding.
    """
    try:
        text = str(text)
    except Exception:  # a str() that raises (recursion in a hostile repr): say nothing rather
        return "(unprintable)"
    text = "".join(c if c.isprintable() else " " for c in text[: limit * 4])
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fault_kind(text: str) -> str:
    """The kind of a fault text (`FORFEITED` for a forfeited seat's turn)."""
    if text == FORFEITED:
        return FORFEITED
    prefix = text.partition(":")[0].strip()
    if prefix in FAULT_KINDS:
        return prefix
    if prefix.startswith("HTTP "):
        return "http_error"
    return _LEGACY_KINDS.get(prefix, "bot_error")


# -- answers -----------------------------------------------------------------

def offer(legal: list[dict]) -> list[dict]:
    """Copies of the legal actions to hand a bot in this process: a bot that edits
    the action it returns cannot edit the engine's."""
    return [_json_copy(action) for action in legal]  # actions are dicts


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


# -- time --------------------------------------------------------------------

def elapsed_ms(since: float) -> int:
    """Whole milliseconds since `since` (a `time.monotonic()`), rounded up: late is late."""
    return max(0, math.ceil((time.monotonic() - since) * 1000))


@dataclass
class Clock:
    """One seat's time in one match: `move_ms` for every decision, and a bank.

    A decision may take up to `deadline_ms` = `move_ms` + what is left in the
    bank; what it takes beyond `move_ms` is drawn from the bank. Past the
    deadline it is a timeout, charged the whole deadline: the bank is empty.
    """

    move_ms: int
    bank_ms: int
    #: what the seat was charged for its previous decision in this match
    last_latency_ms: int | None = None

    @property
    def deadline_ms(self) -> int:
        return self.move_ms + self.bank_ms

    def charge(self, ms: int) -> None:
        """Charge a decision of `ms` (as logged, so a replay charges the same)."""
        self.bank_ms = max(0, self.bank_ms - max(0, ms - self.move_ms))
        self.last_latency_ms = ms


def seat_times(log: list[dict], seats: int, move_ms: int, bank_ms: int | None) -> list[dict]:
    """Each seat's time in a match, from its log: `{"latency_ms": {"p50", "max"}, "bank_ms"}`
    (the latencies the referee charged its decisions, None before the first; the bank left,
    None for a match from before the bank)."""
    clocks = [Clock(move_ms, bank_ms or 0) for _ in range(seats)]
    charged: list[list[int]] = [[] for _ in range(seats)]
    for entry in log:
        ms, seat = entry.get("ms"), entry.get("seat")
        if type(ms) is int and type(seat) is int and 0 <= seat < seats:
            clocks[seat].charge(ms)
            charged[seat].append(ms)
    return [{"latency_ms": {"p50": statistics.median_low(ms) if ms else None, "max": max(ms, default=None)},
             "bank_ms": None if bank_ms is None else clock.bank_ms}
            for clock, ms in zip(clocks, charged, strict=True)]


# -- faults and forfeits -----------------------------------------------------

class SeatTally:
    """Faults per seat and per kind, and who has forfeited, as the log so far says.

    `max_faults` faults forfeit the seat; the referee then plays for it
    (entries marked `FORFEITED`, which are not faults).
    """

    def __init__(self, seats: int, max_faults: int) -> None:
        self.max_faults = max_faults
        self.faults = [0] * seats
        self.forfeited: set[int] = set()
        self.by_kind: list[dict[str, int]] = [{} for _ in range(seats)]

    def count(self, entry: dict) -> None:
        text = entry.get("fault")
        if text is None or text == FORFEITED:
            return
        seat = entry["seat"]
        self.faults[seat] += 1
        kind = fault_kind(text)
        self.by_kind[seat][kind] = self.by_kind[seat].get(kind, 0) + 1
        if self.faults[seat] >= self.max_faults:
            self.forfeited.add(seat)

    def faults_by_kind(self, seat: int | None = None) -> dict[str, int]:
        """`{kind: count}` for `seat`, or summed over the seats."""
        seats = range(len(self.faults)) if seat is None else [seat]
        out: dict[str, int] = {}
        for s in seats:
            for kind, n in self.by_kind[s].items():
                out[kind] = out.get(kind, 0) + n
        return out


def judged_entry(turn: int, seat: int, legal: list[dict], deadline_ms: int, ms: int | None, answer: Any,
                 failure: str | None, judge_answer) -> dict:
    """The log entry of an asked seat's turn — the one fault policy, wherever the answer is judged
    (`MatchReferee.answered` here, a remote bot's on the platform: server/answers.py).

    Past the deadline, or a timeout `failure`, it is a timeout charged the whole deadline (`ms`
    None: nobody answered); another `failure` plays `legal[0]`; else `judge_answer()` gives the
    action played and its fault, if any.
    """
    if (ms is not None and ms > deadline_ms) or (failure is not None and fault_kind(failure) == "timeout"):
        action = legal[0]
        failure = failure or fault("timeout", f"answered after {ms} ms; the deadline was {deadline_ms} ms")
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
                 max_faults: int = 3, move_ms: int = 2000, bank_ms: int = 10000) -> None:
        self.game = game
        self.state = games.get(game).new(seats, seed, dict(options or {}))
        self.tally = SeatTally(seats, max_faults)
        self.clocks = [Clock(move_ms, bank_ms) for _ in range(seats)]
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
        """The decision for the seat to act (api.md §3, §5), legal actions as copies."""
        seat = self.state.to_act
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
        legal = self.state.legal_actions()
        offered = self._offered[1] if self._offered and self._offered[0] == self.turn else None
        return judged_entry(self.turn, seat, legal, self.clocks[seat].deadline_ms, ms, answer, failure,
                            lambda: judge(self.state, legal, answer, offered))

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


def seat_records(result: dict, bots: list[str]) -> list[dict]:
    """What each seat's bot gets from a finished match (`bots[i]` sat in seat i)."""
    ranks, scores = result["ranks"], result["scores"]
    forfeits = result.get("forfeits") or []
    faults = result.get("faults") or [0] * len(bots)
    return [{"bot": bot, "won": alone_first(ranks, seat), "faults": faults[seat],
             "points": match_points(ranks, seat), "score": _number(scores[seat]),
             "draw": ranks[seat] == 1 and ranks.count(1) > 1, "forfeit": seat in forfeits}
            for seat, bot in enumerate(bots)]


#: a bot's tally over many matches: sums only, so it can live in a Redis hash
TALLY_FIELDS = ("points", "matches", "wins", "draws", "faults", "forfeits", "score", "score2")


def tally_increments(record: dict) -> dict[str, float]:
    """What one seat record adds to its bot's tally."""
    score = _number(record.get("score"))
    return {"points": float(record.get("points", 0.0)), "matches": 1,
            "wins": int(bool(record["won"])), "draws": int(bool(record.get("draw"))),
            "faults": int(record["faults"]), "forfeits": int(bool(record.get("forfeit"))),
            "score": score, "score2": score * score}


def mean_ci95(n: int, total: float, squares: float) -> tuple[float | None, float | None]:
    """Mean and the half-width of its 95% confidence interval (normal approximation,
    1.96 standard errors) from a count, a sum and a sum of squares (sdk/stats.py).

    No interval from one value (None), neither from none.
    """
    return mean_ci(n, total, squares, Z95)


def memory_differences(rotations: list[list[dict]]) -> dict[str, float]:
    """Each bot's memory difference over one deal (api.md §5 "Scheduling"): its mean match
    points in the rotations it played after its first one, minus its points in that first
    one. `rotations`: the seat records of each rotation of the deal, in the order played;
    a bot that played the deal once has none."""
    points: dict[str, list[float]] = {}
    for rotation in rotations:
        for record in rotation:
            points.setdefault(record["bot"], []).append(float(record.get("points", 0.0)))
    return {bot: sum(p[1:]) / (len(p) - 1) - p[0] for bot, p in points.items() if len(p) >= 2}


def standings_from_tallies(tallies: dict[str, dict[str, float]]) -> list[dict]:
    """Standings rows from each bot's tally: by points, then mean score.

    A bot's match points in a match = (seats it ranks above + ½ × seats it ties
    with) / (seats − 1) (api.md §4); `wins` counts matches it alone ranked
    first. Equal points share a rank (1, 1, 3); the mean score only orders rows.
    """
    rows = []
    for bot, t in tallies.items():
        n = int(t["matches"])
        mean, ci = mean_ci95(n, t["score"], t["score2"])
        rows.append({
            "bot": bot, "points": round(t["points"], 6), "matches": n, "wins": int(t["wins"]),
            "draws": int(t["draws"]), "mean_score": None if mean is None else round(mean, 4),
            "ci95": None if ci is None else round(ci, 4), "faults": int(t["faults"]),
            "forfeits": int(t["forfeits"]),
            "memory": memory_figure(int(t.get("memory_n", 0)), t.get("memory", 0.0), t.get("memory2", 0.0)),
        })
    rows.sort(key=lambda r: (-r["points"], -(r["mean_score"] or 0.0), r["bot"]))
    for i, row in enumerate(rows):
        same = i and rows[i - 1]["points"] == row["points"]
        row["rank"] = rows[i - 1]["rank"] if same else i + 1
    return [{"rank": r.pop("rank"), **r} for r in rows]


def memory_figure(n: int, total: float, squares: float) -> dict:
    """A standings row's `memory`: {"diff", "ci95": [lo, hi], "flag"} (sdk/stats.py `memory`)."""
    figure = memory(n, total, squares)
    return {"diff": None if figure.diff is None else round(figure.diff, 4),
            "ci95": None if figure.ci95 is None else [round(v, 4) for v in figure.ci95], "flag": figure.flag}


def rotations(seats: int, duplicate: bool, deal: int) -> list[int]:
    """The seat rotations deal number `deal` is played in: every one in duplicate
    play (each entrant holds each hand), else one, advancing with the deal so
    nobody keeps the first seat. Use with `games.seats.rotate`."""
    return list(range(seats)) if duplicate else [deal % seats]


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0
