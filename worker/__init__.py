"""The worker pool: RQ jobs that run tournaments and matches.

    run_tournament(tid) ──expands──▶ run_match(mid) × N   (one RQ job each)
    run_match(mid): replay the match's event log, ask each seat's driver for
                    its decision, append it atomically, conclude the match
                    once: the bots' records, the tournament, the ladder.
    a remote turn settled ──▶ run_match(mid, k): the match's next run (an RQ job too)

One concept per module: `jobs` (the RQ entry points), `match_runner`
(refereeing one match), `drivers/` (one module per kind of bot), `watchdog`
(deadlines for in-process bots), `locks` (who is running what), `schedules`
(who plays whom), `standings`, `ratings`, `recovery` (picking up what a dead
worker dropped) and `pool` (`cardarena worker -n N`).
"""

from core.store.jobs import QUEUE

__all__ = ["QUEUE"]
