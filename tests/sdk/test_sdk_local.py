"""`play_local` referees as the platform does: hooks in order, deadlines and bank, fault kinds, forfeits."""

from __future__ import annotations

import re
import threading
import time

import pytest

from sdk import Bot
from sdk.cards import RANKS_ACE_HIGH, Card, parse_cards, rank_order
from sdk.faults import FORFEITED, fault_kind
from sdk.local import play_local
from sdk.referee import MatchReferee
from tests.sdk.conftest import Recorder


def test_on_match_start_comes_once_per_seat_before_its_first_act_and_over_comes_last():
    a, b = Recorder(), Recorder()
    match = play_local("double-carre", [a, b], seed=3)
    for seat, bot in enumerate((a, b)):
        assert bot.calls[0] == ("start", "local", seat)
        assert [c[0] for c in bot.calls[1:-1]] == ["act"] * (len(bot.calls) - 2)
        assert bot.calls[-1] == ("over", "local", match.result)


def test_sdk_cards_are_the_engines_cards():
    import games.cards

    assert Card is games.cards.Card
    hand = parse_cards(["10H", "AS"])
    assert hand == ["10H", "AS"] and hand[0].rank == "10" and hand[1].suit == "S"
    strength = rank_order(RANKS_ACE_HIGH)
    assert max(hand, key=lambda c: strength[c.rank]) == "AS"


# -- the platform's rules at home -------------------------------------------------

RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
#: a chosen deal: seat 0 holds AS 2S 4S … KH and leads; seat 1 holds 3S 5S … QH
ONE_DEAL = {"deck": [rank + suit for suit in "SHDC" for rank in RANKS], "deal_only": True}


class Lowest(Bot):
    def act(self, view, legal_actions):
        return legal_actions[0]


class Sleepy(Bot):
    """Sleeps past its move time at every decision, noting the bank each decision showed."""

    def __init__(self, sleep_s: float = 0.15) -> None:
        self.sleep_s = sleep_s
        self.banks: list[int] = []

    def decide(self, decision):
        self.banks.append(decision["clock"]["bank_ms"])
        time.sleep(self.sleep_s)
        return decision["legal_actions"][0]


class Stubborn(Bot):
    """Spins and swallows every Exception: only a deadline that is not one gets it out.

    Bounded (10 s) so a broken watchdog fails the test instead of hanging the suite.
    """

    def act(self, view, legal_actions):
        end = time.monotonic() + 10.0
        while time.monotonic() < end:
            try:
                sum(range(1000))
            except Exception:
                pass
        return legal_actions[0]


class Raises(Bot):
    def act(self, view, legal_actions):
        return view["no_such_key"]


class Answers(Bot):
    def __init__(self, answer) -> None:
        self.answer = answer

    def act(self, view, legal_actions):
        return self.answer


class Edits(Bot):
    """Writes another card into the action it was given, then returns it."""

    def act(self, view, legal_actions):
        action = legal_actions[0]
        action["play"] = "2C"
        return action


def kinds(match, seat: int) -> list[str]:
    return [fault_kind(text) for text in match.faults[seat]]


def test_the_log_is_the_platforms_and_rebuilds_the_same_match():
    match = play_local("duck-soup", [Lowest(), Answers({"play": "2C"})], options=ONE_DEAL)
    assert [e["turn"] for e in match.log] == list(range(len(match.log)))
    for entry in match.log:
        assert set(entry) <= {"turn", "seat", "action", "fault", "ms"}
        assert ("ms" in entry) == (entry.get("fault") != FORFEITED)
        assert "ms" not in entry or (type(entry["ms"]) is int and entry["ms"] >= 0)
    assert kinds(match, 1) == ["illegal"] * 3 and match.forfeits == [1]
    assert match.faults[1] == [e["fault"] for e in match.log if e["seat"] == 1 and e.get("fault") != FORFEITED]
    again = MatchReferee("duck-soup", 2, 0, ONE_DEAL).replay(match.log)
    assert again.is_over and again.outcome() == match.result
    assert match.result["ranks"] == [1, 2] and match.result["faults"] == [0, 3]


