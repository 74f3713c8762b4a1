"""Downloads: a public match as one JSON document, an over tournament as JSON Lines,
and nothing before (no peeking across duplicates)."""

from __future__ import annotations

import json

from sdk import export, replay
from sdk.referee import MatchReferee
from tests.server.driving import GAME, make_bots, played, running_match, running_tournament


def test_a_public_match_exports_a_document_that_rebuilds_it(api):
    store = api.store
    mid = played(store, make_bots(store), seed=4)
    response = api.get(f"/matches/{mid}/export")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == f'attachment; filename="{mid}.json"'
    doc = response.json()
    assert list(doc)[:10] == ["format", "version", "id", "game", "options", "seed", "seats", "log", "result", "decks"]
    assert (doc["move_timeout_ms"], doc["max_faults"]) == (2000, 3)  # the rules a replay needs
    assert (doc["format"], doc["version"], doc["id"], doc["game"]) == ("cardarena-match", 1, mid, GAME)
    assert doc["log"] == store.match_log(mid)
    assert [(s["seat"], s["version"]) for s in doc["seats"]] == [(0, 1), (1, 1)]  # which version played
    referee = MatchReferee(doc["game"], len(doc["seats"]), doc["seed"], doc["options"], doc["max_faults"],
                           doc["move_timeout_ms"]).replay(doc["log"])  # the document rebuilds the result
    assert referee.outcome() == doc["result"] and doc["decks"] == doc["result"]["decks"]
    assert export.read(f"{api.live.url}/matches/{mid}") == doc  # what the SDK's replay reads
    assert len(list(replay.load(doc).decisions())) == len(doc["log"])  # every decision rebuilt


def test_an_export_keeps_every_field_of_the_log_entries(api):
    store = api.store
    bots = make_bots(store)
    mid, state = running_match(store, bots)
    action = state.legal_actions()[0]
    entries = [{"turn": 0, "seat": state.to_act, "action": action, "ms": 123}]
    state.apply(action)
    action = state.legal_actions()[0]
    entries.append({"turn": 1, "seat": state.to_act, "action": action, "fault": "timeout: no answer", "ms": 2000})
    state.apply(action)
    assert store.append_entries(mid, entries)
    assert store.conclude_match(mid, "aborted", None, reason="stopped")
    doc = api.ok(api.get(f"/matches/{mid}/export"), 200)
    assert doc["log"] == entries and doc["result"] is None and doc["decks"] is None


def test_no_export_before_a_match_is_public(api):
    store = api.store
    bots = make_bots(store)
    running, _ = running_match(store, bots)
    assert api.get(f"/matches/{running}/export").json()["error"]["code"] == "not_public"
    tid = running_tournament(store, bots)
    twin = played(store, bots, seed=1, tournament=tid)
    response = api.get(f"/matches/{twin}/export")
    assert response.status_code == 409  # its tournament still plays the other rotation
    response = api.get(f"/tournaments/{tid}/export")
    assert response.status_code == 409 and response.json()["error"]["code"] == "not_finished"
    assert api.get("/matches/m_nope/export").status_code == 404
    assert api.get("/tournaments/t_nope/export").status_code == 404


def test_an_over_tournament_exports_its_matches_as_json_lines(api):
    store = api.store
    bots = make_bots(store)
    tid = running_tournament(store, bots)
    mids = [played(store, bots, seed, tournament=tid) for seed in (1, 2)]
    store.set_tournament(tid, status="finished")
    response = api.get(f"/tournaments/{tid}/export")
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("application/x-ndjson")
    assert response.headers["Content-Disposition"] == f'attachment; filename="{tid}.jsonl"'
    lines = response.text.splitlines()
    docs = [json.loads(line) for line in lines]
    assert [d["id"] for d in docs] == mids
    assert docs[0] == api.get(f"/matches/{mids[0]}/export").json()
