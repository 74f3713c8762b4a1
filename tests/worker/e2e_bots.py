"""In-process bots for the worker pool's end-to-end tests (registered as tests.worker.e2e_bots:Name)."""

from __future__ import annotations

import time

from sdk import Bot


class Slow(Bot):
    """Thinks 15 ms per decision, so a match lasts long enough to be killed in the middle."""

    def act(self, view, legal_actions):
        time.sleep(0.015)
        return legal_actions[-1]
