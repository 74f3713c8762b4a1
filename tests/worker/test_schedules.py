"""worker/schedules.py: who plays whom in a round-robin, and with which seeds."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from games.rng import derive_seed
from worker.schedules import MAX_TABLES, balanced_sample, round_robin, table_stats


def names(n: int) -> list[str]:
    return [f"b{i:02d}" for i in range(n)]


def wanted_tables(n: int, seats: int, count: int) -> int:
    """What balanced_sample's docstring promises: the largest t ≤ count with t·seats divisible by n."""
    return max(t for t in range(1, count + 1) if (t * seats) % n == 0 or t == 1)


# -- two seats ---------------------------------------------------------------


def test_two_seats_duplicate_plays_every_pair_in_both_seats_on_each_deal():
    bots = names(5)
    s = round_robin(bots, seats=2, deals=3, duplicate=True, seed=7)
    assert s.description == "all tables"
    assert s.tables == list(itertools.combinations(bots, 2))
    assert len(s.matches) == 10 * 3 * 2
    by_table_deal: dict[tuple[int, int], list] = {}
    for m in s.matches:
        by_table_deal.setdefault((m.table, m.deal), []).append(m)
    assert len(by_table_deal) == 10 * 3
    for (t, deal), group in by_table_deal.items():
        a, b = s.tables[t]
        # the same deal (seed) played once per rotation: each bot holds each hand
        assert sorted(m.rotation for m in group) == [0, 1]
        assert {m.bots for m in group} == {(a, b), (b, a)}
        assert {m.seed for m in group} == {derive_seed(7, t, deal)}
    # each pair meets exactly deals × seats times, and never meets itself
    meetings = Counter(frozenset(m.bots) for m in s.matches)
    assert set(meetings) == {frozenset(p) for p in itertools.combinations(bots, 2)}
    assert set(meetings.values()) == {6}


def test_deals_are_distinct_seeds_per_table_and_deal():
    s = round_robin(names(4), seats=2, deals=5, duplicate=True, seed=1)
    seeds = {(m.table, m.deal): m.seed for m in s.matches}
    assert len(seeds) == 6 * 5
    assert len(set(seeds.values())) == 6 * 5
    assert all(0 <= seed < 2**63 for seed in seeds.values())


def test_without_duplicate_each_deal_is_played_once_and_the_rotation_advances():
    bots = names(4)
    s = round_robin(bots, seats=2, deals=4, duplicate=False, seed=3)
    assert len(s.matches) == 6 * 4
    for m in s.matches:
        table = s.tables[m.table]
        assert m.rotation == m.deal % 2
        assert m.bots == (table if m.rotation == 0 else table[::-1])
        assert m.seed == derive_seed(3, m.table, m.deal)
    # over an even number of deals nobody keeps the first seat at a table
    for t, table in enumerate(s.tables):
        firsts = Counter(m.bots[0] for m in s.matches if m.table == t)
        assert firsts == {table[0]: 2, table[1]: 2}


def test_two_seats_play_every_pair_even_past_max_tables():
    bots = names(30)  # 435 pairs > MAX_TABLES: pairs are never sampled
    s = round_robin(bots, seats=2, deals=1, duplicate=False, seed=0)
    assert math.comb(30, 2) > MAX_TABLES
    assert s.description == "all tables"
    assert len(s.tables) == 435
    assert s.stats == {"tables": 435, "tables_per_bot": [29, 29], "pair_meetings": [1, 1]}


# -- three seats and more ------------------------------------------------------


def test_three_seats_play_every_three_subset_with_every_rotation():
    bots = names(6)
    s = round_robin(bots, seats=3, deals=2, duplicate=True, seed=11)
    assert s.description == "all tables"
    assert sorted(s.tables) == sorted(itertools.combinations(bots, 3))
    assert len(s.matches) == 20 * 2 * 3
    for t, table in enumerate(s.tables):
        for deal in range(2):
            group = [m for m in s.matches if m.table == t and m.deal == deal]
            assert [m.rotation for m in group] == [0, 1, 2]
            assert len({m.seed for m in group}) == 1
            # every bot sits in every seat once: it holds every hand of the deal
            for seat in range(3):
                assert sorted(m.bots[seat] for m in group) == sorted(table)
    assert s.stats == {"tables": 20, "tables_per_bot": [10, 10], "pair_meetings": [4, 4]}


def test_three_seats_without_duplicate_rotate_with_the_deal():
    s = round_robin(names(4), seats=3, deals=5, duplicate=False, seed=2)
    assert len(s.matches) == 4 * 5
    assert [m.rotation for m in s.matches if m.table == 0] == [0, 1, 2, 0, 1]
    first = s.matches[1]
    table = s.tables[first.table]
    assert first.bots == (table[1], table[2], table[0])


