"""A hosted bot plays a match from its sandbox: its answers, its CPU-time clock, its deaths,
its process kept between a match's runs (worker/drivers/hosted.py)."""

from __future__ import annotations

import time

import pytest

from tests.hosted.conftest import GAME, SEED, hosted_bot, play, sandbox_processes
from worker.drivers import hosted
from worker.drivers.hosted import HostedDriver

LAST = """
from sdk import Bot

class MyBot(Bot):
    def act(self, view, legal_actions):
        self.debug("thinking")
        return legal_actions[-1]
"""


def test_a_hosted_bot_plays_a_whole_match_with_its_own_answers_and_leaves_no_process(store):
    match, log = play(store, LAST)
    mine = [e for e in log if e["seat"] == 0]
    assert mine and not any("fault" in e for e in log), [e.get("fault") for e in log]
    assert match["result"]["faults"] == [0, 0]
    assert store.debug_notes(match["id"], [0]), "its debug text is kept for its owner"
    assert sandbox_processes() == []


@pytest.mark.slow
def test_time_is_cpu_time_a_sleeping_bot_is_charged_little_a_spinning_one_times_out(store):
    sleeps = """
    import time
    from sdk import Bot

    class MyBot(Bot):
        def act(self, view, legal_actions):
            time.sleep(0.45)  # past the move time in wall time, well within its ceiling (3x)
            return legal_actions[0]
    """
    match, log = play(store, sleeps, move_timeout_ms=400)  # a margin of 750 ms for a busy machine
    mine = [e for e in log if e["seat"] == 0]
    assert not any("fault" in e for e in mine), mine
    assert max(e["ms"] for e in mine) < 400, [e["ms"] for e in mine]

    spins = """
    import time
    from sdk import Bot

    class MyBot(Bot):
        def act(self, view, legal_actions):
            end = time.process_time() + 0.25
            while time.process_time() < end:
                pass
            return legal_actions[0]
    """
    match, log = play(store, spins, move_timeout_ms=100, max_faults=2)
    faults = [e["fault"] for e in log if e["seat"] == 0 and "fault" in e]
    assert faults[:2] == ["timeout: no answer within 100 ms of CPU time (300 ms of wall time)"] * 2, faults
    assert match["result"]["forfeits"] == [0]
    assert not any("fault" in e for e in log if e["seat"] == 1)


def test_the_cpu_of_a_child_it_forked_and_reaped_is_charged_to_its_decision(store):
    forks = """
    import os
    import time
    from sdk import Bot

    class MyBot(Bot):
        def act(self, view, legal_actions):
            if not getattr(self, "forked", False):
                self.forked = True
                child = os.fork()
                if child == 0:
                    end = time.process_time() + 0.3
                    while time.process_time() < end:
                        pass
                    os._exit(0)
                os.waitpid(child, 0)
            return legal_actions[0]
    """
    match, log = play(store, forks)
    mine = [e for e in log if e["seat"] == 0]
    assert not any("fault" in e for e in mine), mine
    assert mine[0]["ms"] >= 250, [e["ms"] for e in mine]
    assert max(e["ms"] for e in mine[1:]) < 250, [e["ms"] for e in mine]


def test_a_bot_that_dies_is_restarted_once_then_forfeits(store):
    dies = """
    import os
    from sdk import Bot

    class MyBot(Bot):
        def act(self, view, legal_actions):
            os._exit(3)
    """
    match, log = play(store, dies, max_faults=5)
    faults = [e["fault"] for e in log if e["seat"] == 0 and "fault" in e]
    assert faults[:3] == ["bot_error: its process ended", "bot_error: its process ended",
                          "bot_error: its process died twice in this match"], faults
    assert [e for e in log if e["seat"] == 0][2]["ms"] == 0, "no time charged once it cannot answer"
    assert match["result"]["forfeits"] == [0]


def test_the_process_is_kept_between_runs_and_started_again_elsewhere(store):
    counts = """
    from sdk import Bot

    STARTS = []

    class MyBot(Bot):
        def on_match_start(self, match_id, seat, view):
            STARTS.append(match_id)

        def act(self, view, legal_actions):
            self.debug(f"starts={len(STARTS)}")
            return legal_actions[0]
    """
    bot = {"id": "b", "kind": "hosted", "entrypoint": "mybot:MyBot", "code": store.bot_record(
        hosted_bot(store, counts))["code"]}
    match = store.create_match(GAME, [hosted_bot(store, counts), hosted_bot(store, counts)], SEED, {})
    decision = {"type": "turn", "protocol": 1, "match_id": match["id"], "game": GAME, "turn": 0, "seat": 0,
                "view": {}, "legal_actions": [{"x": 1}], "deadline_ms": 1000}
    first = HostedDriver(bot, match["id"], 0)
    assert first.ask(decision).debug == "starts=1"
    pid = first.seat.box.pid
    first.close()  # the run ends asking a remote seat: parked
    assert hosted.parked() == [(match["id"], 0)]
    again = HostedDriver(bot, match["id"], 0)
    assert again.seat.box.pid == pid and again.ask(decision).debug == "starts=1"
    again.close()
    hosted.stop_all()  # as if the next run were on another worker process
    elsewhere = HostedDriver(bot, match["id"], 0)
    reply = elsewhere.ask(decision)
    assert reply.debug == "starts=1" and elsewhere.seat.box.pid != pid and elsewhere.seat.deaths == 0
    elsewhere.match_over(match["id"], {"ranks": [1, 2]})
    elsewhere.close()
    assert hosted.parked() == [] and sandbox_processes() == []


def test_a_parked_process_unused_for_its_idle_time_is_killed(store):
    bot = {"id": "b", "kind": "hosted", "entrypoint": "mybot:MyBot", "code": store.bot_record(
        hosted_bot(store, LAST))["code"]}
    driver = HostedDriver(bot, "m_idle", 0)
    driver.ask({"type": "turn", "protocol": 1, "match_id": "m_idle", "game": GAME, "turn": 0, "seat": 0,
                "view": {}, "legal_actions": [{"x": 1}], "deadline_ms": 1000})
    driver.close()
    assert hosted.reap(time.monotonic()) == 0
    assert hosted.reap(time.monotonic() + hosted.IDLE_S + 1) == 1
    assert hosted.parked() == [] and sandbox_processes() == []


def test_what_its_code_raised_reaches_its_owner_only_never_the_public_log(store):
    match, log = play(store, """
from sdk import Bot

class MyBot(Bot):
    def act(self, view, legal_actions):
        raise ValueError("<b>my words</b>")
""")
    faults = [e["fault"] for e in log if e["seat"] == 0 and e.get("fault") != "forfeited" and "fault" in e]
    assert faults == ["bot_error: its code raised an exception (its owner sees it in the turn's debug notes)"] * 2
    assert "my words" not in str(log) and "my words" not in str(match)
    notes = store.debug_notes(match["id"], [0])
    assert notes and notes[0]["text"].splitlines()[-1] == "ValueError: <b>my words</b>"
    assert "Traceback" in notes[0]["text"] and "mybot.py" in notes[0]["text"]
