"""Benchmark the rule engines: random-playout decisions/s and games/s against OpenSpiel's oh_hell.

    .venv/bin/python bench/engines.py [--seconds 3] [--seed 0] [--rounds 3] [--game NAME[:SEATS]]
                                      [--no-baseline] [--json]

For every registered engine (3 seats where the game allows it, else its only
seat count), plays random playouts for about `--seconds`: each game is
`games.get(name).new(seats, seed)` with a fresh seed drawn from a seeded
`random.Random`, and every decision is `state.apply(rng.choice(state.legal_actions()))`
until `state.is_over`, then `state.result()`. A decision is one applied action;
dealing is inside `new()` and so inside the clock.

The baseline, in the same run, is OpenSpiel's `oh_hell` with 3 players (the
closest game OpenSpiel has to DOUBLE: bid your exact trick count, then play the
tricks) driven the same way from Python: `state.legal_actions()`,
`rng.choice(...)`, `state.apply_action(...)`, chance nodes (how many tricks,
the dealer, every card dealt, the trump card) resolved by sampling
`state.chance_outcomes()` with the same `random.Random`, then `state.returns()`.
Only player decisions (bids and card plays) count as decisions; the chance
nodes are inside the clock, as the engines' shuffles are.

The run is interleaved: `--rounds` rounds, each giving oh_hell and then every
engine `seconds / rounds`, so drift in the machine's speed (other work on it)
falls on the baseline and the engines alike; the baseline's figure for each
round is printed, to show how steady the machine was.

Figures per row: decisions/s, games/s, decisions per game and the ratio of
decisions/s to oh_hell's. Target: >= 1.0x oh_hell's decisions/s.

What the target leaves a game: at 1.0x, a whole random game may take (its
decisions per game) / (oh_hell's decisions/s). Dealing alone — `new()`: the
seeded streams and shuffles every deal is drawn from, the same on every machine
and Python version (docs/api.md, games/rng.py) — is timed too, and printed as a share
of that budget: a game whose deal alone takes more than its whole budget cannot
reach the target unless its deals get cheaper to draw, which the engines'
replay digest forbids changing.

It also measures `game.sample(view, seed)` (docs/api.md §5), the call a search bot
makes thousands of times a decision: calls per second for one mid-deal
position of each game (a seeded game played `SAMPLE_DEPTH` decisions in,
the view of the seat to act, a fresh seed per call). Target: >= 5,000/s.

OpenSpiel is a bench extra (`pip install -e '.[bench]'`), never a runtime
dependency: without it the engines' figures are still printed and the ratio
column says n/a.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections.abc import Sequence

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402

TARGET = 1.0  # the engines' decisions/s as a multiple of oh_hell's
SAMPLE_TARGET = 5000  # sample() calls per second for a mid-deal position
#: decisions played before the measured position: about the middle of a deal (a round, a manche)
SAMPLE_DEPTH = {"duck-soup": 24, "double": 40, "double-carre": 6, "soupe-gertrude": 30}
BASELINE_GAME = "oh_hell"
BASELINE_PARAMS = {"players": 3}  # the other parameters stay at OpenSpiel's defaults
SKIPPED = "skipped (--no-baseline)"
INSTALL_HINT = ".venv/bin/pip install -e '.[bench]'   (the bench extra: open_spiel>=1.5)"


def default_seats(game: games.Game) -> int:
    """3 seats (oh_hell's player count) where the game allows it, else the nearest it does."""
    return min(max(3, game.min_seats), game.max_seats)


def playout_engine(name: str, seats: int, seconds: float, seed: int, options: dict | None = None,
                   part: int = 0) -> dict:
    """Random playouts of `name` for about `seconds` (at least one whole game); one row of figures.

    The clock is read between games only, so every counted decision belongs to
    a game that was played to its end, and the rates use the time actually spent.
    """
    game = games.get(name)
    rng = random.Random(f"engines:{seed}:{part}:{name}:{seats}")
    choice = rng.choice
    getrandbits = rng.getrandbits
    new = game.new
    options = dict(options or {})
    decisions = 0
    played = 0
    clock = time.perf_counter
    start = clock()
    end = start + seconds
    while True:
        state = new(seats, getrandbits(62), options)
        apply = state.apply
        legal = state.legal_actions
        while not state.is_over:
            apply(choice(legal()))
            decisions += 1
        state.result()
        played += 1
        now = clock()
        if now >= end:
            break
    return _row(name, seats, decisions, played, now - start)


def repeat(call, seconds: float) -> tuple[int, float]:
    """Call `call(i)` for i = 0, 1, … until `seconds` have passed (at least once): (calls, elapsed)."""
    calls = 0
    clock = time.perf_counter
    start = clock()
    end = start + seconds
    while True:
        call(calls)
        calls += 1
        now = clock()
        if now >= end:
            return calls, now - start


def measure_dealing(name: str, seats: int, seconds: float, seed: int) -> dict:
    """`game.new(seats, seed)` alone, for about `seconds`: microseconds a deal."""
    new = games.get(name).new
    getrandbits = random.Random(f"deal:{seed}:{name}:{seats}").getrandbits
    deals, elapsed = repeat(lambda _: new(seats, getrandbits(62), {}), seconds)
    return {"game": name, "seats": seats, "deals": deals, "deal_us": elapsed / deals * 1e6}


def mid_deal_view(name: str, seats: int, seed: int) -> dict:
    """The view of the seat to act, `SAMPLE_DEPTH` decisions into a seeded game.

    The game is played by a seeded policy that picks among the first three
    listed actions half the time (so auctions and payments go on instead of
    ending at the first over-bid) and uniformly otherwise.
    """
    game = games.get(name)
    rng = random.Random(f"sample:{seed}:{name}:{seats}")
    state = game.new(seats, seed, {})
    for _ in range(SAMPLE_DEPTH.get(name, 10)):
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal) if rng.random() < 0.5 else min(3, len(legal)))])
        if state.is_over:  # a short game: start again one decision earlier
            return mid_deal_view(name, seats, seed + 1)
    return state.view(state.to_act)


