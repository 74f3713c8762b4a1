"""Each Redis script of core/store/lua/, run on its own against a real Redis through the
store's wrapper (`Store.script(source(name))`), its arguments by name."""

from __future__ import annotations

import pytest

from core.store import Store, secret_key
from core.store.lua import args, read, source, uses


@pytest.fixture()
def store(redis_client):
    return Store(redis_client, secret_key(redis_client))


def run(store: Store, name: str, keys: list[str], **named):
    return store.script(source(name))(keys=keys, args=[args(**named)])


def run_raw(store: Store, name: str, keys: list[str], raw: bytes, **named):
    """A script that takes a bytes argument (ARGV[2]) beside its JSON table."""
    return store.script(source(name))(keys=keys, args=[args(**named), raw])


def test_settle_pairing_leaves_play_and_counts_its_entrants_once(store):
    store.r.zadd("t:pairings", {"p1": 1})
    assert run(store, "settle_pairing", ["t:pairings", "t:played"], pairing="p1", entrants=["a@1", "b@2", "a@1"]) == 1
    assert store.r.hgetall("t:played") == {b"a@1": b"2", b"b@2": b"1"}
    assert run(store, "settle_pairing", ["t:pairings", "t:played"], pairing="p1", entrants=["a@1"]) == 0
    assert store.r.hgetall("t:played") == {b"a@1": b"2", b"b@2": b"1"}
    store.r.zadd("t:pairings", {"p2": 1})
    assert run(store, "settle_pairing", ["t:pairings", "t:played"], pairing="p2", entrants=[]) == 1
    assert store.r.zcard("t:pairings") == 0


def test_claim_guest_places_takes_a_place_with_every_bot_or_none(store):
    store.r.hset("match:old", "status", '"finished"')
    store.r.hset("match:live", "status", '"running"')
    store.r.sadd("g:a", "old", "gone", "live")
    keys = ["g:a", "g:b"]
    assert run(store, "claim_guest_places", keys, match="m1", most=2) == 0
    assert store.r.smembers("g:a") == {b"live", b"m1"}
    assert store.r.smembers("g:b") == {b"m1"}
    store.r.hset("match:m1", "status", '"queued"')
    assert run(store, "claim_guest_places", keys, match="m2", most=2) == 1
    assert run(store, "claim_guest_places", ["g:c", "g:a"], match="m2", most=2) == 2
    assert not store.r.exists("g:c")


def test_count_deal_counts_a_deal_once_and_a_void_deal_not_at_all(store):
    keys = ["c:deals", "c:sums"]
    assert run(store, "count_deal", keys, deal="0", record="1.5", statistic=1.5) == [b"1", b"1.5", b"2.25"]
    assert run(store, "count_deal", keys, deal="0", record="1.5", statistic=1.5) is None
    assert run(store, "count_deal", keys, deal="1", record="null", statistic=None) == [b"1", b"1.5", b"2.25"]
    assert run(store, "count_deal", keys, deal="2", record="-0.5", statistic=-0.5) == [b"2", b"1", b"2.5"]
    assert store.r.hgetall("c:deals") == {b"0": b"1.5", b"1": b"null", b"2": b"-0.5"}


