"""`cardarena compare`: is CANDIDATE better than BASELINE? The platform's comparison, at home.

Deals are played until the sequential probability ratio test decides, as
`POST /comparisons` plays them (docs/api.md §5 "Comparisons"): who sits where,
each deal's statistic and the test are the platform's own (`sdk.comparison`),
each match is refereed as there (`sdk.local.play_local`), and the progress bar
and the verdict line are `Client.compare`'s (`sdk.client.Comparison`).

Head to head for games played at 2 seats: each deal in both rotations. With
`--opponent BOT` (repeatable; the same BOT twice is two entrants), a field:
each deal at each table of opponents, once with the candidate and once with
the baseline in the same seat. `--deals N` is the most deals played
(the platform's `max_deals`); the deals come from `--seed`. Each match makes
new instances of the bots' classes.
"""

from __future__ import annotations

import argparse
import json
import sys

import games
from sdk import export, textout
from sdk.client import Comparison
from sdk.comparison import (
    ALPHA,
    BETA,
    DELTA0,
    DELTA1,
    MAX_DEALS,
    deal_seatings,
    deal_statistic,
    figures,
    sprt,
)
from sdk.local import play_local
from sdk.play import add_match_rules, bot_class, check_limits, make_bot, parse_option
from sdk.standings import seat_records

HELP = "is CANDIDATE better than BASELINE? the platform's sequential test, played locally"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("candidate", metavar="CANDIDATE", help="module:Class or path/to/file.py:Class")
    parser.add_argument("baseline", metavar="BASELINE", help="module:Class or path/to/file.py:Class")
    parser.add_argument("--game", required=True, help="one of: " + ", ".join(games.names()))
    parser.add_argument("--deals", dest="games", type=int, default=MAX_DEALS, metavar="N",
                        help=f"the most deals to play before calling it inconclusive (default {MAX_DEALS})")
    parser.add_argument("--seed", type=int, default=0, help="seed the deals come from (default 0)")
    parser.add_argument("--opponent", action="append", default=[], metavar="BOT",
                        help="compare in a field: an opponent at the tables (repeat for more)")
    parser.add_argument("--seats", type=int, default=None,
                        help="with --opponent: the table size (default the game's smallest)")
    for name, default, what in (("delta0", DELTA0, "H0: mean statistic at most this"),
                                ("delta1", DELTA1, "H1: mean statistic at least this"),
                                ("alpha", ALPHA, "the test's false H1 rate"),
                                ("beta", BETA, "the test's false H0 rate")):
        parser.add_argument(f"--{name}", type=float, default=default, help=f"{what} (default {default})")
    add_match_rules(parser)
    parser.add_argument("--json", action="store_true",
                        help="print the comparison as GET /comparisons/{id} shows it, instead of the verdict")
    parser.add_argument("--export", metavar="FILE|DIR",
                        help="write every match as the platform exports it, for cardarena replay")


def table_size(game: games.Game, opponents: list[str], seats: int | None) -> int:
    """The seats of each match; ValueError saying why the comparison cannot be played."""
    if not opponents:
        if seats not in (None, 2):
            raise ValueError("--seats is for a field: name the opponents with --opponent BOT")
        if not game.min_seats <= 2 <= game.max_seats:
            raise ValueError(f"{game.name} is not played at 2 seats: name opponents with --opponent BOT "
                             "to compare in a field")
        return 2
    seats = game.min_seats if seats is None else seats
    if not game.min_seats <= seats <= game.max_seats:
        raise ValueError(f"{game.name} is played at {game.min_seats} to {game.max_seats} seats, not {seats}")
    if len(opponents) < seats - 1:
        raise ValueError(f"tables of {seats} need at least {seats - 1} opponents, not {len(opponents)}")
    return seats


def compare(args: argparse.Namespace, bar=None, on_match=None) -> Comparison:
    """Play deals until the test decides; the comparison as the platform's client returns it."""
    game = games.get(args.game)
    options = dict(parse_option(o) for o in args.option)
    seats = table_size(game, args.opponent, args.seats)
    game.new(seats=seats, seed=args.seed, options=options)  # bad options fail now, clearly
    specs: dict[str | int, str] = {"candidate": args.candidate, "baseline": args.baseline,
                                   **dict(enumerate(args.opponent))}
    classes = {who: bot_class(spec, args.game) for who, spec in specs.items()}
    for who, cls in classes.items():
        make_bot(specs[who], cls)  # a class that cannot be made is said now, not as faults
    field = bool(args.opponent)
    test = sprt(args.delta0, args.delta1, args.alpha, args.beta, field=field)
    raw = {"id": "local", "game": args.game, "candidate": args.candidate, "baseline": args.baseline,
           "candidate_name": args.candidate, "baseline_name": args.baseline, "opponents": args.opponent,
           "seats": seats, "seed": args.seed, "delta0": args.delta0, "delta1": args.delta1,
           "alpha": args.alpha, "beta": args.beta, "max_deals": args.games, "status": "running"}
    n, total, squares = 0, 0.0, 0.0
    played = 0
    for deal in range(args.games):
        deal_seed, seatings, orders = deal_seatings(args.seed, deal, list(range(len(args.opponent))), seats)
        points = [0.0] * len(seatings)
        for i in (i for order in orders for i in order):
            s = seatings[i]
            played += 1
            outcome = play_local(args.game, [classes[e] for e in s.entrants], deal_seed, options,
                                 args.max_faults, args.move_timeout_ms, args.time_bank_ms,
                                 match_id=f"local-{played}")
            points[i] = seat_records(outcome.result, [specs[e] for e in s.entrants])[s.seat]["points"]
            if on_match and outcome.export is not None:
                on_match({**outcome.export, "seats": [{"seat": k, "bot": specs[e]} for k, e in enumerate(s.entrants)]})
        x = deal_statistic(points, field)
        n, total, squares = n + 1, total + x, squares + x * x
        decision = test.decide(n, total, squares, args.games)
        current = Comparison.of({**raw, **figures(test, n, total, squares), "status": decision or "running"})
        if bar is not None:
            current.show(bar)
        if decision is not None:
            return current
    return current


def run(args: argparse.Namespace) -> int:
    writer = None
    try:
        check_limits(args)
        writer = export.Writer(args.export) if args.export else None
        if args.json:
            done = compare(args, on_match=writer.add if writer else None)
        else:
            with textout.progress("comparison local", 100, file=sys.stdout, transient=False) as bar:
                done = compare(args, bar, on_match=writer.add if writer else None)
    except (games.UnknownGame, games.InvalidOptions, ValueError) as exc:  # ExportError too
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if writer:
            writer.close()
    if writer:
        print(f"exported {writer.count} matches to {args.export}", file=sys.stderr)
    if args.json:
        print(json.dumps(done.raw, indent=2))
    else:
        print(done.verdict, flush=True)
    return 0
