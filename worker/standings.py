"""Tournament standings from the tallies counted as each match concluded.

The rows are the referee's (`sdk.referee.standings_from_tallies`, with
`mean_ci95`), so `cardarena play` shows a local run exactly as the platform
shows a tournament.
"""

from __future__ import annotations

from sdk.referee import standings_from_tallies

__all__ = ["standings_from_tallies"]
