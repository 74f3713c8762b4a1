"""Fair share under attack (issue 28 item 8): does one tenant's waiting hurt anybody else?

    .venv/bin/python bench/fairshare.py [--game duck-soup] [--seconds 30] [--no-capacity]

Starts what a deployment runs — a private Redis, `cardarena serve` (gevent) and
`cardarena worker -n 2` — then, in phases of `--seconds` each, plays honest
matches back to back (a webhook bot served by `sdk.serve` against a polling
bot on `sdk.connect`, both of one honest account, answering at once) while a
bystander in a process of its own times `GET /api/v1/games` every 100 ms:

1. alone: nothing else runs (the baseline, measured in this run);
2. waiting attack: 1,024 long-polls (16 accounts × 16 polling bots × 4, each
   account at its quota of 64; an attacker's bots polling again as each poll
   ends) and 112 event streams on the honest match being played, from 7
   loopback addresses (127.0.0.2…8, 16 each), held by an attacker process;
3. full attack: the same, plus hanging webhook calls — an attacker account's
   20 webhook bots, whose server accepts a turn and never answers, in a
   round-robin of 380 matches (10 s a move, a 60 s bank): every one of those
   matches waits on a call that hangs until its deadline.

For each phase it prints the honest matches' faults (target 0), their time per
turn against phase 1's (target ≤ 1.2×), the bystander's p50/p99 (target
p99 < 100 ms), and the CPU the platform's processes spent in the phase per
honest turn (bench/remote.py `PlatformCpu`; under attack it includes serving
the attacker). On a machine others share, the time per turn follows their
load from one phase to the next; the CPU does not. Phase 2 is the API's share
(long-polls and streams); what phase 3 adds is the dispatcher's (webhook calls:
`worker/dispatch.py`), whose calls the hanging ones may crowd out.

4. capacity (unless `--no-capacity`): 5,000 long-polls (79 accounts made
   through the store, 64 each) and 500 event streams (32 addresses) held on the
   one API process, and the bystander's p99 meanwhile (target < 100 ms).

Load and CPUs are printed with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

#: the attacker's sources of event streams: 16 streams each (the per-address quota)
STREAM_ADDRESSES = [f"127.0.0.{i}" for i in range(2, 40)]


# -- the attacker and the bystander: processes of their own (asyncio / a plain loop) ----------------


async def _read_response(reader: asyncio.StreamReader) -> int:
    """Read one HTTP answer (Content-Length or chunked); its status."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    if "content-length" in headers:
        await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    return status


async def _poller(port: int, secret: str, stats: dict) -> None:
    """One long-poll at a time, forever: as each ends (wait=30 s), the next."""
    request = (f"GET /api/v1/bots/me/turns?wait=30 HTTP/1.1\r\nHost: x\r\n"
               f"Authorization: Bearer {secret}\r\n\r\n").encode()
    while True:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                while True:
                    writer.write(request)
                    stats["polls"] += 1
                    status = await _read_response(reader)
                    stats[f"poll_{status}"] = stats.get(f"poll_{status}", 0) + 1
                    if status != 200:
                        await asyncio.sleep(1.0)  # Retry-After
            finally:
                writer.close()
        except (OSError, asyncio.IncompleteReadError, ValueError):
            stats["poll_errors"] = stats.get("poll_errors", 0) + 1
            await asyncio.sleep(1.0)


async def _streamer(port: int, source: str, target: Path | str, stats: dict) -> None:
    """One event stream at a time from `source`, forever: `target` is a path, or a file naming
    the match to watch (the honest match being played)."""
    while True:
        try:
            path = Path(target).read_text().strip() if isinstance(target, Path) else target
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
            try:
                writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode())
                stats["streams"] += 1
                while await reader.read(65536):
                    pass
            finally:
                writer.close()
        except (OSError, ValueError):
            stats["stream_errors"] = stats.get("stream_errors", 0) + 1
        await asyncio.sleep(0.5)


