"""Bot versions (docs/api.md §5 "Bots"): `POST /bots/{id}/versions`, each version rated on its own,
matches pinning the version that plays, each version reached as it was."""

from __future__ import annotations

import pytest
import requests

from core.store.ratings import DEFAULT_MU
from tests.live import ADMIN_TOKEN

GAME = "toy-high"


def error_code(response) -> str:
    return response.json()["error"]["code"]


def test_a_new_version_is_numbered_rated_on_its_own_and_shown(api):
    token = api.account("author")
    bot = api.bot(token, "evolving", game=GAME)
    first = api.ok(api.get(f"/bots/{bot['id']}"), 200)
    assert first["version"] == 1 and [v["version"] for v in first["versions"]] == [1]
    assert first["versions"][0]["created"] == first["created"]
    api.store.save_rating(GAME, bot["id"], 30.0, 2.0, "m_first")

    made = api.ok(api.post(f"/bots/{bot['id']}/versions", {}, token=token), 201)
    assert made == {"bot": bot["id"], "version": 2}
    shown = api.ok(api.get(f"/bots/{bot['id']}"), 200)
    assert shown["version"] == 2 and shown["rating"]["mu"] == DEFAULT_MU  # the new version starts afresh
    assert [(v["version"], v["rating"]["mu"]) for v in shown["versions"]] == [(2, DEFAULT_MU), (1, 30.0)]
    assert shown["versions"][0]["created"] >= shown["versions"][1]["created"]
    # the ladder shows each bot's latest version: an unrated one is not on it yet
    assert api.ok(api.get(f"/games/{GAME}/rankings"), 200)["rankings"] == []
    api.store.save_rating(GAME, f"{bot['id']}@2", 28.0, 3.0, "m_second")
    (row,) = api.ok(api.get(f"/games/{GAME}/rankings"), 200)["rankings"]
    assert (row["bot"], row["version"], row["rating"]["mu"]) == (bot["id"], 2, 28.0)
    listed = api.ok(api.get("/bots", params={"game": GAME}), 200)["bots"][0]
    assert (listed["version"], listed["rating"]["mu"]) == (2, 28.0)
    history = api.ok(api.get(f"/bots/{bot['id']}/ratings"), 200)["history"]
    assert [(p["version"], p["match"]) for p in history] == [(1, "m_first"), (2, "m_second")]
    assert api.ok(api.post(f"/bots/{bot['id']}/versions", {}, token=token), 201)["version"] == 3

    page = requests.get(f"{api.live.url}/bots/{bot['id']}", timeout=10).text
    assert 'id="versions"' in page and "version 3" in page and "30.00 ± 6.00" in page
    assert f'"candidate": "{bot["id"]}", "baseline": "{bot["id"]}"' in page  # how to compare it with the one before


def test_who_may_start_a_version_and_with_what(api):
    token, other = api.account("author"), api.account("other")
    polling = api.bot(token, "poller", game=GAME)
    hook = api.bot(token, "hook", game=GAME, kind="webhook", url="http://127.0.0.1:9/v1")
    path = f"/bots/{polling['id']}/versions"
    assert api.post(path, {}).status_code == 401
    r = api.post(path, {}, token=other)
    assert r.status_code == 403 and error_code(r) == "forbidden"
    assert api.post("/bots/b_nosuchbot/versions", {}, token=token).status_code == 404
    for body, code in [({"url": "http://127.0.0.1:9/x"}, "invalid"), ({"entrypoint": "a.b:C"}, "invalid"),
                       ({"name": "x"}, "invalid")]:
        r = api.post(path, body, token=token)
        assert r.status_code == 422 and error_code(r) == code, (body, r.text)
    r = api.post(f"/bots/{hook['id']}/versions", {"url": "ftp://127.0.0.1/x"}, token=token)
    assert r.status_code == 422 and error_code(r) == "invalid_url"
    assert api.ok(api.post(f"/bots/{hook['id']}/versions", {"url": "http://127.0.0.1:9/v2"}, token=token),
                  201)["version"] == 2
    assert api.ok(api.get(f"/bots/{hook['id']}"), 200)["url"] == "http://127.0.0.1:9/v2"
    assert api.store.version_record(hook["id"], 1)["url"] == "http://127.0.0.1:9/v1"  # still reachable

    python = api.ok(api.post("/bots", {"name": "py", "game": GAME, "kind": "python",
                                       "entrypoint": "example_bots.random:RandomBot"}, token=ADMIN_TOKEN), 201)
    r = api.post(f"/bots/{python['id']}/versions", {"entrypoint": "nosuch.module:Bot"}, token=ADMIN_TOKEN)
    assert r.status_code == 422 and error_code(r) == "invalid_entrypoint"
    assert api.ok(api.post(f"/bots/{python['id']}/versions", {"entrypoint": "example_bots.random:RandomBot"},
                           token=ADMIN_TOKEN), 201)["version"] == 2
    assert api.ok(api.delete(path.removesuffix("/versions"), token=token), 200)["retired"]
    r = api.post(path, {}, token=token)
    assert r.status_code == 409 and error_code(r) == "retired_bot"


