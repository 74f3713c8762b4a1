"""sdk/referee.py: judging, faults, time, forfeits and scoring, on chosen deals."""

from __future__ import annotations

import math
import statistics

import pytest

import games
from games.seats import rotate, rotations
from sdk.clock import Clock
from sdk.faults import FAULT_KINDS, FORFEITED, MAX_DETAIL, SeatTally, decision_timeout, fault, fault_kind
from sdk.referee import MatchReferee, judge, listed_action, offer, outcome
from sdk.standings import mean_ci95, seat_records, standings_from_tallies, tally_increments

RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
#: a chosen deal: the deck in suit order; seat 0 holds AS 2S 4S … KH, seat 1 3S 5S … QH
SORTED_DECK = [rank + suit for suit in "SHDC" for rank in RANKS]
ONE_DEAL = {"deck": SORTED_DECK, "deal_only": True}


def duck_soup(**kwargs) -> MatchReferee:
    """A duck-soup match on the sorted deck: 52 decisions, 26 a seat, seat 0 first."""
    return MatchReferee("duck-soup", 2, 0, ONE_DEAL, **kwargs)


def first_state():
    return games.get("duck-soup").new(2, 0, ONE_DEAL)


# -- fault texts ---------------------------------------------------------------

def test_a_fault_is_its_kind_and_a_one_line_detail_cut_to_size():
    assert fault("timeout", "no answer\n within   2000 ms") == "timeout: no answer within 2000 ms"
    assert fault("http_error") == "http_error"
    long = fault("bot_error", "x" * 10_000)
    assert long.startswith("bot_error: x") and long.endswith("…")
    assert len(long) == len("bot_error: ") + MAX_DETAIL


def test_an_unknown_fault_kind_is_refused():
    with pytest.raises(ValueError, match="unknown fault kind"):
        fault("oops", "detail")


def test_every_kind_reads_back_from_its_text_and_old_texts_map_to_kinds():
    for kind in FAULT_KINDS:
        assert fault_kind(fault(kind, "a: b: c")) == kind
    assert fault_kind(FORFEITED) == FORFEITED
    assert fault_kind("illegal action: not yours") == "illegal"
    assert fault_kind("error: the bot raised KeyError") == "bot_error"
    assert fault_kind("HTTP 500: boom") == "http_error"
    assert fault_kind("garbage: not JSON") == "bad_answer"


# -- judging an answer ---------------------------------------------------------------

def test_a_listed_object_is_found_by_identity_and_an_equal_copy_by_value():
    legal = first_state().legal_actions()
    assert listed_action(legal, legal[3]) is legal[3]
    assert listed_action(legal, {"play": str(legal[3]["play"])}) is legal[3]


def test_json_types_are_kept_apart():
    legal = games.get("double").new(2, 0, {}).legal_actions()  # [{"bid": 0}, {"bid": 1}]
    assert listed_action(legal, {"bid": 1}) is legal[1]
    for wrong in ({"bid": True}, {"bid": 1.0}, {"bid": "1"}, {"bid": 1, "extra": None}):
        assert listed_action(legal, wrong) is None


def test_a_list_of_cards_matches_in_any_order():
    legal = games.get("double-carre").new(2, 1, {}).legal_actions()
    pair = legal[0]["take"]
    assert listed_action(legal, {"take": [str(pair[1]), str(pair[0])]}) is legal[0]


class Hostile:
    """An answer whose every comparison raises."""

    def __eq__(self, other):
        raise RuntimeError("no")

    def __hash__(self):
        raise RuntimeError("no")


def deep(n: int) -> list:
    out: list = []
    for _ in range(n):
        out = [out]
    return out


GARBAGE = [None, "play", 7, 2**4000, float("nan"), [], {1: "x"}, {"play": {1, 2}}, Hostile(),
           {"play": Hostile()}, deep(100_000), {"play": deep(100_000)}, b"\xff", {"play": b"AS"}]


def self_containing() -> dict:
    loop: dict = {}
    loop["play"] = loop
    return loop


@pytest.mark.parametrize("answer", [*GARBAGE, self_containing()], ids=lambda a: type(a).__name__)
def test_garbage_never_raises_and_is_a_fault_of_the_seat(answer):
    state = first_state()
    legal = state.legal_actions()
    before = state.view(0)
    assert listed_action(legal, answer) is None
    action, text = judge(state, legal, answer)
    assert action is legal[0]
    assert fault_kind(text) == "bad_answer"
    assert state.view(0) == before  # nothing applied


def test_an_unlisted_object_is_illegal_with_the_engines_reason_and_changes_nothing():
    state = first_state()
    legal = state.legal_actions()
    action, text = judge(state, legal, {"play": "2C"})
    with pytest.raises(games.IllegalAction) as refused:
        first_state().apply({"play": "2C"})
    assert action is legal[0]
    assert text == fault("illegal", str(refused.value))
    assert "not in your hand" in text and state.view(0) == first_state().view(0)
    for other in ({}, {"play": "AS", "also": 1}, {"pass": True}):
        assert fault_kind(judge(state, legal, other)[1]) == "illegal"