def test_apply_rating_event_saves_only_the_head_of_the_queue_and_pops_it(store):
    keys = ["r:queue", "r:ratings", "r:ladder", "r:deals", "r:pairs", "r:met", "r:lock", "r:a", "r:b"]
    store.r.rpush("r:queue", "m1", "m2")
    store.r.rpush("r:a", "old1", "old2")
    entrants = [{"entrant": "a@1", "rating": '{"mu":30}', "ordinal": "2.5", "point": "p-a"},
                {"entrant": "b@1", "rating": '{"mu":20}', "ordinal": "-1.5", "point": "p-b"}]
    event = {"history": 2, "deal": '{"deal":1}', "entrants": entrants, "token": "ours",
             "pairs": [{"field": "x|y", "record": '{"n":1}'}], "met": [{"field": "a@1", "record": '{"m":1}'}]}
    store.r.set("r:lock", "ours")
    assert run(store, "apply_rating_event", keys, match="m2", **event) == 0  # not the head
    assert store.r.hlen("r:ratings") == 0 and store.r.llen("r:deals") == 0
    store.r.set("r:lock", "theirs")  # the lock expired and another worker took it
    assert run(store, "apply_rating_event", keys, match="m1", **event) == 0
    store.r.delete("r:lock")  # expired, nobody's
    assert run(store, "apply_rating_event", keys, match="m1", **event) == 0
    assert store.r.llen("r:queue") == 2 and store.r.hlen("r:ratings") == 0
    store.r.set("r:lock", "ours")
    assert run(store, "apply_rating_event", keys, match="m1", **event) == 1
    assert store.r.lrange("r:deals", 0, -1) == [b'{"deal":1}']
    assert store.r.hgetall("r:pairs") == {b"x|y": b'{"n":1}'} and store.r.hgetall("r:met") == {b"a@1": b'{"m":1}'}
    assert store.r.lrange("r:queue", 0, -1) == [b"m2"]
    assert store.r.hgetall("r:ratings") == {b"a@1": b'{"mu":30}', b"b@1": b'{"mu":20}'}
    assert store.r.zrange("r:ladder", 0, -1, withscores=True) == [(b"b@1", -1.5), (b"a@1", 2.5)]
    assert store.r.lrange("r:a", 0, -1) == [b"old2", b"p-a"]
    assert store.r.lrange("r:b", 0, -1) == [b"p-b"]


def test_new_version_writes_the_latest_down_and_changes_only_what_is_given(store):
    keys = ["bot:v", "bot:v:versions"]
    store.r.hset("bot:v", mapping={"created": '"t0"', "url": '"http://a"'})
    assert run(store, "new_version", keys, now='"t1"', code='{"k":1}') == 2
    assert store.r.hget("bot:v:versions", "1") == b'{"version":1,"created":"t0","url":"http://a"}'
    assert store.r.hmget("bot:v", "version", "version_created", "url", "code") == \
        [b"2", b'"t1"', b'"http://a"', b'{"k":1}']
    assert run(store, "new_version", keys, now='"t2"', url='"http://b"') == 3
    assert store.r.hget("bot:v:versions", "2") == b'{"version":2,"created":"t1","url":"http://a","code":{"k":1}}'
    assert store.r.hget("bot:v", "url") == b'"http://b"'


def test_create_bot_takes_a_free_name_or_answers_its_active_holder(store):
    keys = ["names", "bot:n1", "bots", "bots:game:g"]
    assert run_raw(store, "create_bot", keys, b"alice", bot="n1", seq=1, fields={"name": '"Alice"'}) is None
    assert store.r.hget("names", "alice") == b"n1"
    assert store.r.hgetall("bot:n1") == {b"name": b'"Alice"'}
    assert store.r.zscore("bots", "n1") == 1 and store.r.zscore("bots:game:g", "n1") == 1
    store.r.hset("bot:n1", "retired", "false")
    two = ["names", "bot:n2", "bots", "bots:game:g"]
    assert run_raw(store, "create_bot", two, b"alice", bot="n2", seq=2, fields={"name": '"ALICE"'}) == b"n1"
    assert not store.r.exists("bot:n2")
    store.r.hset("bot:n1", "retired", "true")
    assert run_raw(store, "create_bot", two, b"alice", bot="n2", seq=2, fields={"name": '"ALICE"'}) is None
    assert store.r.hget("names", "alice") == b"n2"


def test_release_name_frees_a_name_only_for_its_holder(store):
    store.r.hset("names", mapping={"alice": "n1", "\udcff".encode("utf-8", "surrogatepass"): "n3"})
    run_raw(store, "release_name", ["names"], b"alice", bot="n2")
    assert store.r.hget("names", "alice") == b"n1"
    run_raw(store, "release_name", ["names"], b"alice", bot="n1")
    run_raw(store, "release_name", ["names"], "\udcff".encode("utf-8", "surrogatepass"), bot="n3")
    assert not store.r.exists("names")


