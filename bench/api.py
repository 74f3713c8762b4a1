"""Benchmark the referee API as `cardarena serve` runs it (gevent): the ladder, a polling turn, idle long-polls, a big crosstable.

    .venv/bin/python bench/api.py [--clients 8] [--seconds 3] [--rounds 3] [--game NAME]

Starts a private Redis and the API as a deployment runs it, `cardarena serve`
(rate limits off: `CARDARENA_RATE_LIMITS=off`), then measures with concurrent
clients, every measure once a round, the baseline first in each, `--rounds`
rounds:

* baseline: a bare WSGI app answering a fixed JSON body on the server
  `cardarena serve` builds (server/serve.py `wsgi_server`: gevent's pywsgi,
  no Nagle, the same pool and backlog) — what the HTTP stack alone costs on
  this machine;
* `GET /api/v1/games/{game}/rankings` with 50 rated bots;
* a polling turn round trip: the referee's side publishes a decision through
  the store (`await_answer`, as the match runner does); the bot long-polls
  `GET /bots/me/turns` and posts `POST /matches/{id}/turns/{turn}`. Timed from
  publish to the answer's POST returning (appended and the match's next run
  enqueued), with `--clients` matches played at once;
* `GET /api/v1/games` while 70 long-polls (`wait=30`) wait: 70 from one
  bot's secret, then one each from 70 bots (issue 13: 26.8 s; target < 1 s);
* a finished tournament of 2,800 matches: its crosstable (the first read
  computes and stores it, the next ones read it: target < 50 ms), a page of
  its match list and its HTML page (issue 13: ~1 s each).

Figures, per measure: requests (round trips) per second, p50 and p99 latency,
and the rate and p50 as a ratio against the same round's baseline, each
min / median / max over the rounds; the load average (1 minute) at the start
and after every round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time

import redis
import requests

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402
from core.redis_server import EmbeddedRedis, free_port  # noqa: E402
from core.store import Store, schema, secret_key  # noqa: E402
from server.serve import CONNECTIONS  # noqa: E402

#: the baseline: a fixed JSON body on `cardarena serve`'s own server (server/serve.py)
BASELINE = """
from gevent import monkey; monkey.patch_all()
import sys, json
from server.serve import wsgi_server
port, connections = int(sys.argv[1]), int(sys.argv[2])
body = json.dumps({"game": "x", "rankings": []}).encode()
def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]
wsgi_server(app, "127.0.0.1", port, connections).serve_forever()
"""
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start_server(mode: str, redis_url: str) -> tuple[subprocess.Popen, str]:
    """The baseline (a bare WSGI app) or the API (`cardarena serve`) on a free port, answering."""
    port = free_port()
    if mode == "baseline":
        command = [sys.executable, "-c", BASELINE, str(port), str(CONNECTIONS)]
    else:
        command = [sys.executable, "-m", "cardarena.cli", "serve", "--port", str(port)]
    env = {**os.environ, "REDIS_URL": redis_url, "CARDARENA_RATE_LIMITS": "off"}
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120  # a busy machine starts a process slowly
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            requests.get(url + "/api/v1/games", timeout=5)
            return proc, url
        except requests.RequestException:  # not listening yet, or too busy to answer in time
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{mode} server did not start")


def hammer(url: str, clients: int, seconds: float) -> list[float]:
    """GET `url` from `clients` threads for `seconds`; the latencies in seconds."""
    latencies: list[float] = []
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def client():
        mine = []
        with requests.Session() as session:
            while time.monotonic() < end:
                start = time.perf_counter()
                r = session.get(url, timeout=10)
                mine.append(time.perf_counter() - start)
                assert r.status_code == 200, r.text
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies


def polling_round_trips(base: str, store: Store, game: str, clients: int, seconds: float) -> list[float]:
    """`clients` matches at once, each turn timed from publish to the worker waking."""
    account, token = store.create_account("bench")
    latencies: list[float] = []
    lock = threading.Lock()
    end = time.monotonic() + seconds
    seats = games.get(game).min_seats

    def table(index: int):
        bots = [store.create_bot(account["id"], f"{account['id']}-p{index}-{s}", game, "polling")  # names are unique
                for s in range(seats)]
        secrets = {bot["id"]: secret for bot, secret in bots}
        session = requests.Session()
        mine = []
        seed = index
        while time.monotonic() < end:
            match = store.create_match(game, [b["id"] for b, _ in bots], seed, {}, move_timeout_ms=5000)
            store.set_match_status(match["id"], "running")
            state = store.replay(match["id"])
            turn = 0
            while not state.is_over and time.monotonic() < end:
                seat = state.to_act
                bot_id = match["seats"][seat]
                decision = {"type": "turn", "protocol": 1, "match_id": match["id"], "game": game,
                            "turn": turn, "seat": seat, "view": state.view(seat),
                            "legal_actions": state.legal_actions(), "deadline_ms": 5000}
                answer = threading.Thread(target=bot_answers, args=(session, secrets[bot_id], match["id"]))
                start = time.perf_counter()
                store.await_answer(match["id"], decision, {"id": bot_id, "kind": "polling"})
                answer.start()
                answer.join(10)  # the bot's POST returns once its answer is appended
                assert store.log_length(match["id"]) > turn, "no answer"
                mine.append(time.perf_counter() - start)
                state.apply(store.match_log(match["id"])[turn]["action"])
                turn += 1
            seed += clients
        with lock:
            latencies.extend(mine)

    def bot_answers(session: requests.Session, secret: str, match_id: str):
        headers = {"Authorization": f"Bearer {secret}"}
        turns = session.get(base + "/api/v1/bots/me/turns", params={"wait": 5}, headers=headers,
                            timeout=10).json()["turns"]
        decision = next(d for d in turns if d["match_id"] == match_id)
        r = session.post(f"{base}/api/v1/matches/{match_id}/turns/{decision['turn']}",
                         json={"action": decision["legal_actions"][0]}, headers=headers, timeout=10)
        assert r.status_code == 200, r.text

    threads = [threading.Thread(target=table, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies


def games_under_idle_polls(api_url: str, store: Store, game: str, one_secret: bool, polls: int = 70,
                           reads: int = 20) -> list[float]:
    """Latencies of `reads` sequential `GET /games` while `polls` long-polls (wait=30) are held
    open: all with one bot's secret, or one per bot. Returns once every poll has its answer, so
    that no round measures beside the previous round's polls."""
    account, _ = store.create_account("idle")
    count = 1 if one_secret else polls
    tag = "one" if one_secret else "many"
    secrets = [store.create_bot(account["id"], f"{account['id']}-idle-{tag}-{i}", game, "polling")[1]
               for i in range(count)]
    answers: list[int] = []

    def wait(secret: str) -> None:
        try:
            r = requests.get(api_url + "/api/v1/bots/me/turns", params={"wait": 30},
                             headers={"Authorization": f"Bearer {secret}"}, timeout=60)
            answers.append(r.status_code)
        except requests.RequestException:
            answers.append(0)

    waiting = [threading.Thread(target=wait, args=(secrets[i % count],), daemon=True) for i in range(polls)]
    for thread in waiting:
        thread.start()
    time.sleep(1.0)  # every poll is in, waiting or refused
    latencies = []
    with requests.Session() as session:
        for _ in range(reads):
            start = time.perf_counter()
            assert session.get(api_url + "/api/v1/games", timeout=60).status_code == 200
            latencies.append(time.perf_counter() - start)
    refused = sum(1 for a in answers if a in (429, 503))
    print(f"  ({polls} polls from {count} secret(s): {refused} refused at once, the rest waiting)", flush=True)
    for thread in waiting:
        thread.join(90)  # answered empty after their 30 s
    return latencies


