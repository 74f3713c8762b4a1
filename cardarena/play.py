"""`cardarena play`: local duplicate matches between in-process bots.

Every deal (one seed) is played once per seat rotation, so each bot holds
each hand and card luck cancels. The deals are a function of `--seed` alone.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from dataclasses import dataclass, field

import games
from games.ranking import alone_first, match_points
from games.rng import derive_seed
from games.seats import rotate
from sdk.bot import load_bot_class
from sdk.local import play_local

HELP = "play local matches between bots (module:Class) without a server"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", help="one of: " + ", ".join(games.names()))
    parser.add_argument("bots", nargs="+", metavar="BOT", help="module:Class, one per seat")
    parser.add_argument("--games", type=int, default=100, help="deals to play (default 100); "
                        "each is played once per seat rotation")
    parser.add_argument("--seed", type=int, default=0, help="seed the deals come from (default 0)")
    parser.add_argument("--option", action="append", default=[], metavar="K=V",
                        help="a game option; V is read as JSON when it parses (e.g. deal_only=true)")
    parser.add_argument("--max-faults", type=int, default=3)
    parser.add_argument("--no-duplicate", action="store_true",
                        help="play each deal once, in the order given")
    parser.add_argument("--json", action="store_true", help="print the standings as JSON")


def parse_option(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"--option {text!r}: write K=V, e.g. --option deal_only=true")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


@dataclass
class Record:
    """One entrant's results over the run."""

    label: str
    scores: list[float] = field(default_factory=list)
    points: float = 0.0
    wins: int = 0
    draws: int = 0
    faults: int = 0
    forfeits: int = 0

    @property
    def matches(self) -> int:
        return len(self.scores)

    def mean_and_ci(self) -> tuple[float, float]:
        """Mean score and the half-width of its 95% confidence interval."""
        n = len(self.scores)
        if n == 0:
            return 0.0, 0.0
        mean = statistics.fmean(self.scores)
        if n == 1:
            return mean, math.inf
        return mean, 1.96 * statistics.stdev(self.scores) / math.sqrt(n)


def run_matches(game: str, bot_specs: list[str], deals: int, seed: int, options: dict,
                max_faults: int = 3, duplicate: bool = True, progress=None) -> list[Record]:
    """Play the deals and return one `Record` per entrant (in the order given)."""
    classes = [load_bot_class(spec) for spec in bot_specs]
    for spec, cls in zip(bot_specs, classes, strict=True):
        if cls.game not in (None, game):
            raise ValueError(f"{spec} plays {cls.game}, not {game}")
    bots = [cls() for cls in classes]
    labels = list(bot_specs)
    if len(set(labels)) != len(labels):  # the same bot twice: number them
        labels = [f"{spec} #{i + 1}" for i, spec in enumerate(bot_specs)]
    records = [Record(label) for label in labels]
    n = len(bots)
    rotations = range(n) if duplicate else range(1)
    for deal in range(deals):
        deal_seed = derive_seed(seed, "deal", deal)
        for r in rotations:
            entrants = rotate(list(range(n)), r)  # seat i is entrant entrants[i]
            outcome = play_local(game, [bots[e] for e in entrants], deal_seed, options, max_faults)
            ranks = outcome.result["ranks"]
            for seat, e in enumerate(entrants):
                rec = records[e]
                rec.scores.append(float(outcome.result["scores"][seat]))
                rec.points += match_points(ranks, seat)
                rec.wins += alone_first(ranks, seat)
                rec.draws += ranks[seat] == 1 and ranks.count(1) > 1
                rec.faults += len(outcome.faults[seat])
                rec.forfeits += seat in outcome.forfeits
            if progress:
                progress()
    return records


def standings_rows(records: list[Record]) -> list[dict]:
    rows = []
    for rec in sorted(records, key=lambda r: -r.points):
        mean, ci = rec.mean_and_ci()
        rows.append({
            "bot": rec.label, "matches": rec.matches, "points": round(rec.points, 2),
            "wins": rec.wins, "draws": rec.draws,
            "win_rate": round(rec.wins / rec.matches, 4) if rec.matches else 0.0,
            "mean_score": round(mean, 3), "ci95": round(ci, 3) if math.isfinite(ci) else None,
            "faults": rec.faults, "forfeits": rec.forfeits,
        })
    return rows


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn
    from rich.table import Table

    console = Console(stderr=args.json)
    try:
        game = games.get(args.game)
        options = dict(parse_option(o) for o in args.option)
        game.new(seats=len(args.bots), seed=args.seed, options=options)  # fail fast, clearly
        if args.games < 1:
            raise ValueError("--games must be at least 1")
        total = args.games * (1 if args.no_duplicate else len(args.bots))
        with Progress("[progress.description]{task.description}", BarColumn(),
                      MofNCompleteColumn(), TimeRemainingColumn(), console=console,
                      transient=True) as progress:
            task = progress.add_task(f"{args.game}: {total} matches", total=total)
            records = run_matches(args.game, args.bots, args.games, args.seed, options,
                                  args.max_faults, not args.no_duplicate,
                                  progress=lambda: progress.advance(task))
    except (games.UnknownGame, games.InvalidOptions, ValueError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    rows = standings_rows(records)
    if args.json:
        print(json.dumps({"game": args.game, "seed": args.seed, "deals": args.games,
                          "standings": rows}, indent=2))
        return 0
    table = Table(title=f"{args.game} — {args.games} deals × "
                  f"{1 if args.no_duplicate else len(args.bots)} rotations, seed {args.seed}")
    for column in ("#", "bot", "matches", "points", "wins", "draws", "win %",
                   "mean score ± 95% CI", "faults"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for i, row in enumerate(rows, 1):
        ci = "∞" if row["ci95"] is None else f"{row['ci95']:.2f}"
        table.add_row(str(i), row["bot"], str(row["matches"]), f"{row['points']:.1f}",
                      str(row["wins"]), str(row["draws"]), f"{100 * row['win_rate']:.1f}",
                      f"{row['mean_score']:.2f} ± {ci}", str(row["faults"]))
    console.print(table)
    return 0


