"""The platform core that the API (`server/`) and the worker pool (`worker/`) share.

* `core.store` — the Redis data model, one module per concept with its keys;
* `core.conclusion` — the one path a match ends along, and what follows it;
* `core.ratings` — the ladder's openskill ratings; `core.comparisons` — the
  sequential test that decides a comparison, deal by deal;
* `core.answers` — a remote bot's answer judged into its log entry;
* `core.calls` — the one outbound call to a bot's server, asynchronous
  (deadline, size limit, URL policy in `core.urls`), run for synchronous
  callers on the process's loop (`core.eventloop`); `core.liveness` — pings;
* `core.redis_server` — the embedded Redis; `core.signals` — process signals;
* `core.jsonsafe` — input limits; `core.schedule_size` — a schedule's size
  before it is stored.

Nothing here imports Flask or RQ's workers: `server/` is the Flask app and its
pages, `worker/` the RQ jobs, the runner, the dispatcher and the pool.
"""