def finished_tournament(store: Store, game: str, matches: int = 2800) -> str:
    """A finished duplicate round-robin of `matches` matches, concluded through the store."""
    import random

    from games.ranking import alone_first, match_points

    account, _ = store.create_account("organiser")
    bots = [store.create_bot(account["id"], f"entrant{i}", game, "polling")[0]["id"] for i in range(8)]
    deals = matches // (28 * 2)  # 8 bots: 28 pairs, 2 rotations a deal
    t = store.create_tournament(game, bots, seats=2, deals=deals, duplicate=True, seed=1, options={})
    store.set_tournament(t["id"], status="running", total=28 * deals * 2)
    rng = random.Random(7)
    index = 0
    for a in range(8):
        for b in range(a + 1, 8):
            for _deal in range(deals):
                for seats in ([bots[a], bots[b]], [bots[b], bots[a]]):
                    mid = store.create_match(game, seats, index, {}, tournament_id=t["id"],
                                             match_id=f"m_bench_{index}")["id"]
                    store.add_tournament_match(t["id"], mid)
                    ranks = rng.choice([[1, 2], [2, 1], [1, 1]])
                    result = {"scores": [3 - r for r in ranks], "ranks": ranks}
                    records = [{"bot": bot, "won": alone_first(ranks, i), "faults": 0,
                                "points": match_points(ranks, i), "score": float(3 - ranks[i])}
                               for i, bot in enumerate(seats)]
                    store.start_match(mid)
                    store.conclude_match(mid, "finished", result, records=records)
                    index += 1
    from core.conclusion import save_standings

    save_standings(store, t["id"])  # what the last match's end would do, without its jobs
    store.set_tournament(t["id"], status="finished")
    return t["id"]


def one_read(url: str) -> float:
    start = time.perf_counter()
    r = requests.get(url, timeout=120)
    assert r.status_code == 200, r.text[:200]
    return time.perf_counter() - start


def figures(latencies: list[float], seconds: float) -> dict:
    """Rate (a second), p50 and p99 (ms) of one measure in one round."""
    cuts = statistics.quantiles(latencies, n=100)
    return {"rate": len(latencies) / seconds, "p50": cuts[49] * 1000, "p99": cuts[98] * 1000}


