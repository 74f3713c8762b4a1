"""JSON from strangers, parsed only once it is known to be cheap to parse.

`json.loads` recurses once per nesting level (20,000 levels raise
RecursionError) and Python refuses to convert integers of more than 4,300
digits (ValueError); both surfaced as 500s with a traceback, and in the
worker as a crash of the whole match. `check` scans the raw bytes first —
strings blanked out, then the depth of brackets and the length of digit
runs — in linear time and without recursion; `safe_loads` parses only what
passed, and refuses NaN, Infinity and numbers that overflow to infinity
(not JSON, and nothing downstream expects them).

The API runs it on every JSON request body before any other work
(server/app.py), and the worker on every webhook answer. Standard library
only, so both can import it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

#: deeper nesting than any request or answer of the protocol needs (a deck is depth 3)
MAX_DEPTH = 32
#: digits in a row: seeds have 19, nothing legitimate comes near
MAX_DIGITS = 100

_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.S)
_LONG_NUMBER = re.compile(rb"[0-9]{%d}" % (MAX_DIGITS + 1))
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENING = frozenset(b"[{")


class JSONTooComplex(ValueError):
    """JSON refused before (or instead of) parsing it: too deep, a number too long, not finite."""


def check(data: bytes | str) -> None:
    """`JSONTooComplex` if `data` nests deeper than `MAX_DEPTH` or holds a run of
    more than `MAX_DIGITS` digits outside strings; linear time, no recursion."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    skeleton = _STRING.sub(b'""', data)
    if _LONG_NUMBER.search(skeleton):
        raise JSONTooComplex(f"a number has more than {MAX_DIGITS} digits")
    brackets = skeleton.translate(None, _NOT_BRACKETS)
    if brackets.count(b"[") + brackets.count(b"{") <= MAX_DEPTH:
        return
    depth = 0
    for byte in brackets:
        if byte in _OPENING:
            depth += 1
            if depth > MAX_DEPTH:
                raise JSONTooComplex(f"nested deeper than {MAX_DEPTH} levels")
        elif depth:
            depth -= 1


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JSONTooComplex(f"the number {text[:20]} is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise JSONTooComplex(f"{name} is not JSON")


def safe_loads(data: bytes | str) -> Any:
    """`json.loads` of checked input: `JSONTooComplex` for what `check` refuses, NaN,
    Infinity or a float overflowing; `ValueError` for what is not JSON or not UTF-8."""
    check(data)
    try:
        return json.loads(data, parse_float=_finite, parse_constant=_no_constant)
    except RecursionError:  # cannot happen after check(); a last guard all the same
        raise JSONTooComplex(f"nested deeper than {MAX_DEPTH} levels") from None


def is_json_mimetype(mimetype: str | None) -> bool:
    """What webargs parses as JSON: application/json and any */*+json."""
    return mimetype is not None and (mimetype == "application/json" or mimetype.endswith("+json"))
