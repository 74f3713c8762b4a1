"""`.ci/check`, the README's test command: the linter and the type checker run even when a test
fails, and the command fails if any of the three does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_a_failing_test_still_lets_the_linter_and_the_type_checker_run():
    # a pytest run that fails at once: a test id that does not exist
    done = subprocess.run([str(ROOT / ".ci/check"), "-p", "no:cacheprovider", "-n", "0",
                           "tests/test_types.py::no_such_test"],
                          cwd=ROOT, capture_output=True, text=True, timeout=280)
    assert done.returncode == 1
    assert "FAILED: pytest" in done.stderr and "ruff" not in done.stderr and "mypy" not in done.stderr
    assert "All checks passed!" in done.stdout  # ruff ran
    assert "Success: no issues found" in done.stdout  # mypy ran
