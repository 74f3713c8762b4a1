"""Hypothesis profiles: how hard the property tests try.

`ci`, the default, is bounded: each property test tries the number of examples it names (sized
so that no test takes more than a few seconds alone) and no example has a deadline, since a
busy machine makes any one slow. `thorough`, on demand (`HYPOTHESIS_PROFILE=thorough pytest
tests/games`), tries ten times as many. tests/conftest.py loads the profile before any test
module is imported, so `examples(n)` reads the right one.
"""

from __future__ import annotations

import os

from hypothesis import settings

PROFILE_ENV = "HYPOTHESIS_PROFILE"
#: each profile's multiple of the examples a test names
SCALE = {"ci": 1, "thorough": 10}

settings.register_profile("ci", deadline=None, print_blob=True)
settings.register_profile("thorough", deadline=None, print_blob=True)


def profile() -> str:
    name = os.environ.get(PROFILE_ENV, "ci")
    if name not in SCALE:
        raise ValueError(f"{PROFILE_ENV}={name!r}: one of {', '.join(SCALE)}")
    return name


def load() -> None:
    settings.load_profile(profile())


def examples(n: int) -> int:
    """The examples a test sized at `n` for the `ci` profile tries under the loaded one."""
    return n * SCALE[profile()]
