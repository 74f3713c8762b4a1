"""The archive: where a match goes once nothing can change what it shows (docs/api.md §6 "Scale").

    CARDARENA_ARCHIVE   the archive's directory (default: `archive` under the platform's data
                        directory, core/redis_server.py `state_dir`); "off": nothing is archived
                        and finished matches stay whole in Redis (what bench/memory.py compares)

One file per match, gzip-compressed JSON:

    {root}/{h:2}/{h2:4}/{match id}.json.gz      (h: the SHA-1 of the id, so a year of
                                                 matches spreads over 65,536 directories)
    {"format": "cardarena-archive", "version": 1,
     "match": {…the match's record as Redis held it…},
     "log": [{"turn", "seat", "action"[, "fault"][, "ms"]}, …],
     "debug": {"{turn}": {"seat", "text"}, …}}

A file is written whole or not at all: into a temporary name beside it (`.{id}.{token}.tmp`),
then renamed over the final name. Files are written in batches (`write_all`: the matches one
archiving step moves), and one `os.sync()` makes the whole batch durable — its files and their
directories — before Redis lets go of any of them (core/store/matches.py `archive_matches`):
an fsync of each file and of each directory costs a flush of the disk's cache each, a batch
one. Until Redis lets go, nothing reads the file. A process
killed at any instant leaves either no file (Redis still holds the match: the recovery
sweep archives it again) or the whole file; the temporary file a killed writer leaves is
never read, and the next writer of that match removes it. Several writers of one match
(its runner and the sweep, on two hosts) write the same bytes, so whoever renames last
changes nothing.

The directory is all two hosts need to share besides Redis (a volume, an NFS mount): a
file, once renamed, never changes, so any process may cache what it read (`Archive.read`
keeps the last documents it decompressed, `CACHE_BYTES` of them).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import secrets
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

ARCHIVE_ENV = "CARDARENA_ARCHIVE"
#: the value of CARDARENA_ARCHIVE that switches archiving off
OFF = "off"
FORMAT, VERSION = "cardarena-archive", 1
SUFFIX = ".json.gz"
#: bytes of decompressed documents each `Archive` keeps, the last read first (a match's page
#: reads its file two or three times, a tournament's export each file twice)
CACHE_BYTES = 8 << 20


class ArchiveMissing(LookupError):
    """A match Redis says is archived has no readable file in the archive (a lost or damaged
    volume, a host mounting another directory): the API answers 404 `archive_missing`."""

    def __init__(self, match_id: str, path: Path, why: str = "no file") -> None:
        super().__init__(f"match {match_id} is archived, but the archive has {why} at {path}: "
                         f"check that this host mounts the platform's archive ({ARCHIVE_ENV})")
        self.match_id, self.path = match_id, path


def default_root() -> Path:
    from core.redis_server import state_dir

    return state_dir() / "archive"


def from_env() -> Archive | None:
    """The archive `CARDARENA_ARCHIVE` names (None when it says "off")."""
    configured = os.environ.get(ARCHIVE_ENV, "").strip()
    if configured.lower() == OFF:
        return None
    return Archive(Path(configured) if configured else default_root())


def document(record: dict, log: Sequence[bytes], debug: dict[str, dict]) -> bytes:
    """A match's archived document, as JSON text. `log`: its entries as Redis holds them, each
    the JSON text of one entry (core/store/matches.py `append_entries`), embedded as they are:
    decoding them only to encode them again would cost more than the rest of the file."""
    head = json.dumps({"format": FORMAT, "version": VERSION, "match": record}, separators=(",", ":"))
    return b"".join([head[:-1].encode(), b',"log":[', b",".join(log), b'],"debug":',
                     json.dumps(debug, separators=(",", ":")).encode(), b"}"])


class Archive:
    """Finished matches as files under `root` (see the module's docstring)."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cached = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Archive({str(self.root)!r})"

    def path(self, match_id: str) -> Path:
        h = hashlib.sha1(match_id.encode()).hexdigest()
        return self.root / h[:2] / h[2:4] / f"{match_id}{SUFFIX}"

    def write(self, match_id: str, doc: bytes) -> int:
        """Store `doc` (`document`) as the match's file, durably, before returning its size in bytes."""
        return self.write_all({match_id: doc})[match_id]

    def write_all(self, docs: dict[str, bytes]) -> dict[str, int]:
        """Store each document (`document`) as its match's file, all of them durably (one
        `os.sync()`) before returning: match id -> the file's size in bytes."""
        sizes = {}
        for match_id, doc in docs.items():
            data = gzip.compress(doc, compresslevel=6, mtime=0)
            final = self.path(match_id)
            directory = final.parent
            directory.mkdir(parents=True, exist_ok=True)
            tmp = directory / f".{match_id}.{secrets.token_hex(6)}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            try:
                os.replace(tmp, final)
            except FileNotFoundError:  # another writer of this match removed it, having renamed its own
                if not final.exists():
                    raise
            remove_stale(directory, match_id)
            sizes[match_id] = len(data)
        if sizes:
            # every file, directory and rename above on disk (sync(2) waits for the writes): the
            # standard library has no syncfs, so this flushes the other filesystems' too
            os.sync()
        return sizes

    def read(self, match_id: str) -> dict:
        """The match's archived document; `ArchiveMissing` if it has no readable file."""
        with self._lock:
            raw = self._cache.get(match_id)
            if raw is not None:
                self._cache.move_to_end(match_id)
        if raw is None:
            path = self.path(match_id)
            try:
                raw = gzip.decompress(path.read_bytes())
            except FileNotFoundError:
                raise ArchiveMissing(match_id, path) from None
            except (OSError, EOFError, gzip.BadGzipFile) as exc:
                raise ArchiveMissing(match_id, path, f"an unreadable file ({exc})") from None
            with self._lock:
                if match_id not in self._cache:
                    self._cache[match_id] = raw
                    self._cached += len(raw)
                while self._cached > CACHE_BYTES and len(self._cache) > 1:
                    self._cached -= len(self._cache.popitem(last=False)[1])
        try:
            doc = json.loads(raw)
        except ValueError as exc:
            raise ArchiveMissing(match_id, self.path(match_id), f"an unreadable file ({exc})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or (doc.get("match") or {}).get("id") != match_id:
            raise ArchiveMissing(match_id, self.path(match_id), "a file that is not this match's")
        return doc

    def has(self, match_id: str) -> bool:
        return self.path(match_id).is_file()


def remove_stale(directory: Path, match_id: str) -> None:
    """Remove the match's temporary files in `directory` (`.{id}.{token}.tmp`): a killed
    writer's, or a slower one's. One scan of the directory, not a pattern glob, which compiles a
    regular expression for every match id (docs/performance.md)."""
    prefix = f".{match_id}."
    with os.scandir(directory) as entries:
        stale = [e.path for e in entries if e.name.startswith(prefix) and e.name.endswith(".tmp")]
    for path in stale:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