def test_claim_ping_is_taken_only_when_nothing_was_learnt_since_quiet(store):
    store.r.hset("bot:p", mapping={"last_seen": '"2026-01-01T00:00:05.000Z"'})
    assert run(store, "claim_ping", ["bot:p"], now='"2026-01-01T00:00:09.000Z"',
               quiet='"2026-01-01T00:00:06.000Z"') == 1
    assert store.r.hget("bot:p", "last_pinged") == b'"2026-01-01T00:00:09.000Z"'
    assert run(store, "claim_ping", ["bot:p"], now='"2026-01-01T00:00:10.000Z"',
               quiet='"2026-01-01T00:00:08.000Z"') == 0
    assert store.r.hget("bot:p", "last_pinged") == b'"2026-01-01T00:00:09.000Z"'


def test_waste_turn_counts_within_a_window_started_by_the_first(store):
    count, left = run(store, "waste_turn", ["w"], window=60_000)
    assert count == 1 and 59_000 < left <= 60_000
    count, left = run(store, "waste_turn", ["w"], window=1)
    assert count == 2 and 1 < left <= 60_000


def test_release_and_wake_gives_a_matchs_slots_back_and_takes_the_waiting_off(store):
    keys = ["slots:a:playing", "slots:b:playing", "slots:a:waiting", "slots:b:waiting", "slots:waiting"]
    store.r.sadd("slots:a:playing", "m1", "m2")
    store.r.sadd("slots:a:playing:guests", "m1")
    store.r.sadd("slots:b:playing", "m1")
    store.r.zadd("slots:a:waiting", {"w2": 2, "w1": 1})
    store.r.sadd("slots:waiting", "a", "c")
    assert run(store, "release_and_wake", keys, match="m1", bots=["a", "b"]) == [b"w1", b"w2"]
    assert store.r.smembers("slots:a:playing") == {b"m2"}
    assert not store.r.exists("slots:a:playing:guests", "slots:b:playing", "slots:a:waiting")
    assert store.r.smembers("slots:waiting") == {b"c"}
    store.r.zadd("slots:b:waiting", {"w3": 1})
    assert run(store, "release_and_wake", keys, bots=["a", "b"]) == [b"w3"]
    assert store.r.smembers("slots:a:playing") == {b"m2"}


def test_append_entries_lands_all_at_the_logs_length_and_never_on_a_match_over(store):
    keys = ["m:log", "m:hash", "m:channel"]
    heard = store.r.pubsub()
    heard.subscribe("m:channel")
    assert run(store, "append_entries", keys, first_turn=0, entries=['{"turn":0}']) == 0  # no match
    store.r.hset("m:hash", "status", '"running"')
    assert run(store, "append_entries", keys, first_turn=1, entries=['{"turn":1}']) == 0
    assert run(store, "append_entries", keys, first_turn=0, entries=['{"turn":0}', '{"turn":1}']) == 1
    assert store.r.lrange("m:log", 0, -1) == [b'{"turn":0}', b'{"turn":1}']
    store.r.hset("m:hash", "status", '"finished"')
    assert run(store, "append_entries", keys, first_turn=2, entries=['{"turn":2}']) == 0
    assert store.r.llen("m:log") == 2
    messages = [heard.get_message(timeout=5) for _ in range(2)]
    assert [m["data"] for m in messages if m] == [1, b"2"]
    heard.close()


def test_a_script_is_the_library_files_it_uses_then_itself():
    for name in ("take_places", "pending_decisions", "pending_credited", "poll", "read_and_give", "answer_reads"):
        text = source(name)
        for lib in uses(name):
            library = read(f"lib/{lib}.lua")
            assert f"\nlocal function {lib}(" in library and library in text
        assert text.endswith(read(f"{name}.lua"))
    assert uses("poll") == ["credited", "pending", "live", "take"]
    assert uses("settle") == []


#: places from `now` 1000 to 61000 (epoch ms) under token "t"
PLACES = {"now": 1000, "ends_at": 61000, "token": "t"}


