"""Does collusion pay? A farmer and its accomplices against the ladder, over many seeds in one run.

    python bench/collusion.py [--seeds N] [--seed S] [--deals D] [--jobs J]

The field (one game of two seats, as duck-soup's ladder): 12 honest bots on 12 accounts, of
Bradley–Terry strengths 0.5 × √2^k (k = 0 … 11: 0.5 to 22.6; a deal's rotation is won by a with
chance a / (a + b)); a farmer of strength 1 on an account of its own (three honest bots are
weaker, nine stronger: its true place is below the honest median); and 24 throwaway bots on 3
other accounts that know the farmer perfectly — by its id or by a signature in its play — and
lose every rotation to it, but play their best against everyone else (throwaway i as strong as
honest bot i mod 12: a field like the honest one).

Run through the platform's own selection and rating code: `worker.matchmaker.choose_tables`
picks every table (8 pairings in play, each bot in at most `ladder_room` of them, candidates
weighed by `account_shares` as `candidates` does), each pairing is one duplicate deal of both
rotations, ranked by `core.ratings.deal_ranks` and rated as the rating worker does —
`core.ratings.rate_deal` (the deal's openskill update and its pairs of accounts' encounters),
then, after each batch of `BATCH` deals, `newly_flagged` (the collusion test,
core/collusion.py) and, for a pair flagged, `refit`
(the ratings fitted again without its deals), flagged pairs never seated together again. Only
the Redis reads and writes around them are left out (tests/worker/test_collusion.py plays the
same attack on the platform's store and matchmaker).

Each seed runs twice from scratch on the same strengths: **today** (the platform before the
collusion rules: every candidate weighed alike whatever its account, `deal_ratings`, no test)
and **defended** (the platform's code). Printed per seed and arm: the farmer's place on the
ladder (ordinal μ − 3σ) among the 37 bots and among the 13 of farmer and honest bots, whether
it is below the median honest bot, the accounts flagged (colluding, honest), and the honest
bots' Kendall τ against their true order (bench/ladder.py's `kendall_tau`).

Targets, over the seeds: the farmer below the median honest bot in ≥ 9 of 10; the colluding
accounts (the farmer's with each throwaway account) flagged in ≥ 9 of 10; no honest account
flagged in any; the honest bots' median τ no worse than today's.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ladder import kendall_tau  # noqa: E402

from core.collusion import crowding  # noqa: E402
from core.ratings import deal_ranks, deal_ratings, newly_flagged, rate_deal, refit  # noqa: E402
from core.store.ratings import DEFAULT_MU, DEFAULT_SIGMA, ordinal  # noqa: E402
from games.seats import rotate  # noqa: E402
from worker.matchmaker import LADDER_MATCHES, Candidate, account_shares, choose_tables, ladder_room  # noqa: E402

SEATS = 2
HONEST = [0.5 * 2 ** (k / 2) for k in range(12)]
FARMER_STRENGTH = 1.0
THROWAWAYS = 24
THROWAWAY_ACCOUNTS = 3
#: deals the rating worker rates in one batch (its queue between two looks): the pairs of accounts
#: they touched are tested after each
BATCH = 8


class Field:
    """The bots: id -> strength and account; who is the farmer, who a throwaway."""

    def __init__(self) -> None:
        self.strength: dict[str, float] = {}
        self.account: dict[str, str] = {}
        for k, s in enumerate(HONEST):
            self.strength[f"honest{k}"], self.account[f"honest{k}"] = s, f"acct_honest{k}"
        self.farmer = "farmer"
        self.strength[self.farmer], self.account[self.farmer] = FARMER_STRENGTH, "acct_farmer"
        self.throwaways = [f"throwaway{i}" for i in range(THROWAWAYS)]
        for i, t in enumerate(self.throwaways):
            self.strength[t], self.account[t] = HONEST[i % len(HONEST)], f"acct_helper{i % THROWAWAY_ACCOUNTS}"
        self.bots = list(self.strength)
        self.honest = [b for b in self.bots if b.startswith("honest")]
        self.colluding = {self.account[self.farmer]} | {self.account[t] for t in self.throwaways}

    def rotation(self, seats: list[str], rng: random.Random) -> list[int]:
        """One rotation's ranks: a throwaway loses to the farmer; otherwise Bradley–Terry."""
        a, b = seats
        if {a, b} & {self.farmer} and {a, b} & set(self.throwaways):
            return [1, 2] if a == self.farmer else [2, 1]
        sa, sb = self.strength[a], self.strength[b]
        return [1, 2] if rng.random() < sa / (sa + sb) else [2, 1]


