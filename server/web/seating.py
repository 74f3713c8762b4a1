"""Where the seats sit around the drawn table, and the result line under it.

Seat 0 sits at the bottom and play goes to its left, so the seats run
clockwise on screen: bottom, left side (upwards), top (left to right), right
side (downwards). The page draws the regions once; the live page's script
only refills each seat by its `data-seat`, so this stays the one place that
knows the geometry.
"""

from __future__ import annotations


def regions(seats: int, bottom: int = 0) -> dict[str, list[int]]:
    """Seat indexes per region: {"bottom", "left", "top", "right"}, each in drawing order;
    seat `bottom` where seat 0 would be (a person sees the table from their own seat)."""
    if bottom:
        return {region: [(i + bottom) % seats for i in found] for region, found in regions(seats).items()}
    sides = 0 if seats <= 3 else 1 if seats <= 7 else 2
    rest = seats - 2 * sides
    low = max(1, rest // 2)
    top = rest - low
    order = list(range(seats))
    b, left = order[:low], order[low:low + sides]
    t, right = order[low + sides:low + sides + top], order[low + sides + top:]
    return {"bottom": b[::-1], "left": left[::-1], "top": t, "right": right}


def winners(result: dict | None, names: list[str]) -> dict | None:
    """The end of a public match in words: the winners' names and every seat's score and rank."""
    if not isinstance(result, dict) or not isinstance(result.get("ranks"), list):
        return None
    ranks, scores = result["ranks"], result.get("scores") or []
    forfeits = set(result.get("forfeits") or [])
    rows = [{"seat": i, "name": names[i] if i < len(names) else str(i), "rank": r,
             "score": _number(scores[i]) if i < len(scores) else None, "forfeit": i in forfeits}
            for i, r in enumerate(ranks)]
    best = [row for row in rows if row["rank"] == 1]
    return {"winners": best, "rows": sorted(rows, key=lambda row: (row["rank"], row["seat"])),
            "draw": len(best) > 1}


def _number(x):
    """A whole float as an int, so the page and its script write a score alike ("1", not "1.0")."""
    return int(x) if isinstance(x, float) and x.is_integer() else x
