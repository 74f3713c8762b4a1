"""Webhook calls in flight in one dispatcher process (issue 28: waiting costs no thread).

    .venv/bin/python bench/dispatch.py [--calls 2000] [--hold 5]

Starts a private Redis, one loopback asyncio server that holds every decision
it is sent until released (tests/worker/zoo.py `HoldingServer`, in this
process), and one dispatcher process as the pool runs it (`python -m
worker.dispatch URL --part calls`). It publishes `--calls` webhook decisions
(one bot; `CARDARENA_CALLS_PER_ACCOUNT` set above them), and prints, for the
dispatcher process alone:

* how long until every call was in flight (the server holding them all);
* its RSS, threads and open files while holding them, against the same
  process idle before the calls;
* its CPU while filling, and per second while merely holding them for
  `--hold` s (what thousands of waiting calls cost);
* how long until every call, released, was answered and its turn settled.

The machine's load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from core.redis_server import EmbeddedRedis  # noqa: E402
from core.store import Store, secret_key  # noqa: E402
from tests.worker.zoo import HoldingServer  # noqa: E402
from worker.dispatch import raise_file_limit  # noqa: E402


def wait_for(condition, timeout: float, what: str) -> float:
    began = time.monotonic()
    while not condition():
        if time.monotonic() - began > timeout:
            raise SystemExit(f"not {what} after {timeout:.0f} s")
        time.sleep(0.02)
    return time.monotonic() - began


class Proc:
    """A process's figures from /proc (Linux): RSS, threads, open files, CPU seconds."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def status(self, field: str) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise KeyError(field)

    def rss(self) -> int:
        return self.status("VmRSS") * 1024

    def threads(self) -> int:
        return self.status("Threads")

    def files(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench/dispatch.py")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--hold", type=float, default=5.0, help="seconds the calls are held, measured")
    args = parser.parse_args()
    n = args.calls
    raise_file_limit(n + 512)
    with EmbeddedRedis() as server, HoldingServer() as holder:
        client = redis.Redis.from_url(server.url)
        store = Store(client, secret_key(client))
        bot, _ = store.create_bot("acct_bench", "holder", "bench-game", "webhook", url=holder.url)
        bot = store.version_record(bot["id"], None)
        env = dict(os.environ, CARDARENA_CALLS_PER_ACCOUNT=str(2 * n), PYTHONUNBUFFERED="1")
        proc = subprocess.Popen([sys.executable, "-m", "worker.dispatch", server.url, "--part", "calls",
                                 "--calls", str(n + 64)], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            dispatcher = Proc(proc.pid)
            wait_for(lambda: client.scard("waits:callers") > 0, 30, "a dispatcher beating")
            time.sleep(0.5)
            rss0, threads0, files0 = dispatcher.rss(), dispatcher.threads(), dispatcher.files()
            cpu0 = dispatcher.cpu_s()
            decision = {"type": "turn", "protocol": 1, "game": "bench-game", "turn": 0, "seat": 0, "view": {},
                        "legal_actions": [{"play": 0}], "deadline_ms": 600_000}
            began = time.monotonic()
            for i in range(n):
                client.hset(f"match:m_b{i}", "status", '"running"')
                store.await_answer(f"m_b{i}", {**decision, "match_id": f"m_b{i}"}, bot)
            wait_for(lambda: holder.holding >= n, 300, f"holding {n} calls")
            filled = time.monotonic() - began
            cpu1 = dispatcher.cpu_s()
            rss1, threads1, files1 = dispatcher.rss(), dispatcher.threads(), dispatcher.files()
            time.sleep(args.hold)
            cpu2 = dispatcher.cpu_s()
            released = time.monotonic()
            holder.release()
            wait_for(lambda: all(client.llen(f"match:m_b{i}:log") == 1 for i in range(0, n, max(1, n // 50)))
                     and holder.answered >= n, 300, "settling them")
            settled = time.monotonic() - released
            cpu3 = dispatcher.cpu_s()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    load = os.getloadavg()
    print(f"one dispatcher process (--part calls), {n} webhook calls; load average {load[0]:.1f} "
          f"{load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} CPUs")
    print(f"  in flight at once:   {holder.most} (all {n} within {filled:.1f} s of publishing)")
    print(f"  RSS:                 {rss0 / 2**20:.0f} MB idle -> {rss1 / 2**20:.0f} MB holding "
          f"({(rss1 - rss0) / n / 1024:.1f} KB a call)")
    print(f"  threads:             {threads0} idle -> {threads1} holding")
    print(f"  open files:          {files0} idle -> {files1} holding")
    print(f"  CPU filling:         {cpu1 - cpu0:.2f} s ({1000 * (cpu1 - cpu0) / n:.2f} ms a call)")
    print(f"  CPU holding:         {(cpu2 - cpu1) / args.hold:.3f} s per second")
    print(f"  released -> settled: {settled:.1f} s ({cpu3 - cpu2:.2f} s CPU, "
          f"{1000 * (cpu3 - cpu2) / n:.2f} ms a call)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