def spread(values: list[float], digits: int) -> str:
    return f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f} / {max(values):.{digits}f}"


def report(rows: dict[str, list[dict]]) -> None:
    """Each measure's figures over the rounds, min / median / max, the ratios against the
    baseline of the same round."""
    base = rows["baseline (bare WSGI, fixed JSON)"]
    print("min / median / max over the rounds:", flush=True)
    for name, found in rows.items():
        text = (f"{name:<40} {spread([f['rate'] for f in found], 0):>17}/s   p50 {spread([f['p50'] for f in found], 2):>22} ms"
                f"   p99 {spread([f['p99'] for f in found], 2):>22} ms")
        if found is not base:
            text += (f"   x{spread([f['rate'] / b['rate'] for f, b in zip(found, base, strict=True)], 2)} rate,"
                     f" x{spread([f['p50'] / b['p50'] for f, b in zip(found, base, strict=True)], 1)} p50 of baseline")
        print(text, flush=True)


def one_round(args: argparse.Namespace, store: Store, game: str, base_url: str, api_url: str, tid: str,
              rows: dict[str, list[dict]]) -> None:
    """Every measure once, the baseline first; each round's figures appended to `rows`."""
    def add(name: str, latencies: list[float], seconds: float) -> dict:
        found = figures(latencies, seconds)
        rows.setdefault(name, []).append(found)
        return found

    add("baseline (bare WSGI, fixed JSON)", hammer(base_url + "/", args.clients, args.seconds), args.seconds)
    rankings = f"{api_url}/api/v1/games/{game}/rankings"
    add("GET /games/{game}/rankings (50)", hammer(rankings, args.clients, args.seconds), args.seconds)
    add("polling turn round trip", polling_round_trips(api_url, store, game, args.clients, args.seconds),
        args.seconds)
    tournament = f"{api_url}/api/v1/tournaments/{tid}"
    for name, url, clients in (
            ("crosstable, 2,800 matches, 1 client", tournament + "/crosstable", 1),
            ("crosstable, 2,800 matches, 16 clients", tournament + "/crosstable", 16),
            ("its matches, a page of 100, 16 clients", tournament + "/matches", 16),
            ("its HTML page, 16 clients", f"{api_url}/tournaments/{tid}", 16)):
        add(name, hammer(url, clients, args.seconds), args.seconds)
    for one_secret in (True, False):
        latencies = games_under_idle_polls(api_url, store, game, one_secret)
        found = add(f"GET /games, 70 idle polls ({'1 bot' if one_secret else '70 bots'})", latencies,
                    sum(latencies))
        found["max"] = max(latencies) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=3.0, help="each measure, each round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--game", default=None, help="the game for both measures (default: the first registered)")
    args = parser.parse_args()
    game = args.game or games.names()[0]
    loads = [os.getloadavg()[0]]
    with EmbeddedRedis() as server:
        client = redis.Redis.from_url(server.url)
        schema.stamp_if_empty(client)  # a new platform's Redis, as the API stamps it
        store = Store(client, secret_key(client))
        owner, _ = store.create_account("ladder")
        for i in range(50):
            bot, _ = store.create_bot(owner["id"], f"rated{i}", game, "polling")
            store.save_rating(game, bot["id"], 20 + i * 0.1, 3.0)
        tid = finished_tournament(store, game)
        procs = []
        try:
            proc, base_url = start_server("baseline", server.url)
            procs.append(proc)
            proc, api_url = start_server("api", server.url)
            procs.append(proc)
            print(f"{args.clients} concurrent clients, {args.seconds:.0f} s a measure, {args.rounds} rounds, "
                  f"game {game}, gevent, {CONNECTIONS:,} connections, {os.cpu_count()} CPUs, load {loads[0]:.2f}",
                  flush=True)
            first = one_read(f"{api_url}/api/v1/tournaments/{tid}/crosstable")
            print(f"crosstable, 2,800 matches: first read (computes and stores it) {first * 1000:.1f} ms",
                  flush=True)
            hammer(base_url + "/", args.clients, 0.5)  # warm up both
            hammer(f"{api_url}/api/v1/games/{game}/rankings", args.clients, 0.5)
            rows: dict[str, list[dict]] = {}
            for round_ in range(args.rounds):
                one_round(args, store, game, base_url, api_url, tid, rows)
                loads.append(os.getloadavg()[0])
                print(f"round {round_ + 1} done, load {loads[-1]:.2f}", flush=True)
            report(rows)
            crosstable = rows["crosstable, 2,800 matches, 16 clients"]
            print(f"targets: crosstable p50 (16 clients) {spread([f['p50'] for f in crosstable], 1)} ms "
                  f"against 50 ms; GET /games beside idle polls, slowest "
                  f"{max(f['max'] for n, r in rows.items() if 'idle' in n for f in r):.1f} ms against 1000 ms",
                  flush=True)
            print(f"load {min(loads):.2f}-{max(loads):.2f} (start {loads[0]:.2f}, after each round "
                  f"{', '.join(f'{x:.2f}' for x in loads[1:])})", flush=True)
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
