"""Faults: what a seat did wrong, as the log records it, and who has forfeited.

A fault is the text `"<kind>: <detail>"` (`fault`), its kind one of `KINDS`
(`fault_kind` reads it back, older texts included), its detail one printable
line (`clean`: nothing a bot wrote can forge a line of a page or a log).
`SeatTally` counts them per seat and kind; `max_faults` of them forfeit the
seat, whose turns the referee then plays, marked `FORFEITED`.
"""

from __future__ import annotations

#: what a log entry's "fault" starts with (docs/api.md §5): kind -> what it means
KINDS: dict[str, str] = {
    "timeout": "no complete answer within the decision's deadline",
    "illegal": "an answer that is not one of the legal actions",
    "bad_answer": "an answer that is not the protocol's {\"action\": …} (not JSON, wrong shape, too deep)",
    "bot_error": "the bot failed: it raised, could not be loaded, or said it failed",
    "http_error": "a webhook answered with an HTTP status other than 2xx (redirects are not followed)",
    "unreachable": "the bot's address could not be reached (refused, reset, name not resolved)",
    "too_large": "an answer over the size limit",
    "refused_url": "the referee will not call this URL (malformed, or private with public URLs only)",
}
FAULT_KINDS = tuple(KINDS)
FORFEITED = "forfeited"
#: a fault's detail is cut to this many characters: it is stored and shown with every entry
MAX_DETAIL = 200
#: fault texts written before the kinds existed, by their prefix
_LEGACY_KINDS = {"illegal action": "illegal", "error": "bot_error", "garbage": "bad_answer",
                 "too large": "too_large", "refused URL": "refused_url"}


def fault(kind: str, detail: object = "") -> str:
    """The fault text `"<kind>: <detail>"`, its detail on one line and at most `MAX_DETAIL` long."""
    if kind not in FAULT_KINDS:
        raise ValueError(f"unknown fault kind {kind!r}; the kinds are {', '.join(FAULT_KINDS)}")
    text = clean(detail)
    return f"{kind}: {text}" if text else kind


def timeout_fault(deadline_ms: int, bank_ms: int | None, ms: int | None = None) -> str:
    """The timeout fault of a decision due within `deadline_ms`, `bank_ms` of it from the bank:
    no answer within it, or (`ms`) an answer after it. The move time and the bank are said
    apart ("no answer within 2,000 ms move + 1,979 ms bank"), so a bot author sees which ran
    out; a decision of a match from before the bank (`bank_ms` None) says its whole deadline."""
    if bank_ms is None:
        deadline = f"{deadline_ms:,} ms"
    else:
        deadline = f"{deadline_ms - bank_ms:,} ms move + {bank_ms:,} ms bank"
    if ms is None:
        return fault("timeout", f"no answer within {deadline}")
    return fault("timeout", f"answered after {ms:,} ms; the deadline was {deadline}")


def decision_timeout(decision: dict, ms: int | None = None) -> str:
    """`timeout_fault` of a decision as sent to a bot (its `deadline_ms` and `clock`)."""
    clock = decision.get("clock")
    return timeout_fault(int(decision["deadline_ms"]), None if not clock else int(clock["bank_ms"]), ms)


def clean(text: object, limit: int = MAX_DETAIL) -> str:
    """`text` as one printable line of at most `limit` characters.

    Non-printable characters (controls, lone surrogates, line separators)
    become spaces and runs of spaces one space, so whatever a bot put in its
    answer (an engine's reason quotes it) cannot forge lines or break a page's encoding.
    """
    try:
        text = str(text)
    except Exception:  # a str() that raises (recursion in a hostile repr): say nothing rather
        return "(unprintable)"
    text = "".join(c if c.isprintable() else " " for c in text[: limit * 4])
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fault_kind(text: str) -> str:
    """The kind of a fault text (`FORFEITED` for a forfeited seat's turn)."""
    if text == FORFEITED:
        return FORFEITED
    prefix = text.partition(":")[0].strip()
    if prefix in FAULT_KINDS:
        return prefix
    if prefix.startswith("HTTP "):
        return "http_error"
    return _LEGACY_KINDS.get(prefix, "bot_error")


class SeatTally:
    """Faults per seat and per kind, and who has forfeited, as the log so far says.

    `max_faults` faults forfeit the seat; the referee then plays for it
    (entries marked `FORFEITED`, which are not faults).
    """

    def __init__(self, seats: int, max_faults: int) -> None:
        self.max_faults = max_faults
        self.faults = [0] * seats
        self.forfeited: set[int] = set()
        self.by_kind: list[dict[str, int]] = [{} for _ in range(seats)]

    def count(self, entry: dict) -> None:
        text = entry.get("fault")
        if text is None or text == FORFEITED:
            return
        seat = entry["seat"]
        self.faults[seat] += 1
        kind = fault_kind(text)
        self.by_kind[seat][kind] = self.by_kind[seat].get(kind, 0) + 1
        if self.faults[seat] >= self.max_faults:
            self.forfeited.add(seat)

    def faults_by_kind(self, seat: int | None = None) -> dict[str, int]:
        """`{kind: count}` for `seat`, or summed over the seats."""
        seats = range(len(self.faults)) if seat is None else [seat]
        out: dict[str, int] = {}
        for s in seats:
            for kind, n in self.by_kind[s].items():
                out[kind] = out.get(kind, 0) + n
        return out