def test_all_subsets_up_to_max_tables_and_a_sample_just_above():
    bots = names(7)  # C(7, 3) = 35
    at_limit = round_robin(bots, seats=3, deals=1, duplicate=False, seed=5, max_tables=35)
    assert at_limit.description == "all tables"
    assert len(at_limit.tables) == 35
    above = round_robin(bots, seats=3, deals=1, duplicate=False, seed=5, max_tables=34)
    assert above.description.startswith("balanced sample of ")
    assert len(above.tables) <= 34
    assert len(set(map(frozenset, above.tables))) == len(above.tables)


def test_balanced_sample_for_12_bots_at_4_seats_and_30_tables():
    bots = names(12)
    s = round_robin(bots, seats=4, deals=1, duplicate=True, seed=42, max_tables=30)
    assert len(s.tables) == 30 == s.stats["tables"]
    assert len(s.matches) == 30 * 4
    # distinct tables of 4 distinct entrants
    assert all(len(set(t)) == 4 and set(t) <= set(bots) for t in s.tables)
    assert len(set(map(frozenset, s.tables))) == 30
    # the stats are what the tables really are, and the description says them
    assert s.stats == table_stats(bots, s.tables)
    played = Counter(b for t in s.tables for b in t)
    assert set(played.values()) == {10}  # 30 × 4 / 12: everyone exactly equally often
    assert s.stats["tables_per_bot"] == [10, 10]
    low, high = s.stats["pair_meetings"]
    assert low >= 1 and high - low <= 3  # every pair meets; 180 meetings over 66 pairs ≈ 2.7 each
    assert s.description == (f"balanced sample of 30 tables: every pair meets {low}–{high} times, "
                             "every bot plays 10–10 tables")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8))
def test_balanced_sample_plays_every_bot_within_one_table(seed):
    for n, seats, count in [(12, 4, 30), (10, 3, 50), (16, 4, 100), (64, 4, 200), (12, 4, 200)]:
        tables = balanced_sample(names(n), seats, count, seed)
        stats = table_stats(names(n), tables)
        low, high = stats["tables_per_bot"]
        assert high - low <= 1, (n, seats, count, stats)
        assert len(tables) <= count
        assert len(set(map(frozenset, tables))) == len(tables)