def test_an_offered_copy_stands_for_its_original_and_edits_never_reach_the_engine():
    state = first_state()
    legal = state.legal_actions()
    offered = offer(legal)
    assert offered == legal and all(c is not o for c, o in zip(offered, legal, strict=True))
    assert listed_action(legal, offered[2], offered) is legal[2]
    offered[2]["play"] = "2C"  # a bot edits the action it then returns
    assert listed_action(legal, offered[2], offered) is None
    assert legal[2]["play"] != "2C"
    offered[3]["play"] = str(legal[5]["play"])  # edited into another listed action: judged as sent
    assert listed_action(legal, offered[3], offered) is legal[5]
    nested = [{"discard": ["2C", "3C"], "then": {"play": ["4C"]}}]
    copy = offer(nested)[0]
    copy["discard"].append("5C")
    copy["then"]["play"][0] = "AS"  # edits deep inside a copy reach no original
    assert nested == [{"discard": ["2C", "3C"], "then": {"play": ["4C"]}}]


# -- time ---------------------------------------------------------------------

def test_a_clock_draws_only_the_overrun_from_its_bank():
    clock = Clock(move_ms=100, bank_ms=200)
    assert clock.deadline_ms == 300 and clock.last_latency_ms is None
    clock.charge(80)
    assert (clock.bank_ms, clock.last_latency_ms, clock.deadline_ms) == (200, 80, 300)
    clock.charge(150)
    assert (clock.bank_ms, clock.deadline_ms) == (150, 250)
    clock.charge(250)
    assert clock.bank_ms == 0 and clock.deadline_ms == 100


def test_a_decision_carries_its_clock_and_the_last_charged_latency():
    referee = duck_soup(move_ms=100, bank_ms=200)
    first = referee.decision("m_1")
    assert first["deadline_ms"] == 300 and first["clock"] == {"move_ms": 100, "bank_ms": 200}
    assert first["last_latency_ms"] is None and first["protocol"] == 1 and first["turn"] == 0
    assert first["view"] == referee.state.view(0) and first["legal_actions"] == referee.state.legal_actions()
    referee.record(referee.answered(first["legal_actions"][0], 160))
    referee.record(referee.answered(referee.decision("m_1")["legal_actions"][0], 5))  # seat 1
    again = referee.decision("m_1")
    assert again["seat"] == 0 and again["last_latency_ms"] == 160
    assert again["clock"] == {"move_ms": 100, "bank_ms": 140} and again["deadline_ms"] == 240


def test_an_answer_past_the_deadline_is_a_timeout_that_empties_the_bank():
    referee = duck_soup(move_ms=100, bank_ms=200)
    legal = referee.decision("m")["legal_actions"]
    entry = referee.answered(legal[5], 301)
    assert entry["action"] == referee.state.legal_actions()[0]  # the answer is not played
    assert fault_kind(entry["fault"]) == "timeout" and entry["ms"] == 300  # charged the deadline
    referee.record(entry)
    assert referee.clocks[0].bank_ms == 0 and referee.clocks[0].last_latency_ms == 300


def test_a_timeout_reported_by_the_caller_is_charged_the_whole_deadline():
    referee = duck_soup(move_ms=100, bank_ms=200)
    referee.decision("m")
    entry = referee.answered(None, 250, fault("timeout", "no answer within 300 ms"))
    assert entry["fault"] == "timeout: no answer within 300 ms" and entry["ms"] == 300


def test_an_answer_on_the_deadline_is_in_time():
    referee = duck_soup(move_ms=100, bank_ms=200)
    legal = referee.decision("m")["legal_actions"]
    entry = referee.answered(legal[1], 300)
    assert "fault" not in entry and entry["ms"] == 300
    referee.record(entry)
    assert referee.clocks[0].bank_ms == 0


# -- faults and forfeits ------------------------------------------------------------