def measure_sample(name: str, seats: int, seconds: float, seed: int) -> dict:
    """`game.sample(view, s)` calls per second at a mid-deal position (distinct seeds)."""
    view = mid_deal_view(name, seats, seed)
    sample = games.get(name).sample
    calls, elapsed = repeat(lambda i: sample(view, i), seconds)
    return {"game": name, "seats": seats, "calls": calls, "elapsed": elapsed,
            "samples_per_s": calls / max(elapsed, 1e-9)}


def baseline_available() -> tuple[bool, str]:
    """Whether pyspiel imports; its version (or why it does not import)."""
    try:
        import pyspiel  # noqa: F401
    except ImportError as exc:
        return False, str(exc)
    try:
        from importlib.metadata import version

        return True, version("open_spiel")
    except Exception:  # a source build without metadata still measures
        return True, "unknown"


def playout_oh_hell(seconds: float, seed: int, params: dict | None = None, part: int = 0) -> dict:
    """Random playouts of OpenSpiel's oh_hell driven from Python, like `playout_engine`.

    Raises ImportError if pyspiel is not installed.
    """
    import pyspiel

    params = dict(BASELINE_PARAMS if params is None else params)
    game = pyspiel.load_game(BASELINE_GAME, params)
    rng = random.Random(f"oh_hell:{seed}:{part}")
    choice = rng.choice
    uniform = rng.random
    new = game.new_initial_state
    decisions = 0
    chances = 0
    played = 0
    clock = time.perf_counter
    start = clock()
    end = start + seconds
    while True:
        state = new()
        while not state.is_terminal():
            if state.is_chance_node():
                # Sample an outcome by its probability (oh_hell's are uniform, but
                # sampling by probability is the general, honest way to drive it).
                outcomes = state.chance_outcomes()
                r = uniform()
                action = outcomes[-1][0]
                for outcome, p in outcomes:
                    r -= p
                    if r < 0.0:
                        action = outcome
                        break
                state.apply_action(action)
                chances += 1
            else:
                state.apply_action(choice(state.legal_actions()))
                decisions += 1
        state.returns()
        played += 1
        now = clock()
        if now >= end:
            break
    label = ",".join(f"{k}={v}" for k, v in sorted(params.items()))
    row = _row(f"{BASELINE_GAME}({label})", game.num_players(), decisions, played, now - start)
    row["chance_nodes"] = chances
    row["chance_nodes_per_game"] = chances / played
    return row


