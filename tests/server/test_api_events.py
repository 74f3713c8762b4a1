"""The event streams over real HTTP: `GET /matches/{id}/events`, `/tournaments/{id}/events`.

Matches are refereed by hand through the store here (no worker), one entry at
a time while a stream is read, so each step is seen as it is appended. The
browser's live page reading the same stream while the worker pool plays is in
tests/web/test_browser_live.py.
"""

from __future__ import annotations

import random
import time
from contextlib import contextmanager

import pytest
import requests

from games.table import card_strings
from tests.live import served_api
from tests.server.driving import GAME, conclude, make_bots, played, running_match, running_tournament, step
from tests.sse import EventStream


def test_a_running_match_streams_each_step_as_it_is_appended_then_over(api):
    store = api.store
    mid, state = running_match(store, make_bots(store))
    rng = random.Random(1)
    with EventStream(f"{api.base}/matches/{mid}/events") as stream:
        for turn in range(6):
            fault = "illegal: 'QH' is not in your hand: 2S, 3S" if turn == 2 else None
            step(store, mid, state, rng, fault)
            event = stream.next()
            assert (event.name, event.id) == ("step", str(turn))
            data = event.data
            assert (data["turn"], data["step"], data["to_act"]) == (turn, turn + 1, state.to_act)
            # no action (some are secret), no fault detail (it can tell a hand) while running
            assert data["entry"] == {"turn": turn, "seat": data["entry"]["seat"],
                                     **({"fault": "illegal"} if fault else {})}
            assert data["view"] == state.view(None)
            assert data["table"]["seats"][data["entry"]["seat"]]["last"] is True
            assert all(seat["hand"] is None for seat in data["table"]["seats"])
            assert set(data["table"]["faces"]) == set(card_strings(data["table"]))
        assert stream.retry == 1000
        while not state.is_over:
            step(store, mid, state, rng)
        conclude(store, mid, state)
        events = stream.until("over")
        assert [int(e.id) for e in events[:-1]] == list(range(6, store.log_length(mid)))
        over = events[-1].data
        assert over["status"] == "finished" and over["public"] is True
        assert over["result"]["ranks"] == state.result()["ranks"]
        assert stream.next(timeout=5) is None  # and the stream ends


def test_a_public_match_streams_whole_entries_and_resumes_after_last_event_id(api):
    store = api.store
    mid = played(store, make_bots(store), seed=9)
    log = store.match_log(mid)
    with EventStream(f"{api.base}/matches/{mid}/events", last_event_id="3") as stream:
        events = stream.until("over")
    assert [e.data["entry"] for e in events[:-1]] == log[4:]  # whole entries, from turn 4 on
    with EventStream(f"{api.base}/matches/{mid}/events?after={len(log) - 2}") as stream:
        events = stream.until("over")
    assert [e.data["turn"] for e in events[:-1]] == [len(log) - 1]


def test_a_finished_match_of_a_running_tournament_streams_no_step(api):
    store = api.store
    bots = make_bots(store)
    mid = played(store, bots, seed=3, tournament=running_tournament(store, bots))
    with EventStream(f"{api.base}/matches/{mid}/events") as stream:
        event = stream.next()
        assert event.name == "over"
        assert event.data == {"status": "finished", "turns": store.log_length(mid), "public": False,
                              "result": None, "reason": None}
        assert stream.next(timeout=5) is None


@contextmanager
def streams_server(redis_url: str, **limits: str):
    """`cardarena serve` with the event streams' `limits` (CARDARENA_<KEY>: server/api/events.py
    `LIMITS`); yields its /api/v1 URL."""
    settings = {"CARDARENA_RATE_LIMITS": "off", **{f"CARDARENA_{key}": value for key, value in limits.items()}}
    with served_api(redis_url, settings, name="streams") as server:
        yield server.api


