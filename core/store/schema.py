"""The version of the data in Redis, and the migrations that bring older data up to it.

Key:
    cardarena:schema    the version the stored data is in (absent: version 0, data from
                        before versions were written down — or an empty database)

Migrations run only when asked (`cardarena migrate`, like Flask's `init-db`), never
as a side effect of starting the API or a worker: a migration walks every record,
and two processes starting at once must not both do it. A fresh database needs
none, so the app factory stamps an empty one with the current version
(`stamp_if_empty`) and only warns about an older one (`behind`).
"""

from __future__ import annotations

from collections.abc import Callable

SCHEMA_KEY = "cardarena:schema"


def _index_records(store) -> str:
    matches = store.index_bot_matches()
    listed = store.index_lists()
    return f"{matches} match entries in the per-bot index, {listed} records in the lists by game"


def _archive_finished(store) -> str:
    if store.archive is None:
        return "archiving is off (CARDARENA_ARCHIVE=off): nothing archived"
    return f"{store.archive_finished()} finished matches moved to the archive ({store.archive.root})"


def _liveness_stamps(store) -> str:
    return f"{store.convert_liveness_stamps()} liveness timestamps of bots rewritten as ISO 8601 UTC"


#: version -> (what it changes, the step from the version before); run in order, each once
MIGRATIONS: dict[int, tuple[str, Callable]] = {
    1: ("index the matches per bot and the matches and tournaments per game", _index_records),
    2: ("move the finished matches to the archive", _archive_finished),
    3: ("write bots' liveness timestamps (last seen, failed, pinged) as every timestamp is written",
        _liveness_stamps),
}
SCHEMA_VERSION = max(MIGRATIONS)
#: keys only a database holding data has (an empty one, or one holding only the server key, needs no migration)
_DATA_KEYS = ("matches", "tournaments", "bots")


def schema_version(client) -> int:
    raw = client.get(SCHEMA_KEY)
    return int(raw) if raw is not None else 0


def stamp_if_empty(client) -> None:
    """A database with no records yet is at the current version: nothing to migrate."""
    if not client.exists(*_DATA_KEYS):
        client.set(SCHEMA_KEY, SCHEMA_VERSION, nx=True)


def behind(client) -> int:
    """How many versions the stored data is behind this code (0: up to date)."""
    return max(0, SCHEMA_VERSION - schema_version(client))


def migrate(store, say: Callable[[str], None] = print) -> int:
    """Run every migration the stored data has not had, in order; the version reached.
    Each step is repeatable (a migration interrupted midway is run again whole)."""
    version = schema_version(store.r)
    for target in range(version + 1, SCHEMA_VERSION + 1):
        what, step = MIGRATIONS[target]
        say(f"version {target}: {what}: {step(store)}")
        store.r.set(SCHEMA_KEY, target)
    if version >= SCHEMA_VERSION:
        say(f"the data is at version {version}: nothing to do")
    return max(version, SCHEMA_VERSION)
