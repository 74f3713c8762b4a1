"""Debug output over real HTTP (docs/api.md §6 "Debug output"): what a polling bot sends with
its answer is kept beside the turn and shown to that bot's owner (and the admin) only.

The worker's side is played through the store (tests/server/driving.py); the
bots' side is the API a polling bot uses.
"""

from __future__ import annotations

import json

import pytest

from sdk.debug import MAX_DEBUG
from tests.live import ADMIN_TOKEN
from tests.server.driving import conclude, publish_next
from tests.sse import EventStream

GAME = "toy-high"


@pytest.fixture()
def played(api):
    """A finished match between alice's bot (seat 0) and bob's (seat 1); each answer carried
    `debug` "<bot> thinks at turn <k>", except a few chosen to test the limits."""
    alice, bob = api.account("alice"), api.account("bob")
    a, b = api.bot(alice, "a", game=GAME), api.bot(bob, "b", game=GAME)
    secrets = {a["id"]: a["secret"], b["id"]: b["secret"]}
    names = {a["id"]: "a", b["id"]: "b"}
    mid = api.match(alice, GAME, [a["id"], b["id"]], seed=3)["id"]
    api.store.set_match_status(mid, "running")
    sent = {}
    state = api.store.replay(mid)
    while not state.is_over:
        decision, bot_id = publish_next(api.store, mid)
        turn = decision["turn"]
        debug = {0: "x" * (MAX_DEBUG + 500), 1: {"not": "a string"}}.get(turn, f"{names[bot_id]} thinks at turn {turn}")
        action = decision["legal_actions"][0]
        api.ok(api.post(f"/matches/{mid}/turns/{turn}", {"action": action, "debug": debug},
                        token=secrets[bot_id]), 200)
        sent[turn] = (decision["seat"], debug)
        state.apply(action)
    conclude(api.store, mid)
    return {"id": mid, "alice": alice, "bob": bob, "sent": sent, "turns": len(sent)}


def step_debug(api, mid: str, step: int, token: str | None) -> str | None:
    return api.ok(api.get(f"/matches/{mid}/steps/{step}", token=token), 200)["debug"]


def test_the_owner_sees_their_own_seats_debug_in_steps_and_no_one_elses(api, played):
    mid, sent = played["id"], played["sent"]
    for step in range(2, played["turns"]):
        seat, text = sent[step]
        mine, theirs = (played["alice"], played["bob"]) if seat == 0 else (played["bob"], played["alice"])
        assert step_debug(api, mid, step, mine) == text
        assert step_debug(api, mid, step, theirs) is None
        assert step_debug(api, mid, step, None) is None
        assert step_debug(api, mid, step, ADMIN_TOKEN) == text
    assert step_debug(api, mid, played["turns"], ADMIN_TOKEN) is None  # the end: no decision, no debug


def test_debug_longer_than_1000_characters_is_cut_and_a_non_string_is_ignored(api, played):
    mid, sent = played["id"], played["sent"]
    assert step_debug(api, mid, 0, ADMIN_TOKEN) == "x" * MAX_DEBUG  # cut, and the answer played
    assert step_debug(api, mid, 1, ADMIN_TOKEN) is None  # ignored, no fault
    log = api.store.match_log(mid)
    assert not any("fault" in entry for entry in log)
    assert sent[0][0] == 0 and sent[1][0] == 1


def test_the_export_carries_the_owners_debug_and_the_public_export_none(api, played):
    mid, sent = played["id"], played["sent"]
    expected = {seat: [{"turn": t, "seat": s, "text": text[:MAX_DEBUG]} for t, (s, text) in sorted(sent.items())
                       if s == seat and isinstance(text, str)] for seat in (0, 1)}
    assert api.ok(api.get(f"/matches/{mid}/export", token=played["alice"]), 200)["debug"] == expected[0]
    assert api.ok(api.get(f"/matches/{mid}/export", token=played["bob"]), 200)["debug"] == expected[1]
    everything = sorted(expected[0] + expected[1], key=lambda n: n["turn"])
    assert api.ok(api.get(f"/matches/{mid}/export", token=ADMIN_TOKEN), 200)["debug"] == everything
    public = api.ok(api.get(f"/matches/{mid}/export"), 200)
    assert "debug" not in public


