"""How many deals a head-to-head comparison takes, as docs/write-a-bot.md says ("Is the new
version better?"): the platform's statistic and test (`sdk.stats.Sprt`, core/comparisons.py)
on deals played by the local referee, the candidate in both rotations of each deal."""

from __future__ import annotations

import games
from games.ranking import match_points
from sdk.bot import load_bot_class
from sdk.local import play_local
from sdk.stats import Sprt

GAME = "duck-soup"
#: the most deals a run may take here (the platform's max_deals is 2000)
CAP = 60


def deals_to_verdict(candidate: str, baseline: str) -> tuple[str | None, int]:
    """(verdict, deals) of the platform's default test: a deal's statistic is the candidate's
    match points over its two rotations, minus 1, halved (docs/api.md §5 "Comparisons")."""
    made = {spec: load_bot_class(spec) for spec in (candidate, baseline)}
    n = total = squares = 0.0
    verdict = None
    while verdict is None and n < CAP:
        points = 0.0
        for seat in (0, 1):
            bots = [made[baseline](), made[baseline]()]
            bots[seat] = made[candidate]()
            points += match_points(play_local(GAME, bots, seed=int(n)).result["ranks"], seat)
        statistic = (points - 1) / 2
        n, total, squares = n + 1, total + statistic, squares + statistic * statistic
        verdict = Sprt().decide(int(n), total, squares)
    return verdict, int(n)


def test_a_clearly_weaker_baseline_is_found_worse_in_about_ten_deals():
    game = games.get(GAME)
    verdict, deals = deals_to_verdict(game.bots["heuristic"], game.bots["random"])
    assert verdict == "H1" and deals <= 20


def test_two_bots_of_the_same_steady_play_reach_h0_in_tens_of_deals_not_hundreds():
    heuristic = games.get(GAME).bots["heuristic"]
    verdict, deals = deals_to_verdict(heuristic, heuristic)
    assert verdict == "H0" and deals <= 20
