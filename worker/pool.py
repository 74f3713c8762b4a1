"""`cardarena worker -n N`: a supervised pool of N RQ worker processes.

Like `rq worker-pool`, it starts N worker processes on the cardarena queue
(or `--queue`, `CARDARENA_QUEUE`) and starts a new one when one dies. Beside
them it runs the dispatcher (worker/dispatch.py: the deadlines' clock and
the webhook calls, a process each, so no worker waits on a remote bot),
restarted likewise, the recovery sweep (worker/recovery.py) that re-enqueues what
a dead worker dropped, and the matchmaker (worker/matchmaker.py) that keeps the
ladder playing; as it starts, the command places the games' house bots on the
ladders once ever (worker/house_bots.py; `--no-house-bots` does not): run one pool per machine, any number of machines on the same
`REDIS_URL`.

Stopping (Ctrl-C, SIGTERM, `WorkerPool.stop`): each worker is asked to stop
after its current job; after `grace_s` seconds the jobs still running are
interrupted (their matches resume from the log under the next pool), and
anything left is killed, work horses included, so no process stays behind;
then the command releases the shared embedded Redis (core/redis_server.py).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import BinaryIO

from core.signals import PARENT_ENV
from worker.dispatch import PARTS as DISPATCH_PARTS  # the dispatcher's parts, a process each

log = logging.getLogger("cardarena.worker")

HELP = "run a pool of N worker processes (RQ) that play the queued tournaments and matches"


def children_of(pid: int) -> list[int]:
    """The pids of `pid`'s children (Linux /proc; empty elsewhere)."""
    out = []
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            out.append(int(entry.parent.name))
    return out


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


