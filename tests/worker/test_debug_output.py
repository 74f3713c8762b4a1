"""Debug output end to end (docs/api.md §6 "Debug output"): a webhook bot (`sdk.serve`), a
polling bot (`sdk.connect`) and an in-process bot each write `Bot.debug` text in a tournament
refereed by the worker pool; each bot's owner reads it beside its turns, nobody else does.
"""

from __future__ import annotations

import json

import pytest

from sdk import connect, serve
from tests.live import ADMIN_TOKEN
from tests.worker.debug_bots import Noter
from tests.worker.test_worker_e2e import GAME, free_port, python_bot, tournament, wait_finished


def exported(api, mid: str, token: str | None) -> list[dict] | None:
    return api.ok(api.get(f"/matches/{mid}/export", token=token), 200).get("debug")


def notes_of(match: dict, how: dict[str, str], readable: set[str]) -> list[dict]:
    """The debug notes the `Noter`s of `readable` bots wrote in `match`: one per turn they played."""
    seats = [s["bot"] for s in match["seats"]]
    return [{"turn": e["turn"], "seat": e["seat"], "text": f"{how[seats[e['seat']]]} turn {e['turn']}"}
            for e in match["log"] if seats[e["seat"]] in readable]


@pytest.mark.slow
def test_webhook_polling_and_in_process_bots_debug_is_shown_to_their_owners_only(api, worker_pool):
    alice, bob = api.account("alice"), api.account("bob")
    port = free_port()
    hook = api.bot(alice, "hook", game=GAME, kind="webhook", url=f"http://127.0.0.1:{port}/")
    poll = api.bot(alice, "poll", game=GAME, kind="polling")
    inproc = python_bot(api, "inproc", "tests.worker.debug_bots:InProcess")  # the admin's
    how = {hook["id"]: "webhook", poll["id"]: "polling", inproc: "in-process"}
    hosted = serve(Noter("webhook"), port=port, secret=hook["secret"], block=False)
    poller = connect(Noter("polling"), api.live.url, secret=poll["secret"], wait=1, block=False)
    try:
        tid = tournament(api, alice, [hook["id"], poll["id"], inproc], deals=1)
        done = wait_finished(api, tid)
    finally:
        poller.stop(timeout=10)
        hosted.stop()
    assert done["status"] == "finished"
    page = api.ok(api.get(f"/tournaments/{tid}/matches"), 200)["matches"]
    assert len(page) == 6
    kinds_seen = set()
    for listed in page:
        match = api.ok(api.get(f"/matches/{listed['id']}"), 200)
        seats = [s["bot"] for s in match["seats"]]
        assert not any("fault" in e or "debug" in e for e in match["log"])
        assert not any(f"{kind} turn" in str(match) for kind in how.values())  # the public read
        mine = notes_of(match, how, {hook["id"], poll["id"]})
        assert (exported(api, match["id"], alice) or []) == mine
        assert exported(api, match["id"], ADMIN_TOKEN) == notes_of(match, how, set(seats))
        kinds_seen |= {how[bot] for bot in seats}
        assert exported(api, match["id"], bob) is None and exported(api, match["id"], None) is None
        for note in mine[:2]:
            step = api.ok(api.get(f"/matches/{match['id']}/steps/{note['turn']}", token=alice), 200)
            assert step["debug"] == note["text"]
            assert api.ok(api.get(f"/matches/{match['id']}/steps/{note['turn']}", token=bob), 200)["debug"] is None
    assert kinds_seen == {"webhook", "polling", "in-process"}
    lines = api.get(f"/tournaments/{tid}/export", token=alice).text.splitlines()
    by_id = {d["id"]: d for d in map(json.loads, lines)}
    assert len(by_id) == 6 and all(
        d.get("debug", []) == notes_of(api.ok(api.get(f"/matches/{mid}"), 200), how, {hook["id"], poll["id"]})
        for mid, d in by_id.items())
    assert all("debug" not in json.loads(line) for line in api.get(f"/tournaments/{tid}/export").text.splitlines())