def test_every_fault_kind_is_counted_and_max_faults_forfeit_the_seat():
    referee = duck_soup(max_faults=len(FAULT_KINDS) + 1)
    for kind in FAULT_KINDS:
        referee.decision("m")
        entry = referee.answered(None, 5, fault(kind, "detail"))
        assert entry["fault"].startswith(kind) and entry["ms"] == (5 if kind != "timeout" else 12000)
        referee.record(entry)
        referee.record(referee.answered(referee.decision("m")["legal_actions"][0], 1))  # seat 1, clean
    assert referee.tally.faults == [len(FAULT_KINDS), 0]
    assert referee.tally.faults_by_kind(0) == dict.fromkeys(FAULT_KINDS, 1)
    assert referee.tally.faults_by_kind() == dict.fromkeys(FAULT_KINDS, 1)
    assert not referee.forfeited()
    referee.decision("m")
    referee.record(referee.answered("garbage", 1))
    assert referee.tally.forfeited == {0}
    referee.record(referee.answered(referee.decision("m")["legal_actions"][0], 1))
    assert referee.forfeited()
    entry = referee.forfeit_entry()
    assert entry == {"turn": referee.turn, "seat": 0, "action": referee.state.legal_actions()[0],
                     "fault": FORFEITED}  # no "ms": nobody was asked
    referee.record(entry)
    assert referee.tally.faults[0] == len(FAULT_KINDS) + 1  # a forfeited turn is no fault


def test_the_tally_counts_from_log_entries_alone():
    tally = SeatTally(3, max_faults=2)
    tally.count({"turn": 0, "seat": 1, "action": {}, "fault": "illegal: no"})
    tally.count({"turn": 1, "seat": 1, "action": {}, "fault": FORFEITED})
    tally.count({"turn": 2, "seat": 2, "action": {}})
    assert tally.faults == [0, 1, 0] and not tally.forfeited
    tally.count({"turn": 3, "seat": 1, "action": {}, "fault": "timeout: late"})
    assert tally.forfeited == {1} and tally.faults_by_kind(1) == {"illegal": 1, "timeout": 1}


def play_with_faults(referee: MatchReferee) -> list[dict]:
    """Seat 0 is slow, then too slow, then errs twice (forfeited); seat 1 answers garbage once."""
    script = {(0, 0): (None, 150, None), (0, 1): (None, 999_999, None),
              (0, 2): (None, 3, fault("bot_error", "KeyError")), (1, 2): ("junk", 2, None),
              (0, 3): (None, 4, fault("bot_error", "again"))}
    log, asked = [], [0, 0]
    while not referee.is_over:
        seat = referee.to_act
        if referee.forfeited():
            entry = referee.forfeit_entry()
        else:
            legal = referee.decision("m")["legal_actions"]
            answer, ms, failure = script.get((seat, asked[seat]), (legal[-1], 7, None))
            asked[seat] += 1
            entry = referee.answered(legal[-1] if answer is None else answer, ms, failure)
        referee.record(entry)
        log.append(entry)
    return log


def test_a_referee_rebuilt_from_the_log_has_the_same_state_tallies_and_clocks():
    live = duck_soup(move_ms=100, bank_ms=200)
    log = play_with_faults(live)
    assert [e["turn"] for e in log] == list(range(len(log)))
    assert live.tally.forfeited == {0} and live.tally.faults == [3, 1]
    assert all("ms" not in e for e in log if e.get("fault") == FORFEITED)
    assert all("ms" in e for e in log if e.get("fault") != FORFEITED)
    again = duck_soup(move_ms=100, bank_ms=200).replay(log)
    assert again.turn == live.turn == len(log) and again.is_over
    assert again.clocks == live.clocks and again.clocks[0].bank_ms == 0
    assert again.tally.faults == live.tally.faults and again.tally.by_kind == live.tally.by_kind
    assert again.outcome() == live.outcome()
    second = next(i for i, e in enumerate(log) if e["seat"] == 0 and i > 0)
    half = duck_soup(move_ms=100, bank_ms=200).replay(log[:second])  # up to a turn: its decision again
    assert half.to_act == 0 and half.decision("m")["last_latency_ms"] == 150
    assert half.decision("m")["clock"]["bank_ms"] == 150 and half.decision("m")["deadline_ms"] == 250


def test_an_entry_out_of_turn_or_seat_is_refused():
    referee = duck_soup()
    action = referee.state.legal_actions()[0]
    with pytest.raises(ValueError):
        referee.record({"turn": 1, "seat": 0, "action": action})
    with pytest.raises(ValueError):
        referee.record({"turn": 0, "seat": 1, "action": action})
    with pytest.raises(games.IllegalAction):
        referee.record({"turn": 0, "seat": 0, "action": {"play": "2C"}})
    assert referee.turn == 0


# -- the end -------------------------------------------------------------------

def test_a_forfeiting_seat_ranks_last_and_the_result_lists_forfeits_and_faults():
    referee = duck_soup()  # every move is legal[0], as in the engine's tie below
    while not referee.is_over:
        if referee.forfeited():
            referee.record(referee.forfeit_entry())
            continue
        legal = referee.decision("m")["legal_actions"]
        referee.record(referee.answered("junk" if referee.to_act == 0 else legal[0], 1))
    assert referee.state.result()["ranks"] == [1, 1]
    result = referee.outcome()
    assert result["ranks"] == [2, 1] and result["forfeits"] == [0] and result["faults"] == [3, 0]


