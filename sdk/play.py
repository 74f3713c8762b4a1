"""`cardarena play`: local matches refereed as the platform does, standings as it shows them.

Every deal (one seed) is played once per seat rotation (`games.seats.rotations`:
duplicate play, so each bot holds each hand and card luck cancels), the rotations
in a seeded order as the platform plays twins. The deals are a function of
`--seed` alone. As on the platform, each row's `memory` says whether a bot scores
better on deals it has already played (it remembers them: `sdk.standings.memory_differences`). Each match runs under the platform's rules
(`sdk.local.play_local`): the same deadlines and time bank, fault kinds and
forfeits, and the standings are the platform's rows (`sdk.standings`). Each
match gets new instances of the bots' classes (`sdk.instances`), as `serve`
and `connect` make them: nothing a bot keeps in `self` crosses matches.

A BOT is `module:Class`, importable from the current folder, or
`path/to/file.py:Class`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import games
from games.rng import Rng, derive_seed
from games.seats import rotate, rotations
from sdk import export
from sdk.bot import Bot, load_bot_class
from sdk.clock import DEFAULT_TIME, TimeRules
from sdk.local import LocalFault, play_local
from sdk.standings import (
    TALLY_FIELDS,
    intervals,
    memory_differences,
    paired_difference,
    seat_records,
    standings_from_tallies,
    tally_increments,
)
from sdk.textout import print_table, progress

HELP = "play local matches between bots, refereed as the platform does (no server needed)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", help="one of: " + ", ".join(games.names()))
    parser.add_argument("bots", nargs="+", metavar="BOT",
                        help="module:Class (importable from the current folder) or path/to/file.py:Class, "
                             "one per seat")
    parser.add_argument("--deals", dest="games", type=int, default=100, metavar="N",
                        help="deals to play (default 100); each is played once per seat rotation")
    parser.add_argument("--games", dest="games", type=int, action=OldDealsFlag, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help="seed the deals come from (default 0)")
    add_match_rules(parser)
    parser.add_argument("--no-duplicate", action="store_true",
                        help="play each deal once, the seats rotating from deal to deal")
    parser.add_argument("--json", action="store_true", help="print the standings as JSON")
    parser.add_argument("--export", metavar="FILE|DIR",
                        help="write every match as the platform exports it, for cardarena replay: "
                             "JSON Lines in FILE, or one ID.json each in DIR (an existing folder, "
                             "or a name ending in /)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print each fault (match, turn, seat, kind, reason and the bot's traceback) "
                             "and what the bots wrote with Bot.debug")


def add_match_rules(parser: argparse.ArgumentParser) -> None:
    """The flags of a local match's options and time rules, as on the platform (`play`, `compare`)."""
    parser.add_argument("--option", action="append", default=[], metavar="K=V",
                        help="a game option; V is read as JSON when it parses (e.g. deal_only=true)")
    parser.add_argument("--move-timeout-ms", type=int, default=DEFAULT_TIME.move_timeout_ms,
                        help=f"time for each decision, as on the platform (default {DEFAULT_TIME.move_timeout_ms})")
    parser.add_argument("--time-bank-ms", type=int, default=DEFAULT_TIME.time_bank_ms,
                        help=f"each seat's bank per match for decisions over the move time "
                             f"(default {DEFAULT_TIME.time_bank_ms})")
    parser.add_argument("--max-faults", type=int, default=DEFAULT_TIME.max_faults,
                        help=f"faults in one match that forfeit it (default {DEFAULT_TIME.max_faults})")


