"""Archiving survives a process killed at any step, waits for a deal's last rotation, and
goes a batch at a time.

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
from core.store.matches import ARCHIVE_BATCH, ARCHIVED, ArchiveBusy, archive_due_key, log_key
from tests.server.driving import make_bots, played
from worker import recovery


@pytest.fixture()
def store(redis_client, tmp_path):
    s = Store(redis_client, secret_key(redis_client))
    s.archive = Archive(tmp_path / "archive")
    return s


def stored_log(store, mid: str) -> list[bytes]:
    """The match's log as Redis holds it: the entries' JSON texts the archive embeds."""
    return store.r.lrange(log_key(mid), 0, -1)


def archived(store, mid: str) -> bool:
    return bool(store.r.hexists(f"match:{mid}", ARCHIVED))


def due(store) -> list[str]:
    """The matches due to be archived, the longest due first."""
    return [m.decode() for m in store.r.zrange(archive_due_key(store.queue), 0, -1)]


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
    store.archive.write(mid, document(dict(sorted(record.items())), stored_log(store, mid), {}))  # then it died
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
    assert due(store) == [] and not archived(store, "m_twin_a")  # the last twin's end reads it
    assert ("match", "m_twin_a") not in store.active_jobs()  # its follow-ups are done
    conclusion.end_match(store, "m_twin_b", "aborted", reason="a test")
    assert sorted(due(store)) == ["m_twin_a", "m_twin_b"] and not store.active_jobs()
    recovery.sweep(store)  # less than a batch is due: the sweep archives it
    assert archived(store, "m_twin_a") and archived(store, "m_twin_b") and due(store) == []


class CountingArchive(Archive):
    """The archive, with the batches `write_all` was given."""

    def __init__(self, root) -> None:
        super().__init__(root)
        self.batches: list[list[str]] = []

    def write_all(self, docs: dict[str, bytes]) -> dict[str, int]:
        self.batches.append(sorted(docs))
        return super().write_all(docs)


def test_the_end_that_makes_a_batch_due_archives_it_in_one_write(store, tmp_path):
    store.archive = counting = CountingArchive(tmp_path / "counted")
    bots = make_bots(store)
    mids = [played(store, bots, seed=s) for s in range(100, 100 + ARCHIVE_BATCH)]
    for mid in mids[:-1]:
        conclusion.match_concluded(store, store.get_match(mid))
    assert counting.batches == [] and len(due(store)) == ARCHIVE_BATCH - 1
    conclusion.match_concluded(store, store.get_match(mids[-1]))
    assert counting.batches == [sorted(mids)]  # one batch: its files made durable by one os.sync
    assert all(archived(store, m) for m in mids) and due(store) == [] and not store.active_jobs()


def test_a_batch_whose_archiver_died_before_redis_let_go_is_finished_by_the_sweep(store):
    bots = make_bots(store)
    mids = [played(store, bots, seed=s) for s in (200, 201, 202)]
    for mid in mids:
        conclusion.match_concluded(store, store.get_match(mid))
    docs = {m: document(dict(sorted(store.get_match(m).items())), stored_log(store, m), {}) for m in mids}
    store.archive.write_all(docs)  # and then the process died: Redis still holds them whole, due
    assert sorted(due(store)) == sorted(mids) and not any(archived(store, m) for m in mids)
    recovery.sweep(store)
    assert all(archived(store, m) for m in mids) and due(store) == []
    for m in mids:
        assert gzip.decompress(store.archive.path(m).read_bytes()) == docs[m]


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
    assert sorted(due(store)) == sorted(mids) and all(store.r.exists(f"match:{m}:log") for m in mids)
    store.archive = Archive(tmp_path / "archive")  # the volume is back
    recovery.sweep(store)
    assert all(archived(store, m) for m in mids) and not store.active_jobs() and due(store) == []


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


def test_a_match_another_process_is_archiving_stays_due_until_the_sweep_finds_its_lease_lapsed(store):
    """The process that holds a match's archiving lease may die: the match stays due, so a
    later sweep archives it once the lease has lapsed."""
    mid = played(store, make_bots(store), seed=61)
    store.r.set(f"lease:archive:{mid}", "another-process", px=60_000)  # it is at it (and then dies)
    conclusion.match_concluded(store, store.get_match(mid))
    assert not archived(store, mid) and due(store) == [mid] and not store.active_jobs()
    recovery.sweep(store)  # still its lease: nothing done, nothing forgotten
    assert not archived(store, mid) and due(store) == [mid]
    store.r.delete(f"lease:archive:{mid}")  # the lease lapsed
    recovery.sweep(store)
    assert archived(store, mid) and due(store) == []
    assert not store.r.exists(f"lease:archive:{mid}")  # given back


def test_a_dead_archivers_batch_holds_up_no_other_match(store, monkeypatch):
    """The matches due the longest may be leased by an archiver that died: until their leases
    lapse the sweep passes over them and archives the matches due after them."""
    monkeypatch.setattr(recovery, "ARCHIVE_BATCH", 2)
    bots = make_bots(store)
    mids = [played(store, bots, seed=s) for s in (300, 301, 302)]
    for mid in mids:
        conclusion.match_concluded(store, store.get_match(mid))
    held = due(store)[:2]  # the oldest batch: another process took it, and died
    for mid in held:
        store.r.set(f"lease:archive:{mid}", "a dead archiver", px=60_000)
    recovery.sweep(store)
    assert due(store) == held and all(archived(store, m) for m in mids if m not in held)


def test_the_document_embeds_the_stored_entries_as_the_json_of_the_whole_would_write_them(store):
    mid = played(store, make_bots(store), seed=9)
    record, log = dict(sorted(store.get_match(mid).items())), store.match_log(mid)
    debug = {"3": {"seat": 1, "text": "thinking \u00e9\n"}}
    whole = {"format": "cardarena-archive", "version": 1, "match": record, "log": log, "debug": debug}
    assert document(record, stored_log(store, mid), debug) == json.dumps(whole, separators=(",", ":")).encode()
    assert json.loads(document(record, [], {})) == {**whole, "log": [], "debug": {}}
