"""Does the ladder find the true order, and sooner than a round-robin? Measured in one run.

    python bench/ladder.py [--games G …] [--matches N] [--every K] [--seed S] [--jobs J]

A field of 12 in-process bots of known order of strength: each game's
heuristic playing a uniformly random legal action with probability
ε = 0, 1/11, 2/11, … 1 (ε = 0 is the strongest, ε = 1 the random bot). PIMC
(`example_bots.pimc:PIMC`) is left out: at its 150 ms a decision it would
take hours of the 2 shared cores, and its place in the order is not known
in advance — the ε-field's order is, by construction (and each game's
curve, measured against ε = 0.5 while this was written, falls monotonically
with ε).

Two ways to spend the same number of matches, side by side from scratch:

* **the ladder**: the platform's own pairing and rating code —
  `worker.matchmaker.choose_tables` picks every table (fewest ladder matches
  first, ties to the larger σ, opponents at random among the nearest few by
  ordinal, each bot a house bot of its own), with
  `CARDARENA_LADDER_MATCHES` = 8 pairings in play and each bot in at most
  `ladder_room` of them; each pairing is one duplicate deal (every
  rotation); `core.ratings.deal_ratings` (openskill Plackett–Luce) rates
  each pairing once as it ends — its bots ranked by the match points summed
  over its rotations, one update — as the platform's queue does; the
  ladder's order is the platform's: the ordinal μ − 3σ. Simulated in this
  process: matches are played by the engine directly (no Redis, workers or
  referee: bots here cannot fault), the oldest pairing in play ends first,
  and "ladder matches in the last hour" counts the whole run (it is shorter).
* **the round-robin**: the platform's full duplicate round-robin
  (`worker.schedules.round_robin`: every table of the game's ladder size,
  every rotation), one deal a table per cycle, its tables in a seeded random
  order within a cycle, as many cycles as the matches allow; its order is
  the standings' match points (`sdk.standings`), ties broken by nothing.

Experiments, not the platform's code: `--per-match` rates each rotation on
its own as it ends (the platform's way before deal rating); `--sharp` rates
with τ = 0, γ = 1/k (σ keeps shrinking: steadier late, but throwaway bots'
random spread lifted a weak farmer above the weakest honest bot in 2 of 8
runs of tests/worker/test_farming.py's attack); `--tau X` sets openskill's
dynamics τ; `--nearest N` draws opponents among the N nearest (the
platform's: 3).

Measured on the 2-core machine (seed 1, 4,000 matches a side, τ every 40,
one run each), matches to τ ≥ 0.9 for good, ladder / round-robin:

| rating | double | double-carre | duck-soup | soupe-gertrude |
|---|---|---|---|---|
| per deal (the platform's) | 240 / 480 | 1,120 / 800 | 240 / 200 | 1,760 / 560 |
| `--per-match` (before) | 360 / 480 | 1,440 / 800 | 120 / 200 | 2,840 / 560 |
| per deal, `--tau 0` | 240 / 480 | 880 / 800 | 360 / 200 | 1,760 / 560 |
| per deal, `--nearest 2` | 760 / 480 | 600 / 800 | 320 / 200 | 480 / 560 |
| per deal, `--nearest 6` | 360 / 480 | 960 / 800 | 360 / 200 | 800 / 560 |

Rating a deal as a whole helps three games of four (and, over seeds 1–4 at
1,500 matches, double-carre in 3 of 4 and soupe-gertrude in 2 of 4), but
the target is met for double only. The ladder reaches τ 0.9–0.97 within a
few hundred matches (τ 0.909 is 3 of the 66 pairs swapped), then close
neighbours keep swapping: openskill's online update weighs recent deals
most and σ stops shrinking, while the round-robin's cumulative points
settle. "For good" on one seed is noisy (the round-robin's own figure moves
from 300 to 780 between seeds 1 and 2 for double-carre).

Printed per game: Kendall's τ between each order and the true one against
matches played, and the matches each needs to reach τ ≥ 0.9 and stay there
for the rest of the run. Target: the ladder needs fewer, for every game.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import games  # noqa: E402
from core.ratings import deal_ratings, new_ratings  # noqa: E402
from core.store.ratings import DEFAULT_MU, DEFAULT_SIGMA, ordinal  # noqa: E402
from games.rng import derive_seed  # noqa: E402
from games.seats import rotate  # noqa: E402
from sdk.bot import load_bot_class  # noqa: E402
from sdk.standings import match_points  # noqa: E402
from worker.matchmaker import LADDER_MATCHES, Candidate, choose_tables, ladder_room  # noqa: E402
from worker.schedules import round_robin  # noqa: E402

FIELD = 12
EPSILONS = [k / (FIELD - 1) for k in range(FIELD)]
TARGET = 0.9


class EpsilonBot:
    """The game's heuristic, playing a random legal action with probability `eps`."""

    def __init__(self, heuristic, eps: float, seed: int) -> None:
        self.heuristic, self.eps, self.rng = heuristic(), eps, random.Random(seed)

    def act(self, view: dict, legal: list[dict]) -> dict:
        if self.rng.random() < self.eps:
            return legal[self.rng.randrange(len(legal))]
        return self.heuristic.act(view, legal)


