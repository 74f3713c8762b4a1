"""A finished match reads the same from the archive as from Redis, byte for byte (issue 32).

Every read of a finished match — `GET /matches/{id}`, each step, the export, the event
stream, the lists, a tournament's matches, export and crosstable, the match page, and
`cardarena replay URL` — is made with each kind of reader (a stranger, a seat's owner, the
admin) while Redis holds the match, then again once it is archived
(`Store.archive_match`), and the bodies must be the same bytes. Then the archive loses
the file: a clear 404 (`archive_missing`), never a 500.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from core.store.matches import ARCHIVED, KEPT
from sdk.cli import main as cli
from tests.live import ADMIN_TOKEN
from tests.server.driving import conclude, make_bots, played, publish_next, running_tournament

GAME = "toy-high"


@pytest.fixture()
def debugged(api):
    """A finished match between alice's bot (seat 0) and bob's (seat 1), each answer carrying
    debug text (tests/server/test_api_debug.py's, shortened)."""
    alice, bob = api.account("alice"), api.account("bob")
    a, b = api.bot(alice, "a", game=GAME), api.bot(bob, "b", game=GAME)
    secrets = {a["id"]: a["secret"], b["id"]: b["secret"]}
    mid = api.match(alice, GAME, [a["id"], b["id"]], seed=3)["id"]
    api.store.set_match_status(mid, "running")
    state = api.store.replay(mid)
    while not state.is_over:
        decision, bot_id = publish_next(api.store, mid)
        action = decision["legal_actions"][0]
        api.ok(api.post(f"/matches/{mid}/turns/{decision['turn']}",
                        {"action": action, "debug": f"{bot_id} thinks at {decision['turn']}"},
                        token=secrets[bot_id]), 200)
        state.apply(action)
    conclude(api.store, mid)  # ended as a worker does, its follow-ups (the archiving) left to the test
    return {"id": mid, "bots": [a["id"], b["id"]], "tokens": [None, alice, bob, ADMIN_TOKEN],
            "turns": api.store.log_length(mid)}


def page(api, path: str) -> tuple[int, bytes]:
    response = api.session.get(api.base.removesuffix("/api/v1") + path, timeout=60)
    return response.status_code, response.content


def reads(api, mid: str, turns: int, tokens: list, bots: list[str]) -> dict:
    """Every read of the match, by every kind of reader: path and token -> (status, body)."""
    out = {}
    paths = [f"/matches/{mid}", f"/matches/{mid}/export", f"/matches/{mid}/events",
             *(f"/matches/{mid}/steps/{k}" for k in range(turns + 1)),
             "/matches?limit=50", *(f"/bots/{b}/matches" for b in bots)]
    for path in paths:
        for token in tokens:
            response = api.get(path, token=token)
            out[path, token] = (response.status_code, response.content)
    for path in (f"/matches/{mid}", f"/matches/{mid}?step=2", f"/matches/{mid}?step={turns}", "/matches"):
        out[path, "page"] = page(api, path)
    return out


def replay_output(api, mid: str) -> str:
    """What `cardarena replay URL` prints for the match."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli(["replay", f"{api.base.removesuffix('/api/v1')}/matches/{mid}"]) == 0
    return out.getvalue()


def redis_holds(api, mid: str) -> dict:
    r = api.store.r
    return {"log": r.exists(f"match:{mid}:log"), "debug": r.exists(f"match:{mid}:debug"),
            "fields": {f.decode() for f in r.hkeys(f"match:{mid}")},
            "bytes": r.memory_usage(f"match:{mid}")}


def test_every_read_of_a_finished_match_is_the_same_from_the_archive(api, debugged):
    mid, turns = debugged["id"], debugged["turns"]
    assert api.store.debug_notes(mid) and redis_holds(api, mid)["log"]
    before = reads(api, mid, turns, debugged["tokens"], debugged["bots"])
    assert before == reads(api, mid, turns, debugged["tokens"], debugged["bots"])  # the reads are repeatable
    assert before[f"/matches/{mid}", None][0] == 200 and b'"debug":' in before[f"/matches/{mid}/export", ADMIN_TOKEN][1]
    printed = replay_output(api, mid)

    size = api.store.archive_match(mid)
    assert size and api.store.archive.has(mid)
    held = redis_holds(api, mid)
    assert not held["log"] and not held["debug"]
    assert held["fields"] <= {*KEPT, ARCHIVED, "brief"} and held["bytes"] < 1024
    assert api.store.archive_match(mid) is None  # once

    after = reads(api, mid, turns, debugged["tokens"], debugged["bots"])
    assert set(after) == set(before)
    for key in before:
        assert after[key] == before[key], key
    assert replay_output(api, mid) == printed


def test_a_tournament_reads_the_same_once_its_matches_are_archived(api):
    store = api.store
    bots = make_bots(store, 2)
    tid = running_tournament(store, bots, total=3)
    mids = [played(store, bots if i % 2 == 0 else bots[::-1], seed=10 + i, tournament=tid) for i in range(3)]
    store.set_tournament(tid, status="finished")
    paths = [f"/tournaments/{tid}/matches", f"/tournaments/{tid}/export", f"/tournaments/{tid}/crosstable",
             f"/tournaments/{tid}", "/matches", *(f"/matches/{m}" for m in mids), *(f"/matches/{m}/export" for m in mids)]
    before = {p: (r.status_code, r.content) for p in paths for r in [api.get(p)]}
    tournament_page = page(api, f"/tournaments/{tid}")
    for mid in mids:
        assert store.archive_match(mid)
    assert {p: (r.status_code, r.content) for p in paths for r in [api.get(p)]} == before
    assert page(api, f"/tournaments/{tid}") == tournament_page
    assert json.loads(before[f"/tournaments/{tid}/matches"][1])["matches"][0]["result"]["decks"]  # the whole result


def test_a_missing_archive_file_is_a_clear_404(api, debugged):
    mid = debugged["id"]
    api.store.archive_match(mid)
    path = api.store.archive.path(mid)
    path.unlink()
    api.store.archive._cache.clear()  # this process read it a moment ago
    for read in (f"/matches/{mid}", f"/matches/{mid}/steps/1", f"/matches/{mid}/export"):
        response = api.get(read)
        assert response.status_code == 404, read
        error = response.json()["error"]
        assert error["code"] == "archive_missing" and mid in error["message"] and "CARDARENA_ARCHIVE" in error["message"]
    assert page(api, f"/matches/{mid}")[0] == 404
    listed = api.ok(api.get("/matches"), 200)["matches"]  # the lists need no file
    assert [m["id"] for m in listed] == [mid] and listed[0]["status"] == "finished"