def test_matches_pin_the_version_that_plays_and_reach_it_as_it_was(api):
    token = api.account("author")
    hook = api.bot(token, "hook", game=GAME, kind="webhook", url="http://127.0.0.1:9/v1")
    rival = api.bot(token, "rival", game=GAME)
    early = api.match(token, GAME, [hook["id"], rival["id"]], seed=1)
    api.ok(api.post(f"/bots/{hook['id']}/versions", {"url": "http://127.0.0.1:9/v2"}, token=token), 201)
    api.ok(api.request("PATCH", f"/bots/{hook['id']}", token, json={"url": "http://127.0.0.1:9/v2b"}), 200)  # the latest's
    late = api.match(token, GAME, [rival["id"], hook["id"]], seed=1)
    seats = {mid: api.ok(api.get(f"/matches/{mid}"), 200)["seats"] for mid in (early["id"], late["id"])}
    assert [(s["bot"], s["version"]) for s in seats[early["id"]]] == [(hook["id"], 1), (rival["id"], 1)]
    assert [(s["bot"], s["version"]) for s in seats[late["id"]]] == [(rival["id"], 1), (hook["id"], 2)]
    urls = [[b and b.get("url") for b in api.store.seat_bots(api.store.get_match(mid))]
            for mid in (early["id"], late["id"])]
    assert urls == [["http://127.0.0.1:9/v1", None], [None, "http://127.0.0.1:9/v2b"]]
    listed = api.ok(api.get("/matches", params={"bot": hook["id"]}), 200)["matches"]
    assert sorted(s["version"] for m in listed for s in m["seats"] if s["bot"] == hook["id"]) == [1, 2]
    rows = api.ok(api.get(f"/bots/{hook['id']}/matches"), 200)["matches"]  # newest first
    assert [(r["id"], r["version"]) for r in rows] == [(late["id"], 2), (early["id"], 1)]


def test_a_comparison_of_two_versions_is_one_call(api):
    token = api.account("author")
    python = api.ok(api.post("/bots", {"name": "py", "game": GAME, "kind": "python",
                                       "entrypoint": "example_bots.random:RandomBot"}, token=ADMIN_TOKEN), 201)
    polling = api.bot(token, "poller", game=GAME)
    same = {"game": GAME, "candidate": python["id"], "baseline": python["id"]}
    r = api.post("/comparisons", same, token=token)
    assert r.status_code == 422 and "one version" in r.json()["error"]["message"]
    api.ok(api.post(f"/bots/{python['id']}/versions", {}, token=ADMIN_TOKEN), 201)
    r = api.post("/comparisons", same, token=token)  # version 2 runs the same code as version 1
    assert r.status_code == 422 and "the same code would play both seats" in r.json()["error"]["message"]
    api.ok(api.post(f"/bots/{python['id']}/versions", {"entrypoint": "tests.worker.bots:First"},
                    token=ADMIN_TOKEN), 201)  # version 3
    api.ok(api.post(f"/bots/{polling['id']}/versions", {}, token=token), 201)
    r = api.post("/comparisons", {**same, "candidate": polling["id"], "baseline": polling["id"]}, token=token)
    assert r.status_code == 422 and "polling" in r.json()["error"]["message"]
    for extra, code in [({"baseline_version": 4}, "unknown_version"), ({"candidate_version": 1}, "invalid"),
                        ({"candidate_version": 2, "baseline_version": 2}, "invalid")]:
        r = api.post("/comparisons", {**same, **extra}, token=token)
        assert r.status_code == 422 and error_code(r) == code, (extra, r.text)
    queued = api.ok(api.post("/comparisons", same, token=token), 202)
    shown = api.ok(api.get(f"/comparisons/{queued['id']}"), 200)
    assert (shown["candidate_version"], shown["baseline_version"]) == (3, 2)
    page = requests.get(f"{api.live.url}/comparisons/{queued['id']}", timeout=10).text
    assert '<span class="version">v3</span> better than' in page and '<span class="version">v2</span>?' in page
    older = api.ok(api.post("/comparisons", {**same, "candidate_version": 1, "baseline_version": 3}, token=token),
                   202)
    assert api.ok(api.get(f"/comparisons/{older['id']}"), 200)["candidate_version"] == 1


@pytest.mark.parametrize("who", ["owner", "admin"])
def test_the_owner_or_the_admin_starts_a_version(api, who):
    token = api.account("author")
    bot = api.bot(token, "b", game=GAME)
    caller = token if who == "owner" else ADMIN_TOKEN
    assert api.ok(api.post(f"/bots/{bot['id']}/versions", {}, token=caller), 201)["version"] == 2


def test_a_tournament_plays_the_versions_its_bots_had_when_it_was_created(api, monkeypatch):
    from worker.jobs import run_tournament

    token = api.account("author")
    a, b = (api.bot(token, name, game=GAME)["id"] for name in ("a", "b"))
    api.ok(api.post(f"/bots/{a}/versions", {}, token=token), 201)
    tid = api.ok(api.post("/tournaments", {"game": GAME, "bots": [a, b], "deals": 1}, token=token), 202)["id"]
    api.ok(api.post(f"/bots/{a}/versions", {}, token=token), 201)  # version 3, after the tournament was made
    monkeypatch.setenv("REDIS_URL", api.live.redis_url)  # where run_tournament looks
    assert run_tournament(tid) == "expanded"
    matches = api.ok(api.get(f"/tournaments/{tid}/matches"), 200)["matches"]
    assert len(matches) == 2 and {(s["bot"], s["version"]) for m in matches for s in m["seats"]} == {(a, 2), (b, 1)}
    assert api.ok(api.get(f"/tournaments/{tid}"), 200)["versions"] == {a: 2, b: 1}