def run(seed: int, deals: int, defended: bool) -> dict:
    """One arm of one seed from scratch: the ladder after `deals` rated deals."""
    field = Field()
    rng = random.Random(seed)  # the matchmaker's draws
    luck = random.Random(seed * 7919 + 1)  # the games' outcomes
    ratings = {b: (DEFAULT_MU, DEFAULT_SIGMA) for b in field.bots}
    recent = dict.fromkeys(field.bots, 0)
    room = ladder_room({})
    records: dict = {}
    met: dict = {}
    rated: list[tuple[list[str], list[int]]] = []
    apart: set[str] = set()
    in_play: list[tuple[list[str], list[int]]] = []
    touched: set[str] = set()
    for deal in range(deals):
        busy = {b: sum(1 for t, _ in in_play if b in t) for b in field.bots}
        cands = [Candidate(b, field.account[b], *ratings[b], recent[b], room - busy[b])
                 for b in field.bots if room - busy[b] > 0]
        if defended:
            accounts = len(set(field.account.values()))
            cands = account_shares([replace(c, crowded=crowding(met.get(c.id, {}), field.account, accounts))
                                    for c in cands])
        for table in choose_tables(cands, SEATS, LADDER_MATCHES - len(in_play), rng, frozenset(apart)):
            table = list(table)
            rng.shuffle(table)
            order = list(range(SEATS))
            rng.shuffle(order)
            in_play.append((table, order))
            for b in table:
                recent[b] += SEATS
        table, order = in_play.pop(0)  # the oldest pairing ends
        rotations = []
        for r in order:
            seats = rotate(table, r)
            rotations.append((seats, field.rotation(seats, luck)))
        if not defended:
            ratings.update(deal_ratings(ratings, rotations))
            continue
        who, ranks = deal_ranks(rotations)
        new, changed, _ = rate_deal(who, ranks, ratings, field.account, apart, records, met)
        rated += [(who, ranks)] if new else []
        ratings.update(new)
        touched |= set(changed)
        if len(in_play) > 0 and (deal + 1) % BATCH:
            continue
        flagged = newly_flagged(records, touched, apart, field.account, met, ratings)
        touched = set()
        if flagged:
            apart |= set(flagged)
            fitted = refit(rated, apart, field.account)
            ratings = {b: fitted.get(b, (DEFAULT_MU, DEFAULT_SIGMA)) for b in field.bots}
    return summary(field, ratings, apart)


def summary(field: Field, ratings: dict, apart: set[str]) -> dict:
    score = {b: ordinal(*ratings[b]) for b in field.bots}
    order = sorted(field.bots, key=lambda b: -score[b])
    honest_scores = [score[b] for b in field.honest]
    flagged = {a for key in apart for a in key.split("|")}
    helpers = {field.account[t] for t in field.throwaways}
    farmer_account = field.account[field.farmer]
    strongest_first = sorted(field.honest, key=lambda b: -field.strength[b])
    return {
        "place": order.index(field.farmer) + 1,
        "honest_above": sum(s > score[field.farmer] for s in honest_scores),
        "below_median": score[field.farmer] < statistics.median(honest_scores),
        "colluders_flagged": all("|".join(sorted((farmer_account, h))) in apart for h in helpers),
        "flagged_colluding": len(flagged & field.colluding),
        "flagged_honest": len(flagged - field.colluding),
        "tau": kendall_tau({i: score[b] for i, b in enumerate(strongest_first)}),
    }


def measure(seed: int, deals: int) -> dict:
    started = time.process_time()
    today = run(seed, deals, defended=False)
    defended = run(seed, deals, defended=True)
    return {"seed": seed, "today": today, "defended": defended, "cpu_s": time.process_time() - started}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds run (default %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="the first seed")
    parser.add_argument("--deals", type=int, default=1500, help="rated deals a run plays (default %(default)s)")
    parser.add_argument("--jobs", type=int, default=2, help="seeds measured at once (processes)")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"bench/collusion.py: 12 honest bots (strengths 0.5 to 22.6), a strength-1 farmer, {THROWAWAYS} "
          f"throwaways on {THROWAWAY_ACCOUNTS} accounts; {args.deals} deals a run, seeds "
          f"{args.seed}–{args.seed + args.seeds - 1}; load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}", flush=True)
    seeds = list(range(args.seed, args.seed + args.seeds))
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(measure, seeds, [args.deals] * len(seeds)))
    head = f"{'seed':>4} | {'arm':<8} {'place/37':>8} {'honest above':>12} {'below median':>12} " \
           f"{'colluders flagged':>17} {'honest flagged':>14} {'honest τ':>8}"
    print(head)
    print("-" * len(head))
    for r in results:
        for arm in ("today", "defended"):
            a = r[arm]
            print(f"{r['seed']:>4} | {arm:<8} {a['place']:>8} {a['honest_above']:>9} /12 {str(a['below_median']):>12} "
                  f"{str(a['colluders_flagged']) + ' (' + str(a['flagged_colluding']) + '/4)':>17} "
                  f"{a['flagged_honest']:>14} {a['tau']:>8.3f}")
    cpu = sum(r["cpu_s"] for r in results)
    n = len(results)
    counts = {arm: {
        "below": sum(r[arm]["below_median"] for r in results),
        "flagged": sum(r[arm]["colluders_flagged"] for r in results),
        "honest": sum(r[arm]["flagged_honest"] > 0 for r in results),
        "tau": statistics.median(r[arm]["tau"] for r in results),
        "taus": [r[arm]["tau"] for r in results],
    } for arm in ("today", "defended")}
    for arm, c in counts.items():
        print(f"{arm:<8}: farmer below the median honest bot in {c['below']}/{n}; colluders flagged in "
              f"{c['flagged']}/{n}; an honest account flagged in {c['honest']}/{n}; honest τ median "
              f"{c['tau']:.3f} (min {min(c['taus']):.3f}, max {max(c['taus']):.3f})")
    d, t = counts["defended"], counts["today"]
    need = -(-9 * n // 10)
    met = d["below"] >= need and d["flagged"] >= need and d["honest"] == 0 and d["tau"] >= t["tau"]
    load = os.getloadavg()
    print(f"{cpu:.0f} s of CPU; load after {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(f"target {'MET' if met else 'NOT met'}: below the median >= {need}/{n}, colluders flagged >= {need}/{n}, "
          f"no honest account flagged, honest τ median no worse than today's")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
