"""Python reprs in an engine's message, written as JSON for the API's answers.

An engine's `IllegalAction` message is pinned by the replay digest
(tests/games/test_digest.py) and may show actions and cards as Python writes
them: `{'play': Card('7H')}`, `'ZZ'`, `True`. A bot author reads the API in
JSON, so a 422 shows them as `{"play": "7H"}`, `"ZZ"`, `true`: what they would
send. Only what parses back as a Python literal is rewritten; the rest of the
text stays as the engine wrote it.
"""

from __future__ import annotations

import ast
import json
import re

#: a card's repr (games/cards.py): the card's text is what JSON holds
_CARD = re.compile(r"Card\(('(?:[^'\\]|\\.)*')\)")
#: where a Python literal may start: a dict, a list, a quoted string
_OPENERS = {"{": "}", "[": "]"}


def reprs_as_json(text: str) -> str:
    """`text` with each Python literal in it (a dict, a list, a quoted string) as JSON."""
    text = _CARD.sub(r"\1", text)
    out, i = [], 0
    while i < len(text):
        end = _literal_end(text, i)
        if end is not None:
            try:
                value = ast.literal_eval(text[i:end])
                out.append(json.dumps(value, ensure_ascii=False))
                i = end
                continue
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                pass
        out.append(text[i])
        i += 1
    return "".join(out)


def _literal_end(text: str, start: int) -> int | None:
    """Where a bracketed or quoted literal opening at `start` closes (quotes inside
    skipped), or None if none opens there or it never closes."""
    first = text[start]
    if first == "'":
        if start and text[start - 1].isalnum():  # an apostrophe (the 7H's rank), not a quote
            return None
        j = start + 1
        while j < len(text):
            if text[j] == "\\":
                j += 2
                continue
            if text[j] == "'":
                return j + 1
            j += 1
        return None
    if first not in _OPENERS:
        return None
    depth, j, quote = 0, start, None
    while j < len(text):
        c = text[j]
        if quote:
            if c == "\\":
                j += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return None