def test_without_forfeits_the_engines_ranks_stand():
    referee = duck_soup()
    while not referee.is_over:
        referee.record(referee.answered(referee.decision("m")["legal_actions"][0], 1))
    result = referee.outcome()
    assert result["ranks"] == [1, 1] and "forfeits" not in result and result["faults"] == [0, 0]


def test_every_seat_forfeiting_keeps_the_engines_order_among_them():
    tally = SeatTally(3, max_faults=1)
    state = games.get("soupe-gertrude").new(3, 5, {})
    while not state.is_over:
        state.apply(state.legal_actions()[0])
    for seat in range(3):
        tally.count({"seat": seat, "fault": "timeout"})
    assert outcome(state, tally)["ranks"] == state.result()["ranks"]


def test_seat_records_and_tallies():
    result = {"scores": [10, "x", 30], "ranks": [2, 3, 1], "forfeits": [1], "faults": [0, 3, 1]}
    a, b, c = seat_records(result, ["a", "b", "c"])
    assert a == {"bot": "a", "won": False, "faults": 0, "points": 0.5, "score": 10.0, "draw": False,
                 "forfeit": False}
    assert b["forfeit"] and b["points"] == 0.0 and b["score"] == 0.0 and b["faults"] == 3
    assert c["won"] and c["points"] == 1.0
    tie = seat_records({"scores": [5, 5], "ranks": [1, 1]}, ["a", "b"])
    assert [r["draw"] for r in tie] == [True, True] and [r["won"] for r in tie] == [False, False]
    assert tally_increments(c) == {"points": 1.0, "matches": 1, "wins": 1, "draws": 0, "faults": 1,
                                   "forfeits": 0, "score": 30.0, "score2": 900.0}


def test_mean_and_ci_from_sums_match_the_sample_statistics():
    sample = [3.0, 7.0, 7.0, 19.0, 24.0, 0.0, 12.5]
    mean, ci = mean_ci95(len(sample), sum(sample), sum(s * s for s in sample))
    assert mean == pytest.approx(statistics.fmean(sample))
    assert ci == pytest.approx(1.96 * statistics.stdev(sample) / math.sqrt(len(sample)))


def test_a_constant_sample_has_a_zero_interval_never_a_negative_variance():
    sample = [0.1] * 10  # sum of squares minus n·mean² rounds to a tiny negative number
    mean, ci = mean_ci95(len(sample), sum(sample), sum(s * s for s in sample))
    assert mean == pytest.approx(0.1)
    assert ci == pytest.approx(0.0, abs=1e-6)


def test_one_value_has_a_mean_but_no_interval_and_none_has_neither():
    assert mean_ci95(1, 4.0, 16.0) == (4.0, None)
    assert mean_ci95(0, 0.0, 0.0) == (None, None)


def test_standings_rank_by_points_ties_share_and_carry_the_tallies():
    tallies = {}
    for scores, bot in (([1, 2, 3], "b"), ([5], "a"), ([0, 0], "c")):
        t = dict.fromkeys(("points", "matches", "wins", "draws", "faults", "forfeits", "score", "score2"), 0.0)
        for s in scores:
            for k, v in tally_increments({"points": 1.0 if bot != "c" else 0.0, "won": True, "faults": 0,
                                          "score": s}).items():
                t[k] += v
        tallies[bot] = t
    tallies["a"]["points"] = 3.0
    rows = standings_from_tallies(tallies)
    assert [(r["rank"], r["bot"]) for r in rows] == [(1, "a"), (1, "b"), (3, "c")]  # a's mean is higher
    assert rows[1]["mean_score"] == 2.0 and rows[1]["ci95"] == pytest.approx(1.96 / math.sqrt(3), abs=1e-4)
    assert rows[0]["ci95"] is None and rows[0]["matches"] == 1 and rows[1]["wins"] == 3


def test_duplicate_play_uses_every_rotation_else_one_advancing_with_the_deal():
    assert rotations(3, True, 7) == [0, 1, 2]
    assert [rotations(3, False, d) for d in range(4)] == [[0], [1], [2], [0]]
    seats = [rotate(["a", "b", "c"], r) for r in rotations(3, True, 0)]
    assert [s.index("a") for s in seats] == [0, 2, 1]  # each entrant holds each seat once


def test_a_timeout_says_the_move_time_and_the_bank_apart():
    decision = {"deadline_ms": 3979, "clock": {"move_ms": 2000, "bank_ms": 1979}}
    assert decision_timeout(decision) == "timeout: no answer within 2,000 ms move + 1,979 ms bank"
    assert decision_timeout(decision, 4100) == ("timeout: answered after 4,100 ms; the deadline was "
                                                "2,000 ms move + 1,979 ms bank")
    # a decision of a match from before the bank has no clock: its whole deadline
    assert decision_timeout({"deadline_ms": 2000}) == "timeout: no answer within 2,000 ms"