class OldDealsFlag(argparse.Action):
    """`--games N`, the old name of `--deals N`: still read, with a warning. `cardarena demo
    --games` lists games, so here the count of deals is named for what it counts."""

    def __call__(self, parser, namespace, values, option_string=None):
        print("warning: --games is now --deals (the number of deals); --games will go", file=sys.stderr)
        setattr(namespace, self.dest, values)


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
    """One entrant's results over the run: the platform's tally, and each score."""

    label: str
    tally: dict[str, float] = field(default_factory=lambda: dict.fromkeys(TALLY_FIELDS, 0.0))
    scores: list[float] = field(default_factory=list)
    faults_by_kind: Counter = field(default_factory=Counter)
    #: Σ match points², for the points' interval (the platform's tally keeps no such sum)
    points2: float = 0.0
    #: per deal, the mean match points over the rotations it played: the paired difference's input
    deal_points: list[float] = field(default_factory=list)

    def add(self, record: dict) -> None:
        for name, value in tally_increments(record).items():
            self.tally[name] += value
        self.scores.append(record["score"])
        self.points2 += float(record["points"]) ** 2

    def add_memory(self, difference: float) -> None:
        """One deal's memory difference (the platform tallies the same three sums)."""
        for name, value in (("memory_n", 1.0), ("memory", difference), ("memory2", difference * difference)):
            self.tally[name] = self.tally.get(name, 0.0) + value

    @property
    def matches(self) -> int:
        return int(self.tally["matches"])

    @property
    def points(self) -> float:
        return self.tally["points"]

    @property
    def wins(self) -> int:
        return int(self.tally["wins"])

    @property
    def draws(self) -> int:
        return int(self.tally["draws"])

    @property
    def faults(self) -> int:
        return int(self.tally["faults"])

    @property
    def forfeits(self) -> int:
        return int(self.tally["forfeits"])


@dataclass
class FaultSeen:
    """A fault as `-v` reports it: which match, which entrant, and the fault itself."""

    match: int
    deal: int
    rotation: int
    bot: str
    fault: LocalFault


def run_matches(game: str, bot_specs: list[str], deals: int, seed: int, options: dict,
                max_faults: int = DEFAULT_TIME.max_faults, duplicate: bool = True,
                progress: Callable[[], None] | None = None, move_timeout_ms: int = DEFAULT_TIME.move_timeout_ms,
                time_bank_ms: int = DEFAULT_TIME.time_bank_ms,
                on_fault: Callable[[FaultSeen], None] | None = None,
                on_match: Callable[[dict], None] | None = None,
                on_debug: Callable[[str], None] | None = None) -> list[Record]:
    """Play the deals and return one `Record` per entrant (in the order given); `on_match`
    gets each match's export document (`sdk.export`), its seats named as `bot_specs` are;
    `on_debug` each turn's debug text (`Bot.debug`) as one line saying where it was written."""
    classes = [bot_class(spec, game) for spec in bot_specs]
    for spec, cls in zip(bot_specs, classes, strict=True):
        make_bot(spec, cls)  # a class that cannot be made is said now, not as a fault in every match
    bots = classes  # one new instance per match and seat, as the platform's hosts make them
    labels = list(bot_specs)
    if len(set(labels)) != len(labels):  # the same bot twice: number them
        labels = [f"{spec} #{i + 1}" for i, spec in enumerate(bot_specs)]
    records = [Record(label) for label in labels]
    n = len(bots)
    played = 0
    by_label = dict(zip(labels, records, strict=True))
    for deal in range(deals):
        deal_seed = derive_seed(seed, "deal", deal)
        # the rotations in a seeded order, as the platform orders a deal's twins: a bot meets
        # the deal first in any seat, so its memory figure measures memory, not a seat's edge
        order = Rng(seed, "twins", deal).shuffled(rotations(n, duplicate, deal))
        played_rotations = []
        for r in order:
            entrants = rotate(list(range(n)), r)  # seat i is entrant entrants[i]
            played += 1
            outcome = play_local(game, [bots[e] for e in entrants], deal_seed, options, max_faults,
                                 move_timeout_ms, time_bank_ms, match_id=f"local-{played}")
            seated = [labels[e] for e in entrants]
            played_rotations.append(seat_records(outcome.result, seated))
            for seat, record in enumerate(played_rotations[-1]):
                records[entrants[seat]].add(record)
            if on_match and outcome.export is not None:
                on_match({**outcome.export, "seats": [{"seat": i, "bot": b} for i, b in enumerate(seated)]})
            for f in outcome.details:
                records[entrants[f.seat]].faults_by_kind[f.kind] += 1
                if on_fault:
                    on_fault(FaultSeen(played, deal, r, labels[entrants[f.seat]], f))
            if on_debug:
                for note in outcome.debug:
                    where = f"match {played} (deal {deal}, rotation {r}), turn {note['turn']}, seat {note['seat']}"
                    text = note["text"].replace("\n", "\n    ")
                    on_debug(f"{where}, {labels[entrants[note['seat']]]} debug: {text}")
            if progress:
                progress()
        for label, difference in memory_differences(played_rotations).items():
            by_label[label].add_memory(difference)
        for label, points in _points_by_label(played_rotations).items():
            by_label[label].deal_points.append(sum(points) / len(points))
    return records


