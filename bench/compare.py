"""Comparisons on the real platform (issue 19): deals needed, and how often a bot "beats" its copy.

    .venv/bin/python bench/compare.py [--copies 20] [--max-deals 2000]

Starts what a deployment runs (a private Redis, `cardarena serve`, `cardarena worker -n 2`:
bench/connect.py) and, for every game, compares its heuristic example bot (candidate)
with the random one (baseline), head to head, at the API's defaults (delta0 0, delta1
0.05, alpha = beta = 0.05): the verdict and the deals it took; the same for a bot's version 2
(the heuristic) against its version 1 (random), asked in one call. Then `--copies` seeded
comparisons of the random bot against another registration of itself in duck-soup: at
alpha 0.05 about one in twenty may wrongly reach H1 — the count is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from connect import ADMIN, running_platform  # noqa: E402

import games  # noqa: E402
from sdk import Client  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--max-deals", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with running_platform(args.workers) as (url, _):
        admin = Client(url, token=ADMIN)
        author = Client(url)
        author.create_account("bench")
        print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; {args.workers} worker processes", flush=True)
        for name in games.names():
            game = games.get(name)
            if not game.rules:
                continue
            heuristic = admin.register_bot(f"h-{name}", name, kind="python", entrypoint=game.bots["heuristic"])
            random_bot = admin.register_bot(f"r-{name}", name, kind="python", entrypoint=game.bots["random"])
            began = time.monotonic()
            c = author.compare(heuristic, random_bot, name, seed=1, max_deals=args.max_deals, progress=False,
                               timeout=1800)
            print(f"{name}: heuristic vs random: {c.verdict} [{time.monotonic() - began:.0f} s]", flush=True)
        # versions (the same bot twice: its latest version against the one before), in one call
        evolving = admin.register_bot("evolving", "duck-soup", kind="python", entrypoint=games.get("duck-soup").bots["random"])
        admin.new_version(evolving, entrypoint=games.get("duck-soup").bots["heuristic"])
        began = time.monotonic()
        c = author.compare(evolving, evolving, seed=1, max_deals=args.max_deals, progress=False, timeout=1800)
        print(f"duck-soup: version 2 (heuristic) vs version 1 (random) of one bot: {c.verdict} "
              f"[{time.monotonic() - began:.0f} s]", flush=True)
        first = admin.register_bot("copy-a", "duck-soup", kind="python", entrypoint="example_bots.random:RandomBot")
        second = admin.register_bot("copy-b", "duck-soup", kind="python", entrypoint="example_bots.random:RandomBot")
        verdicts = []
        began = time.monotonic()
        for seed in range(args.copies):
            c = author.compare(first, second, "duck-soup", seed=100 + seed, max_deals=args.max_deals,
                               progress=False, timeout=1800)
            verdicts.append(c)
        h1 = sum(c.status == "H1" for c in verdicts)
        deals = sorted(c.deals for c in verdicts)
        print(f"duck-soup: random vs its copy, {args.copies} seeded comparisons: {h1} reached H1 (alpha 0.05: "
              f"about {0.05 * args.copies:.0f} expected), "
              f"{sum(c.status == 'H0' for c in verdicts)} H0, "
              f"{sum(c.status == 'inconclusive' for c in verdicts)} inconclusive; deals p50 "
              f"{deals[len(deals) // 2]}, max {deals[-1]} [{time.monotonic() - began:.0f} s]", flush=True)
        print(f"load after: {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