async def _hanging_bot(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, stats: dict) -> None:
    """A webhook bot that answers pings and notices but never a turn: the call hangs until the
    referee gives up at its deadline."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            body = json.loads(await reader.readexactly(length) or b"{}")
            if body.get("type") == "turn":
                stats["hanging"] += 1
                stats["hanging_most"] = max(stats["hanging_most"], stats["hanging"])
                stats["calls"] += 1
                try:
                    while await reader.read(65536):
                        pass
                finally:
                    stats["hanging"] -= 1
                return
            answer = b'{"name":"hangs"}'
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(answer)).encode() + b"\r\n\r\n" + answer)
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError, ValueError):
        pass
    finally:
        writer.close()


async def _attack(config: dict) -> None:
    stats = {"polls": 0, "streams": 0, "hanging": 0, "hanging_most": 0, "calls": 0}
    port = config["port"]
    if config.get("hang_port"):
        await asyncio.start_server(lambda r, w: _hanging_bot(r, w, stats), "127.0.0.1", config["hang_port"],
                                   backlog=1024)
    tasks = [asyncio.ensure_future(_poller(port, secret, stats)) for secret in config["polls"]]
    target = Path(config["stream_file"]) if config.get("stream_file") else config["stream_path"]
    tasks += [asyncio.ensure_future(_streamer(port, source, target, stats)) for source in config["stream_sources"]]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, lambda: print(json.dumps(stats), flush=True))
    print("attacking", flush=True)
    await stop.wait()
    print(json.dumps(stats), flush=True)
    os._exit(0)  # thousands of open connections: the kernel closes them faster than asyncio would


def attacker_main(config_path: str) -> int:
    import resource

    from core.signals import die_with_parent

    die_with_parent(os.getppid())  # the bench killed: no attacker left behind

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(_attack(json.loads(Path(config_path).read_text())))
    return 0


def bystander_main(url: str, seconds: float) -> int:
    """`GET url` every 100 ms (600 a minute: within the 1,200 a minute an address without a
    credential may send) for `seconds` on one kept-alive connection; the latencies (ms) as JSON."""
    import requests

    from core.signals import die_with_parent

    die_with_parent(os.getppid())

    times, errors = [], {}
    end = time.monotonic() + seconds
    with requests.Session() as session:
        while time.monotonic() < end:
            began = time.perf_counter()
            try:
                status = str(session.get(url, timeout=30).status_code)
            except requests.RequestException as exc:
                status = type(exc).__name__
            if status == "200":
                times.append((time.perf_counter() - began) * 1000)
            else:
                errors[status] = errors.get(status, 0) + 1
            time.sleep(0.1)
    print(json.dumps({"ms": times, "errors": errors}), flush=True)
    return 0


# -- the bench ---------------------------------------------------------------------------------------


class Attacker:
    """The attacker's process: long-polls, streams and (maybe) a hanging webhook server."""

    def __init__(self, config: dict) -> None:
        self.file = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump(config, self.file)
        self.file.close()
        self.proc = subprocess.Popen([sys.executable, __file__, "--attacker", self.file.name], cwd=ROOT,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "attacking"

    def stop(self) -> dict:
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=60)
        os.unlink(self.file.name)
        lines = [line for line in out.splitlines() if line.startswith("{")]
        return json.loads(lines[-1]) if lines else {}


def bystander(url: str, seconds: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, "--bystander", url, str(seconds)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)


def bystander_result(proc: subprocess.Popen) -> dict:
    out, _ = proc.communicate(timeout=120)
    return json.loads(out.strip().splitlines()[-1])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def match_seconds(match: dict) -> float:
    """A match's time from its creation to its end, as its record says (to the millisecond): the
    platform's, not the reader's polling interval."""
    def at(stamp: str) -> datetime:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return (at(match["finished"]) - at(match["created"])).total_seconds() if match.get("finished") else 0.0


def play_honest(admin, owner, game: str, seats: list[str], seconds: float, watch_file: Path) -> dict:
    """Honest matches back to back for `seconds`: turns played, seconds spent, faults."""
    turns = faults = matches = 0
    spent = 0.0
    fault_kinds: dict[str, int] = {}
    end = time.monotonic() + seconds
    seed = 1
    while time.monotonic() < end:
        match = owner.challenge(game, seats if seed % 2 else seats[::-1], seed=seed, move_timeout_ms=2000,
                                time_bank_ms=0)
        watch_file.write_text(f"/api/v1/matches/{match.id}/events")
        # every 0.1 s: 10 reads a second plus the challenges stay inside the owner's 1,200 a minute
        # (every 0.05 s spent it all once matches got quick); the time is the match's own, below
        while owner.match(match.id).status not in ("finished", "aborted") and time.monotonic() < end + 60:
            time.sleep(0.1)
        full = admin.request("GET", f"/matches/{match.id}")
        log = full.get("log") or []
        spent += match_seconds(full)
        turns += len(log)
        seat_bots = [seat["bot"] for seat in full["seats"]]
        for entry in log:
            if "fault" in entry:
                faults += 1
                kind = "webhook" if seat_bots[entry["seat"]] == seats[0] else "polling"
                fault_kinds[f"{kind}: {str(entry['fault'])[:60]}"] = fault_kinds.get(f"{kind}: {str(entry['fault'])[:60]}", 0) + 1
        matches += 1
        seed += 1
    return {"turns": turns, "seconds": spent, "faults": faults, "matches": matches, "fault_kinds": fault_kinds,
            "per_turn_ms": 1000 * spent / max(1, turns)}


