"""The end of a match as records and standings: what each seat's bot gets, and the rows.

`seat_records` turns a result into one record per seat (a forfeiting seat's score
capped, `standing_scores`), `once_per_bot` a match's records into one per bot
(what a bot's own record counts), `tally_increments`
what a record adds to its bot's tally (sums only, so a tally can live in a
Redis hash), `standings_from_tallies` the rows every standings table shows —
a tournament page, `cardarena play` — with `mean_ci95` and `memory_figure`
(does a bot score better on deals it has already played?). Local standings
add `intervals` (95% intervals of a row's points and win rate) and, for two
bots, `paired_difference` (their match points deal by deal).
"""

from __future__ import annotations

from typing import Any

from games.ranking import alone_first, match_points
from sdk.stats import Z95, mean_ci, memory, wilson


def seat_records(result: dict, bots: list[str]) -> list[dict]:
    """What each seat's bot gets from a finished match (`bots[i]` sat in seat i); its
    `score` is the one standings count (`standing_scores`), not always the engine's."""
    ranks = result["ranks"]
    forfeits = result.get("forfeits") or []
    faults = result.get("faults") or [0] * len(bots)
    scores = standing_scores(result["scores"], forfeits)
    return [{"bot": bot, "won": alone_first(ranks, seat), "faults": faults[seat],
             "points": match_points(ranks, seat), "score": scores[seat],
             "draw": ranks[seat] == 1 and ranks.count(1) > 1, "forfeit": seat in forfeits}
            for seat, bot in enumerate(bots)]


def standing_scores(scores: list, forfeits: list[int]) -> list[float]:
    """The scores standings count: a forfeiting seat's is capped at the lowest score of
    the seats that did not forfeit (docs/api.md §4 "Meanings").

    The referee plays `legal_actions[0]` for a seat that forfeited, and that autopilot
    may happen to score well; a forfeit ranks last, so its score must never show above
    a seat that played the match out. The result's own `scores` stay the engine's.
    """
    numbers = [_number(s) for s in scores]
    played = [n for seat, n in enumerate(numbers) if seat not in forfeits]
    if not played:  # every seat forfeited: none played better than another
        return numbers
    floor = min(played)
    return [min(n, floor) if seat in forfeits else n for seat, n in enumerate(numbers)]


def once_per_bot(records: list[dict]) -> list[dict]:
    """One match's seat records as its bots' records count it: once per bot.

    Two versions of one bot at one table are one bot in its record (`GET /bots/{id}`):
    the match counts once; it is a win when one of its seats won and another bot sat at
    the table (beating only itself is no win); its faults (and faults by kind) are its
    seats' summed; it is a forfeit when any of its seats forfeited. A bot with one seat
    keeps its record as it is.
    """
    merged: dict[str, dict] = {}
    for record in records:
        bot = record["bot"]
        if bot not in merged:
            merged[bot] = dict(record)
            continue
        into = merged[bot]
        into["won"] = bool(into["won"] or record["won"])
        into["faults"] = int(into["faults"]) + int(record["faults"])
        into["forfeit"] = bool(into.get("forfeit") or record.get("forfeit"))
        if "faults_by_kind" in into or "faults_by_kind" in record:
            kinds = dict(into.get("faults_by_kind") or {})
            for kind, n in (record.get("faults_by_kind") or {}).items():
                kinds[kind] = kinds.get(kind, 0) + n
            into["faults_by_kind"] = kinds
    if len(merged) == 1 and len(records) > 1:  # only one bot's versions: nobody else was beaten
        next(iter(merged.values()))["won"] = False
    return list(merged.values())


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


def intervals(n: int, points: float, points2: float, wins: int) -> dict:
    """95% intervals of a row's `points` (its total: n × the interval of its mean match points)
    and `win_rate`, as {"points_ci95": [lo, hi], "win_rate_ci95": [lo, hi]} (None below 2
    matches). The win rate's is Wilson's (`sdk.stats.wilson`); the points' is the normal
    approximation (`mean_ci95`) widened to at least Wilson's for the same share of the points
    possible, so a perfect record after 30 matches does not read as certain."""
    if n < 2:
        return {"points_ci95": None, "win_rate_ci95": None}
    mean, half = mean_ci(n, points, points2)
    share, rate = wilson(n, points), wilson(n, wins)  # match points are in [0, 1] a match
    assert mean is not None and half is not None and share is not None and rate is not None  # n >= 2
    lo, hi = min(mean - half, share[0]), max(mean + half, share[1])
    return {"points_ci95": [round(max(0.0, n * lo), 4), round(min(float(n), n * hi), 4)],
            "win_rate_ci95": [round(rate[0], 4), round(rate[1], 4)]}


def paired_difference(first: list[float], second: list[float]) -> dict:
    """Two bots' difference deal by deal: per deal, the first's mean match points over the
    deal's rotations minus the second's, averaged over the deals, with its 95% interval —
    paired on the same cards, so it needs far fewer deals than comparing the two totals.
    {"diff", "ci95": [lo, hi], "deals"} (None where there are too few deals); the interval is
    never narrower than Wilson's for the same share of the range, as `intervals`' points."""
    diffs = [a - b for a, b in zip(first, second, strict=True)]
    n = len(diffs)
    mean, half = mean_ci(n, sum(diffs), sum(d * d for d in diffs))
    if half is None:
        return {"diff": None if mean is None else round(mean, 4), "ci95": None, "deals": n}
    assert mean is not None  # a half-width comes with its mean
    share = wilson(n, n * (mean + 1) / 2)  # as for the points: a sweep still leaves doubt
    assert share is not None  # an interval: at least two deals
    lo, hi = min(mean - half, 2 * share[0] - 1), max(mean + half, 2 * share[1] - 1)
    return {"diff": round(mean, 4), "ci95": [round(lo, 4), round(hi, 4)], "deals": n}


def memory_differences(rotations: list[list[dict]]) -> dict[str, float]:
    """Each bot's memory difference over one deal (docs/api.md §5 "Scheduling"): its mean match
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
    with) / (seats − 1) (docs/api.md §4); `wins` counts matches it alone ranked
    first. Equal points share a rank (1, 1, 3); the mean score only orders rows.
    """
    rows: list[dict[str, Any]] = []
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


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0
