"""The charts of the pages: inline SVGs whose geometry is computed here.

`rating_chart` (a bot's page) and `llr_chart` (a comparison's page: the
log-likelihood ratio after each deal, between the test's two bounds).

The page draws what this returns (numbers only, no user text), so the chart
needs no script and no library: the band is μ ± 3σ, the solid line μ, the
dashed line the ordinal μ − 3σ the ladder sorts by. Point 0 is the rating
every bot starts from, so one rated match already draws a line.
"""

from __future__ import annotations

import math

from core.store.ratings import DEFAULT_MU, DEFAULT_SIGMA, rating_dict

WIDTH, HEIGHT = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 28


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    raw = (high - low) / max(1, count - 1)
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    return [round(first + i * step, 6) for i in range(int((high - first) / step) + 1)]


def rating_chart(history: list[dict]) -> dict | None:
    """Coordinates for the template, or None without a rated match."""
    if not history:
        return None
    points = [{**rating_dict(DEFAULT_MU, DEFAULT_SIGMA), "match": None, "at": None}] + list(history)
    highs = [p["mu"] + 3 * p["sigma"] for p in points]
    lows = [p["mu"] - 3 * p["sigma"] for p in points]
    top, bottom = max(highs), min(lows)
    if top - bottom < 1e-9:
        top, bottom = top + 1, bottom - 1
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    n = len(points)

    def x(i: int) -> float:
        return round(LEFT + (plot_w * i / (n - 1) if n > 1 else plot_w / 2), 1)

    def y(value: float) -> float:
        return round(TOP + plot_h * (top - value) / (top - bottom), 1)

    def line(values: list[float]) -> str:
        return " ".join(f"{x(i)},{y(v)}" for i, v in enumerate(values))

    band = line(highs) + " " + " ".join(f"{x(i)},{y(v)}" for i, v in reversed(list(enumerate(lows))))
    x_ticks = sorted({0, n - 1} | {round(i * (n - 1) / 4) for i in range(5)}) if n > 1 else [0]
    return {
        "width": WIDTH, "height": HEIGHT, "left": LEFT, "right": WIDTH - RIGHT, "top": TOP,
        "bottom": HEIGHT - BOTTOM,
        "band": band, "mu": line([p["mu"] for p in points]),
        "ordinal": line([p["ordinal"] for p in points]),
        "dots": [{"x": x(i), "y": y(p["mu"]), "mu": p["mu"], "sigma": p["sigma"], "match": p.get("match"),
                  "index": i} for i, p in enumerate(points)],
        "y_ticks": [{"y": y(v), "label": f"{v:g}"} for v in _ticks(bottom, top) if bottom <= v <= top],
        "x_ticks": [{"x": x(i), "label": str(i)} for i in x_ticks],
        "last": points[-1],
    }


def llr_chart(history: list[list[float]], bounds: tuple[float, float]) -> dict:
    """Coordinates for a comparison's chart: the LLR path from 0 at deal 0, and the bounds'
    lines (H1 at the upper, H0 at the lower)."""
    points = [(0.0, 0.0)] + [(float(d), float(v)) for d, v in history]
    lower, upper = bounds
    top = max(upper, *(v for _, v in points)) + 0.2
    bottom = min(lower, *(v for _, v in points)) - 0.2
    last = max(1.0, points[-1][0])
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(deal: float) -> float:
        return round(LEFT + plot_w * deal / last, 1)

    def y(value: float) -> float:
        return round(TOP + plot_h * (top - value) / (top - bottom), 1)

    return {
        "width": WIDTH, "height": HEIGHT, "left": LEFT, "right": WIDTH - RIGHT, "top": TOP,
        "bottom": HEIGHT - BOTTOM, "path": " ".join(f"{x(d)},{y(v)}" for d, v in points),
        "upper": y(upper), "lower": y(lower), "zero": y(0.0),
        "upper_label": f"H1 {upper:.2f}", "lower_label": f"H0 {lower:.2f}",
        "y_ticks": [{"y": y(v), "label": f"{v:g}"} for v in _ticks(bottom, top) if bottom <= v <= top],
        "x_ticks": [{"x": x(d), "label": f"{d:g}"} for d in sorted({0.0, last, round(last / 2)})],
    }


BAR_W, BAR_H = 200, 14


#: a ladder row's history line: its size, and the rating points it shows (the latest)
SPARK_W, SPARK_H, SPARK_POINTS = 90, 18, 40


def sparkline(history: list[dict]) -> dict | None:
    """A bot's ladder history as a small line: its ordinal μ − 3σ after each of its latest
    `SPARK_POINTS` rated matches (None before two points)."""
    values = [p["ordinal"] for p in history[-SPARK_POINTS:]]
    if len(values) < 2:
        return None
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    step = (SPARK_W - 4) / (len(values) - 1)
    points = " ".join(f"{round(2 + i * step, 1)},{round(SPARK_H - 2 - (SPARK_H - 4) * (v - low) / span, 1)}"
                      for i, v in enumerate(values))
    return {"width": SPARK_W, "height": SPARK_H, "points": points, "first": values[0], "last": values[-1],
            "count": len(values)}


def interval_bars(rows: list[dict]) -> list[dict]:
    """For a ladder's rows (best first), each bot's μ ± 3σ as a bar on the board's common
    scale: where the band starts and ends, μ, and the ordinal μ − 3σ the ladder sorts by.
    Overlapping bars are the statistical ties the page marks."""
    if not rows:
        return []
    spans = [(r["rating"]["mu"] - 3 * r["rating"]["sigma"], r["rating"]["mu"] + 3 * r["rating"]["sigma"])
             for r in rows]
    low, high = min(lo for lo, _ in spans), max(hi for _, hi in spans)
    width = (high - low) or 1.0

    def x(value: float) -> float:
        return round(2 + (BAR_W - 4) * (value - low) / width, 1)

    return [{"width": BAR_W, "height": BAR_H, "x": x(lo), "w": round(max(1.0, x(hi) - x(lo)), 1),
             "mu": x(r["rating"]["mu"]), "ordinal": x(lo)} for r, (lo, hi) in zip(rows, spans, strict=True)]