@pytest.mark.slow
@pytest.mark.parametrize("n, seats, count", [(12, 4, MAX_TABLES), (10, 3, 50), (16, 4, 100)])
def test_balanced_sample_reaches_the_number_of_tables_it_promises(n, seats, count):
    for seed in range(8):
        tables = balanced_sample(names(n), seats, count, seed)
        wanted = wanted_tables(n, seats, count)
        assert len(tables) == wanted, (seed, len(tables), wanted)
        assert table_stats(names(n), tables)["tables_per_bot"] == [wanted * seats // n] * 2


def test_balanced_sample_pair_meetings_differ_by_at_most_two():
    for seed in range(8):
        stats = table_stats(names(12), balanced_sample(names(12), 4, 30, seed))
        low, high = stats["pair_meetings"]
        assert high - low <= 2, (seed, stats)


def test_table_stats_counts_tables_per_bot_and_pair_meetings():
    bots = ["a", "b", "c", "d"]
    stats = table_stats(bots, [("a", "b", "c"), ("a", "b", "d")])
    assert stats == {"tables": 2, "tables_per_bot": [1, 2], "pair_meetings": [0, 2]}


# -- determinism -----------------------------------------------------------------


@pytest.mark.parametrize("seats, max_tables", [(2, MAX_TABLES), (3, MAX_TABLES), (4, 30)])
def test_the_same_seed_gives_the_same_schedule(seats, max_tables):
    bots = names(12)
    one = round_robin(bots, seats, deals=2, duplicate=True, seed=99, max_tables=max_tables)
    two = round_robin(list(bots), seats, deals=2, duplicate=True, seed=99, max_tables=max_tables)
    assert one == two
    other = round_robin(bots, seats, deals=2, duplicate=True, seed=100, max_tables=max_tables)
    assert [m.seed for m in other.matches] != [m.seed for m in one.matches]


def test_another_seed_gives_another_balanced_sample():
    bots = names(12)
    samples = {tuple(balanced_sample(bots, 4, 30, seed)) for seed in range(4)}
    assert len(samples) > 1


# -- errors ------------------------------------------------------------------------


@pytest.mark.parametrize("bots, seats, deals, message", [
    (["a"], 2, 1, "needs at least 2 bots, not 1"),
    ([], 2, 1, "needs at least 2 bots, not 0"),
    (["a", "b", "c"], 4, 1, "needs at least 4 bots, not 3"),
    (["a", "b"], 1, 1, "at 1 seats needs"),
    (["a", "b", "a"], 2, 1, "only once"),
    (["a", "b"], 2, 0, "deals must be at least 1"),
    (["a", "b"], 2, -3, "deals must be at least 1"),
])
def test_bad_requests_are_refused(bots, seats, deals, message):
    with pytest.raises(ValueError, match=message):
        round_robin(bots, seats, deals, duplicate=True, seed=0)


@pytest.mark.parametrize("bots, seats", [(2, 2), (7, 2), (30, 2), (5, 3), (12, 4), (13, 3), (20, 4), (64, 4),
                                         (9, 5), (40, 6)])
@pytest.mark.parametrize("duplicate", [True, False])
def test_the_apis_match_count_is_the_schedules_length(bots, seats, duplicate):
    """The API refuses a tournament over its cap from `match_count` before anything is stored;
    the worker builds the schedule: the two must agree (sampled tables included)."""
    from core.schedule_size import match_count

    schedule = round_robin(names(bots), seats, deals=3, duplicate=duplicate, seed=9)
    assert match_count(bots, seats, 3, duplicate) == len(schedule.matches)


def test_twins_are_each_deals_rotations_in_a_seeded_random_order():
    from worker.schedules import twin_groups

    schedule = round_robin(names(4), 2, 3, True, seed=11)
    groups = twin_groups(schedule, 11)
    assert len(groups) == 6 * 3 and sorted(i for g in groups for i in g) == list(range(len(schedule.matches)))
    for group in groups:
        planned = [schedule.matches[i] for i in group]
        assert len({(m.table, m.deal) for m in planned}) == 1 and len({m.rotation for m in planned}) == 2
    assert twin_groups(schedule, 11) == groups  # a retried expansion finds the same order
    firsts = {schedule.matches[g[0]].rotation for g in groups}
    assert firsts == {0, 1}  # not always the same rotation first
    assert twin_groups(round_robin(names(4), 2, 3, False, seed=11), 11) == []  # no twins without duplicate


# -- the gauntlet (docs/api.md §5 "Scheduling") ----------------------------------------------------

def test_a_gauntlet_seats_its_candidate_at_every_table_and_each_other_bot_in_turn():
    from worker.schedules import gauntlet

    bots = ["c", "a", "b", "d", "e"]
    two = gauntlet(bots, "c", seats=2, deals=3, duplicate=True, seed=4)
    assert two.tables == [("c", "a"), ("c", "b"), ("c", "d"), ("c", "e")]
    assert len(two.matches) == 4 * 3 * 2 and all("c" in m.bots for m in two.matches)
    assert two.description == "gauntlet: c at each of 4 tables"
    three = gauntlet(bots, "c", seats=3, deals=1, duplicate=True, seed=4)
    assert all(t[0] == "c" and len(set(t)) == 3 for t in three.tables)
    assert len(three.tables) == len(set(three.tables)) == 4
    for other in "abde":  # each fills two seats' worth of tables: as often as any other
        assert sum(other in t for t in three.tables) == 2
    for table in range(len(three.tables)):  # every rotation: the candidate holds each hand
        seats_of_c = sorted(m.bots.index("c") for m in three.matches if m.table == table)
        assert seats_of_c == [0, 1, 2]
    assert gauntlet(["c", "a", "b"], "c", seats=3, deals=1, duplicate=False, seed=1).tables == [("c", "a", "b")]


def test_a_gauntlets_size_is_counted_as_it_is_built():
    from core.schedule_size import gauntlet_match_count
    from worker.schedules import gauntlet

    for n, seats, deals, duplicate in [(2, 2, 1, True), (5, 2, 3, True), (5, 3, 2, False), (4, 4, 1, True),
                                       (9, 4, 2, True)]:
        bots = [f"b{i}" for i in range(n)]
        built = gauntlet(bots, "b0", seats, deals, duplicate, seed=1)
        assert len(built.matches) == gauntlet_match_count(n, seats, deals, duplicate)


def test_a_gauntlet_refuses_a_candidate_that_is_not_an_entrant():
    from worker.schedules import gauntlet

    with pytest.raises(ValueError, match="not an entrant"):
        gauntlet(["a", "b"], "z", seats=2, deals=1, duplicate=True, seed=1)
