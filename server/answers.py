"""A remote bot's answer to a published decision, judged into the log entry that settles its turn.

    entry = answered(store, decision, ms, action=..., failure=None)
    store.settle(match_id, entry)   # appended at most once; the match's next run enqueued

The API judges a polling bot's answer with it, a dispatcher's caller a
webhook's, a dispatcher's clock a deadline that passed (`timed_out`): the
same judgement as the referee's everywhere (sdk/referee.py) — a listed action
is played, anything else is a fault and the first legal action is played —
made from the decision the bot was sent, the state rebuilt from the log only
for an illegal answer's reason.
"""

from __future__ import annotations

from typing import Any

from sdk.referee import fault, fault_kind, judge, listed_action


def answered(store, decision: dict, ms: int | None, action: Any = None, failure: str | None = None) -> dict:
    """The entry for `decision`'s turn: the bot's `action` judged, or its `failure` (a fault
    text); past the deadline, or a timeout failure, a timeout charged the whole deadline."""
    legal = decision["legal_actions"]
    entry: dict = {"turn": decision["turn"], "seat": decision["seat"]}
    deadline = int(decision["deadline_ms"])
    if (failure is not None and fault_kind(failure) == "timeout") or (ms is not None and ms > deadline):
        failure = failure or fault("timeout", f"answered after {ms} ms; the deadline was {deadline} ms")
        entry.update(action=legal[0], fault=failure)
        ms = deadline
    elif failure is not None:
        entry.update(action=legal[0], fault=failure)
    else:
        chosen = listed_action(legal, action)
        if chosen is None:
            state = store.replay(decision["match_id"], upto=decision["turn"])
            chosen, failure = judge(state, state.legal_actions(), action)
            entry["fault"] = failure
        entry["action"] = chosen
    if ms is not None:
        entry["ms"] = ms
    return entry


def timed_out(decision: dict) -> dict:
    """The entry of a turn whose deadline passed with no answer."""
    return answered(None, decision, None, failure=fault("timeout", f"no answer within {decision['deadline_ms']} ms"))