def test_a_bot_sleeping_past_its_move_time_draws_its_bank_then_times_out_and_forfeits():
    sleepy = Sleepy(0.15)
    match = play_local("duck-soup", [sleepy, Lowest()], options=ONE_DEAL, move_timeout_ms=100,
                       time_bank_ms=200)
    assert sleepy.banks[0] == 200 and sleepy.banks[-1] == 0
    pairs = zip(sleepy.banks, sleepy.banks[1:], strict=False)
    assert all(a > b or a == b == 0 for a, b in pairs)  # it shrinks at every decision, down to empty
    mine = [e for e in match.log if e["seat"] == 0]
    assert mine[0]["ms"] >= 150 and "fault" not in mine[0]  # an overrun within the bank is no fault
    timeouts = [e for e in mine if e.get("fault", "").startswith("timeout")]
    assert timeouts and all(e["ms"] <= 300 for e in timeouts)  # charged the deadline, no more
    assert kinds(match, 0) == ["timeout"] * 3 and match.forfeits == [0] and match.result["ranks"] == [2, 1]
    # each timeout says the move time and what was left of the bank apart
    assert all(re.search(r"(within|was) 100 ms move \+ [\d,]+ ms bank$", e["fault"])
               for e in timeouts), timeouts
    assert [e["fault"] for e in mine[len(sleepy.banks):]] == [FORFEITED] * (len(mine) - len(sleepy.banks))


def test_a_hanging_bot_is_cut_off_at_its_deadline_even_if_it_swallows_exceptions():
    match = play_local("duck-soup", [Stubborn(), Lowest()], options=ONE_DEAL, move_timeout_ms=100,
                       time_bank_ms=0, max_faults=2)
    assert match.faults[0] == ["timeout: no answer within 100 ms move + 0 ms bank"] * 2 and match.forfeits == [0]


def in_a_thread(**kwargs):
    """`play_local(**kwargs)` run off the main thread, where no signal can reach the bot."""
    out = {}
    worker = threading.Thread(target=lambda: out.update(match=play_local(**kwargs)))
    worker.start()
    worker.join(timeout=60)
    return out["match"]


def test_off_the_main_thread_the_referee_stops_waiting_at_the_deadline():
    match = in_a_thread(game="duck-soup", bots=[Sleepy(1.0), Lowest()], options=ONE_DEAL,
                        move_timeout_ms=100, time_bank_ms=0)
    assert match.faults[0] == ["timeout: no answer within 100 ms move + 0 ms bank"] * 3 and match.forfeits == [0]
    assert all(e["ms"] == 100 for e in match.log if e["seat"] == 0 and "ms" in e)


def test_off_the_main_thread_an_exception_is_still_a_bot_error_with_its_traceback():
    match = in_a_thread(game="duck-soup", bots=[Raises(), Lowest()], options=ONE_DEAL)
    assert match.faults[0] == ["bot_error: KeyError: 'no_such_key'"] * 3
    assert 'return view["no_such_key"]' in match.details[0].traceback
    assert "sdk/local.py" not in match.details[0].traceback


def test_an_exception_is_a_bot_error_with_the_bots_traceback():
    match = play_local("duck-soup", [Raises(), Lowest()], options=ONE_DEAL)
    assert match.faults[0] == ["bot_error: KeyError: 'no_such_key'"] * 3
    first = match.details[0]
    assert (first.turn, first.seat, first.kind) == (0, 0, "bot_error")
    assert 'return view["no_such_key"]' in first.traceback and __file__ in first.traceback
    assert "sdk/local.py" not in first.traceback  # from the bot's side of the call


@pytest.mark.parametrize("answer, kind", [
    ({"play": "2C"}, "illegal"), ({"play": "AS", "note": 1}, "illegal"), ("AS", "bad_answer"),
    (None, "bad_answer"), ({"play": {"AS"}}, "bad_answer"),
])
def test_a_wrong_answer_is_a_fault_of_its_kind(answer, kind):
    match = play_local("duck-soup", [Answers(answer), Lowest()], options=ONE_DEAL)
    assert kinds(match, 0) == [kind] * 3 and all(f.traceback is None for f in match.details)


def test_a_bot_editing_the_action_it_was_given_cannot_edit_the_engines():
    match = play_local("duck-soup", [Edits(), Lowest()], options=ONE_DEAL, max_faults=10)
    assert kinds(match, 0)[0] == "illegal"
    assert all(e["action"]["play"] != "2C" for e in match.log if e["seat"] == 0)
    assert MatchReferee("duck-soup", 2, 0, ONE_DEAL).replay(match.log).is_over


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no message for you")


class RaisesUnprintable(Bot):
    def act(self, view, legal_actions):
        raise Unprintable()


def test_an_exception_whose_message_raises_is_still_only_a_fault():
    match = play_local("duck-soup", [RaisesUnprintable(), Lowest()], options=ONE_DEAL)
    assert match.faults[0] == ["bot_error: Unprintable: (its message cannot be shown)"] * 3
    assert "Unprintable" in match.details[0].traceback
