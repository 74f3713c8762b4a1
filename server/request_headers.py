"""A request's header block read for gevent's pywsgi handler (server/serve.py) without the `email` package.

gevent parses each request's headers with `http.client.parse_headers`, which
hands the block to the `email` package's feed parser, a heavy tool for five or
six short lines. Here the block is read the same way (`http.client._read_headers`: the
same line length and header count limits, so the same 400s) and, when every
line is a plain `Name: value` line of printable ASCII, split directly.

Any other block — a folded (continued) line, a line without a name, a bare CR,
a control or non-ASCII character, anything the feed parser treats in its own
way (a line that is not a header ends the block there; a vertical tab or NEL
splits a line) — goes to `http.client.parse_headers`' parser, so what
a request's `environ` holds is exactly what gevent made of it, whatever the input.

`Headers` answers what gevent's handler asks of its `OldMessage` (`status`,
`get`, `del`, `headers`, `typeheader`, `getheader`) with the same values.
"""

from __future__ import annotations

import email.parser
import re
from http import client

#: a plain header line: a name of printable ASCII but ':' (the feed parser's header names), its value
#: of printable ASCII and tabs after the spaces and tabs it starts with, then the line's end
PLAIN_LINE = re.compile(rb"([!-9;-~]+):[ \t]*([ -~\t]*)\r?\n")


class Headers:
    """A request's headers as (name, value) pairs in their order, each as the `email` package's
    compat32 policy keeps it (the value without its leading spaces and tabs, nor its line end)."""

    __slots__ = ("pairs",)

    status = ""  # no parsing error (gevent's OldMessage: 'Line too long' otherwise)

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs

    def get(self, name: str, default=None):
        name = name.lower()
        for key, value in self.pairs:
            if key.lower() == name:
                return value
        return default

    getheader = get

    def __delitem__(self, name: str) -> None:
        name = name.lower()
        self.pairs = [(key, value) for key, value in self.pairs if key.lower() != name]

    @property
    def headers(self):
        for key, value in self.pairs:
            yield f"{key}: {value}\r\n"

    @property
    def typeheader(self):
        return self.get("content-type")


def plain(lines: list[bytes]) -> Headers | None:
    """The block's headers when each line is a plain one (the last is the blank line or the end
    of the input); None otherwise."""
    pairs = []
    for line in lines[:-1]:
        found = PLAIN_LINE.fullmatch(line)
        if found is None:
            return None
        pairs.append((found[1].decode("ascii"), found[2].decode("ascii")))
    return Headers(pairs) if lines[-1] in (b"\r\n", b"\n", b"") else None


def read(fp, message_class):
    """The headers of the request being read from `fp`: a `Headers` for a plain block, else what
    `http.client.parse_headers(fp, _class=message_class)` makes of it, with gevent's handling of a
    line too long (a message whose `status` says so). More than `http.client`'s 100 lines raises
    its HTTPException, as `parse_headers` does (the handler answers 400)."""
    try:
        lines = client._read_headers(fp)
    except client.LineTooLong:
        refused = message_class()
        refused.status = "Line too long"
        return refused
    headers = plain(lines)
    if headers is not None:
        return headers
    return email.parser.Parser(_class=message_class).parsestr(b"".join(lines).decode("iso-8859-1"))
