"""A bot's debug output: what it was thinking, kept beside the turn it answered (docs/api.md §6).

An answer may carry `"debug"`, a bot's own text, which the platform stores
with the turn and shows to the bot's owner only. Because it is a bot's text it
is made safe here, once, for every place that receives it (the API, the
dispatcher, the worker, local play): `debug_text` keeps a string, drops what
is not one (never a fault: a debug aid must not cost a decision), replaces
control characters other than newline and tab, and cuts it at `MAX_DEBUG`
characters.

`Bot.debug(text)` writes to the decision under way. The hosts open that
decision's notes around the bot's call (`collecting`): the notes are per
thread, so one bot answering several matches at once in several threads
keeps each decision's text apart, and `Bot.decide(decision)` keeps its
signature.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: the most characters of debug text kept for one answer; the rest is cut
MAX_DEBUG = 1000
#: what replaces a character that is not printable (a control character, a lone surrogate)
REPLACEMENT = "\ufffd"

_current = threading.local()


def debug_text(value: Any) -> str | None:
    """`value` as debug text fit to store: None for a non-string or an empty one; else printable
    (newline and tab kept) and at most `MAX_DEBUG` characters."""
    if not isinstance(value, str) or not value:
        return None
    cut = value[:MAX_DEBUG]
    return "".join(c if _keeps(c) else REPLACEMENT for c in cut)


def _keeps(char: str) -> bool:
    if char in "\n\t":
        return True
    if "\ud800" <= char <= "\udfff":  # a lone surrogate: not text, and not encodable as UTF-8
        return False
    return char.isprintable()


class Notes:
    """The debug text written during one decision (what is past `MAX_DEBUG` is not even kept)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0

    def add(self, text: Any) -> None:
        if self.size > MAX_DEBUG:  # already past what is kept: the rest is cut anyway
            return
        part = text if isinstance(text, str) else str(text)
        self.parts.append(part)
        self.size += len(part) + 1

    @property
    def text(self) -> str | None:
        """What was written, one line per call, made safe (`debug_text`); None if nothing."""
        return debug_text("\n".join(self.parts))


@contextmanager
def collecting(notes: Notes | None = None) -> Iterator[Notes]:
    """The notes of the decision about to be made in this thread (`notes`, or new ones):
    `note` writes to them."""
    previous = getattr(_current, "notes", None)
    notes = _current.notes = notes if notes is not None else Notes()
    try:
        yield notes
    finally:
        _current.notes = previous


def note(text: Any) -> bool:
    """Add `text` to the decision under way in this thread; False if none is (outside a decision)."""
    notes = getattr(_current, "notes", None)
    if notes is None:
        return False
    notes.add(text)
    return True


def with_debug(answer: dict, text: str | None) -> dict:
    """`answer` with `"debug"` added when there is text."""
    return {**answer, "debug": text} if text else answer
