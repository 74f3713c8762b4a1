"""A test past its pytest-timeout fails, wherever it is when the timeout strikes.

With the timeout's "signal" method, SIGALRM's exception is raised in whatever Python code runs
at that moment; in a gc callback (Hypothesis registers one) CPython prints it as "Exception
ignored" and carries on, so a hung test was counted as a pass. The suite's method (pyproject's
`timeout_method`) must end the test however it is stuck.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

STUCK_IN_A_GC_CALLBACK = '''
import gc
import time


def test_stuck_in_a_gc_callback():
    def slow(phase, info):
        if phase == "start":
            end = time.monotonic() + 8
            while time.monotonic() < end:
                pass

    gc.callbacks.append(slow)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(slow)
'''


@pytest.mark.slow
def test_a_timeout_inside_a_gc_callback_fails_the_test(tmp_path):
    test = tmp_path / "test_stuck.py"
    test.write_text(STUCK_IN_A_GC_CALLBACK)
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT),
                           "-p", "no:cacheprovider", "-n", "0", "--timeout", "1", str(test)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0, done.stdout[-2000:]
    assert "Timeout" in done.stdout + done.stderr
    assert "1 passed" not in done.stdout
