"""Small helpers every store module shares: ids, clock, JSON-valued hashes.

A record (a match, a tournament) is a Redis hash whose values are JSON, so
a field keeps its type (`seats` a list, `rated` a bool) and one field can be
updated without rewriting the others.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any


def new_id(prefix: str) -> str:
    """A public id: a prefix saying what it names and 48 random bits."""
    return f"{prefix}_{secrets.token_hex(6)}"


def now_iso() -> str:
    """The current time as ISO 8601 UTC, to the millisecond: what
    `datetime.now(UTC).isoformat(timespec="milliseconds")` writes (with `Z`), its second's text
    made once a second (every run of a match stamps its start, so this is on every run's path)."""
    global _second
    seconds, ms = divmod(time.time_ns() // 1_000_000, 1000)
    second = _second
    if second[0] != seconds:
        second = _second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
    return f"{second[1]}.{ms:03d}Z"


#: (a second since the epoch, its ISO 8601 text): `now_iso`'s last
_second: tuple[int, str] = (-1, "")


def now_ms() -> int:
    return int(time.time() * 1000)


def dump_fields(fields: dict[str, Any]) -> dict[str, str]:
    return {k: json.dumps(v, separators=(",", ":")) for k, v in fields.items()}


def load_fields(raw: dict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in raw.items():
        key = k.decode() if isinstance(k, bytes) else k
        out[key] = json.loads(v)
    return out


def text(value: bytes | str) -> str:
    """A Redis reply as str, whether or not the client decodes responses."""
    return value.decode() if isinstance(value, bytes) else value
