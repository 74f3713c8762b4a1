"""Bots known to be alive, and bots that keep forfeiting paused (docs/api.md §5 "Bots"), on real HTTP.

* Liveness: a webhook bot is pinged (signed) at registration (`reachable`) and
  when a tournament it enters is created; a polling bot is seen when it
  polls. `status` and `last_seen` are on `GET /bots` and `GET /bots/{id}`;
  a new tournament's `warnings` name the entrants that may forfeit.
* Probation: 5 forfeited ladder matches in a row pause a bot from rated play
  until its owner resumes it (forfeited challenges never do); `faults_by_kind`
  says what it did.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import sdk
from sdk import Bot
from sdk.protocol import SIGNATURE_HEADER
from tests.live import ADMIN_TOKEN

GAME = "duck-soup"


class First(Bot):
    def act(self, view, legal_actions):
        return legal_actions[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Answers200:
    """A web server on loopback answering 200 to every POST, keeping what it was sent."""

    def __init__(self) -> None:
        calls = self.calls = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                calls.append((json.loads(body), self.headers.get(SIGNATURE_HEADER)))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_registration_pings_a_webhook_bot_and_says_whether_it_answered(api):
    token = api.account("author")
    alive = Answers200()
    try:
        up = api.bot(token, "up", GAME, kind="webhook", url=alive.url)
    finally:
        alive.close()
    assert up["reachable"] is True and up["status"] == "online" and up["last_seen"].endswith("Z")
    (ping, signature), = alive.calls
    assert ping == {"type": "ping", "protocol": 1} and signature.startswith("sha256=")  # signed
    down = api.bot(token, "down", GAME, kind="webhook", url=f"http://127.0.0.1:{_free_port()}/")
    assert down["reachable"] is False and down["status"] == "offline" and down["last_seen"] is None
    polled = api.bot(token, "polled", GAME, kind="polling")
    assert polled["reachable"] is None and polled["status"] == "offline"  # never polled yet
    assert "never polled" in polled["status_reason"]
    listed = {b["id"]: b for b in api.ok(api.get("/bots", params={"game": GAME}), 200)["bots"]}
    assert [listed[b["id"]]["status"] for b in (up, down, polled)] == ["online", "offline", "offline"]


def test_sdk_serve_answers_the_signed_ping(api):
    token = api.account("author")
    port = _free_port()
    hook = api.bot(token, "hook", GAME, kind="webhook", url=f"http://127.0.0.1:{port}/")
    assert hook["reachable"] is False  # nothing served there yet
    with sdk.serve(First(), port=port, secret=hook["secret"], block=False):
        tournament_warnings = _tournament(api, token, [hook["id"], _python_bot(api)])["warnings"]
    assert tournament_warnings == []  # pinged when the tournament was created: it answered
    assert api.ok(api.get(f"/bots/{hook['id']}"), 200)["status"] == "online"


def test_a_new_tournament_warns_of_dead_and_silent_entrants(api, worker_pool):
    token = api.account("author")
    dead = api.bot(token, "dead", GAME, kind="webhook", url=f"http://127.0.0.1:{_free_port()}/")
    silent = api.bot(token, "silent", GAME, kind="polling")
    live = api.bot(token, "live", GAME, kind="polling")
    poller = sdk.connect(First(), api.live.url, secret=live["secret"], wait=1, block=False)
    try:
        assert api.ok(api.get(f"/bots/{live['id']}"), 200)["status"] == "online"  # connect polled once
        created = _tournament(api, token, [dead["id"], silent["id"], live["id"], _python_bot(api)])
    finally:
        poller.stop(timeout=30)
    warned = {w["bot"]: w for w in created["warnings"]}
    assert set(warned) == {dead["id"], silent["id"]}
    assert warned[dead["id"]]["status"] == "offline" and "ping" in warned[dead["id"]]["message"]
    assert warned[dead["id"]]["name"] == "dead" and "unreachable" in warned[dead["id"]]["message"]
    assert warned[silent["id"]]["status"] == "offline" and "never polled" in warned[silent["id"]]["message"]
    shown = api.ok(api.get(f"/bots/{dead['id']}"), 200)
    assert shown["status"] == "offline" and shown["last_seen"] is None


@pytest.mark.slow
def test_forfeited_challenges_pause_nobody_and_a_paused_bot_waits_for_its_owner(api, worker_pool):
    """Issue 29's attack: five forfeits forced in challenges (a clock the bot cannot meet) paused
    it. Challenges are unrated now and never count towards a pause; only the ladder's forfeits do
    (tests/worker/test_ladder.py), and a paused bot then waits for its owner."""
    token = api.account("author")
    mute = api.bot(token, "mute", GAME, kind="polling")  # never polls: every decision times out
    rival = _python_bot(api)
    rules = {"move_timeout_ms": 100, "time_bank_ms": 0, "max_faults": 1}  # a house bot's clock: the admin sets it
    for _ in range(5):
        match_id = api.match(ADMIN_TOKEN, GAME, [mute["id"], rival], **rules)["id"]
        match = sdk.Client(api.live.url).wait_match(match_id, timeout=60)
        assert match.status == "finished" and match.rated is False and match.result["forfeits"] == [0]
    bot = api.ok(api.get(f"/bots/{mute['id']}"), 200)
    assert bot["paused"] is False and bot["faults_by_kind"] == {"timeout": 5}
    assert bot["rating"]["sigma"] == pytest.approx(25 / 3)  # nor did they move its rating
    api.store.r.hset(f"bot:{mute['id']}", "forfeit_streak", 5)  # as five forfeited ladder matches leave it
    assert api.ok(api.get(f"/bots/{mute['id']}"), 200)["paused"] is True
    rated = {"game": GAME, "bots": [mute["id"], rival], "deals": 1}  # the admin's, standard clock: rated
    refused = api.post("/tournaments", rated, token=ADMIN_TOKEN)
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "paused_bot"
    assert f"POST /bots/{mute['id']}/resume" in refused.json()["error"]["message"]
    api.match(ADMIN_TOKEN, GAME, [mute["id"], rival], **rules)  # unrated play is still open to it
    other = api.account("other")
    assert api.post(f"/bots/{mute['id']}/resume", {}, token=other).status_code == 403
    resumed = sdk.Client(api.live.url, token=token).resume_bot(mute["id"])
    assert resumed.paused is False
    api.ok(api.post("/tournaments", rated, token=ADMIN_TOKEN), 202)  # rated again
    page = api.session.get(f"{api.live.url}/bots/{mute['id']}", timeout=10).text
    assert "timeout" in page


def _python_bot(api) -> str:
    body = {"name": "first", "game": GAME, "kind": "python", "entrypoint": "tests.worker.bots:First"}
    found = [b for b in api.ok(api.get("/bots", params={"game": GAME}), 200)["bots"] if b["name"] == "first"]
    return found[0]["id"] if found else api.ok(api.post("/bots", body, token=ADMIN_TOKEN), 201)["id"]


def _tournament(api, token: str, bots: list[str]) -> dict:
    body = {"game": GAME, "bots": bots, "format": "round-robin", "deals": 1, "seed": 1}
    return api.ok(api.post("/tournaments", body, token=token), 202)
