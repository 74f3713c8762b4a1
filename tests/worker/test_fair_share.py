"""Fair share of the dispatcher (issue 28, docs/api.md §6 "Fair share"): waiting costs no thread,
an account's calls in flight are capped, and a bot is charged only for calls it received.

The issue's attack: 66 challenges between two bots that never answer took all 64 caller
threads, and an honest match then advanced one turn every 35–44 s, both its turns charged as
timeouts although its bot was never called. Here 320 hanging calls of one account sit beside an
honest webhook match on the real pool: the attacker's account holds its 256 and no more, the
honest bots are called at once and never charged for a call not made, and aborting the
attacker's matches closes its calls at once.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

import sdk
from core.conclusion import end_match
from core.store import Store, secret_key
from tests.worker.test_never_waits import GAME, Thinker, free_port
from tests.worker.test_worker_e2e import python_bot
from tests.worker.zoo import HoldingServer
from worker.dispatch import CALLS_PER_ACCOUNT, Dispatcher, raise_file_limit

HANGING = 320


def wait_for(condition, timeout: float, what: str):
    end = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < end, f"not {what} after {timeout:.0f} s"
        time.sleep(0.02)
    return value


def decision(match_id: str, deadline_ms: int) -> dict:
    return {"type": "turn", "protocol": 1, "match_id": match_id, "game": GAME, "turn": 0, "seat": 0,
            "view": {}, "legal_actions": [{"play": 0}], "deadline_ms": deadline_ms}


@pytest.mark.slow
def test_hanging_calls_of_one_account_cost_nobody_else_anything(api, worker_pool):
    """320 calls of an attacker's bot, held for good by its server, beside an honest webhook
    match: the attacker has 256 in flight (its share), the rest wait uncharged; the honest
    match plays through with no fault and no turn charged as a timeout; aborting the
    attacker's matches closes its calls at once, and nothing more of them is made."""
    store = api.store
    counter = {"lock": threading.Lock(), "now": 0, "most": 0}
    with HoldingServer() as hanger:
        attacker = api.account("attacker")
        bad = api.bot(attacker, "hangs", GAME, kind="webhook", url=hanger.url)
        house = python_bot(api, "house", "tests.worker.bots:First", game=GAME)
        bot = store.version_record(bad["id"], None)
        attacks = []
        for i in range(HANGING):  # challenges on the longest clock: 10 s a move plus a 60 s bank
            match = store.create_match(GAME, [bad["id"], house], i, {}, move_timeout_ms=10000,
                                       time_bank_ms=60000, max_faults=10)
            store.await_answer(match["id"], decision(match["id"], 70000), bot)
            attacks.append(match["id"])
        wait_for(lambda: hanger.holding >= CALLS_PER_ACCOUNT, 60, "holding the attacker's share")

        honest = api.account("honest")
        servers, bots = [], []
        try:
            for i in range(2):
                port = free_port()
                made = api.bot(honest, f"quick{i}", GAME, kind="webhook", url=f"http://127.0.0.1:{port}/")
                servers.append(sdk.serve(Thinker(0.0, counter), port=port, secret=made["secret"], block=False))
                bots.append(made["id"])
            began = time.monotonic()
            mid = api.match(honest, GAME, bots, seed=11)["id"]  # the default clock: 2 s a move
            sdk.Client(api.live.url).wait_match(mid, timeout=120)
            took = time.monotonic() - began
        finally:
            for server in servers:
                server.stop()
        shown = api.ok(api.get(f"/matches/{mid}"), 200)
        assert shown["status"] == "finished" and shown["result"]["faults"] == [0, 0], shown.get("result")
        assert [e for e in shown["log"] if "fault" in e] == []
        assert max(e["ms"] for e in shown["log"]) < 1000, took  # charged its answers, no deadline
        # the attacker's share, and no more: the other 64 waited, charged nothing
        assert hanger.most == CALLS_PER_ACCOUNT and hanger.received == CALLS_PER_ACCOUNT
        assert all(store.log_length(m) == 0 for m in attacks)

        for m in attacks:  # the admin stops them: their calls close at once
            end_match(store, m, "aborted", reason="stopped by the admin")
        wait_for(lambda: hanger.holding == 0, 30, "closing the aborted matches' calls")
        made = hanger.received  # (a waiting call may have started as a slot freed, before its match was stopped)
        time.sleep(1.0)
        assert hanger.received == made and hanger.holding == 0  # nothing of a stopped match is made
        assert all(store.log_length(m) == 0 for m in attacks)  # nor charged


IN_FLIGHT = 2000