def merge(rows: Sequence[dict]) -> dict:
    """Several measurements of one game as one: counts and times added up."""
    first = rows[0]
    total = _row(first["game"], first["seats"], sum(r["decisions"] for r in rows),
                 sum(r["games"] for r in rows), sum(r["elapsed"] for r in rows))
    if "chance_nodes" in first:
        total["chance_nodes"] = sum(r["chance_nodes"] for r in rows)
        total["chance_nodes_per_game"] = total["chance_nodes"] / total["games"]
    total["parts"] = [r["decisions_per_s"] for r in rows]
    return total


def _targets(targets: Sequence[tuple[str, int]] | None) -> list[tuple[str, int]]:
    if targets is None:
        return [(name, default_seats(games.get(name))) for name in games.names()]
    return list(targets)


def measure_engines(seconds: float, seed: int, targets: Sequence[tuple[str, int]] | None = None) -> list[dict]:
    """One row per (game, seats), each measured for about `seconds` in one go.

    Every registered engine at its default seat count unless `targets` says otherwise.
    """
    rows = []
    for name, seats in _targets(targets):
        playout_engine(name, seats, 0.0, seed, part=-1)  # warm up: imports, caches, one whole game
        rows.append(playout_engine(name, seats, seconds, seed))
    return rows


def run(seconds: float, seed: int, targets: Sequence[tuple[str, int]] | None = None,
        baseline: bool = True, rounds: int = 3) -> dict:
    """The whole benchmark, interleaved: `rounds` rounds, each giving every engine and
    oh_hell `seconds / rounds`, so that drift in the machine's speed (other work on
    it, clock changes) falls on the baseline and the engines alike."""
    targets = _targets(targets)
    if baseline:
        available, version = baseline_available()
    else:
        available, version = False, SKIPPED
    rounds = max(1, rounds)
    report = {
        "seconds": seconds,
        "rounds": rounds,
        "seed": seed,
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "target": TARGET,
        "open_spiel": version if available else None,
        "baseline": None,
        "baseline_missing": None if available else version,
    }
    slice_ = seconds / rounds
    if available:
        playout_oh_hell(0.0, seed, part=-1)  # warm up
    for name, seats in targets:
        playout_engine(name, seats, 0.0, seed, part=-1)
    parts: dict[tuple[str, int], list[dict]] = {target: [] for target in targets}
    base_parts = []
    deal_parts: dict[tuple[str, int], list[dict]] = {target: [] for target in targets}
    for part in range(rounds):
        if available:
            base_parts.append(playout_oh_hell(slice_, seed, part=part))
        for name, seats in targets:
            parts[(name, seats)].append(playout_engine(name, seats, slice_, seed, part=part))
            deal_parts[(name, seats)].append(measure_dealing(name, seats, slice_ / 4, seed + part))
    rows = [merge(parts[target]) for target in targets]
    base = merge(base_parts) if available else None
    report["samples"] = [measure_sample(name, seats, slice_, seed) for name, seats in targets
                         if games.get(name).sampler is not None]
    report["sample_target"] = SAMPLE_TARGET
    report["baseline"] = base
    for row in rows:
        dealt = deal_parts[(row["game"], row["seats"])]  # in the same rounds as the playouts
        row["deal_us"] = sum(d["deal_us"] * d["deals"] for d in dealt) / sum(d["deals"] for d in dealt)
        if base:
            row["ratio"] = row["decisions_per_s"] / base["decisions_per_s"]
            row["target_met"] = row["ratio"] >= TARGET
            # the time 1.0x allows one whole game, and what dealing alone takes of it
            row["budget_us"] = row["decisions_per_game"] / base["decisions_per_s"] * 1e6
            row["deal_share"] = row["deal_us"] / row["budget_us"]
        else:
            row["ratio"] = None
            row["target_met"] = None
    report["rows"] = rows
    return report


