"""The replay digest (bench/digest.py) is pinned: refactors and speed-ups change no behaviour.

The literals were computed at commit 673ec7c, before issue 14's and 18's
engine work: every view of every seat, every legal-action list, every result
and the messages of illegal actions in seeded matches of every game, seat
count and a few option sets, plus seeded shuffles. If this test fails, an
engine now shows something else somewhere: find the part that changed with
``bench/digest.py --matches 2 --shuffles 200`` (at 673ec7c and now) and compare.

The tool's full run (``bench/digest.py --matches 200 --shuffles 1000``, 5 to 8
minutes: run it by hand after an engine change) says itself whether it still
matches the start commit's (``START_DIGESTS`` in the tool).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the four games of the start commit, named: a test may register more (a toy game)
GAMES = ["double", "double-carre", "duck-soup", "soupe-gertrude"]
#: 2 matches per (game, seats, options), 200 shuffles, at 673ec7c (literals, not the tool's)
GOLDEN_TOTAL = "9baacca54210906693d12f5ec57625eba65fcc88d6798cabae33bb109a76eb52"
GOLDEN_RNG = "16cf1fcca905702c92dcbc650cad82ad98cd192e43738d84345ddb5e3f484313"


def load_digest():
    spec = importlib.util.spec_from_file_location("bench_digest", ROOT / "bench" / "digest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_engines_replay_digest_is_the_start_commits():
    report = load_digest().run(matches=2, shuffles=200, names=GAMES)
    assert report["parts"]["rng"] == GOLDEN_RNG
    assert report["total"] == GOLDEN_TOTAL
