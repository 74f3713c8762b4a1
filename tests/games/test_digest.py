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

A game the project ships after those four is pinned on its own, in `ADDED`,
from the day it joins (docs/add-a-game.md); a shipped game pinned nowhere fails.
"""

from __future__ import annotations

from tests.games.builtin import builtin_names
from tests.scripts import load_script

#: 2 matches per (game, seats, options), 200 shuffles, at 673ec7c (literals, not the tool's)
GOLDEN_TOTAL = "9baacca54210906693d12f5ec57625eba65fcc88d6798cabae33bb109a76eb52"
GOLDEN_RNG = "16cf1fcca905702c92dcbc650cad82ad98cd192e43738d84345ddb5e3f484313"
#: games shipped after 673ec7c: name -> `run(matches=2, shuffles=0, names=[name])["total"]`
#: when it was added (``bench/digest.py --matches 2 --shuffles 0 --game NAME``, the total)
ADDED: dict[str, str] = {}


digest = load_script("bench/digest.py", "bench_digest")


def test_the_engines_replay_digest_is_the_start_commits():
    report = digest.run(matches=2, shuffles=200, names=digest.START_GAMES)
    assert report["parts"]["rng"] == GOLDEN_RNG
    assert report["total"] == GOLDEN_TOTAL


def test_every_game_the_project_ships_is_pinned_by_the_digest():
    missing = [name for name in builtin_names() if name not in digest.START_GAMES and name not in ADDED]
    assert not missing, (f"add {missing} to the digest: pin `bench/digest.py --matches 2 --shuffles 0 "
                         "--game NAME`'s total in ADDED (tests/games/test_digest.py)")


def test_each_game_added_since_replays_its_pinned_digest():
    for name, total in ADDED.items():
        assert digest.run(matches=2, shuffles=0, names=[name])["total"] == total, name