class WorkerPool:
    """N worker processes on `redis_url`, restarted when they die, plus the recovery sweep."""

    def __init__(self, redis_url: str, n: int = 2, sweep_every_s: float = 2.0,
                 log_path: str | None = None, grace_s: float = 10.0, env: dict | None = None,
                 fork: bool = False, queue: str | None = None, ladder_matches: int | None = None,
                 house_bots: bool = False) -> None:
        from core.store.jobs import queue_name
        from worker.matchmaker import ladder_matches as ladder_setting

        if n < 1:
            raise ValueError("a pool needs at least one worker")
        self.queue = queue_name(queue)  # its workers take only this queue's jobs; its sweep sweeps only it
        self.redis_url, self.n, self.sweep_every_s = redis_url, n, sweep_every_s
        self.log_path, self.grace_s = log_path, grace_s
        self.env = dict(env or {})  # extra environment for the worker processes
        self.fork = fork  # a work horse per job (see worker/process.py)
        # ladder matches in play per game (CARDARENA_LADDER_MATCHES unless given; 0: no matchmaker)
        self.ladder_matches = ladder_setting(ladder_matches)
        self.house_bots = house_bots  # place the games' house bots on the ladders (worker/house_bots.py)
        self.procs: list[subprocess.Popen | None] = [None] * n
        self.dispatchers: list[subprocess.Popen | None] = [None, None]  # its clock, its callers
        self.restarts = 0
        self._stop = threading.Event()
        self._spawning = threading.Lock()  # no worker is started once stop() has listed them
        self._threads: list[threading.Thread] = []
        self._log: BinaryIO | None = None

    # -- life ------------------------------------------------------------------
    def start(self) -> WorkerPool:
        if self.house_bots:
            self._place_house_bots()
        if self.log_path:
            self._log = open(self.log_path, "ab")  # noqa: SIM115 - held for the pool's life
        for i in range(self.n):
            self._spawn(i)
        for part in range(len(self.dispatchers)):
            self._spawn_dispatcher(part)
        loops = [(self._supervise, "pool-supervisor"), (self._sweep, "pool-sweep")]
        if self.ladder_matches:
            loops.append((self._matchmake, "pool-matchmaker"))
        for target, name in loops:
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def _spawn(self, i: int) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1", REDIS_URL=self.redis_url, **self.env,
                   **{PARENT_ENV: str(os.getpid())})  # it dies with the pool (core/signals.py)
        out = self._log if self._log is not None else None
        self.procs[i] = subprocess.Popen(
            [sys.executable, "-m", "worker.process", self.redis_url, "--queue", self.queue,
             *(["--fork"] if self.fork else [])],
            env=env, stdout=out, stderr=out,
            stdin=subprocess.DEVNULL, start_new_session=True,  # Ctrl-C reaches the pool, which decides
        )

    def _spawn_dispatcher(self, part: int) -> None:
        out = self._log if self._log is not None else None
        self.dispatchers[part] = subprocess.Popen(
            [sys.executable, "-m", "worker.dispatch", self.redis_url, "--queue", self.queue,
             "--part", DISPATCH_PARTS[part]],
            env=dict(os.environ, PYTHONUNBUFFERED="1", REDIS_URL=self.redis_url, **self.env,
                     **{PARENT_ENV: str(os.getpid())}),
            stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True,
        )

    def _supervise(self) -> None:
        while not self._stop.wait(0.5):
            for part, proc in enumerate(self.dispatchers):
                if proc is not None and proc.poll() is not None and not self._stop.is_set():
                    log.warning("the dispatcher's %s (pid %d) exited with %s: starting another",
                                DISPATCH_PARTS[part], proc.pid, proc.returncode)
                    self.restarts += 1
                    with self._spawning:
                        if not self._stop.is_set():
                            self._spawn_dispatcher(part)
            for i, proc in enumerate(self.procs):
                if proc is not None and proc.poll() is not None and not self._stop.is_set():
                    if proc.returncode == 0:  # done its MAX_JOBS: a fresh one takes over
                        log.info("worker %d (pid %d) retired: starting a fresh one", i, proc.pid)
                    else:
                        log.warning("worker %d (pid %d) exited with %s: starting another", i, proc.pid,
                                    proc.returncode)
                        self.restarts += 1
                    with self._spawning:
                        if not self._stop.is_set():
                            self._spawn(i)

    def _sweep(self) -> None:
        import redis

        from core.store import Store, secret_key
        from worker.recovery import sweep_forever

        client = redis.Redis.from_url(self.redis_url)
        try:
            sweep_forever(Store(client, secret_key(client), queue=self.queue), self.sweep_every_s, self._stop)
        finally:
            client.close()

    def _place_house_bots(self) -> None:
        import redis

        from core.store import Store, secret_key
        from worker.house_bots import place_house_bots

        client = redis.Redis.from_url(self.redis_url)
        try:
            place_house_bots(Store(client, secret_key(client), queue=self.queue))
        finally:
            client.close()

    def _matchmake(self) -> None:
        import redis

        from core.store import Store, secret_key
        from worker.matchmaker import Matchmaker

        client = redis.Redis.from_url(self.redis_url)
        try:
            matchmaker = Matchmaker(Store(client, secret_key(client), queue=self.queue), self.ladder_matches)
            matchmaker.stopping = self._stop  # it stops with the pool
            matchmaker._run()
        finally:
            client.close()

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs if p is not None and p.poll() is None]

    def kill(self, i: int) -> int:
        """`kill -9` worker `i` (and its work horse, forking), as a crash would; the supervisor starts another."""
        proc = self.procs[i]
        if proc is None:
            raise LookupError(f"worker {i} was never started")
        for pid in children_of(proc.pid):
            _signal(pid, signal.SIGKILL)
        _signal(proc.pid, signal.SIGKILL)
        return proc.pid

    def kill_dispatcher(self) -> list[int]:
        """`kill -9` the dispatcher's processes, as a crash would; the supervisor starts others."""
        pids = [proc.pid for proc in self.dispatchers if proc is not None]
        for pid in pids:
            _signal(pid, signal.SIGKILL)
        return pids

    def stop(self) -> None:
        """Stop every worker: after their jobs, then by force after `grace_s`; nothing left behind."""
        with self._spawning:
            if self._stop.is_set():
                return
            self._stop.set()
        dispatchers = [p for p in self.dispatchers if p is not None and p.poll() is None]
        for proc in dispatchers:
            _signal(proc.pid, signal.SIGTERM)  # its calls under way end by their deadlines
        live = [p for p in self.procs if p is not None and p.poll() is None]
        horses = {p.pid: children_of(p.pid) for p in live}
        for proc in live:
            _signal(proc.pid, signal.SIGTERM)  # warm: finish the current job
        self._wait(live, self.grace_s)
        for proc in live:
            if proc.poll() is None:
                _signal(proc.pid, signal.SIGTERM)  # the second asks RQ to kill the horse now
        self._wait(live, 3.0)
        for proc in live:
            for pid in horses.get(proc.pid, []) + children_of(proc.pid):
                _signal(pid, signal.SIGKILL)
            if proc.poll() is None:
                _signal(proc.pid, signal.SIGKILL)
            proc.wait()
        self._wait(dispatchers, 6.0)
        for proc in dispatchers:
            if proc.poll() is None:
                _signal(proc.pid, signal.SIGKILL)
            proc.wait()
        for thread in self._threads:
            thread.join(timeout=5)
        if self._log is not None:
            self._log.close()

    @staticmethod
    def _wait(procs, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and any(p.poll() is None for p in procs):
            time.sleep(0.05)

    def __enter__(self) -> WorkerPool:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# -- the command -------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-n", "--workers", type=int, default=os.cpu_count() or 2,
                        help="worker processes (default: one per CPU, %(default)s here)")
    parser.add_argument("--grace", type=float, default=30.0,
                        help="seconds a stopping worker may finish its match (default %(default)s)")
    parser.add_argument("--fork", action="store_true",
                        help="run each job in its own forked process, as RQ's default worker does "
                             "(more isolation, more CPU a match)")
    parser.add_argument("--queue", default=None,
                        help="the RQ queue to work (default: CARDARENA_QUEUE, else cardarena)")
    parser.add_argument("--no-house-bots", dest="house_bots", action="store_false",
                        help="do not register the games' example bots as house bots on the ladders "
                             "(by default each game gets, once ever, ladder seats - 1 of them, so a "
                             "new bot has a table at once)")


def run(args: argparse.Namespace) -> int:
    from core.redis_server import shared_redis
    from core.signals import shielded, stop_on_signals

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    with stop_on_signals(), shared_redis() as url:
        with shielded():  # a stop signal now waits until every worker is started and known
            pool = WorkerPool(url, n=args.workers, grace_s=args.grace, fork=args.fork, queue=args.queue,
                              house_bots=args.house_bots).start()
        try:
            print(f"cardarena worker: {args.workers} processes on {url}, queue {pool.queue} "
                  f"(pids {pool.pids}); Ctrl-C stops", flush=True)
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("stopping: current matches may finish (Ctrl-C again is not needed)", flush=True)
        finally:
            with shielded():
                pool.stop()
    return 0
