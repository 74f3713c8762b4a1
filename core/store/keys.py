"""Small helpers every store module shares: ids, clock, JSON-valued hashes.

A record (a match, a tournament) is a Redis hash whose values are JSON, so
a field keeps its type (`seats` a list, `rated` a bool) and one field can be
updated without rewriting the others.
"""

from __future__ import annotations

import calendar
import json
import re
import secrets
import time
from typing import Any

from redis.typing import EncodableT, FieldT, ZSetRangeResponse


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


def iso_ms(epoch_ms: int) -> str:
    """An instant (epoch ms) in the one form every stored timestamp has, `now_iso`'s:
    ISO 8601 UTC to the millisecond with `Z`. Texts of this form sort as their instants do."""
    seconds, ms = divmod(int(epoch_ms), 1000)
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(seconds))}.{ms:03d}Z"


#: a timestamp as `iso_ms` writes it
_ISO_MS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")


def epoch_ms_of(stamp: object) -> int | None:
    """The instant (epoch ms) of a timestamp as `iso_ms` writes it; None for anything else
    (absent, or not of that form)."""
    if not isinstance(stamp, str) or not _ISO_MS.fullmatch(stamp):
        return None
    fields = (int(stamp[0:4]), int(stamp[5:7]), int(stamp[8:10]), int(stamp[11:13]), int(stamp[14:16]),
              int(stamp[17:19]))
    try:
        return calendar.timegm(fields) * 1000 + int(stamp[20:23])
    except ValueError:  # no such month
        return None


def dump_fields(fields: dict[str, Any]) -> dict[FieldT, EncodableT]:
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


def members(reply: ZSetRangeResponse) -> list[str]:
    """The members a range of a sorted set read without its scores replied (ZRANGE and the like),
    as str."""
    return [text(member) for member in reply if isinstance(member, bytes | str)]


def scored(reply: ZSetRangeResponse) -> list[tuple[str, float]]:
    """The (member, score) pairs a range of a sorted set read with its scores replied, as str."""
    return [(text(pair[0]), float(pair[1])) for pair in reply if isinstance(pair, tuple)]
