"""The ladder is the platform's (docs/api.md §6): the matchmaker's choices, its pairings, the rating
rule and pauses, on a real Redis (matches ended by hand: tests/worker/ladder_helpers.py)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from core.ratings import is_rated, kind_of
from core.store.ladder import ladder_lease
from sdk.clock import DEFAULT_TIME
from tests.worker.ladder_helpers import finish, house_bot, play_pairings
from worker.matchmaker import Candidate, Matchmaker, candidates, choose_tables, closeness
from worker.recovery import sweep

GAME = "duck-soup"


def test_the_focus_is_the_bot_with_fewest_recent_ladder_matches_then_the_larger_sigma():
    field = [Candidate("a", "A", 10.0, 2.0, recent=5), Candidate("b", "B", 10.0, 3.0, recent=1),
             Candidate("c", "C", 10.0, 4.0, recent=1), Candidate("d", "D", 10.0, 1.0, recent=9)]
    (table,) = choose_tables(field, 2, 1, random.Random(1))
    assert table[0] == "c"  # fewest (1), and of b and c the larger σ


def test_opponents_are_drawn_by_closeness_to_the_focus_and_never_of_its_account():
    focus = Candidate("f", "A", 20.0, 1.0, recent=0)
    near = [Candidate(f"n{i}", f"N{i}", 20.0 + 2 * i, 1.0, recent=3) for i in range(1, 4)]
    far = [Candidate(f"x{i}", f"X{i}", -30.0 - i, 1.0, recent=3) for i in range(5)]  # 50 μ below: hopeless
    mine = Candidate("m", "A", 20.0, 1.0, recent=3)  # the closest of all, but the focus's own account
    drawn = Counter()
    for seed in range(300):
        (table,) = choose_tables([focus, mine, *near, *far], 2, 1, random.Random(seed))
        assert table[0] == "f"
        drawn[table[1]] += 1
    assert set(drawn) == {"n1", "n2", "n3"}  # never its own, never a table it is sure to win or lose
    assert drawn["n1"] > drawn["n2"] > drawn["n3"]  # the closer, the likelier
    assert closeness(focus, near[0]) > closeness(focus, near[2]) > closeness(focus, far[0])


def test_while_ratings_are_unsure_every_opponent_is_about_as_likely_so_a_new_field_mixes():
    new = 25.0 / 3  # a new bot's σ
    focus = Candidate("f", "A", 25.0, new, recent=0)
    field = [Candidate(f"o{i}", f"O{i}", 25.0 + d, new, recent=3) for i, d in enumerate((-8, -4, 0, 4, 8))]
    drawn = Counter()
    for seed in range(500):
        (table,) = choose_tables([focus, *field], 2, 1, random.Random(seed))
        drawn[table[1]] += 1
    assert min(drawn.values()) > 500 / 5 / 2  # the farthest still drawn, at least half a fair share
    # once the ratings are sure, the same field's farthest are drawn far less than its closest
    sure = [Candidate(c.id, c.account, c.mu, 1.0, recent=3) for c in field]
    assert closeness(focus, sure[0]) < closeness(focus, field[0]) < 1.0


def test_no_table_seats_two_bots_of_one_account_and_a_focus_that_cannot_be_seated_sits_out():
    field = [Candidate(f"a{i}", "A", 0.0, 8.0, recent=0, room=3) for i in range(4)]
    field += [Candidate("b", "B", 0.0, 1.0, recent=50, room=3)]
    tables = choose_tables(field, 2, 10, random.Random(3))
    assert tables and all(len({t[0][0], t[1][0]}) == 2 for t in tables)  # an a-bot and b, always
    assert len(tables) == 3  # b's room
    assert choose_tables(field[:4], 2, 5, random.Random(3)) == []  # one account alone: no table
    four = [Candidate(f"{k}{i}", k, float(i), 1.0, recent=0) for k in "ABC" for i in range(2)]
    for table in choose_tables(four, 4, 3, random.Random(5)):
        raise AssertionError(f"three accounts cannot fill a table of four: {table}")


def test_a_cycle_keeps_the_game_topped_up_with_duplicate_deals_on_the_standard_clock(store):
    bots = [house_bot(store, f"house{i}", GAME) for i in range(6)]
    matchmaker = Matchmaker(store, per_game=2, game_names=[GAME])
    made = matchmaker.cycle()[GAME]
    assert len(made) == 2
    firsts = []
    for pairing in made:
        matches = [store.get_match(m) for m in pairing["matches"]]
        assert len(matches) == 2 and {tuple(m["seats"]) for m in matches} == {
            tuple(pairing["bots"]), tuple(reversed(pairing["bots"]))}  # every rotation of one deal
        assert len({m["seed"] for m in matches}) == 1 and set(pairing["bots"]) <= set(bots)
        for m in matches:
            assert m["kind"] == "ladder" and kind_of(m) == "ladder" and m["rated"] is True
            assert m["twins"] == pairing["matches"] and m["options"] == {} and m["owner"] is None
            assert (m["move_timeout_ms"], m["time_bank_ms"], m["max_faults"]) == (
                DEFAULT_TIME.move_timeout_ms, DEFAULT_TIME.time_bank_ms, DEFAULT_TIME.max_faults)
        firsts.append(pairing["matches"][0])
    assert sorted(m for _, m in store.active_jobs()) == sorted(firsts)  # twins in sequence: the first only
    assert matchmaker.cycle()[GAME] == []  # topped up
    first = made[0]
    finish(store, first["matches"][0], [1, 2])
    assert store.pairings_in_play(GAME)[0]["id"] == first["id"]  # one rotation is not the deal
    assert store.rating_events(GAME) == [] and store.bot_rating(GAME, first["bots"][0])["sigma"] == pytest.approx(
        25 / 3)  # nothing of the deal shows before its last rotation
    finish(store, first["matches"][1], [1, 2])
    assert first["id"] not in [p["id"] for p in store.pairings_in_play(GAME)]
    assert store.ladder_match_counts(GAME, first["bots"]) == dict.fromkeys(first["bots"], 2)
    assert len(matchmaker.cycle()[GAME]) == 1  # its place is taken again
    rows = {r["bot"]: r for r in store.rankings(GAME)}
    assert all(rows[b]["ladder_matches"] == 2 and rows[b]["provisional"] for b in first["bots"])


def test_only_bots_on_the_ladder_online_unpaused_and_with_a_free_slot_are_paired(store):
    ok = [house_bot(store, f"ok{i}", GAME) for i in range(2)]
    off = house_bot(store, "off", GAME, ladder=False)
    paused = house_bot(store, "paused", GAME)
    store.r.hset(f"bot:{paused}", "forfeit_streak", 5)
    retired = house_bot(store, "retired", GAME)
    store.retire_bot(retired)
    silent = store.create_bot("acct", "silent", GAME, "polling")[0]["id"]  # never polled: offline
    full = store.create_bot("acct2", "full", GAME, "polling", max_concurrent=1)[0]["id"]
    store.bot_seen(full)  # online
    store.r.sadd(f"bot:{full}:playing", "m_busy")
    store.r.set("lease:match:m_busy", "x")  # a live match holds its one slot
    waited = store.create_bot("acct3", "waited", GAME, "polling")[0]["id"]
    store.bot_seen(waited)
    store.r.zadd(f"bot:{waited}:waiting", {"m_waits": 1})  # a tournament's match waits for its slot:
    found = {c.id for c in candidates(store, GAME, [])}  # it keeps no room from the ladder
    assert found == {*ok, waited} and silent not in found
    store.r.delete("lease:match:m_busy")
    store.r.delete(f"bot:{waited}:waiting")
    assert {c.id for c in candidates(store, GAME, [])} == {*ok, full, waited}
    store.update_bot(off, ladder=True)
    assert off in {c.id for c in candidates(store, GAME, [])}


def test_the_ladder_takes_at_most_half_a_bots_slots(store):
    a = store.create_bot("acct_a", "a", GAME, "polling", max_concurrent=4)[0]["id"]
    store.bot_seen(a)
    others = [house_bot(store, f"h{i}", GAME) for i in range(6)]
    Matchmaker(store, per_game=8, game_names=[GAME]).cycle()
    in_play = store.pairings_in_play(GAME)
    assert sum(a in p["bots"] for p in in_play) == 2  # half of its 4 slots
    assert all(sum(b in p["bots"] for p in in_play) <= 2 for b in others)  # half of the default 4


def test_a_pairing_is_written_whole_only_under_the_matchmakers_lease(store):
    bots = [house_bot(store, f"house{i}", GAME) for i in range(2)]
    assert store.create_pairing(GAME, bots, 7, [0, 1], "not-the-lease") is None
    token = store.take_lease(*ladder_lease(GAME))
    store.r.set("lease:ladder:" + GAME, "someone-else")  # the lease lapsed and another took it
    assert store.create_pairing(GAME, bots, 7, [0, 1], token) is None
    assert store.pairings_in_play(GAME) == [] and store.r.zcard("matches") == 0  # nothing written


def test_a_matchmaker_killed_after_writing_a_pairing_loses_nothing(store, monkeypatch):
    [house_bot(store, f"house{i}", GAME) for i in range(2)]

    def killed(kind, idents):
        raise SystemExit("killed before enqueueing")

    monkeypatch.setattr(store, "enqueue", killed)
    with pytest.raises(SystemExit):
        Matchmaker(store, per_game=1, game_names=[GAME]).cycle()
    monkeypatch.undo()
    (pairing,) = store.pairings_in_play(GAME)
    first = pairing["matches"][0]
    assert store.queued_job_ids() == [] and ("match", first) in store.active_jobs()
    assert ("match", first) in sweep(store)  # the pool's sweep enqueues what the dead one did not
    store.r.delete("lease:ladder:" + GAME)  # the dead matchmaker's lease lapses
    assert Matchmaker(store, per_game=1, game_names=[GAME]).cycle()[GAME] == []  # made once, not twice


def test_only_ladder_matches_and_the_admins_standard_tournaments_are_rated():
    assert is_rated("ladder")
    assert not is_rated("challenge") and not is_rated("challenge", None, {})
    assert not is_rated("comparison")
    standard = {"move_timeout_ms": 2000, "time_bank_ms": 10000, "max_faults": 3}
    assert is_rated("tournament", None, {}, by_admin=True, clock=standard)
    assert is_rated("tournament", None, {}, by_admin=True)  # a field left out is the standard
    assert not is_rated("tournament", None, {}, by_admin=False, clock=standard)  # an account's
    assert not is_rated("tournament", None, {}, by_admin=True, clock={**standard, "move_timeout_ms": 100})
    assert not is_rated("tournament", 5, {}, by_admin=True, clock=standard)  # a chosen seed
    assert not is_rated("tournament", None, {"deck": ["x"]}, by_admin=True, clock=standard)


def test_forfeits_pause_a_bot_only_in_ladder_matches(store):
    """The attack: an account challenges a victim's bot where it cannot play (a clock it cannot
    meet, while it is down) and collects forfeits until it is paused. Challenges count for
    nothing now; only the ladder's forfeits pause, and a paused bot is paired by nobody."""
    victim, rival = house_bot(store, "victim", GAME), house_bot(store, "rival", GAME)
    for _ in range(6):  # forfeited challenges (unrated, as POST /matches makes them)
        match = store.create_match(GAME, [victim, rival], 1, {}, rated=False, owner="attacker")
        finish(store, match["id"], [2, 1], forfeits=[0])
    bot = store.get_bot(victim)
    assert int(bot.get("forfeit_streak") or 0) == 0 and bot["rating"]["sigma"] == pytest.approx(25 / 3)
    assert store.rating_events(GAME) == [] and store.rankings(GAME) == []
    matchmaker = Matchmaker(store, per_game=1, game_names=[GAME])
    forfeited = 0
    while forfeited < 5:  # the ladder's own matches: a bot that forfeits there is paused
        assert matchmaker.cycle()[GAME] or store.pairings_in_play(GAME)
        forfeited += play_pairings(store, GAME, lambda seats: ([2, 1], [0]) if seats[0] == victim
                                   else ([1, 2], [1]))
    assert store.get_bot(victim)["forfeit_streak"] >= 5
    assert victim not in {c.id for c in candidates(store, GAME, [])}
    store.resume_bot(victim)
    assert victim in {c.id for c in candidates(store, GAME, [])}
