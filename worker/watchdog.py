"""The in-process bots' watchdog lives in the SDK (`sdk.watchdog`), shared with local play."""

from sdk.watchdog import Overrun, Watchdog, watchdog

__all__ = ["Overrun", "Watchdog", "watchdog"]
