"""A remote bot's answer to a published decision, judged into the log entry that settles its turn.

    entry = answered(store, decision, ms, action=..., failure=None)
    play_on.settle(store, match_id, entry)   # appended at most once; the next turn published,
                                            # or the match's next run enqueued (core/play_on.py)

The API judges a polling bot's answer with it, a dispatcher's caller a
webhook's, a dispatcher's clock a deadline that passed (`timed_out`): the
same judgement as the referee's everywhere (sdk/referee.py) — a listed action
is played, anything else is a fault and the first legal action is played —
made from the decision the bot was sent, the state rebuilt from the log only
for an illegal answer's reason.
"""

from __future__ import annotations

from typing import Any

from sdk.faults import decision_timeout
from sdk.referee import judge, judged_entry, listed_action


def answered(store, decision: dict, ms: int | None, action: Any = None, failure: str | None = None) -> dict:
    """The entry for `decision`'s turn: the bot's `action` judged, or its `failure` (a fault
    text); past the deadline, or a timeout failure, a timeout charged the whole deadline."""
    legal = decision["legal_actions"]

    def judge_answer():
        listed = listed_action(legal, action)
        if listed is not None:
            return listed, None
        state = store.replay(decision["match_id"], upto=decision["turn"])  # for the engine's reason
        return judge(state, state.legal_actions(), action)

    clock = decision.get("clock")
    return judged_entry(decision["turn"], decision["seat"], legal, int(decision["deadline_ms"]), ms, action,
                        failure, judge_answer, bank_ms=None if not clock else int(clock["bank_ms"]))


def timed_out(decision: dict) -> dict:
    """The entry of a turn whose deadline passed with no answer."""
    return answered(None, decision, None, failure=decision_timeout(decision))