def test_take_places_takes_a_place_in_every_key_or_in_none(store):
    store.r.zadd("q:a", {"old": 999, "held": 5000})
    assert run(store, "take_places", ["q:a", "q:b"], places={**PLACES, "caps": [2, 1]}) == 0
    assert store.r.zrange("q:a", 0, -1, withscores=True) == [(b"held", 5000), (b"t", 61000)]  # old lapsed
    assert store.r.zrange("q:b", 0, -1, withscores=True) == [(b"t", 61000)]
    assert 59_000 < store.r.pttl("q:b") <= 60_000
    assert run(store, "take_places", ["q:c", "q:b"], places={**PLACES, "token": "u", "caps": [1, 1]}) == 2
    assert not store.r.exists("q:c") and store.r.zcard("q:b") == 1  # none taken
    assert run(store, "take_places", ["q:a"], places={**PLACES, "token": "u", "caps": [2]}) == 1


def decisions_of(store: Store) -> None:
    """Bot "p" (nonce "n1") with three decisions: m1's turn 2 live, m2's turn 0 answered, m3's
    turn 1 past its deadline (at 5000)."""
    store.r.hset("bot:p", mapping={"nonce": '"n1"', "retired": "false"})
    store.r.rpush("match:m1:log", "e0", "e1")
    store.r.rpush("match:m2:log", "e0")
    store.r.hset("bot:p:decisions", mapping={
        "m1:2": '{"decision":{"turn":2},"sent_at":1,"deadline_at":9000}',
        "m2:0": '{"decision":{"turn":0},"sent_at":1,"deadline_at":9000}',
        "m3:1": '{"decision":{"turn":1},"sent_at":1,"deadline_at":5000}'})


AROUND = ["match:", ":log"]
#: a credential of bot "p" checked at 2026-01-01T00:00:09, noting it seen if last seen a second before
CREDENTIAL = {"nonce": '"n1"', "now": '"2026-01-01T00:00:09.000Z"', "seen_before": '"2026-01-01T00:00:08.000Z"'}


def by_field(reply: list) -> dict:
    return {field: length for field, length in zip(reply[::3], reply[2::3], strict=True)}


def test_pending_decisions_reads_each_with_its_logs_length_but_those_skipped(store):
    decisions_of(store)
    reply = run(store, "pending_decisions", ["bot:p:decisions"], around=AROUND, skip=[])
    assert by_field(reply) == {b"m1:2": 2, b"m2:0": 1, b"m3:1": 0}
    assert reply[reply.index(b"m1:2") + 1] == b'{"decision":{"turn":2},"sent_at":1,"deadline_at":9000}'
    reply = run(store, "pending_decisions", ["bot:p:decisions"], around=AROUND, skip=["m1:2", "m3:1"])
    assert by_field(reply) == {b"m2:0": 1}


def test_pending_credited_reads_only_for_the_nonce_held_and_notes_the_bot_seen(store):
    decisions_of(store)
    keys = ["bot:p", "bot:p:decisions"]
    assert run(store, "pending_credited", keys, credential={**CREDENTIAL, "nonce": '"n0"'}, around=AROUND,
               skip=[]) == b"not credited"
    assert not store.r.hexists("bot:p", "last_seen")
    assert by_field(run(store, "pending_credited", keys, credential=CREDENTIAL, around=AROUND, skip=["m2:0"])) \
        == {b"m1:2": 2, b"m3:1": 0}
    assert store.r.hget("bot:p", "last_seen") == b'"2026-01-01T00:00:09.000Z"'
    later = {**CREDENTIAL, "now": '"2026-01-01T00:00:09.500Z"', "seen_before": '"2026-01-01T00:00:08.500Z"'}
    run(store, "pending_credited", keys, credential=later, around=AROUND, skip=[])
    assert store.r.hget("bot:p", "last_seen") == b'"2026-01-01T00:00:09.000Z"'  # seen less than a second ago
    store.r.hset("bot:p", "retired", "true")
    assert run(store, "pending_credited", keys, credential=CREDENTIAL, around=AROUND, skip=[]) == b"not credited"


