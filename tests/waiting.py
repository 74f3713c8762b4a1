"""Tests wait for events, never for time: a condition polled until it holds, with a generous
deadline that only a real failure reaches (the suite runs on busy machines)."""

from __future__ import annotations

import subprocess
import time

import requests


def wait_until(condition, seconds: float = 60, what: str = "the condition") -> None:
    """Poll `condition` (a cheap read) until true, failing after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} never came"
        time.sleep(0.05)


def wait_answering(url: str, proc: subprocess.Popen, what: str = "the server", seconds: float = 60,
                   log=None) -> None:
    """Until `url` answers a GET (any status), failing if `proc` dies first (with `log()`'s text,
    if given) or after `seconds`. Its first answer may come slowly on a busy machine: the
    request waits for it as long as the deadline allows."""
    deadline = time.monotonic() + seconds
    while True:
        assert proc.poll() is None, log() if log else f"{what} exited with {proc.returncode}"
        try:
            requests.get(url, timeout=max(0.5, deadline - time.monotonic()))
            return
        except requests.ConnectionError:  # not listening yet
            assert time.monotonic() < deadline, f"{what} did not start"
            time.sleep(0.1)
        except requests.Timeout:
            raise AssertionError(f"{what} did not answer within {seconds} s") from None
