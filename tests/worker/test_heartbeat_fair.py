"""The heartbeat is fair between accounts (docs/api.md "Liveness"): an account's hanging webhook
bots hold its own pings only, and an honest bot of another account is pinged on time.

At a scale that runs in seconds: the heartbeat's period shortened to 1 s (its scan every 0.2 s),
300 bots of 10 accounts pointing at a loopback server that takes every connection and never
answers (each ping then lasts its whole `PING_S`), and one honest bot of an 11th account at a
server that answers. Loopback only; every loop bounded in count and time.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time

import pytest

from tests.worker.test_liveness_order import Loopback
from worker.heartbeat import PER_ACCOUNT, Heartbeat

GAME = "duck-soup"
HANGING_ACCOUNTS, HANGING_PER_ACCOUNT = 10, 30
EVERY_S, TICK_S = 1.0, 0.2
#: honest pings waited for, and the longest they may take in all (a bound, not a pace)
HONEST_PINGS, WAIT_S = 6, 25


class Hanging:
    """A loopback server that reads each request's line and never answers, holding the connection
    until the caller closes it; it counts, per path's first part (an account), the connections
    open now and the most ever open at once, and every request seen."""

    def __init__(self) -> None:
        self.open: collections.Counter = collections.Counter()
        self.most: collections.Counter = collections.Counter()
        self.seen: collections.Counter = collections.Counter()
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, daemon=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = await reader.readline()
        account = line.split(b" ")[1].split(b"/")[1].decode() if line.count(b" ") >= 2 else "?"
        with self.lock:
            self.open[account] += 1
            self.seen[account] += 1
            self.most[account] = max(self.most[account], self.open[account])
        try:
            while await reader.read(4096):  # until the caller gives up and closes
                pass
        finally:
            with self.lock:
                self.open[account] -= 1
            writer.close()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024))
        self.port = self.server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self) -> Hanging:
        self.thread.start()
        assert self.ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.mark.slow
def test_a_thousand_hanging_bots_scaled_down_do_not_delay_an_honest_bots_ping(store):
    arrivals: list[float] = []
    honest_pinged = threading.Condition()

    def answer(n: int) -> str:
        with honest_pinged:
            arrivals.append(time.monotonic())
            honest_pinged.notify_all()
        return "ok"

    with Hanging() as hanging, Loopback(answer) as honest_server:
        for a in range(HANGING_ACCOUNTS):
            account, _ = store.create_account(f"hanging{a}")
            for b in range(HANGING_PER_ACCOUNT):
                store.create_bot(account["id"], f"h{a}-{b}", GAME, "webhook",
                                 url=f"http://127.0.0.1:{hanging.port}/{a}/{b}")
        honest_account, _ = store.create_account("honest")
        honest, _ = store.create_bot(honest_account["id"], "honest", GAME, "webhook", url=honest_server.url)
        heartbeat = Heartbeat(store, every_s=EVERY_S, tick_s=TICK_S).start()  # registered last of all
        try:
            end = time.monotonic() + WAIT_S
            with honest_pinged:
                while len(arrivals) < HONEST_PINGS and time.monotonic() < end:
                    honest_pinged.wait(end - time.monotonic())
        finally:
            heartbeat.stop()
        assert len(arrivals) >= HONEST_PINGS, f"the honest bot was pinged {len(arrivals)} times in {WAIT_S} s"
        gaps = [later - earlier for earlier, later in zip(arrivals, arrivals[1:], strict=False)]
        # due every EVERY_S, found at the next scan: never held up behind the hanging pings
        assert max(gaps) < EVERY_S + TICK_S + 3.0, gaps
        with hanging.lock:
            assert set(hanging.seen) == {str(a) for a in range(HANGING_ACCOUNTS)}  # every account had turns
            assert max(hanging.most.values()) <= PER_ACCOUNT  # and held no more than its share
    assert store.get_bot(honest["id"])["last_seen"] is not None