def test_poll_takes_its_places_only_when_no_decision_may_be_live(store):
    decisions_of(store)
    keys = ["bot:p", "bot:p:decisions", "q:bot", "q:account"]
    places = {**PLACES, "now": 6000, "caps": [1, 5]}
    flag, out = run(store, "poll", keys, credential=CREDENTIAL, around=AROUND, skip=[], now=6000, places=places)
    assert flag == -1 and by_field(out) == {b"m1:2": 2, b"m2:0": 1, b"m3:1": 0}  # m1:2 is live
    assert not store.r.exists("q:bot", "q:account")
    flag, out = run(store, "poll", keys, credential=CREDENTIAL, around=AROUND, skip=["m1:2"], now=6000,
                    places=places)  # m2:0 answered, m3:1 past its deadline
    assert flag == 0 and by_field(out) == {b"m2:0": 1, b"m3:1": 0}
    assert store.r.zscore("q:bot", "t") == 61000 and store.r.zscore("q:account", "t") == 61000
    assert run(store, "poll", keys, credential=CREDENTIAL, around=AROUND, skip=["m1:2"], now=6000,
               places={**places, "token": "u"})[0] == 1  # the bot's cap
    store.r.hset("bot:p:decisions", "m4:0", "not a record")
    assert run(store, "poll", keys, credential=CREDENTIAL, around=AROUND, skip=["m1:2"], now=6000,
               places={**places, "token": "u"})[0] == -1  # what cannot be read may be live
    assert run(store, "poll", keys, credential={**CREDENTIAL, "nonce": '"n0"'}, around=AROUND, skip=[],
               now=6000, places=places) == b"not credited"


def test_read_and_give_gives_the_places_back_only_with_a_live_decision(store):
    decisions_of(store)
    store.r.zadd("q:bot", {"t": 61000, "other": 61000})
    keys = ["bot:p:decisions", "bot:p", "q:bot"]
    given, out = run(store, "read_and_give", keys, around=AROUND, skip=["m1:2"], now=6000,
                     seen='"2026-01-01T00:00:09.000Z"', token="t")
    assert given == 0 and by_field(out) == {b"m2:0": 1, b"m3:1": 0}
    assert store.r.zcard("q:bot") == 2 and not store.r.hexists("bot:p", "last_seen")
    given, out = run(store, "read_and_give", keys, around=AROUND, skip=[], now=6000, seen="", token="t")
    assert given == 1 and b"m1:2" in by_field(out)
    assert store.r.zrange("q:bot", 0, -1) == [b"other"] and not store.r.hexists("bot:p", "last_seen")
    given, _ = run(store, "read_and_give", keys, around=AROUND, skip=[], now=6000,
                   seen='"2026-01-01T00:00:09.000Z"', token="other")
    assert given == 1 and store.r.hget("bot:p", "last_seen") == b'"2026-01-01T00:00:09.000Z"'
    assert run(store, "read_and_give", keys, around=AROUND, skip=[], now=9000, seen="", token="t")[0] == 0


def test_answer_reads_says_whether_the_turn_is_pending_and_reads_the_hash(store):
    decisions_of(store)
    store.r.hset("m1:waiting", "record", "r")
    keys = ["bot:p", "bot:p:decisions", "m1:waiting"]
    assert run(store, "answer_reads", keys, credential=CREDENTIAL, field="m1:2") == [1, [b"record", b"r"]]
    assert run(store, "answer_reads", keys, credential=CREDENTIAL, field="m1:3") == [0, [b"record", b"r"]]
    assert run(store, "answer_reads", keys, credential={**CREDENTIAL, "nonce": '"n0"'}, field="m1:2") \
        == b"not credited"


def test_unstart_call_queues_a_pending_call_again_and_gives_its_share_back(store):
    keys = ["t:waiting", "t:log", "t:deadlines", "t:calls", "t:share"]
    store.r.hset("t:waiting", mapping={"record": "{}", "called_at": 5})
    store.r.zadd("t:share", {"m:3": 10})
    assert run(store, "unstart_call", keys, turn=3, check_at=99, member="m:3", item="call") == 1
    assert store.r.hgetall("t:waiting") == {b"record": b"{}"} and store.r.zscore("t:deadlines", "m:3") == 99
    assert store.r.lrange("t:calls", 0, -1) == [b"call"] and store.r.zcard("t:share") == 0
    store.r.rpush("t:log", *range(4))  # settled: only the share is given back
    store.r.zadd("t:share", {"m:3": 10})
    assert run(store, "unstart_call", keys, turn=3, check_at=99, member="m:3", item="call") == 0
    assert store.r.llen("t:calls") == 1 and store.r.zcard("t:share") == 0