def test_streams_beyond_the_cap_are_refused_at_once_and_a_closed_one_frees_its_place(api, redis_url):
    store = api.store
    queued = store.create_match(GAME, make_bots(store), 1, {})["id"]
    with streams_server(redis_url, EVENT_STREAMS="1", EVENT_HEARTBEAT_SECONDS="0.2") as base:
        first = EventStream(f"{base}/matches/{queued}/events")
        assert first.response.status_code == 200
        started = time.monotonic()
        refused = requests.get(f"{base}/matches/{queued}/events", timeout=10)
        assert time.monotonic() - started < 5
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "too_many_streams"
        assert refused.headers["Retry-After"] == "5"
        first.close()
        deadline = time.monotonic() + 10
        while True:  # the server notices the closed stream at its next heartbeat
            again = EventStream(f"{base}/matches/{queued}/events")
            if again.response.status_code == 200:
                again.close()
                break
            assert time.monotonic() < deadline, "the closed stream's place never came back"
            time.sleep(0.2)


@pytest.mark.slow
def test_one_client_cannot_hold_every_stream(api, redis_url):
    store = api.store
    queued = store.create_match(GAME, make_bots(store), 1, {})["id"]
    with streams_server(redis_url, EVENT_STREAMS="10", EVENT_STREAMS_PER_CLIENT="2", EVENT_HEARTBEAT_SECONDS="0.2") as base:
        held = [EventStream(f"{base}/matches/{queued}/events") for _ in range(2)]
        try:
            assert [s.response.status_code for s in held] == [200, 200]
            refused = requests.get(f"{base}/matches/{queued}/events", timeout=10)
            assert refused.status_code == 429 and refused.json()["error"]["code"] == "too_many_waiting"
            assert "from one address" in refused.json()["error"]["message"]
        finally:
            for stream in held:
                stream.close()


def test_a_stream_ends_after_its_time_with_a_retry_hint(api, redis_url):
    store = api.store
    queued = store.create_match(GAME, make_bots(store), 1, {})["id"]
    with streams_server(redis_url, EVENT_STREAM_SECONDS="1.0", EVENT_HEARTBEAT_SECONDS="0.3") as base:
        started = time.monotonic()
        with EventStream(f"{base}/matches/{queued}/events") as stream:
            assert stream.next(timeout=10) is None
        assert time.monotonic() - started < 8
    assert stream.retry == 1000 and stream.comments >= 1


def test_bad_stream_requests_are_json_errors(api):
    store = api.store
    mid = store.create_match(GAME, make_bots(store), 1, {})["id"]
    missing = api.get("/matches/m_nope/events")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    bad = api.get(f"/matches/{mid}/events", headers={"Last-Event-ID": "seven"})
    assert bad.status_code == 422 and "Last-Event-ID" in bad.json()["error"]["message"]
    bad = api.get(f"/matches/{mid}/events?after=-5")
    assert bad.status_code == 422
    assert api.get("/tournaments/t_nope/events").status_code == 404


def test_a_tournament_stream_sends_progress_match_changes_and_over(api):
    store = api.store
    bots = make_bots(store)
    tid = running_tournament(store, bots)
    with EventStream(f"{api.base}/tournaments/{tid}/events") as stream:
        first = stream.next()
        assert first.name == "progress"
        assert first.data["progress"] == {"done": 0, "total": 2} and first.data["status"] == "running"
        mids = []
        for seed in (1, 2):
            mid, state = running_match(store, bots, seed=seed, tournament=tid)
            mids.append(mid)
            started = stream.until("match")[-1]
            assert started.data == {"id": mid, "status": "running",
                                    "seats": [{"seat": 0, "bot": bots[0], "version": 1},
                                              {"seat": 1, "bot": bots[1], "version": 1}]}
            rng = random.Random(seed)
            while not state.is_over:
                step(store, mid, state, rng)
            conclude(store, mid, state)
            ended = [e for e in stream.until("match") if e.name == "match"][-1]
            assert ended.data["status"] == "finished"
        store.save_standings(tid, [{"rank": 1, "bot": bots[0], "points": 1.0, "matches": 2}])
        store.set_tournament(tid, status="finished")
        over = stream.until("over")[-1].data
        assert over["status"] == "finished" and over["progress"] == {"done": 2, "total": 2}
        assert over["standings"][0]["bot"] == bots[0]
        assert stream.next(timeout=5) is None