def _points_by_label(rotations: list[list[dict]]) -> dict[str, list[float]]:
    """Each entrant's match points in the rotations of one deal."""
    out: dict[str, list[float]] = {}
    for rotation in rotations:
        for record in rotation:
            out.setdefault(record["bot"], []).append(float(record["points"]))
    return out


def bot_class(spec: str, game: str) -> type[Bot]:
    """The class a BOT names — `module:Class` importable from the current folder, or
    `path/to/file.py:Class` — checked to play `game`; ValueError saying why not."""
    if os.getcwd() not in sys.path:  # module:Class from the folder we are in
        sys.path.insert(0, os.getcwd())
    cls = load_bot_class(spec, allow_path=True)
    if cls.game not in (None, game):
        raise ValueError(f"{spec} plays {cls.game}, not {game}")
    return cls


def make_bot(spec: str, cls: type[Bot]) -> Bot:
    """A new bot of `cls`; ValueError if making it raises (the author's bug, said as one)."""
    try:
        return cls()
    except Exception as exc:
        raise ValueError(f"{spec}: making the bot raised {type(exc).__name__}: {exc}") from None


def standings_rows(records: list[Record]) -> list[dict]:
    """The platform's standings rows (`sdk.standings.standings_from_tallies`), plus each bot's
    win rate, the 95% intervals of its points and win rate, and faults by kind."""
    by_label = {rec.label: rec for rec in records}
    rows = standings_from_tallies({rec.label: rec.tally for rec in records})
    for row in rows:
        rec = by_label[row["bot"]]
        row["win_rate"] = round(rec.wins / rec.matches, 4) if rec.matches else 0.0
        row.update(intervals(rec.matches, rec.points, rec.points2, rec.wins))
        row["faults_by_kind"] = dict(sorted(rec.faults_by_kind.items()))
    return rows


def paired_of(records: list[Record]) -> dict | None:
    """For two entrants, the first's paired difference against the second (`sdk.standings.
    paired_difference`), with both named: {"bots": [a, b], "diff", "ci95", "deals"}; else None."""
    if len(records) != 2:
        return None
    first, second = records
    return {"bots": [first.label, second.label], **paired_difference(first.deal_points, second.deal_points)}


def paired_line(paired: dict) -> str:
    """The paired difference as one line under the table."""
    a, b = paired["bots"]
    if paired["diff"] is None:
        return f"paired: {a} − {b}: no deal played"
    interval = "" if paired["ci95"] is None else f", 95% [{paired['ci95'][0]:+.3f}, {paired['ci95'][1]:+.3f}]"
    return (f"paired: {a} − {b} = {paired['diff']:+.3f} match points a deal{interval} over {paired['deals']} "
            "deals (the same cards, each deal's rotations averaged)")


def _span(interval: list[float] | None, scale: float, fmt: str) -> str:
    return "" if interval is None else f" [{scale * interval[0]:{fmt}}, {scale * interval[1]:{fmt}}]"


def describe_fault(seen: FaultSeen) -> str:
    """One fault for `-v`: where, which kind, why, and the bot's traceback when it raised."""
    f = seen.fault
    text = (f"match {seen.match} (deal {seen.deal}, rotation {seen.rotation}), turn {f.turn}, "
            f"seat {f.seat}, {seen.bot}: {f.reason}")
    if f.traceback:
        text += "\n" + "\n".join("    " + line for line in f.traceback.rstrip().splitlines())
    return text


