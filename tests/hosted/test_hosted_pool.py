"""A hosted bot in a tournament played by the real worker pool: uploaded by an account, its
matches refereed by the pool's processes from its sandbox, its record and standing like any bot's."""

from __future__ import annotations

import base64

import pytest

from tests.worker.test_worker_e2e import matches_of, python_bot, tournament, wait_finished

GAME = "double-carre"


@pytest.mark.slow
def test_a_hosted_bot_plays_a_tournament_on_the_worker_pool(api, worker_pool):
    token = api.account("author")
    code = (b"from sdk import Bot\n\nclass MyBot(Bot):\n    def act(self, view, legal_actions):\n"
            b"        self.debug('hosted')\n        return legal_actions[-1]\n")
    hosted = api.ok(api.post("/bots", {"name": "uploaded", "game": GAME, "kind": "hosted", "entrypoint": "mybot:MyBot",
                                       "code": base64.b64encode(code).decode()}, token=token), 201)
    assert hosted["status"] == "online"
    house = python_bot(api, "house", "example_bots.double_carre:DoubleCarreHeuristic")
    done = wait_finished(api, tournament(api, api.admin_token, [hosted["id"], house], deals=1))
    assert done["status"] == "finished"
    matches = matches_of(api, done["id"])
    assert matches and all(m["status"] == "finished" for m in matches)
    for m in matches:
        assert not any("fault" in e for e in m["log"]), [e.get("fault") for e in m["log"]]
    shown = api.ok(api.get(f"/bots/{hosted['id']}"), 200)
    assert shown["matches"] == len(matches) and shown["status"] == "online"