def rss() -> int:
    """This process's resident memory (bytes; Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.slow
def test_one_dispatcher_process_holds_2000_calls_in_flight(redis_client):
    """2,000 webhook calls held at once by one loopback server, all in flight in one
    dispatcher (no thread each); released, each is answered."""
    if raise_file_limit(2 * IN_FLIGHT + 512) < 2 * IN_FLIGHT + 512:
        pytest.skip("the open-files limit is too low for 2,000 calls and their server")
    store = Store(redis_client, secret_key(redis_client))
    with HoldingServer() as server:
        bot, _ = store.create_bot("acct_many", "holder", GAME, "webhook", url=server.url)
        bot = store.version_record(bot["id"], None)
        threads_before, rss_before = threading.active_count(), rss()
        dispatcher = Dispatcher(store, parts=("calls",), per_account=IN_FLIGHT * 2).start()
        try:
            cpu_before = time.process_time()
            began = time.monotonic()
            for i in range(IN_FLIGHT):
                store.r.hset(f"match:m_hold{i}", "status", '"running"')  # a match's record, as far as the log cares
                store.await_answer(f"m_hold{i}", decision(f"m_hold{i}", 120_000), bot)
            wait_for(lambda: server.holding >= IN_FLIGHT, 120, f"holding {IN_FLIGHT} calls")
            filled = time.monotonic() - began
            held = dispatcher.holding()
            cpu = time.process_time() - cpu_before
            threads, rss_now = threading.active_count(), rss()
            print(f"\n{held['in_flight']} calls in flight in one dispatcher after {filled:.1f} s "
                  f"(load {os.getloadavg()[0]:.1f}); threads {threads_before} -> {threads}; "
                  f"RSS +{(rss_now - rss_before) / 2**20:.0f} MB (server included); CPU {cpu:.1f} s")
            assert held["in_flight"] >= IN_FLIGHT
            assert threads - threads_before < 100  # no thread per call
            server.release()
            wait_for(lambda: server.answered >= IN_FLIGHT, 120, "answering them")
            wait_for(lambda: all(store.log_length(f"m_hold{i}") == 1 for i in range(0, IN_FLIGHT, 97)), 120,
                     "settling them")
        finally:
            dispatcher.stop()


# -- a bot is charged only for calls it received ---------------------------------------------------


def published_webhook_turn(store, url: str, move_ms: int = 100) -> tuple[str, int, dict]:
    from tests.worker.test_never_waits import ask_first_remote_turn, remote_match

    match, _, _ = remote_match(store, "webhook", url=url, move_ms=move_ms)
    record = ask_first_remote_turn(store, match)
    return match["id"], record["turn"], record


def test_a_call_not_sent_is_never_a_timeout_and_one_lost_unsent_is_queued_again(redis_client):
    """Past its deadline (counted from publication) a webhook turn whose call waits — in the
    queue, or taken by a caller that died before sending it — is not judged: the clock looks
    again later. A call found in no list at all is queued again."""
    store = Store(redis_client, secret_key(redis_client))
    mid, turn, record = published_webhook_turn(store, "http://127.0.0.1:9/")
    clock = Dispatcher(store, parts=("clock",))
    clock.judge_deadline(mid, turn)  # queued, never sent
    assert store.log_length(mid) == turn and store.has_deadline(mid, turn)
    taken = store.take_call(1, "ghost")  # a caller took it and died before sending (it never beat)
    assert taken is not None and store.r.llen("waits:calls") == 0
    clock.judge_deadline(mid, turn)
    assert store.log_length(mid) == turn
    store.caller_beat("ghost")
    store.r.delete("waits:caller:ghost")  # its beat expired
    assert store.recover_callers("someone-else") == 1  # another caller puts it back
    assert store.take_call(1, "lossy") == taken
    store.r.delete("waits:taken:lossy")  # lost outright (not in any list)
    clock.judge_deadline(mid, turn)
    assert store.log_length(mid) == turn and store.r.lrange("waits:calls", 0, -1) == [taken]  # queued again


def test_a_call_the_platform_could_not_make_is_made_again_uncharged(redis_client, monkeypatch):
    """No socket for the call (the dispatcher out of file descriptors): the bot received
    nothing, so it is charged nothing; the call is made again and its answer plays."""
    import errno

    import core.calls

    store = Store(redis_client, secret_key(redis_client))
    port = free_port()
    counter = {"lock": threading.Lock(), "now": 0, "most": 0}
    mid, turn, record = published_webhook_turn(store, f"http://127.0.0.1:{port}/", move_ms=2000)
    failures = []
    real_open = core.calls._open_socket

    def no_socket(family):  # the first two sockets the call asks for cannot be had
        if len(failures) < 2:
            failures.append(1)
            raise OSError(errno.EMFILE, "Too many open files")
        return real_open(family)

    monkeypatch.setattr(core.calls, "_open_socket", no_socket)
    bot_secret = store.bot_secret(record["bot"])
    server = sdk.serve(Thinker(0.0, counter), port=port, secret=bot_secret, block=False)
    try:
        with Dispatcher(store, parts=("calls",)):
            wait_for(lambda: store.log_length(mid) > turn, 30, "settling the turn")
    finally:
        server.stop()
    entry = store.log_since(mid, turn)[0]
    assert len(failures) == 2
    assert "fault" not in entry and entry["action"] == record["decision"]["legal_actions"][0]
    assert entry["ms"] < 2000


def test_one_accounts_hanging_names_leave_the_resolvers_to_everyone_else(monkeypatch):
    """A bot's owner controls its DNS: names that never resolve hold resolver threads until the
    resolver gives up, past any deadline. One party (account) uses at most
    `RESOLVERS_PER_PARTY` of them, so another's call still resolves and is answered at once."""
    import asyncio
    import socket as socket_module

    import core.calls
    from core import eventloop
    from tests.worker.zoo import RawServer, answer_bytes, ok_answer

    release, lock = threading.Event(), threading.Lock()
    resolving = {"now": 0, "most": 0}
    real = socket_module.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        if not str(host).endswith(".hang.test"):
            return real(host, *args, **kwargs)
        with lock:
            resolving["now"] += 1
            resolving["most"] = max(resolving["most"], resolving["now"])
        release.wait(30)
        with lock:
            resolving["now"] -= 1
        raise socket_module.gaierror(socket_module.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(core.calls.socket, "getaddrinfo", getaddrinfo)
    hanging_names = 3 * core.calls.RESOLVERS_PER_PARTY

    async def scene(url: str):
        hanging = [asyncio.ensure_future(core.calls.call_async(f"http://h{i}.hang.test/", b"{}", {}, 3.0, 1024,
                                                               party="attacker"))
                   for i in range(hanging_names)]
        while resolving["now"] < core.calls.RESOLVERS_PER_PARTY:
            await asyncio.sleep(0.01)
        began = time.monotonic()
        answer = await core.calls.call_async(url, b"{}", {}, 3.0, 1024, party="honest")
        took = time.monotonic() - began
        release.set()
        return answer, took, await asyncio.gather(*hanging, return_exceptions=True)

    with RawServer(answer_bytes(ok_answer(b'{"action": 1}'))) as bot:
        (status, body), took, failed = eventloop.run(scene(bot.url.replace("127.0.0.1", "localhost")), 60)
    assert status == 200 and body == b'{"action": 1}'
    assert took < 2.0
    assert resolving["most"] == core.calls.RESOLVERS_PER_PARTY  # the attacker's, at once
    assert all(isinstance(f, core.calls.CallError) for f in failed)


@pytest.mark.slow
def test_an_accounts_share_holds_over_every_dispatcher(redis_client):
    """Two dispatchers (two machines): the account's share is counted in Redis as calls are
    sent, so together they hold no more than it; the rest wait, and are made as shares free."""
    store = Store(redis_client, secret_key(redis_client))
    share, calls = 6, 15
    with HoldingServer() as server:
        bot, _ = store.create_bot("acct_two", "holder", GAME, "webhook", url=server.url)
        bot = store.version_record(bot["id"], None)
        for i in range(calls):
            store.r.hset(f"match:m_two{i}", "status", '"running"')
            store.await_answer(f"m_two{i}", decision(f"m_two{i}", 60_000), bot)
        one = Dispatcher(store, parts=("calls",), per_account=share).start()
        two = Dispatcher(store, parts=("calls",), per_account=share).start()
        try:
            wait_for(lambda: server.holding >= share, 30, "holding the account's share")
            wait_for(lambda: not store.r.llen("waits:calls"), 30, "every call taken")
            time.sleep(1.0)  # two upkeep rounds of each: none sends more
            assert server.holding == server.most == share
            assert store.r.zcard("waits:share:acct_two") == share
            server.release()
            wait_for(lambda: all(store.log_length(f"m_two{i}") == 1 for i in range(calls)), 60, "settling them all")
            assert server.most == share and server.answered == calls
            assert store.r.zcard("waits:share:acct_two") == 0  # each given back as its turn settled
        finally:
            one.stop()
            two.stop()
