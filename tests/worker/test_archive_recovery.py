"""Archiving survives a process killed at any step, and waits for a deal's last rotation.

The states a crash leaves are built by hand on a real Redis (as tests/worker/test_recovery.py
does): a match concluded by a runner that died before its follow-ups, one whose file was
written but Redis not yet trimmed, a writer killed mid-file. The recovery sweep finishes
each; nothing is lost, no file is half written, nothing is archived twice.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import random
import time

import pytest

from core import conclusion
from core.store import Store, secret_key
from core.store.archive import Archive, document
from core.store.matches import ARCHIVED, ArchiveBusy
from tests.server.driving import make_bots, played
from worker import recovery


@pytest.fixture()
def store(redis_client, tmp_path):
    s = Store(redis_client, secret_key(redis_client))
    s.archive = Archive(tmp_path / "archive")
    return s


def archived(store, mid: str) -> bool:
    return bool(store.r.hexists(f"match:{mid}", ARCHIVED))


def test_a_match_whose_runner_died_after_its_end_is_archived_by_the_sweep(store):
    mid = played(store, make_bots(store), seed=4)  # concluded: active, its follow-ups not run
    log, match = store.match_log(mid), store.get_match(mid)
    assert ("match", mid) in store.active_jobs() and not archived(store, mid)
    recovery.sweep(store)
    assert archived(store, mid) and ("match", mid) not in store.active_jobs()
    assert store.match_log(mid) == log and store.get_match(mid) == match


def test_a_file_written_before_redis_let_go_is_finished_the_same(store):
    mid = played(store, make_bots(store), seed=5)
    record, log = store.get_match(mid), store.match_log(mid)
    store.archive.write(mid, document(dict(sorted(record.items())), log, {}))  # then the process died: Redis still whole
    written = store.archive.path(mid).read_bytes()
    stale = store.archive.path(mid).with_name(f".{mid}.deadbeef0000.tmp")
    stale.write_bytes(written[:10])  # and another writer was killed mid-file
    recovery.sweep(store)
    assert archived(store, mid)
    assert store.archive.path(mid).read_bytes() == written  # the same bytes: written again whole
    assert not stale.exists()  # the dead writer's half file is gone
    doc = json.loads(gzip.decompress(written))
    assert doc["match"] == record and doc["log"] == log


def test_twins_are_archived_together_when_their_deal_is_over(store):
    bots = make_bots(store)
    a = store.create_match("duck-soup", bots, 7, {}, match_id="m_twin_a", twins=["m_twin_a", "m_twin_b"])
    store.create_match("duck-soup", bots[::-1], 7, {}, match_id="m_twin_b", twins=["m_twin_a", "m_twin_b"])
    conclusion.end_match(store, a["id"], "aborted", reason="a test")
    assert not archived(store, "m_twin_a")  # its deal is not over: the last twin's end reads it
    conclusion.end_match(store, "m_twin_b", "aborted", reason="a test")
    assert archived(store, "m_twin_a") and archived(store, "m_twin_b")


def test_with_archiving_off_finished_matches_stay_whole_in_redis(store):
    store.archive = None
    mid = played(store, make_bots(store), seed=6)
    conclusion.match_concluded(store, store.get_match(mid))
    assert not archived(store, mid) and store.r.exists(f"match:{mid}:log")


def test_an_archive_that_cannot_be_written_keeps_the_match_in_redis_and_the_sweep_going(store, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the archive's directory should be")
    store.archive = Archive(blocked)
    bots = make_bots(store)
    mids = [played(store, bots, seed=s) for s in (8, 9)]
    recovery.sweep(store)  # fails for both, stops for neither
    assert all(("match", m) in store.active_jobs() and store.r.exists(f"match:{m}:log") for m in mids)
    store.archive = Archive(tmp_path / "archive")  # the volume is back
    recovery.sweep(store)
    assert all(archived(store, m) for m in mids) and not store.active_jobs()


def test_archivers_racing_for_one_match_leave_its_whole_log_in_the_file(store):
    """Twins end together and the sweep runs beside them: several processes archive one match at
    once. One that read the record before another let go, and the log just after (deleted by
    then), must not replace the file with an empty log (the dispatcher kill -9 e2e test found a
    finished match with no log once in ~20 runs)."""
    import threading

    bots = make_bots(store)
    mids = [played(store, bots, seed=s) for s in range(20, 60)]
    logs = {m: store.match_log(m) for m in mids}
    clients = [Store(type(store.r)(connection_pool=store.r.connection_pool), secret_key(store.r)) for _ in range(4)]
    for c in clients:
        c.archive = Archive(store.archive.root)
    barrier = threading.Barrier(len(clients))

    def archive_all(s: Store, rng: random.Random) -> None:
        for m in mids:
            barrier.wait(timeout=30)  # all of them on the same match at once, a few ms apart
            time.sleep(rng.uniform(0, 0.01))
            with contextlib.suppress(ArchiveBusy):  # another is at it: it finishes
                s.archive_match(m)

    threads = [threading.Thread(target=archive_all, args=(c, random.Random(i))) for i, c in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for m in mids:
        assert archived(store, m)
        doc = json.loads(gzip.decompress(store.archive.path(m).read_bytes()))
        assert doc["log"] == logs[m], f"{m}: the file holds {len(doc['log'])} of {len(logs[m])} entries"


def test_a_match_another_process_is_archiving_stays_active_until_the_sweep_finds_it_archived(store):
    """The process that holds a match's archiving lease may die: whoever found it busy leaves the
    match active, so the sweep archives it once the lease has lapsed."""
    mid = played(store, make_bots(store), seed=61)
    store.r.set(f"lease:archive:{mid}", "another-process", px=60_000)  # it is at it (and then dies)
    conclusion.match_concluded(store, store.get_match(mid))
    assert not archived(store, mid) and ("match", mid) in store.active_jobs()
    recovery.sweep(store)  # still its lease: nothing done, nothing forgotten
    assert not archived(store, mid) and ("match", mid) in store.active_jobs()
    store.r.delete(f"lease:archive:{mid}")  # the lease lapsed
    recovery.sweep(store)
    assert archived(store, mid) and ("match", mid) not in store.active_jobs()
    assert not store.r.exists(f"lease:archive:{mid}")  # given back