class Field:
    """The 12 bots of one game: bot i plays with ε = EPSILONS[i] (so the true order is 0, 1, …)."""

    def __init__(self, game: str) -> None:
        self.game = games.get(game)
        self.heuristic = load_bot_class(self.game.bots["heuristic"])
        self.seats = self.game.ladder_seats
        self.played = 0

    def play(self, table: list[int], seed: int, salt: int) -> list[int]:
        """One match, `table[i]` in seat i, on deal `seed`: its ranks."""
        bots = [EpsilonBot(self.heuristic, EPSILONS[b], derive_seed(seed, salt, i)) for i, b in enumerate(table)]
        state = self.game.new(self.seats, seed, {})
        while not state.is_over:
            seat = state.to_act
            state.apply(bots[seat].act(state.view(seat), state.legal_actions()))
        self.played += 1
        return state.result()["ranks"]


def kendall_tau(order: list[int]) -> float:
    """τ between `order` (bots, best first) and the true order 0, 1, 2, …"""
    n = len(order)
    concordant = sum(1 for i in range(n) for j in range(i + 1, n) if order[i] < order[j])
    pairs = n * (n - 1) // 2
    return (2 * concordant - pairs) / pairs


def ladder_run(field: Field, budget: int, every: int, rng: random.Random,
               per_match: bool = False, nearest: int | None = None) -> list[tuple[int, float]]:
    """The ladder from scratch: τ of its ordinal order after every `every` matches."""
    ratings = {b: (DEFAULT_MU, DEFAULT_SIGMA) for b in range(FIELD)}
    recent = dict.fromkeys(range(FIELD), 0)
    room = ladder_room({})  # an in-process bot's share: half its default 4 slots
    in_play: list[tuple[list[int], int, list[int]]] = []  # (table, deal seed, rotation order)
    points, played, next_mark = [], 0, every
    while played < budget:
        busy = {b: sum(1 for t, _, _ in in_play if b in t) for b in range(FIELD)}
        cands = [Candidate(str(b), f"house:{b}", ordinal(*ratings[b]), ratings[b][1], recent[b], room - busy[b])
                 for b in range(FIELD) if room - busy[b] > 0]
        for table in choose_tables(cands, field.seats, LADDER_MATCHES - len(in_play), rng, nearest):
            table = [int(b) for b in table]
            rng.shuffle(table)
            order = list(range(field.seats))
            rng.shuffle(order)
            in_play.append((table, rng.getrandbits(63), order))
            for b in table:
                recent[b] += field.seats
        table, seed, order = in_play.pop(0)  # the oldest pairing ends
        rotations = []
        for r in order:
            seats = rotate(table, r)
            ranks = field.play(seats, seed, r)
            if per_match:  # the old way: each rotation rated on its own as it ends
                after = new_ratings([{"mu": ratings[b][0], "sigma": ratings[b][1]} for b in seats], ranks)
                ratings.update(zip(seats, after, strict=True))
            rotations.append((seats, ranks))
            played += 1
            if played >= next_mark:
                order_now = sorted(range(FIELD), key=lambda b: -ordinal(*ratings[b]))
                points.append((played, kendall_tau(order_now)))
                next_mark += every
        if not per_match:  # the platform's way: the whole deal in one update, at its end
            ratings.update(deal_ratings(ratings, rotations))
    return points


def round_robin_run(field: Field, budget: int, every: int, seed: int) -> list[tuple[int, float]]:
    """The duplicate round-robin from scratch, cycle after cycle: τ of its points' order."""
    bots = [str(b) for b in range(FIELD)]
    totals = dict.fromkeys(range(FIELD), 0.0)
    points, played, next_mark, cycle = [], 0, every, 0
    while played < budget:
        schedule = round_robin(bots, field.seats, 1, True, derive_seed(seed, "cycle", cycle))
        tables: dict[int, list] = {}
        for planned in schedule.matches:
            tables.setdefault(planned.table, []).append(planned)
        order = list(tables)
        random.Random(derive_seed(seed, "order", cycle)).shuffle(order)
        for t in order:
            for planned in tables[t]:  # the deal's rotations, one after another
                seats = [int(b) for b in planned.bots]
                ranks = field.play(seats, planned.seed, planned.rotation)
                for seat, bot in enumerate(seats):
                    totals[bot] += match_points(ranks, seat)
                played += 1
                if played >= next_mark:
                    order_now = sorted(range(FIELD), key=lambda b: -totals[b])
                    points.append((played, kendall_tau(order_now)))
                    next_mark += every
                if played >= budget:
                    return points
        cycle += 1
    return points