def register_many(client_for, jobs: list) -> list:
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(client_for, jobs))


def phase(name: str, admin, owner, args, seats, url: str, watch_file: Path, alone: dict | None) -> dict:
    from remote import PlatformCpu

    load = os.getloadavg()[0]
    watcher = bystander(url + "/api/v1/games", args.seconds)
    cpu = PlatformCpu()
    cpu.start()
    honest = play_honest(admin, owner, args.game, seats, args.seconds, watch_file)
    spent = cpu.stop()
    seen = bystander_result(watcher)
    ms = seen["ms"]
    ratio = honest["per_turn_ms"] / alone["per_turn_ms"] if alone else 1.0
    print(f"{name:<14} honest: {honest['matches']} matches, {honest['turns']} turns, "
          f"{honest['per_turn_ms']:.1f} ms/turn (x{ratio:.2f} of alone; target <= 1.2), faults {honest['faults']} "
          f"(target 0) | bystander GET /games: p50 {percentile(ms, 0.5):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, "
          f"max {max(ms) if ms else float('nan'):.1f} ms, {len(ms)} reads, {seen['errors']} errors "
          f"(target p99 < 100 ms) | load {load:.2f} -> {os.getloadavg()[0]:.2f}", flush=True)
    turns = max(1, honest["turns"])
    print(f"  platform CPU {1000 * sum(spent.values()) / turns:.2f} ms a honest turn ("
          + ", ".join(f"{kind} {1000 * s / turns:.2f}" for kind, s in sorted(spent.items())) + ")", flush=True)
    if honest["fault_kinds"]:
        print(f"  the honest faults: {honest['fault_kinds']}", flush=True)
    return honest


