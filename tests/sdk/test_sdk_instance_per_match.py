"""One bot instance per match (docs/api.md §6 "Bots that keep state"): `serve`, `connect` and
local play given a bot class make one instance per match, so state in `self` is that match's;
given an instance, that one answers every match as before; a class that raises when made is a
`bot_error` of that match only."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from example_bots.random import RandomBot
from sdk import Bot, connect, play_local, serve
from sdk.play import bot_class, run_matches
from sdk.protocol import BotHooks
from tests.sdk.conftest import SECRET, Recorder, post_signed, real_decision
from tests.server.driving import publish_next, wait_turn

GAME = "double-carre"


class OneMatchOnly(Bot):
    """Keeps its match in `self` and refuses to answer any other; every instance made is listed
    on the class, and its first decisions wait for another instance's (`together`), so a test
    sees two matches answered at the same time by two objects."""

    made: list[OneMatchOnly] = []
    together: threading.Barrier | None = None

    def __init__(self) -> None:
        self.match: str | None = None
        self.decisions = 0
        self.over: list[str] = []
        type(self).made.append(self)

    def on_match_start(self, match_id, seat, view):
        assert self.match is None, f"started {match_id} while playing {self.match}"
        self.match = match_id

    def decide(self, decision):
        if decision["match_id"] != self.match:
            raise AssertionError(f"asked for {decision['match_id']} while playing {self.match}")
        self.decisions += 1
        if self.decisions == 1 and self.together is not None:
            self.together.wait()  # both matches' instances are thinking at once
        return decision["legal_actions"][0]

    def on_match_over(self, match_id, result):
        self.over.append(match_id)


@pytest.fixture()
def fresh():
    """OneMatchOnly with an empty list of instances and two matches that must overlap."""
    OneMatchOnly.made = []
    OneMatchOnly.together = threading.Barrier(2, timeout=30)
    yield OneMatchOnly
    OneMatchOnly.together = None


def test_serve_given_a_class_answers_two_matches_at_once_each_with_its_own_instance(fresh):
    with serve(fresh, port=0, secret=SECRET, block=False) as server, ThreadPoolExecutor(2) as pool:
        first = [pool.submit(post_signed, server.url, real_decision(GAME, match_id=m)) for m in ("m_a", "m_b")]
        assert [f.result().status_code for f in first] == [200, 200]
        for m in ("m_a", "m_b"):  # their next decisions reach the same instances
            assert post_signed(server.url, real_decision(GAME, match_id=m, turn=1)).status_code == 200
        assert post_signed(server.url, {"type": "match_over", "match_id": "m_a",
                                        "result": {"ranks": [1, 2]}}).status_code == 200
    assert sorted(b.match for b in fresh.made) == ["m_a", "m_b"]
    assert [b.decisions for b in fresh.made] == [2, 2]
    assert {b.match: b.over for b in fresh.made} == {"m_a": ["m_a"], "m_b": []}


def test_serve_given_an_instance_answers_every_match_with_that_instance_as_before():
    bot = Recorder()
    with serve(bot, port=0, secret=SECRET, block=False) as server:
        for m in ("m_a", "m_b"):
            assert post_signed(server.url, real_decision(GAME, match_id=m)).status_code == 200
    assert [c[:2] for c in bot.calls if c[0] == "start"] == [("start", "m_a"), ("start", "m_b")]


def _fails_first_time():
    """A factory whose first call raises (the bot's constructor failing once), then makes Recorders."""
    calls = []

    def make() -> Bot:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("no model file")
        return Recorder()

    return make


def test_a_factory_that_raises_is_a_bot_error_of_that_match_only():
    with serve(_fails_first_time(), port=0, secret=SECRET, block=False) as server:
        broken = post_signed(server.url, real_decision(GAME, match_id="m_a"))
        other = post_signed(server.url, real_decision(GAME, match_id="m_b"))
    assert broken.status_code == 500
    assert broken.json()["error"]["code"] == "bot_error"
    assert "no model file" in broken.json()["error"]["message"]
    assert other.status_code == 200


def test_a_class_of_another_game_is_refused_as_wrong_game():
    class Other(Recorder):
        game = "duck-soup"

    with serve(Other, port=0, secret=SECRET, block=False) as server:
        response = post_signed(server.url, real_decision(GAME))
    assert response.status_code == 400 and response.json()["error"]["code"] == "wrong_game"


def test_something_that_is_not_a_bot_is_refused_when_the_host_is_set_up():
    with pytest.raises(TypeError, match="not a subclass of sdk.Bot"):
        serve(dict, port=0, secret=SECRET, block=False)


def test_connect_given_a_class_answers_two_matches_at_once_each_with_its_own_instance(api, fresh):
    token = api.account()
    mine = api.bot(token, "mine", game=GAME, kind="polling")
    rival = api.bot(token, "rival", game=GAME, kind="polling")
    matches = [api.match(token, GAME, [rival["id"], mine["id"]], seed=11, move_timeout_ms=10000)["id"]
               for _ in range(2)]
    for match_id in matches:
        _, who = publish_next(api.store, match_id)
        assert who == mine["id"]  # seat 1 acts first in this seeded deal
    stats = connect(fresh, api.live.url, secret=mine["secret"], wait=1, until_idle=True, concurrency=2)
    assert stats.answered == 2 and stats.bot_errors == 0
    assert all(wait_turn(api.store, m, 0, 30) for m in matches)
    assert sorted(b.match for b in fresh.made) == sorted(matches)


def test_local_play_given_a_class_makes_one_instance_per_seat():
    OneMatchOnly.made = []
    outcome = play_local(GAME, [OneMatchOnly, OneMatchOnly], seed=3)
    assert outcome.faults == [[], []]
    assert len(OneMatchOnly.made) == 2
    assert [b.over for b in OneMatchOnly.made] == [["local"], ["local"]]


def test_local_play_given_a_factory_that_raises_faults_that_seat_only():
    outcome = play_local(GAME, [_fails_first_time(), RandomBot(seed=1)], seed=3)
    assert [f.kind for f in outcome.details] == ["bot_error"]
    assert "no model file" in outcome.details[0].reason
    assert outcome.faults[1] == []


def test_cardarena_play_gives_every_match_new_instances():
    spec = "tests.sdk.test_sdk_instance_per_match:OneMatchOnly"
    cls = bot_class(spec, GAME)  # the class as play loads it (this module may be imported twice)
    cls.made = []
    records = run_matches(GAME, [spec, "example_bots.random:RandomBot"], deals=2, seed=1, options={})
    assert [r.faults for r in records] == [0, 0]  # an instance asked about a second match raises
    assert len({b.match for b in cls.made if b.match}) == 4  # 2 deals × 2 rotations


def test_a_matchs_instance_is_dropped_at_its_end_and_the_oldest_forgotten_beyond_the_bound():
    made: list[Recorder] = []

    def make() -> Bot:
        made.append(Recorder())
        return made[-1]

    hooks = BotHooks(make, remember=2)
    for m in ("m_1", "m_2", "m_3"):  # m_1's instance is forgotten when m_3 starts
        hooks.decide(real_decision(GAME, match_id=m))
    hooks.decide(real_decision(GAME, match_id="m_3", turn=1))
    assert len(made) == 3
    seat = real_decision(GAME)["seat"]
    assert hooks.instance("m_3", seat) is made[2] and hooks.instance("m_1", seat) is None
    hooks.match_over({"type": "match_over", "match_id": "m_3", "result": {"ranks": [1, 2]}})
    assert made[2].calls[-1][0] == "over"
    hooks.decide(real_decision(GAME, match_id="m_1", turn=1))  # forgotten: a new instance, started again
    assert len(made) == 4 and made[3].calls[0] == ("start", "m_1", made[3].calls[0][2])
    hooks.match_over({"type": "match_over", "match_id": "m_gone", "result": {}})  # never played: nothing to call
    assert len(made) == 4