def test_recover_callers_puts_a_callers_fresh_and_taken_calls_back(store):
    store.r.rpush("t:taken", "a", "b")
    store.r.rpush("t:fresh", "c")
    store.r.sadd("t:callers", "x", "y")
    assert run(store, "recover_callers", ["t:taken", "t:calls", "t:callers", "t:fresh"], caller="x") == 3
    assert sorted(store.r.lrange("t:calls", 0, -1)) == [b"a", b"b", b"c"]
    assert store.r.smembers("t:callers") == {b"y"} and not store.r.exists("t:taken", "t:fresh")


def test_claim_due_claims_each_due_deadline_once_and_says_the_next(store):
    store.r.zadd("t:deadlines", {"m:1": 10, "m:2": 20, "m:3": 30})
    assert run(store, "claim_due", ["t:deadlines"], now=20, limit=1) == [[b"m:1"], b"20"]
    assert run(store, "claim_due", ["t:deadlines"], now=20, limit=5) == [[b"m:2"], b"30"]
    assert run(store, "claim_due", ["t:deadlines"], now=40, limit=5) == [[b"m:3"], None]


def test_the_slots_step_names_a_matchs_waiting_hash_as_waits_does():
    from core.store.slots import MATCH_WAITING_AROUND
    from core.store.waits import waiting_key

    assert waiting_key("\0").split("\0") == MATCH_WAITING_AROUND


def test_add_counts_changes_what_the_commands_one_by_one_would_in_their_order(store):
    from core.store.counts import Counts

    store.r.hset("c:a", mapping={"n": 2, "x": "0.5"})
    store.r.rpush("c:l", "old1", "old2")
    counts = Counts()
    counts.add("c:a", "n", 3)
    counts.add("c:b", "won", True)
    counts.push("c:l", "e1", keep=3)
    counts.add("c:a", "x", 0.1)
    counts.set("c:b", "streak", 0)  # a set between additions of its field: in that order
    counts.add("c:b", "streak", 1)
    counts.add("c:b", "y", -2.25)
    counts.push("c:l", "e2", keep=3)
    counts.add("c:a", "n", 0)
    counts.set("c:a", "streak", 4)
    counts.add("c:b", "zero", 0)
    pipe = store.r.pipeline()
    counts.queue(pipe, store.script(source("add_counts")))
    assert pipe.execute() == [11]
    store.r.hset("d:a", mapping={"n": 2, "x": "0.5"})  # the same, a command each
    store.r.rpush("d:l", "old1", "old2")
    store.r.hincrby("d:a", "n", 3)
    store.r.hincrby("d:b", "won", 1)
    store.r.lpush("d:l", "e1")
    store.r.ltrim("d:l", 0, 2)
    store.r.hincrbyfloat("d:a", "x", 0.1)
    store.r.hset("d:b", "streak", 0)
    store.r.hincrby("d:b", "streak", 1)
    store.r.hincrbyfloat("d:b", "y", -2.25)
    store.r.lpush("d:l", "e2")
    store.r.ltrim("d:l", 0, 2)
    store.r.hincrby("d:a", "n", 0)
    store.r.hset("d:a", "streak", 4)
    store.r.hincrby("d:b", "zero", 0)
    assert store.r.hgetall("c:a") == store.r.hgetall("d:a") == {b"n": b"5", b"x": b"0.6", b"streak": b"4"}
    assert store.r.hgetall("c:b") == store.r.hgetall("d:b") == {b"won": b"1", b"streak": b"1", b"y": b"-2.25",
                                                                b"zero": b"0"}
    assert store.r.lrange("c:l", 0, -1) == store.r.lrange("d:l", 0, -1) == [b"e2", b"e1", b"old1"]
    empty = store.r.pipeline()
    Counts().queue(empty, store.script(source("add_counts")))
    assert empty.execute() == []
