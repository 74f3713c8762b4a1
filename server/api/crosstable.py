"""A finished tournament's crosstable: every pair of entrants, head to head.

Cell (A, B) counts the matches where A and B sat at the same table: A scores
1 when it ranks above B, ½ when they tie, 0 below (the pairwise share of
docs/api.md's match points). The score is the mean of those, with a 95% Wilson
interval counting a tie as half a win — Wilson rather than mean ± 1.96·s/√n
because tables are small: after two matches both won, the normal interval
would claim [1, 1], Wilson says [0.34, 1].
"""

from __future__ import annotations

import math

#: the normal quantile of a two-sided 95% interval
Z95 = 1.959963984540054


def wilson(score: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion `score` observed over `n` trials."""
    if n <= 0:
        return 0.0, 1.0
    denominator = 1 + z * z / n
    centre = (score + z * z / (2 * n)) / denominator
    half = z * math.sqrt(score * (1 - score) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def _tally() -> dict:
    return {"matches": 0, "wins": 0, "ties": 0, "losses": 0}


def _summary(t: dict) -> dict:
    n = t["matches"]
    score = (t["wins"] + t["ties"] / 2) / n if n else None
    low, high = wilson(score, n) if n else (None, None)
    return {**t, "score": score, "low": low, "high": high}


def crosstable(bots: list[str], matches: list[dict]) -> list[dict]:
    """One row per bot (in `bots`' order): its overall head-to-head score and a
    cell per opponent. `matches` are `{"seats": [bot ids], "result": {"ranks"}}`;
    matches without a result (aborted) count for nobody."""
    pairs: dict[tuple[str, str], dict] = {}
    overall = {b: _tally() for b in bots}
    for match in matches:
        result = match.get("result") or {}
        ranks, seats = result.get("ranks"), match.get("seats") or []
        if not isinstance(ranks, list) or len(ranks) != len(seats):
            continue
        for i, a in enumerate(seats):
            for j, b in enumerate(seats):
                if i == j or a == b:
                    continue
                outcome = "wins" if ranks[i] < ranks[j] else "ties" if ranks[i] == ranks[j] else "losses"
                for tally in (pairs.setdefault((a, b), _tally()), overall.setdefault(a, _tally())):
                    tally["matches"] += 1
                    tally[outcome] += 1
    rows = []
    for a in bots:
        cells = [None if a == b else {"opponent": b, **_summary(pairs.get((a, b), _tally()))}
                 for b in bots]
        rows.append({"bot": a, **_summary(overall[a]), "cells": cells})
    return rows