def format_report(report: dict) -> str:
    """The report as a text table, with the baseline's notes."""
    lines = [
        f"random playouts, about {report['seconds']:g} s per engine in {report['rounds']} interleaved rounds, "
        f"seed {report['seed']}, "
        f"Python {report['python']}, {report['machine']}",
    ]
    base = report["baseline"]
    if base:
        lines.append(f"baseline: OpenSpiel {report['open_spiel']} {base['game']} driven from Python; "
                     f"decisions = player actions only (bids and plays), "
                     f"{base['chance_nodes_per_game']:.1f} chance nodes/game sampled inside the clock; "
                     "per round: " + " / ".join(f"{p:,.0f}" for p in base["parts"]) + " decisions/s")
    elif report["baseline_missing"] == SKIPPED:
        lines.append(f"baseline {SKIPPED}: no ratios")
    else:
        lines.append(f"baseline MISSING: OpenSpiel (pyspiel) is not importable ({report['baseline_missing']}); "
                     "no ratios.")
        lines.append(f"  install the bench extra to compare: {INSTALL_HINT}")
    header = (f"{'game':<26} {'seats':>5} {'decisions/s':>12} {'games/s':>10} {'dec/game':>9} "
              f"{'vs oh_hell':>10}  target >= {report['target']:.1f}x")
    lines.append(header)
    lines.append("-" * len(header))
    for row in report["rows"]:
        if row["ratio"] is None:
            ratio, verdict = "n/a", "n/a (no baseline)"
        else:
            ratio = f"{row['ratio']:.2f}x"
            verdict = "met" if row["target_met"] else "BELOW"
        lines.append(f"{row['game']:<26} {row['seats']:>5} {row['decisions_per_s']:>12,.0f} "
                     f"{row['games_per_s']:>10,.1f} {row['decisions_per_game']:>9.1f} {ratio:>10}  {verdict}")
    if base:
        lines.append(f"{base['game']:<26} {base['seats']:>5} {base['decisions_per_s']:>12,.0f} "
                     f"{base['games_per_s']:>10,.1f} {base['decisions_per_game']:>9.1f} {'1.00x':>10}  (baseline)")
        below = [r["game"] for r in report["rows"] if not r["target_met"]]
        lines.append("target met by every engine" if not below
                     else f"below target: {', '.join(below)}")
    if base:
        lines.append("dealing alone (new(): the seeded streams and shuffles of a deal) against the time "
                     f"{report['target']:.1f}x of oh_hell allows a whole game")
        for row in report["rows"]:
            verdict = "dealing alone exceeds it" if row["deal_share"] >= 1 else "within it"
            lines.append(f"{row['game']:<26} {row['seats']:>5} {row['deal_us']:>9.1f} us a deal, "
                         f"{row['budget_us']:>8.1f} us a game allowed: {100 * row['deal_share']:5.0f}%  {verdict}")
    if report.get("samples"):
        lines.append(f"sample(view, seed) at a mid-deal position (the view of the seat to act), "
                     f"target >= {report['sample_target']:,}/s")
        for row in report["samples"]:
            verdict = "met" if row["samples_per_s"] >= report["sample_target"] else "BELOW"
            lines.append(f"{row['game']:<26} {row['seats']:>5} {row['samples_per_s']:>12,.0f} "
                         f"sample()/s  {verdict}")
    return "\n".join(lines)


def _row(name: str, seats: int, decisions: int, played: int, elapsed: float) -> dict:
    elapsed = max(elapsed, 1e-9)
    return {
        "game": name,
        "seats": seats,
        "decisions": decisions,
        "games": played,
        "elapsed": elapsed,
        "decisions_per_s": decisions / elapsed,
        "games_per_s": played / elapsed,
        "decisions_per_game": decisions / played,
    }


def _target(text: str) -> tuple[str, int]:
    name, _, seats = text.partition(":")
    try:
        game = games.get(name)
    except games.UnknownGame as exc:
        raise argparse.ArgumentTypeError(str(exc.args[0])) from None
    if not seats:
        return name, default_seats(game)
    if not seats.isdigit() or not game.min_seats <= int(seats) <= game.max_seats:
        raise argparse.ArgumentTypeError(
            f"{name} is played by {game.min_seats} to {game.max_seats} seats, not {seats!r}")
    return name, int(seats)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="playout time per engine and for the baseline (default 3)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved rounds the time is split into (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the playouts' random choices (default 0)")
    parser.add_argument("--game", action="append", type=_target, metavar="NAME[:SEATS]",
                        help="measure only this game (repeatable; default: every registered engine)")
    parser.add_argument("--no-baseline", action="store_true", help="skip OpenSpiel's oh_hell")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    if args.seconds < 0:
        parser.error("--seconds must not be negative")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    report = run(args.seconds, args.seed, args.game, baseline=not args.no_baseline, rounds=args.rounds)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(format_report(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
