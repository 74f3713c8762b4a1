"""In-process bots for the worker pool's end-to-end tests (registered as tests.worker.e2e_bots:Name)."""

from __future__ import annotations

import time

from sdk import Bot


class Slow(Bot):
    """Thinks 15 ms per decision, so a match lasts long enough to be killed in the middle."""

    def act(self, view, legal_actions):
        time.sleep(0.015)
        return legal_actions[-1]


class Slower(Bot):
    """Thinks 60 ms per decision: a tournament a page can be watched in while it runs, even when the
    page's updates lag on a busy machine (with `Slow` a 48-match one could end before the page
    showed its first count)."""

    def act(self, view, legal_actions):
        time.sleep(0.06)
        return legal_actions[-1]


class Cheater(Bot):
    """Remembers the cards its opponent played in every duck-soup deal and uses them in the next
    rotation: a deliberate cheat for the `memory` flag (docs/api.md §5). What it has seen is kept
    in a file (the worker processes share nothing else), named by `CARDARENA_TEST_CHEATER_FILE`.
    A deal whose hand is (nearly) all cards its opponent played in an earlier match — the same
    deal, seats rotated: it knows its opponent's cards now — it plays with the heuristic; any
    other, at random (first legal action). Recognising the deal by its hand alone ("disjoint from
    a hand I held") matched unrelated deals more and more often as hands piled up (a 13-card
    hand misses another by chance 1 time in 80), so its figure depended on how the platform
    interleaved deals; 12 of 13 cards among one match's ~26 played ones happens by chance about
    1 time in 2,500."""

    game = "duck-soup"
    #: of its hand, how many cards an earlier match's opponent must have played
    SAME_DEAL = 12

    def __init__(self) -> None:
        from example_bots.duck_soup import DuckSoupHeuristic

        self.strong = DuckSoupHeuristic()
        self.repeat: dict[str, bool] = {}

    def decide(self, decision):
        match_id, view = decision["match_id"], decision["view"]
        if match_id not in self.repeat:
            self.repeat[match_id] = self.recognised(frozenset(view["hand"]), match_id)
        self.note(match_id, view)
        if self.repeat[match_id]:
            return self.strong.act(view, decision["legal_actions"])
        return decision["legal_actions"][0]

    @staticmethod
    def _path() -> str:
        import os

        return os.environ["CARDARENA_TEST_CHEATER_FILE"]

    @classmethod
    def recognised(cls, hand: frozenset, match_id: str) -> bool:
        seen: dict[str, set] = {}
        try:
            with open(cls._path()) as f:
                for line in f:
                    mid, *cards = line.split()
                    seen.setdefault(mid, set()).update(cards)
        except FileNotFoundError:
            pass
        return any(len(hand & cards) >= cls.SAME_DEAL for mid, cards in seen.items() if mid != match_id)

    @classmethod
    def note(cls, match_id: str, view: dict) -> None:
        """The cards the opponent played so far (the tricks done and the one on the table)."""
        me = view["seat"]
        played = [c["card"] for t in view.get("history", []) for c in t["cards"] if c["seat"] != me]
        played += [c["card"] for c in view.get("trick", []) if c["seat"] != me]
        if played:
            with open(cls._path(), "a") as f:
                f.write(" ".join([match_id, *played]) + "\n")
