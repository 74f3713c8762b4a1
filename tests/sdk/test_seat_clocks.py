"""A seat on a clock of its own (a person's, docs/api.md §6): the referee asks it with its own
deadline, the log charges it, and the export replays every decision as it was sent."""

from __future__ import annotations

import pytest

from sdk import export
from sdk.clock import check_seat_clocks, seat_times
from sdk.referee import MatchReferee
from sdk.replay import Replay

GAME = "duck-soup"
PERSON = {"move_timeout_ms": 60_000, "time_bank_ms": 300_000}


def test_each_seat_is_asked_on_its_own_clock_and_replays_the_same():
    clocks = [None, PERSON]
    referee = MatchReferee(GAME, 2, 4, {"deal_only": True}, 3, 2000, 10000, clocks)
    log, sent = [], []
    while not referee.is_over and len(log) < 8:
        decision = referee.decision("m_x")
        sent.append(decision)
        ms = 70_000 if decision["seat"] == 1 else 5
        entry = referee.answered(decision["legal_actions"][0], ms)
        referee.record(entry)
        log.append(entry)
    by_seat = {d["seat"]: d for d in sent}
    assert by_seat[0]["deadline_ms"] == 12_000 and by_seat[0]["clock"] == {"move_ms": 2000, "bank_ms": 10_000}
    assert sent[[d["seat"] for d in sent].index(1)]["deadline_ms"] == 360_000
    assert not any(e.get("fault") for e in log)  # 70 s is within a person's move and bank
    times = seat_times(log, 2, 2000, 10000, clocks)
    person_moves = sum(1 for e in log if e["seat"] == 1)
    assert times[1]["bank_ms"] == 300_000 - 10_000 * person_moves and times[0]["bank_ms"] == 10_000
    doc = export.document("m_x", GAME, ["a", "b"], 4, {"deal_only": True}, log, None, 2000, 10000, 3,
                          seat_clocks=clocks)
    assert doc["seat_clocks"] == clocks
    assert list(Replay(doc).decisions()) == sent
    without = export.document("m_x", GAME, ["a", "b"], 4, {"deal_only": True}, log, None, 2000, 10000, 3)
    assert "seat_clocks" not in without


@pytest.mark.parametrize("bad", [[PERSON], [None, {"move_timeout_ms": 0, "time_bank_ms": 0}], "x",
                                 [None, {"move_timeout_ms": 1000}]])
def test_a_malformed_seat_clock_is_refused(bad):
    with pytest.raises(ValueError):
        check_seat_clocks(bad, 2)
    doc = export.document("m_x", GAME, ["a", "b"], 4, {}, [], None, 2000, 10000, 3)
    doc["seat_clocks"] = bad
    with pytest.raises(export.ExportError):
        export.check(doc)
