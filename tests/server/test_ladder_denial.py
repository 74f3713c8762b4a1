"""Nobody can take another owner's bot off the ladder (docs/api.md "Consent" and "The ladder"):
the attacks found, each a test.

* six challenges of 1,000-deal duck-soup (`target`/`pond` 10000, `sets` 9) with the victim's bot:
  a match seating another account's bot is on the standard options (422), and an account has at
  most `GUEST_MATCHES` unfinished challenges with one other account's bot (429);
"""

from __future__ import annotations

from server.api.common import GUEST_MATCHES
from tests.live import ADMIN_TOKEN

GAME = "duck-soup"
LONG = {"target": 10000, "pond": 10000, "sets": 9}


def _victim_and_attacker(api):
    victim_token = api.account("victim")
    victim = api.bot(victim_token, "victim")["id"]
    attacker_token = api.account("attacker")
    attacker = api.bot(attacker_token, "attacker")["id"]
    return victim_token, victim, attacker_token, attacker


def test_six_long_challenges_with_anothers_bot_are_refused(api):
    _, victim, attacker_token, attacker = _victim_and_attacker(api)
    for _ in range(6):
        refused = api.post("/matches", {"game": GAME, "bots": [attacker, victim], "options": LONG},
                           token=attacker_token)
        assert refused.status_code == 422 and refused.json()["error"]["code"] == "options_not_allowed", refused.text
    assert api.store.bot_match_page(victim, 10)[0] == []
    own = api.match(attacker_token, GAME, [attacker, attacker], options=LONG)  # its own bots: its choice
    assert own["status"] == "queued"


def test_an_account_has_at_most_a_few_unfinished_challenges_with_one_other_accounts_bot(api):
    _, victim, attacker_token, attacker = _victim_and_attacker(api)
    made = [api.match(attacker_token, GAME, [attacker, victim])["id"] for _ in range(GUEST_MATCHES)]
    over = api.post("/matches", {"game": GAME, "bots": [attacker, victim]}, token=attacker_token)
    assert over.status_code == 429 and over.json()["error"]["code"] == "too_many_with_bot", over.text
    other_token = api.account("another")
    other = api.bot(other_token, "another")["id"]
    api.match(other_token, GAME, [other, victim])  # per account: another account has its own few
    api.ok(api.post(f"/matches/{made[0]}/abort", token=ADMIN_TOKEN), 200)
    api.match(attacker_token, GAME, [attacker, victim])  # one over: a place again


def test_a_bots_owner_ends_a_match_another_account_started_with_it_unrated_and_no_fault(api):
    victim_token, victim, attacker_token, attacker = _victim_and_attacker(api)
    challenge = api.match(attacker_token, GAME, [attacker, victim])["id"]
    bystander = api.account("bystander")
    assert api.post(f"/matches/{challenge}/abort", token=bystander).status_code == 403  # not its bot
    assert api.post(f"/matches/{challenge}/abort", token=attacker_token).status_code == 403  # its own say
    ended = api.ok(api.post(f"/matches/{challenge}/abort", token=victim_token), 200)
    assert ended["status"] == "aborted" and ended["result"] is None and f"bot {victim}" in ended["reason"]
    for bot_id in (victim, attacker):
        record = api.ok(api.get(f"/bots/{bot_id}"), 200)
        assert (record["matches"], record["faults"], record["paused"]) == (0, 0, False)
    assert api.post(f"/matches/{challenge}/abort", token=victim_token).status_code == 409  # over already
    own = api.match(victim_token, GAME, [victim, api.bot(victim_token, "second")["id"]])["id"]
    assert api.post(f"/matches/{own}/abort", token=victim_token).status_code == 403  # its own: not another's


def test_a_bots_owner_ends_a_match_of_another_accounts_tournament(api, monkeypatch):
    from worker.jobs import run_tournament

    victim_token, victim, attacker_token, attacker = _victim_and_attacker(api)
    tid = api.ok(api.post("/tournaments", {"game": GAME, "bots": [attacker, victim], "deals": 1,
                                           "duplicate": False}, token=attacker_token), 202)["id"]
    monkeypatch.setenv("REDIS_URL", api.live.redis_url)  # where run_tournament looks
    assert run_tournament(tid) == "expanded"  # its matches made, as the worker makes them
    (mid,) = api.store.tournament_matches(tid)
    assert api.ok(api.post(f"/matches/{mid}/abort", token=victim_token), 200)["status"] == "aborted"