def check_limits(args: argparse.Namespace) -> None:
    """The platform's ranges (docs/api.md §3, §5), so local play never allows what it refuses."""
    for name, low, high in (("games", 1, None), *((rule, *span) for rule, span in TimeRules.RANGES.items())):
        value = getattr(args, name)
        if value < low or (high is not None and value > high):
            flag = "--deals" if name == "games" else "--" + name.replace("_", "-")
            span = f"at least {low}" if high is None else f"{low} to {high}"
            raise ValueError(f"{flag} must be {span}, not {value}")


def run(args: argparse.Namespace) -> int:
    writer = None
    try:
        check_limits(args)
        game = games.get(args.game)
        options = dict(parse_option(o) for o in args.option)
        game.new(seats=len(args.bots), seed=args.seed, options=options)  # fail fast, clearly
        per_deal = 1 if args.no_duplicate else len(args.bots)
        total = args.games * per_deal
        writer = export.Writer(args.export) if args.export else None
        with progress(f"{args.game}: {total} matches", total) as bar:

            records = run_matches(args.game, args.bots, args.games, args.seed, options,
                                  args.max_faults, not args.no_duplicate, progress=bar.advance,
                                  move_timeout_ms=args.move_timeout_ms, time_bank_ms=args.time_bank_ms,
                                  on_fault=(lambda seen: bar.log(describe_fault(seen))) if args.verbose else None,
                                  on_match=writer.add if writer else None,
                                  on_debug=bar.log if args.verbose else None)
    except (games.UnknownGame, games.InvalidOptions, ValueError) as exc:  # ExportError too
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if writer:
            writer.close()
    if writer:  # on stderr: stdout may be the standings' JSON
        again = f"{args.export} --match ID" if writer.folder is None else str(writer.folder / "ID.json")
        print(f"exported {writer.count} matches to {args.export}: cardarena replay {again}", file=sys.stderr)
    rows = standings_rows(records)
    paired = paired_of(records)
    if args.json:
        print(json.dumps({"game": args.game, "seed": args.seed, "deals": args.games,
                          "move_timeout_ms": args.move_timeout_ms, "time_bank_ms": args.time_bank_ms,
                          "max_faults": args.max_faults, "standings": rows,
                          **({"paired": paired} if paired else {})}, indent=2))
        return 0
    columns = ("#", "bot", "matches", "points [95%]", "wins", "draws", "win % [95%]", "mean score ± 95% CI",
               "faults", "forfeits")
    table = []
    for row in rows:
        ci = "—" if row["ci95"] is None else f"{row['ci95']:.2f}"
        table.append((str(row["rank"]), row["bot"], str(row["matches"]),
                      f"{row['points']:.1f}{_span(row['points_ci95'], 1, '.1f')}", str(row["wins"]),
                      str(row["draws"]), f"{100 * row['win_rate']:.1f}{_span(row['win_rate_ci95'], 100, '.1f')}",
                      f"{row['mean_score']:.2f} ± {ci}", str(row["faults"]), str(row["forfeits"])))
    print_table(f"{args.game} — {args.games} deals × {per_deal} rotations, seed {args.seed}, "
                f"{args.move_timeout_ms} ms a move + {args.time_bank_ms} ms bank", columns, table)
    if paired:
        print(paired_line(paired))
    for row in rows:
        m = row["memory"]
        if m["flag"]:
            print(f"memory: {row['bot']} scores {m['diff']:+.2f} match points a deal better on deals it has "
                  f"already played (99% interval above 0; 95% [{m['ci95'][0]:+.2f}, {m['ci95'][1]:+.2f}]): "
                  "it remembers deals, and the platform flags it in every standings row")
    kinds = sum((rec.faults_by_kind for rec in records), Counter())
    if kinds and not args.verbose:
        print(f"{kinds.total()} faults ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}): "
              "run with -v to see each, with its reason and the bot's traceback")
    return 0