def test_debug_never_reaches_a_public_read(api, played):
    """Not in the log, the match, a step, the export or the event stream a stranger reads."""
    mid = played["id"]
    reads = [api.get(f"/matches/{mid}"), api.get(f"/matches/{mid}/steps/3"),
             api.get(f"/matches/{mid}/steps/3", token=played["bob"] if played["sent"][3][0] == 0
                     else played["alice"]),
             api.get(f"/matches/{mid}/export")]
    for response in reads:
        assert response.status_code == 200
        assert "thinks at turn" not in response.text and "xxxxxxxxxx" not in response.text
    assert all(set(entry) <= {"turn", "seat", "action", "fault", "ms"} for entry in api.store.match_log(mid))
    events = []
    with EventStream(f"{api.base}/matches/{mid}/events") as stream:
        while (event := stream.next(timeout=30)) is not None:
            events.append(event)
            if event.name == "over":
                break
    assert events and events[-1].name == "over" and len(events) == played["turns"] + 1
    assert "thinks at turn" not in str([e.data for e in events]) and "xxxxxxxxxx" not in str(events)


def test_debug_text_is_stored_printable(api):
    """A bot's text with control characters is kept with them replaced (newlines and tabs kept)."""
    alice = api.account("alice")
    a, b = api.bot(alice, "a", game=GAME), api.bot(alice, "b", game=GAME)
    mid = api.match(alice, GAME, [a["id"], b["id"]], seed=3)["id"]
    api.store.set_match_status(mid, "running")
    decision, bot_id = publish_next(api.store, mid)
    secret = a["secret"] if bot_id == a["id"] else b["secret"]
    body = json.dumps({"action": decision["legal_actions"][0], "debug": "line 1\n\tline 2\x1b[31m\x00"})
    response = api.post(f"/matches/{mid}/turns/0", data=body, token=secret,
                        headers={"Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    assert api.store.turn_debug(mid, 0)["text"] == "line 1\n\tline 2\ufffd[31m\ufffd"


def test_each_owner_reads_their_own_seats_notes_by_turn_through_the_client(api, played):
    from sdk import CardarenaError, Client, DebugNote

    mid, sent = played["id"], played["sent"]
    texts = {turn: (seat, text) for turn, (seat, text) in sent.items() if isinstance(text, str)}
    for seat, token in ((0, played["alice"]), (1, played["bob"])):
        notes = Client(api.live.url, token=token).debug(mid)
        assert notes and all(isinstance(n, DebugNote) and n.seat == seat for n in notes)
        assert [n.turn for n in notes] == sorted(t for t, (s, _) in texts.items() if s == seat)
        assert all(n.text == texts[n.turn][1][:MAX_DEBUG] for n in notes)
    assert {n.seat for n in Client(api.live.url, token=ADMIN_TOKEN).debug(mid)} == {0, 1}
    stranger = Client(api.live.url)
    stranger.create_account("carol")
    assert stranger.debug(mid) == []  # nobody else's
    with pytest.raises(CardarenaError) as anonymous:
        Client(api.live.url, token="").debug(mid)
    assert anonymous.value.status == 401
    with pytest.raises(CardarenaError) as missing:
        stranger.debug("m_nope")
    assert missing.value.status == 404


def test_the_client_lists_a_bots_matches(api, played):
    from sdk import Client

    client = Client(api.live.url, token=played["alice"])
    mine = next(b for b in client.bots(GAME) if b.name == "a")
    found = client.matches(mine)
    assert [m.id for m in found] == [played["id"]] and found[0].status == "finished"
    assert found[0].seats[0] == mine.id
    assert client.matches(mine, limit=1)[0].id == played["id"]
    assert client.matches("b_nobody") == []
