"""The replay digest (bench/digest.py) is pinned: refactors and speed-ups change no behaviour.

The literals were computed at commit 673ec7c, before issue 14's and 18's
engine work: every view of every seat, every legal-action list, every result
and the messages of illegal actions in seeded matches of every game, seat
count and a few option sets, plus seeded shuffles. If this test fails, an
engine now shows something else somewhere: find the part that changed with
``bench/digest.py --matches 3 --shuffles 200`` and compare.

The tool's full run (``bench/digest.py --matches 200 --shuffles 1000``, about
5 minutes) gave ``ef2e8ccb8e7dcc3db85d524cfa0df23dfbee140513e8e892d94ffc8fb707d548``
at 673ec7c: run it by hand after an engine change (`FULL_TOTAL` below).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the four games of the start commit, named: a test may register more (a toy game)
GAMES = ["double", "double-carre", "duck-soup", "soupe-gertrude"]
#: 3 matches per (game, seats, options), 200 shuffles, at 673ec7c
GOLDEN_TOTAL = "9bd4ef85230e1624ce24c03e6cba28c1313f696865027e136021b3a00921a02e"
FULL_TOTAL = "ef2e8ccb8e7dcc3db85d524cfa0df23dfbee140513e8e892d94ffc8fb707d548"
GOLDEN_RNG = "16cf1fcca905702c92dcbc650cad82ad98cd192e43738d84345ddb5e3f484313"


def load_digest():
    spec = importlib.util.spec_from_file_location("bench_digest", ROOT / "bench" / "digest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_engines_replay_digest_is_the_start_commits():
    report = load_digest().run(matches=3, shuffles=200, names=GAMES)
    assert report["parts"]["rng"] == GOLDEN_RNG
    assert report["total"] == GOLDEN_TOTAL
