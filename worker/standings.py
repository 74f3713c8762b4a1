"""Tournament standings from the tallies counted as each match concluded.

A bot's match points in a match = (seats it ranks above + ½ × seats it ties
with) / (seats − 1): for two seats, 1 a win and ½ a draw (api.md §4). The
standings add them up; `wins` counts matches it alone ranked first. Beside
them, the mean game score with a 95% confidence interval (normal
approximation, 1.96 standard errors) says how clearly a bot's scores differ.
Equal points share a rank (1, 1, 3); the mean score only orders the rows.
"""

from __future__ import annotations

import math


def mean_and_ci95(total: float, squares: float, n: int) -> tuple[float | None, float | None]:
    """Mean and half-width of its 95% confidence interval from a sum and a sum of squares."""
    if n == 0:
        return None, None
    mean = total / n
    if n == 1:
        return mean, None
    variance = max(0.0, (squares - n * mean * mean) / (n - 1))
    return mean, 1.96 * math.sqrt(variance / n)


def standings_from_tallies(tallies: dict[str, dict[str, float]]) -> list[dict]:
    rows = []
    for bot, t in tallies.items():
        n = int(t["matches"])
        mean, ci = mean_and_ci95(t["score"], t["score2"], n)
        rows.append({
            "bot": bot, "points": round(t["points"], 6), "matches": n, "wins": int(t["wins"]),
            "draws": int(t["draws"]), "mean_score": None if mean is None else round(mean, 4),
            "ci95": None if ci is None else round(ci, 4), "faults": int(t["faults"]),
            "forfeits": int(t["forfeits"]),
        })
    rows.sort(key=lambda r: (-r["points"], -(r["mean_score"] or 0.0), r["bot"]))
    for i, row in enumerate(rows):
        same = i and rows[i - 1]["points"] == row["points"]
        row["rank"] = rows[i - 1]["rank"] if same else i + 1
    return [{"rank": r.pop("rank"), **r} for r in rows]
