"""The API process' CPU per polling decision (one long-poll that brings it + one answer), under gevent.

    .venv/bin/python bench/turn_cpu.py [--decisions 2000] [--clients 4] [--against DIR]

Starts a private Redis and `cardarena serve` (gevent's pywsgi, the app as
deployed, rate limits on; it re-executes itself in the same process, whose CPU
is read) on loopback, then
plays `--decisions` polling decisions from `--clients` tables at once: the
referee's side publishes each through the store (`await_answer`, as the
match runner does), the bot long-polls `GET /bots/me/turns?wait=5` and posts
`POST /matches/{id}/turns/{turn}`. The figure is the server process' own CPU
(utime + stime from /proc) over those decisions, per decision.

Against it, in the same run and the same way: a bare gevent pywsgi app
answering a fixed JSON body to the same GET and POST — what the HTTP stack
alone costs per decision on this machine — so the API's figure is also given
as a ratio of that baseline. `--against DIR` measures a second copy of the
code (e.g. `git archive main | tar -x -C DIR`) right after this one, for a
before/after of a change back to back. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import threading
import time

import redis
import requests

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)

import games  # noqa: E402
from core.redis_server import EmbeddedRedis, free_port  # noqa: E402
from core.store import Store, secret_key  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
GAME = "duck-soup"
ROUNDS = itertools.count()

BARE = """
from gevent import monkey; monkey.patch_all()
import json, sys
from gevent.pywsgi import WSGIServer
turns = json.dumps({"turns": [{"type": "turn", "match_id": "m", "turn": 0, "legal_actions": [{}]}]}).encode()
accepted = json.dumps({"match_id": "m", "turn": 0, "action": {}}).encode()
def app(environ, start_response):
    if environ["REQUEST_METHOD"] == "POST":
        environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    body = accepted if environ["REQUEST_METHOD"] == "POST" else turns
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]
WSGIServer(("127.0.0.1", int(sys.argv[1])), app, log=None).serve_forever()
"""


def cpu_s(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start(args: list[str], source: str, redis_url: str, port: int) -> subprocess.Popen:
    env = dict(os.environ, REDIS_URL=redis_url, PYTHONPATH=source)
    proc = subprocess.Popen([sys.executable, *args], cwd=source, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            requests.get(f"http://127.0.0.1:{port}/api/v1/games", timeout=2)
            return proc
        except requests.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the server did not start")


def play(base: str, store: Store, clients: int, decisions: int, real: bool) -> int:
    """`decisions` polling decisions from `clients` tables at once; how many were played."""
    account, _ = store.create_account("bench")
    round_ = next(ROUNDS)
    played = [0]
    lock = threading.Lock()
    deadline = time.monotonic() + 600

    def take() -> bool:
        with lock:
            if played[0] >= decisions or time.monotonic() > deadline:
                return False
            played[0] += 1
            return True

    def table(index: int) -> None:
        session = requests.Session()
        bots = [store.create_bot(account["id"], f"p{round_}-{index}-{seat}", GAME, "polling") for seat in range(2)]
        headers = [{"Authorization": f"Bearer {secret}"} for _, secret in bots]
        seed = index
        while True:
            match = store.create_match(GAME, [bot["id"] for bot, _ in bots], seed, {}, move_timeout_ms=30_000)
            store.set_match_status(match["id"], "running")
            state = store.replay(match["id"])
            turn = 0
            while not state.is_over:
                if not take():
                    return
                seat = state.to_act
                decision = {"type": "turn", "protocol": 1, "match_id": match["id"], "game": GAME, "turn": turn,
                            "seat": seat, "view": state.view(seat), "legal_actions": state.legal_actions(),
                            "deadline_ms": 30_000}
                if real:
                    store.await_answer(match["id"], decision, {"id": match["seats"][seat], "kind": "polling"})
                got = session.get(f"{base}/api/v1/bots/me/turns", params={"wait": 5}, headers=headers[seat],
                                  timeout=30)
                assert got.status_code == 200 and (got.json()["turns"] or not real), got.text
                r = session.post(f"{base}/api/v1/matches/{match['id']}/turns/{turn}",
                                 json={"action": decision["legal_actions"][0]}, headers=headers[seat], timeout=30)
                assert r.status_code == 200, r.text
                state.apply(r.json()["action"] if real else decision["legal_actions"][0])
                turn += 1
            seed += clients

    threads = [threading.Thread(target=table, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return played[0]


def measure(name: str, args: list[str], source: str, server: EmbeddedRedis, clients: int, decisions: int,
            real: bool) -> float:
    client = redis.Redis.from_url(server.url)
    client.flushall()
    store = Store(client, secret_key(client))
    port = free_port()
    proc = start([*args, str(port)] if not real else [*args, "--port", str(port)], source, server.url, port)
    try:
        base = f"http://127.0.0.1:{port}"
        play(base, store, clients, min(200, decisions), real)  # warm up
        if os.environ.get("BENCH_SHOW_PID"):
            print(f"server pid {proc.pid}", flush=True)  # for a profiler (py-spy record -p PID)
        before, began = cpu_s(proc.pid), time.monotonic()
        n = play(base, store, clients, decisions, real)
        ms = (cpu_s(proc.pid) - before) * 1000 / max(1, n)
        print(f"{name:<44} {ms:6.3f} ms CPU per decision ({n} in {time.monotonic() - began:.1f} s, "
              f"load {os.getloadavg()[0]:.2f})", flush=True)
        return ms
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--against", default=None, help="a second copy of the code to measure right after")
    args = parser.parse_args()
    assert GAME in games.names()
    serve = ["-m", "cardarena.cli", "serve", "--host", "127.0.0.1"]
    with EmbeddedRedis() as server:
        bare = measure("bare gevent pywsgi (fixed JSON, GET + POST)", ["-c", BARE], HERE, server, args.clients,
                       min(args.decisions, 500), real=False)  # ~20 ms a round (delayed ACKs), little CPU
        rows = [("this tree", HERE)] + ([("--against " + args.against, args.against)] if args.against else [])
        for label, source in rows:
            ms = measure(f"API, poll + answer ({label})", serve, source, server, args.clients, args.decisions,
                         real=True)
            print(f"  x{ms / bare:.1f} of the bare HTTP stack", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