def test_switching_to_accepts_owner_ends_the_matches_others_queued(api, monkeypatch):
    from worker.jobs import run_tournament

    victim_token, victim, attacker_token, attacker = _victim_and_attacker(api)
    challenges = [api.match(attacker_token, GAME, [attacker, victim])["id"] for _ in range(2)]
    tid = api.ok(api.post("/tournaments", {"game": GAME, "bots": [attacker, victim], "deals": 2},
                          token=attacker_token), 202)["id"]
    monkeypatch.setenv("REDIS_URL", api.live.redis_url)  # where run_tournament looks
    assert run_tournament(tid) == "expanded"
    theirs = challenges + api.store.tournament_matches(tid)
    own = api.match(victim_token, GAME, [victim, api.bot(victim_token, "second")["id"]])["id"]
    house = api.match(ADMIN_TOKEN, GAME, [attacker, victim])["id"]
    api.ok(api.request("PATCH", f"/bots/{victim}", json={"accepts": "owner"}, token=victim_token), 200)
    for mid in theirs:
        match = api.ok(api.get(f"/matches/{mid}"), 200)
        assert match["status"] == "aborted" and "no longer accepts" in match["reason"], match
    assert [api.ok(api.get(f"/matches/{m}"), 200)["status"] for m in (own, house)] == ["queued", "queued"]
    refused = api.post("/matches", {"game": GAME, "bots": [attacker, victim]}, token=attacker_token)
    assert refused.status_code == 403  # and no new one


def _take_slots_as_the_runner_does(store, match_id: str):
    """A match's slot step as its runner makes it at its start: the seats' records, the guest
    seats marked (worker/match_runner.py `guest_seats`); None when it took its slots (and is
    live from then on: its lease held), else the bot it waits for."""
    from core.store.jobs import lease_key
    from worker.match_runner import guest_seats

    match = store.get_match(match_id)
    seats = guest_seats(store, match, [store.bot_record(b) for b in match["seats"]])
    full, _ = store.take_slots_and_start(match_id, [b for b in seats if b is not None])
    if full is None:
        store.r.set(lease_key("match", match_id), "a runner")  # a live match: its runner holds its lease
    return full


def test_the_ladder_keeps_slots_of_its_own_whatever_other_accounts_queue(api):
    """Six challenges by three accounts with the victim's bot (4 slots): they take at most its
    guest share (2), the rest wait, and the matchmaker still pairs the victim, whose ladder match
    takes a slot at once."""
    from core.store.bots import guest_share
    from core.store.jobs import lease_key
    from tests.worker.ladder_helpers import house_bot
    from worker.matchmaker import Matchmaker, candidates

    victim_token = api.account("victim")
    victim = api.bot(victim_token, "victim", max_concurrent=4)["id"]
    api.store.bot_seen(victim)  # online: as a polling bot that is polling
    challenges = []
    for a in range(3):
        token = api.account(f"attacker{a}")
        mine = api.bot(token, f"attacker{a}")["id"]
        challenges += [api.match(token, GAME, [mine, victim])["id"] for _ in range(2)]
    started = [mid for mid in challenges if _take_slots_as_the_runner_does(api.store, mid) is None]
    assert len(started) == guest_share(api.store.bot_record(victim)) == 2  # the others wait for a slot
    assert victim in {c.id for c in candidates(api.store, GAME, [])}  # not kept off the ladder
    house_bot(api.store, "house", GAME)
    (pairing,) = Matchmaker(api.store, per_game=1, game_names=[GAME]).cycle()[GAME]
    assert victim in pairing["bots"]
    assert _take_slots_as_the_runner_does(api.store, pairing["matches"][0]) is None  # a slot at once
    api.store.r.delete(lease_key("match", started[0]))
    api.store.release_slots(started[0], [victim])  # a challenge ends: a waiting one takes its place
    assert _take_slots_as_the_runner_does(api.store, challenges[-1]) is None


def test_a_bot_of_one_slot_on_the_ladder_keeps_it_for_the_ladder(api):
    victim_token = api.account("victim")
    victim = api.bot(victim_token, "victim", max_concurrent=1)["id"]
    attacker_token = api.account("attacker")
    attacker = api.bot(attacker_token, "attacker")["id"]
    refused = api.post("/matches", {"game": GAME, "bots": [attacker, victim]}, token=attacker_token)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "no_room_for_guests"
    api.ok(api.request("PATCH", f"/bots/{victim}", json={"ladder": False}, token=victim_token), 200)
    api.match(attacker_token, GAME, [attacker, victim])  # off the ladder: nothing to keep it for


def test_the_sweep_does_not_wake_guest_matches_only_to_wait_again(api):
    """Guest matches waiting while the bot's guest share is held wait for a guest slot: the
    sweep's net (`wake_stalled`) leaves them, though a slot is free (the ladder's), and wakes them
    once a guest match has ended."""
    from core.store.jobs import lease_key

    victim_token = api.account("victim")
    victim = api.bot(victim_token, "victim", max_concurrent=4)["id"]
    challenges = []
    for a in range(2):
        token = api.account(f"attacker{a}")
        mine = api.bot(token, f"attacker{a}")["id"]
        challenges += [api.match(token, GAME, [mine, victim])["id"] for _ in range(2)]
    assert [_take_slots_as_the_runner_does(api.store, m) is None for m in challenges] == [True, True, False, False]
    assert api.store.wake_stalled() == []  # 2 of its 4 slots free, but those are the ladder's
    api.store.r.delete(lease_key("match", challenges[0]))  # its runner died: its slot is free again
    assert sorted(api.store.wake_stalled()) == sorted(challenges[2:])