def needed(points: list[tuple[int, float]]) -> int | None:
    """The matches after which τ ≥ TARGET for the rest of the run (None: not by its end)."""
    found = None
    for matches, tau in points:
        if tau >= TARGET:
            found = found or matches
        else:
            found = None
    return found


def sharpen() -> None:
    """`--sharp`: the ladder's ratings with τ = 0 and γ = 1/k (see the module's docstring)."""
    from openskill.models import PlackettLuce

    import core.ratings

    sharp = PlackettLuce(tau=0.0, gamma=lambda c, k, *rest: 1.0 / k)
    core.ratings.model = lambda: sharp


def with_tau(tau: float) -> None:
    """`--tau`: the ladder's ratings with openskill's dynamics τ set to `tau` (an experiment)."""
    from openskill.models import PlackettLuce

    import core.ratings

    chosen = PlackettLuce(tau=tau)
    core.ratings.model = lambda: chosen


def measure(game: str, budget: int, every: int, seed: int, sharp: bool = False, per_match: bool = False,
            tau: float | None = None, nearest: int | None = None) -> dict:
    if sharp:
        sharpen()
    if tau is not None:
        with_tau(tau)
    started = time.perf_counter()
    field = Field(game)
    ladder = ladder_run(field, budget, every, random.Random(derive_seed(seed, "ladder", game)), per_match,
                        nearest)
    rr = round_robin_run(field, budget, every, derive_seed(seed, "round-robin", game))
    return {"game": game, "seats": field.seats, "ladder": ladder, "rr": rr,
            "seconds": time.perf_counter() - started}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", nargs="+", default=games.names(), choices=games.names())
    parser.add_argument("--matches", type=int, default=4000, help="matches each side plays (default %(default)s)")
    parser.add_argument("--every", type=int, default=100, help="τ is measured every this many matches")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2, help="games measured at once (processes)")
    parser.add_argument("--sharp", action="store_true",
                        help="an experiment: openskill with τ = 0 and γ = 1/k (not the platform's model)")
    parser.add_argument("--per-match", action="store_true",
                        help="the old rating: each rotation on its own as it ends (not the platform's)")
    parser.add_argument("--tau", type=float, default=None, help="an experiment: openskill's dynamics τ")
    parser.add_argument("--nearest", type=int, default=None,
                        help="an experiment: opponents drawn among this many nearest (the platform's: 3)")
    args = parser.parse_args(argv)
    print(f"bench/ladder.py: {FIELD} bots per game (heuristic with ε = k/11), {args.matches} matches a side, "
          f"τ every {args.every}; target: the ladder reaches τ ≥ {TARGET} (and stays) in fewer matches "
          "than the duplicate round-robin" + (" [--sharp: τ = 0, γ = 1/k, not the platform's model]"
                                               if args.sharp else ""), flush=True)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(measure, args.games, [args.matches] * len(args.games),
                                [args.every] * len(args.games), [args.seed] * len(args.games),
                                [args.sharp] * len(args.games), [args.per_match] * len(args.games),
                                [args.tau] * len(args.games), [args.nearest] * len(args.games)))
    verdicts = []
    for r in results:
        print(f"\n{r['game']} ({r['seats']} seats, {r['seconds']:.0f} s)")
        print(f"{'matches':>8} {'ladder τ':>9} {'round-robin τ':>14}")
        step = max(1, len(r["ladder"]) // 20)
        for i in range(0, len(r["ladder"]), step):
            (m, lt), (_, rt) = r["ladder"][i], r["rr"][i]
            print(f"{m:>8} {lt:>9.3f} {rt:>14.3f}")
        ln, rn = needed(r["ladder"]), needed(r["rr"])
        ok = ln is not None and (rn is None or ln < rn)
        verdicts.append(ok)
        print(f"  τ ≥ {TARGET} for good after: ladder {ln or 'not within the run'}, "
              f"round-robin {rn or f'not within {args.matches}'} → {'MET' if ok else 'NOT MET'}")
    print(f"\ntarget {'met' if all(verdicts) else 'NOT met'} for "
          f"{sum(verdicts)}/{len(verdicts)} games")
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