def capacity(url: str, redis_url: str, game: str, seconds: float, polls: int = 5000, streams: int = 500) -> None:
    """`polls` long-polls and `streams` event streams held on the API process; the bystander's p99."""
    import redis as redis_lib

    from core.store import Store, secret_key
    from core.store.quotas import polls_key, streams_key

    client = redis_lib.Redis.from_url(redis_url)
    store = Store(client, secret_key(client))
    accounts, secrets = [], []
    for a in range((polls + 63) // 64):
        account, _ = store.create_account(f"crowd{a}")
        accounts.append(account["id"])
        for b in range(16):
            secrets += [store.create_bot(account["id"], f"crowd{a}-{b}", game, "polling")[1]] * 4
    secrets = secrets[:polls]
    bots = [store.create_bot(accounts[0], f"watched{i}", game, "polling")[0]["id"] for i in range(2)]
    watched = store.create_match(game, bots, 1, {})["id"]  # queued: its streams wait
    sources = [STREAM_ADDRESSES[i // 16] for i in range(streams)]
    port = int(url.rsplit(":", 1)[1])
    began = time.monotonic()
    attacker = Attacker({"port": port, "polls": secrets, "stream_path": f"/api/v1/matches/{watched}/events",
                         "stream_sources": sources})
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            waiting = sum(client.zcard(polls_key(a)) for a in accounts)
            open_streams = sum(client.zcard(streams_key(s)) for s in set(sources))
            if waiting >= polls and open_streams >= streams:
                break
            time.sleep(0.5)
        print(f"capacity: {waiting} long-polls and {open_streams} event streams held on one API process "
              f"(in place after {time.monotonic() - began:.0f} s)", flush=True)
        load = os.getloadavg()[0]
        seen = bystander_result(bystander(url + "/api/v1/games", seconds))
        ms = seen["ms"]
        waiting = sum(client.zcard(polls_key(a)) for a in accounts)
        print(f"capacity: bystander GET /games: p50 {percentile(ms, 0.5):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, "
              f"max {max(ms):.1f} ms, {len(ms)} reads, {seen['errors']} errors (target p99 < 100 ms; "
              f"{waiting} polls still waiting at the end, re-polling as theirs end) | load {load:.2f} -> "
              f"{os.getloadavg()[0]:.2f}", flush=True)
    finally:
        stats = attacker.stop()
        print(f"capacity: the crowd sent {stats.get('polls')} polls ({ {k: v for k, v in stats.items() if k.startswith('poll_')} }), "
              f"opened {stats.get('streams')} streams", flush=True)
        client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="duck-soup")
    parser.add_argument("--seconds", type=float, default=30.0, help="each phase's length")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-capacity", action="store_true", help="skip the 5,000 + 500 phase")
    parser.add_argument("--capacity-only", action="store_true", help="only the 5,000 + 500 phase")
    parser.add_argument("--attacker", help=argparse.SUPPRESS)
    parser.add_argument("--bystander", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attacker:
        return attacker_main(args.attacker)
    if args.bystander:
        return bystander_main(args.bystander[0], float(args.bystander[1]))

    from connect import ADMIN, running_platform

    from core.redis_server import free_port
    from sdk import Bot, Client, connect, serve

    class AtOnce(Bot):
        def act(self, view, legal_actions):
            return legal_actions[0]

    if args.capacity_only:
        with running_platform(args.workers) as (url, redis_url):
            print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}", flush=True)
            capacity(url, redis_url, args.game, max(args.seconds, 40.0))
        return 0
    with running_platform(args.workers) as (url, redis_url), tempfile.TemporaryDirectory() as tmp:
        watch_file = Path(tmp) / "watched"
        watch_file.write_text("/api/v1/games")
        admin, owner = Client(url, token=ADMIN), Client(url)
        owner.create_account("honest")
        hook_port = free_port()
        hook = owner.register_bot("honest-hook", args.game, kind="webhook", url=f"http://127.0.0.1:{hook_port}/")
        server = serve(AtOnce(), port=hook_port, secret=hook.secret, block=False, threads=8)
        owner.ping(hook)  # served after it was registered: online from here
        polled = owner.register_bot("honest-poll", args.game, kind="polling")
        poller = connect(AtOnce(), url, secret=polled.secret, wait=25, block=False)
        seats = [hook.id, polled.id]
        try:
            # the attacker's accounts and bots, made through the API as an attacker would
            crowd = [Client(url) for _ in range(16)]
            for i, c in enumerate(crowd):
                c.create_account(f"crowd{i}")
            poll_secrets = register_many(lambda job: job[0].register_bot(f"idle{job[1]}", args.game, kind="polling").secret,
                                         [(c, f"{i}-{b}") for i, c in enumerate(crowd) for b in range(16)])
            hanger = Client(url)
            hanger.create_account("hangs")
            hang_port = free_port()
            hangs = Attacker({"port": int(url.rsplit(":", 1)[1]), "polls": [], "stream_sources": [],
                              "stream_path": "", "hang_port": hang_port})  # its server up: the pings answer
            hanging = register_many(lambda i: hanger.register_bot(f"hangs{i}", args.game, kind="webhook",
                                                                  url=f"http://127.0.0.1:{hang_port}/",
                                                                  max_concurrent=64).id, list(range(20)))
            time.sleep(2.0)  # workers up
            print(f"{args.game}: honest webhook + polling bots of one account answering at once; "
                  f"{args.workers} worker processes, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, "
                  f"{args.seconds:.0f} s a phase", flush=True)
            alone = phase("1 alone", admin, owner, args, seats, url, watch_file, None)
            config = {"port": int(url.rsplit(":", 1)[1]), "polls": [s for s in poll_secrets for _ in range(4)],
                      "stream_file": str(watch_file), "stream_sources": [STREAM_ADDRESSES[i // 16] for i in range(112)]}
            attacker = Attacker(config)
            try:
                time.sleep(5.0)  # the polls and streams in place
                phase("2 waiting", admin, owner, args, seats, url, watch_file, alone)
                t = hanger.create_tournament(args.game, hanging, deals=2, duplicate=False, move_timeout_ms=10_000,
                                             time_bank_ms=60_000, max_faults=10)
                deadline = time.monotonic() + 90
                while (running := sum(1 for m in admin.tournament_matches(t) if m.status == "running")) < 300 \
                        and time.monotonic() < deadline:
                    time.sleep(1.0)
                print(f"  hanging: {running} of the hanging round-robin's 380 matches running, each waiting on "
                      f"a call to a bot that never answers", flush=True)
                phase("3 full", admin, owner, args, seats, url, watch_file, alone)
                admin.request("POST", f"/tournaments/{t.id}/abort")
            finally:
                stats = attacker.stop()
                hung = hangs.stop()
            print(f"  the attacker: {stats.get('polls')} long-polls sent "
                  f"({ {k: v for k, v in stats.items() if k.startswith('poll_')} }), {stats.get('streams')} streams "
                  f"opened, {hung.get('calls')} turns called on its hanging bots, at most "
                  f"{hung.get('hanging_most')} hanging at once (the dispatcher's calls in flight)", flush=True)
        finally:
            poller.stop_event.set()
            poller.join(timeout=30)
            server.stop()
        if not args.no_capacity:
            capacity(url, redis_url, args.game, max(args.seconds, 40.0))  # a whole round of re-polls
        print(f"load after: {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
