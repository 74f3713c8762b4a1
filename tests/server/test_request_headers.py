"""server/request_headers.py reads every header block as gevent's pywsgi did with the `email` package.

Compared, for plain and hostile blocks alike, with `http.client.parse_headers` into gevent's own
`OldMessage`: what the handler asks of it (status, get, del, typeheader) and the `HTTP_*` pairs
its `_headers` makes of it for `environ`. Then against `cardarena serve` itself: a plain request,
odd ones, and the malformed ones answered 400 as before (a line too long, more than 100 headers).
"""

from __future__ import annotations

import socket
from io import BytesIO
from types import SimpleNamespace

import pytest
from gevent.pywsgi import OldMessage, WSGIHandler

from server.request_headers import Headers, read

BLOCKS = [
    b"\r\n",
    b"",
    b"Host: 127.0.0.1:5000\r\nUser-Agent: python-requests/2.32\r\nAccept-Encoding: gzip, deflate\r\n"
    b"Accept: */*\r\nConnection: keep-alive\r\nAuthorization: Bearer abc.def\r\n\r\n",
    b"Host: x\r\nContent-Type: application/json\r\nContent-Length: 23\r\n\r\n",
    b"Host: x\nContent-Length:   7  \n\n",  # bare LF ends, spaces around a value
    b"X-A:\t\t tabbed\t\r\nX-B:\r\nx-a: second\r\nCOOKIE: a=1\r\nCookie: b=2\r\n\r\n",  # repeated, empty
    b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\ncontent-length: 6\r\n\r\n",
    b"X_Under: dropped\r\nX-Ok: kept\r\n\r\n",
    b"From: someone\r\nX: y\r\n\r\n",
    # not plain: the email package's parser decides, as before
    b"X-Folded: one\r\n two\r\n\tthree\r\nX-After: z\r\n\r\n",  # continuation lines
    b" Leading: space\r\nX: y\r\n\r\n",  # a first line that is a continuation
    b"No colon here\r\nX-Lost: after\r\n\r\n",  # not a header: the block ends there
    b"Bad Name: v\r\nX: y\r\n\r\n",  # a space in the name
    b": no name\r\nX: y\r\n\r\n",
    b"From someone\r\nX: y\r\n\r\n",  # an mbox envelope line
    b"X-A: one\rX-B: two\r\n\r\n",  # a bare CR splits the line for the email package
    b"X-A: one\x0bX-B: two\r\n\r\n",  # so does a vertical tab
    b"X-A: caf\xe9\x85X-B: two\r\n\r\n",  # and NEL (latin-1 0x85); non-ASCII
    b"X-A: nul\x00byte\r\n\r\n",
    b"X-A: one\r\r\nX-B: two\r\n\r\n",
    b"X-A: unterminated",  # the input ends mid-line
    b"X-A: one\r\nX-B: two",
]


def parsed(block: bytes):
    from http import client

    return client.parse_headers(BytesIO(block), _class=OldMessage)


def environ_pairs(headers) -> list[tuple[str, str]]:
    """What gevent's handler puts in `environ` from these headers (its own `_headers`)."""
    return list(WSGIHandler._headers(SimpleNamespace(headers=headers)))


@pytest.mark.parametrize("block", BLOCKS)
def test_a_block_reads_as_the_email_package_reads_it(block):
    ours, theirs = read(BytesIO(block), OldMessage), parsed(block)
    assert ours.status == theirs.status
    assert list(ours.headers) == list(theirs.headers)
    assert environ_pairs(ours) == environ_pairs(theirs)
    assert ours.typeheader == theirs.typeheader
    for name in ("host", "CONTENT-LENGTH", "content-type", "x-a", "Connection", "transfer-encoding", "absent"):
        assert ours.get(name) == theirs.get(name)
        assert ours.get(name, "default") == theirs.get(name, "default")
        assert ours.getheader(name) == theirs.getheader(name)
    del ours["content-length"]
    del theirs["content-length"]
    assert list(ours.headers) == list(theirs.headers)


def test_only_plain_blocks_skip_the_email_package():
    assert isinstance(read(BytesIO(BLOCKS[2]), OldMessage), Headers)
    assert not isinstance(read(BytesIO(b"X-Folded: one\r\n two\r\n\r\n"), OldMessage), Headers)


def test_the_limits_are_http_clients():
    from http import client

    too_long = read(BytesIO(b"X-A: " + b"a" * 70_000 + b"\r\n\r\n"), OldMessage)
    assert too_long.status == "Line too long"
    with pytest.raises(client.HTTPException):
        read(BytesIO(b"".join(b"X-%d: v\r\n" % i for i in range(101)) + b"\r\n"), OldMessage)
    assert read(BytesIO(b"".join(b"X-%d: v\r\n" % i for i in range(99)) + b"\r\n"), OldMessage).get("x-98") == "v"


def answer(port: int, request: bytes) -> bytes:
    """The raw answer of `cardarena serve` to `request` (read until it closes or a full JSON answer)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
        return got


@pytest.mark.slow
def test_the_server_answers_plain_odd_and_malformed_headers_as_before(redis_url):
    from tests.server.test_api_waiting import served

    with served(redis_url) as (base, _):
        port = int(base.rsplit(":", 1)[1])
        plain = answer(port, b"GET /api/v1/games HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert plain.startswith(b"HTTP/1.1 200 ") and b'"duck-soup"' in plain
        folded = answer(port, b"GET /api/v1/games HTTP/1.1\r\nHost: x\r\nConnection:\r\n close\r\n\r\n")
        assert folded.startswith(b"HTTP/1.1 200 ")
        unauthorized = answer(port, b"GET /api/v1/bots/me/turns HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                                    b"authorization: Bearer nope.nope\r\n\r\n")
        assert unauthorized.startswith(b"HTTP/1.1 401 ")  # the credential read, case-insensitive name
        too_long = answer(port, b"GET /api/v1/games HTTP/1.1\r\nX-A: " + b"a" * 70_000 + b"\r\n\r\n")
        assert too_long.startswith(b"HTTP/1.1 400 ")
        too_many = answer(port, b"GET /api/v1/games HTTP/1.1\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(101))
                          + b"\r\n")
        assert too_many.startswith(b"HTTP/1.1 400 ")
        bad_length = answer(port, b"POST /api/v1/accounts HTTP/1.1\r\nContent-Length: -1\r\n\r\n")
        assert bad_length.startswith(b"HTTP/1.1 400 ")
