"""The kinds of fault, and the one way a fault's text is written (api.md §5).

A log entry's `"fault"` is `"<kind>: <detail>"`. The kind says what went
wrong in words a bot author can count on (the pages and `faults_by_kind`
group by it); the detail says how, in one short line. Details come partly
from bots (an engine's reason quotes their action), so `fault` cleans them:
one line, printable characters only, no lone surrogates, bounded — a public
record never holds a bot's raw bytes. A webhook's HTTP error is its status
alone: no body text from a bot's server is ever copied (an SSRF reflection
otherwise, when URLs may point inside the network).

One table, kept here as plain data so the referee module it will join later
(one definition of faults for the worker, local play and the API) can take it
as it is.
"""

from __future__ import annotations

#: kind -> what it means
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
#: the entry the referee writes for each turn of a seat that has forfeited (not counted as a fault)
FORFEITED = "forfeited"
#: the longest detail kept
MAX_DETAIL = 200


def fault(kind: str, detail: str = "") -> str:
    """The fault text `"<kind>: <detail>"`; a kind outside `KINDS` is a programming error."""
    if kind not in KINDS:
        raise ValueError(f"unknown fault kind {kind!r}")
    detail = clean(detail)
    return f"{kind}: {detail}" if detail else kind


def kind_of(text: str) -> str | None:
    """The kind of a stored fault text (None for "forfeited" or an unknown text)."""
    kind = str(text).split(":", 1)[0]
    return kind if kind in KINDS else None


def clean(text: object, limit: int = MAX_DETAIL) -> str:
    """`text` as one printable line of at most `limit` characters.

    Non-printable characters (controls, lone surrogates, line separators)
    become spaces and runs of spaces one space, so whatever a bot put in its
    answer cannot forge lines or break a page's encoding.
    """
    try:
        text = str(text)
    except Exception:  # a str() that raises (recursion in a hostile repr): say nothing rather
        return "(unprintable)"
    text = "".join(c if c.isprintable() else " " for c in text[: limit * 4])
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
