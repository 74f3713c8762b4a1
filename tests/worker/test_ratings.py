"""core/ratings.py: the openskill ladder, drained in queue order under a lock, on a real Redis."""

from __future__ import annotations

import logging
import random
import threading
import time

import pytest
import redis as redis_lib

import core.ratings
from core.ratings import new_ratings, update_ratings
from core.store import Store, secret_key
from core.store.ratings import DEFAULT_MU, DEFAULT_SIGMA, RATING_HISTORY_POINTS, rating_queue_key
from tests.waiting import wait_until

GAME = "double-carre"


def make_bots(store, n: int) -> list[str]:
    return [store.create_bot("acct_test", f"bot{i}", GAME, "python",
                             entrypoint="example_bots.random:RandomBot")[0]["id"] for i in range(n)]


def record(bot: str, rank: int, ranks: list[int]) -> dict:
    return {"bot": bot, "won": rank == 1 and ranks.count(1) == 1, "faults": 0, "points": 0.0,
            "score": 0.0, "draw": rank == 1 and ranks.count(1) > 1, "forfeit": False}


def finish_rated(store, seats: list[str], ranks: list[int], versions: list[int] | None = None) -> str:
    """A rated match, concluded as the runner concludes one: queued for the ladder."""
    match = store.create_match(GAME, seats, seed=1, options={}, rated=True, versions=versions)
    result = {"scores": [float(-r) for r in ranks], "ranks": ranks}
    assert store.conclude_match(match["id"], "finished", result,
                                records=[record(b, r, ranks) for b, r in zip(seats, ranks, strict=True)])
    return match["id"]


def sequential(matches: list[tuple[list[str], list[int]]]) -> dict[str, tuple[float, float]]:
    """Ratings after applying `matches` one after the other, from openskill's defaults."""
    ratings: dict[str, tuple[float, float]] = {}
    for seats, ranks in matches:
        current = [dict(zip(("mu", "sigma"), ratings.get(b, (DEFAULT_MU, DEFAULT_SIGMA)), strict=True))
                   for b in seats]
        for bot, rating in zip(seats, new_ratings(current, ranks), strict=True):
            ratings[bot] = rating
    return ratings


def random_matches(bots: list[str], count: int, seed: int) -> list[tuple[list[str], list[int]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        seats = rng.sample(bots, 2)
        out.append((seats, rng.choice([[1, 2], [2, 1], [1, 1]])))
    return out


def queue_random(store, bots: int, count: int, seed: int) -> list[tuple[list[str], list[int]]]:
    """`count` random rated matches between `bots` new bots, concluded: queued for the ladder."""
    played = random_matches(make_bots(store, bots), count, seed)
    for seats, ranks in played:
        finish_rated(store, seats, ranks)
    return played


def stored(store, bots: list[str]) -> dict[str, tuple[float, float]]:
    return {b: (store.bot_rating(GAME, b)["mu"], store.bot_rating(GAME, b)["sigma"]) for b in bots}


def assert_same_ratings(got: dict, expected: dict) -> None:
    assert got.keys() == expected.keys()
    for bot, (mu, sigma) in expected.items():
        assert got[bot][0] == pytest.approx(mu, rel=1e-12), bot
        assert got[bot][1] == pytest.approx(sigma, rel=1e-12), bot


def queue_length(store) -> int:
    return store.r.llen(f"ratings:queue:{GAME}")


def run_together(threads: list[threading.Thread]) -> None:
    """Start every thread, then wait for them all."""
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)


def test_new_ratings_is_openskill_plackett_luce_without_dynamics_and_with_the_full_variance_update():
    from openskill.models import PlackettLuce

    m = PlackettLuce(tau=0.0, gamma=lambda *_: 1.0)
    a, b = m.rating(mu=30.0, sigma=5.0), m.rating(mu=22.0, sigma=7.0)
    [[a2], [b2]] = m.rate([[a], [b]], ranks=[2, 1])
    got = new_ratings([{"mu": 30.0, "sigma": 5.0}, {"mu": 22.0, "sigma": 7.0}], [2, 1])
    assert got == [(a2.mu, a2.sigma), (b2.mu, b2.sigma)]


def test_sigma_keeps_shrinking_deal_after_deal_so_mu_settles():
    """A version is a fixed program: its rating has no dynamics (τ = 0), so σ falls as the deals
    add up instead of levelling off (openskill's default τ and γ hold it near 1.5 after 400 even
    deals), and the 400th deal moves μ far less than the 10th."""
    a, b = (DEFAULT_MU, DEFAULT_SIGMA), (DEFAULT_MU, DEFAULT_SIGMA)
    sigmas, steps = [], []
    for n in range(400):
        ranks = [1, 2] if n % 2 else [2, 1]
        (a2, b2) = new_ratings([{"mu": a[0], "sigma": a[1]}, {"mu": b[0], "sigma": b[1]}], ranks)
        steps.append(abs(a2[0] - a[0]))
        a, b = a2, b2
        sigmas.append(a[1])
    assert all(later < earlier for earlier, later in zip(sigmas, sigmas[1:], strict=False))
    assert sigmas[-1] < 0.6 * sigmas[99]
    assert steps[399] < 0.05 * steps[9]


def test_the_winner_goes_up_the_loser_down_and_both_grow_surer(store):
    winner, loser = make_bots(store, 2)
    mid = finish_rated(store, [loser, winner], [2, 1])
    assert store.rating_events(GAME) == [mid]
    assert update_ratings(store, GAME) == 1
    w, lo = store.bot_rating(GAME, winner), store.bot_rating(GAME, loser)
    assert w["mu"] > DEFAULT_MU > lo["mu"]
    assert w["sigma"] < DEFAULT_SIGMA and lo["sigma"] < DEFAULT_SIGMA
    assert w["ordinal"] == pytest.approx(w["mu"] - 3 * w["sigma"])
    assert queue_length(store) == 0
    history = store.rating_history(winner)
    assert [p["match"] for p in history] == [mid]
    assert [r["bot"] for r in store.rankings(GAME)] == [winner, loser]


def test_update_ratings_applies_the_queue_in_order_like_openskill_sequentially(store):
    bots = make_bots(store, 5)
    played = random_matches(bots, 25, seed=4)
    for seats, ranks in played:
        finish_rated(store, seats, ranks)
    assert update_ratings(store, GAME) == 25
    assert queue_length(store) == 0
    assert_same_ratings(stored(store, bots), sequential(played))
    # each bot's history has one point per rated match, ending at its rating
    for bot in bots:
        history = store.rating_history(bot)
        assert len(history) == sum(bot in seats for seats, _ in played)
        assert (history[-1]["mu"], history[-1]["sigma"]) == stored(store, [bot])[bot]


def test_a_three_seat_match_with_a_tie_is_rated_too(store):
    a, b, c = make_bots(store, 3)
    finish_rated(store, [a, b, c], [1, 1, 3])
    update_ratings(store, GAME)
    assert_same_ratings(stored(store, [a, b, c]), sequential([([a, b, c], [1, 1, 3])]))
    assert store.bot_rating(GAME, c)["mu"] < DEFAULT_MU


def test_a_match_with_the_same_bot_twice_is_dequeued_without_ratings(store):
    (a,) = make_bots(store, 1)
    mid = finish_rated(store, [a, a], [1, 2])
    assert store.rating_events(GAME) == [mid]
    assert update_ratings(store, GAME) == 1
    assert queue_length(store) == 0
    assert store.rating_history(a) == []
    assert store.bot_rating(GAME, a)["mu"] == DEFAULT_MU
    assert store.rankings(GAME) == []


def test_each_version_is_rated_on_its_own_and_the_ladder_shows_the_latest(store):
    a, b = make_bots(store, 2)
    first = finish_rated(store, [a, b], [1, 2])  # a's version 1 beats b
    assert store.new_version(a) == 2
    second = finish_rated(store, [b, a], [1, 2])  # b beats a's version 2, which starts afresh
    duel = finish_rated(store, [a, a], [1, 2], versions=[2, 1])  # version 2 beats version 1: two entrants
    assert update_ratings(store, GAME) == 3
    expected = sequential([([a, b], [1, 2]), ([b, f"{a}@2"], [1, 2]), ([f"{a}@2", a], [1, 2])])
    assert_same_ratings(stored(store, [a, f"{a}@2", b]), expected)
    assert [(p["version"], p["match"]) for p in store.rating_history(a)] == [
        (1, first), (2, second), (2, duel), (1, duel)]
    assert store.get_bot(a)["rating"]["mu"] == pytest.approx(expected[f"{a}@2"][0])
    ladder = store.rankings(GAME)
    assert sorted((r["bot"], r["version"]) for r in ladder) == sorted([(a, 2), (b, 1)])  # one row a bot
    versions = store.bot_versions(store.get_bot(a))
    assert [(v["version"], v["rating"]["mu"]) for v in versions] == [
        (2, pytest.approx(expected[f"{a}@2"][0])), (1, pytest.approx(expected[a][0]))]


def test_a_self_match_between_rated_ones_does_not_stop_the_queue(store):
    a, b = make_bots(store, 2)
    finish_rated(store, [a, b], [1, 2])
    finish_rated(store, [b, b], [1, 2])
    finish_rated(store, [b, a], [1, 2])
    assert update_ratings(store, GAME) == 3
    assert_same_ratings(stored(store, [a, b]), sequential([([a, b], [1, 2]), ([b, a], [1, 2])]))
    assert len(store.rating_history(b)) == 2


def test_unrated_and_aborted_matches_never_reach_the_ladder(store):
    a, b = make_bots(store, 2)
    unrated = store.create_match(GAME, [a, b], seed=1, options={}, rated=False)
    store.conclude_match(unrated["id"], "finished", {"scores": [1, 0], "ranks": [1, 2]},
                         records=[record(a, 1, [1, 2]), record(b, 2, [1, 2])])
    aborted = store.create_match(GAME, [a, b], seed=1, options={}, rated=True)
    store.conclude_match(aborted["id"], "aborted", None, reason="test")
    assert queue_length(store) == 0
    assert update_ratings(store, GAME) == 0
    assert store.rating_history(a) == []


def test_a_held_lock_leaves_the_queue_to_its_holder(store):
    a, b = make_bots(store, 2)
    finish_rated(store, [a, b], [1, 2])
    lock = store.rating_lock(GAME, timeout_s=10)
    assert lock.acquire(blocking=False)
    try:
        assert update_ratings(store, GAME) == 0  # never waits
        assert queue_length(store) == 1
    finally:
        lock.release()
    assert update_ratings(store, GAME) == 1


class PausingStore(Store):
    """The platform's store whose rating worker pauses after each deal it applies (`after_apply`,
    given how many it applied so far): a batch that takes long, or a process that stalls."""

    def __init__(self, client, after_apply) -> None:
        super().__init__(client, secret_key(client))
        self.after_apply = after_apply
        self.applied = 0

    def apply_rating_event(self, *args, **kwargs) -> bool:
        done = super().apply_rating_event(*args, **kwargs)
        self.applied += done
        self.after_apply(self.applied)
        return done


def test_a_batch_that_outlasts_the_rating_lock_keeps_it_by_renewing_it(store, redis_client, monkeypatch):
    """Each deal takes half the lock's life (after applying it the worker waits until the lock's
    time to live fell by that much, or the lock is gone): three deals outlast the lock, which
    must still be the worker's at each of them."""
    lock_s = 1.0
    monkeypatch.setattr(core.ratings, "RATING_LOCK_S", lock_s)
    lock = store.rating_lock(GAME).name
    held: list[bool] = []

    def half_a_life(applied: int) -> None:
        until = max(redis_client.pttl(lock) - lock_s * 500, 0)  # half its life on, or gone
        wait_until(lambda: max(redis_client.pttl(lock), 0) <= until, 10, "half the lock's life gone")
        held.append(bool(redis_client.exists(lock)))

    played = queue_random(store, 3, 3, seed=5)
    started = time.monotonic()
    assert update_ratings(PausingStore(redis_client, half_a_life), GAME) == 3
    assert time.monotonic() - started > lock_s  # the batch outlasted the lock's life
    assert held == [True, True, True]
    assert queue_length(store) == 0
    expected = sequential(played)
    assert_same_ratings(stored(store, list(expected)), expected)


def test_a_batch_whose_rating_lock_another_worker_took_stops_applying(store, redis_client, monkeypatch, caplog):
    """The worker stalls after its second deal until its lock expires, and another worker takes
    the lock: the batch must apply no more (its ratings in memory are the other's to change),
    leaving the rest of the queue to the lock's holder."""
    monkeypatch.setattr(core.ratings, "RATING_LOCK_S", 0.5)
    lock = store.rating_lock(GAME).name
    other = store.rating_lock(GAME, timeout_s=30)

    def stall_after_the_second(applied: int) -> None:
        if applied == 2:
            wait_until(lambda: not redis_client.exists(lock), 10, "the lock's expiry")
            assert other.acquire(blocking=False)

    played = queue_random(store, 4, 5, seed=6)
    with caplog.at_level(logging.WARNING, logger="cardarena.worker"):
        assert update_ratings(PausingStore(redis_client, stall_after_the_second), GAME) == 2
    assert "lost" in caplog.text
    assert queue_length(store) == 3
    expected = sequential(played[:2])
    assert_same_ratings(stored(store, list(expected)), expected)
    other.release()
    assert update_ratings(store, GAME) == 3  # the holder drains the rest
    expected = sequential(played)
    assert_same_ratings(stored(store, list(expected)), expected)


def test_a_holder_stalled_between_renewals_writes_nothing_once_another_took_the_lock(store, redis_client, caplog):
    """The lock changes hands after the second deal while the holder's lease still thinks it
    fresh (no renewal due for 20 s): each write checks the lock itself, so no third deal lands."""
    lock = store.rating_lock(GAME).name

    def taken_over_after_the_second(applied: int) -> None:
        if applied == 2:
            redis_client.set(lock, "another worker's token", px=30_000)  # expired, and taken

    played = queue_random(store, 4, 5, seed=7)
    with caplog.at_level(logging.WARNING, logger="cardarena.worker"):
        assert update_ratings(PausingStore(redis_client, taken_over_after_the_second), GAME) == 2
    assert "lost" in caplog.text and queue_length(store) == 3
    expected = sequential(played[:2])
    assert_same_ratings(stored(store, list(expected)), expected)


def test_a_refit_is_saved_only_while_its_lock_is_the_callers(store, redis_client):
    a, b = make_bots(store, 2)
    finish_rated(store, [a, b], [1, 2])
    assert update_ratings(store, GAME) == 1
    before = stored(store, [a, b])
    lock = store.rating_lock(GAME).name
    redis_client.set(lock, "theirs", px=30_000)
    assert store.save_refit(GAME, {a: (1.0, 1.0), b: (2.0, 1.0)}, {}, (lock, "ours")) is False
    assert stored(store, [a, b]) == before and store.collusion_flags(GAME) == {}
    redis_client.set(lock, "ours", px=30_000)
    assert store.save_refit(GAME, {a: (1.0, 1.0), b: (2.0, 1.0)}, {}, (lock, "ours")) is True
    assert stored(store, [a, b]) == {a: (1.0, 1.0), b: (2.0, 1.0)}


def test_six_threads_draining_at_once_lose_no_update_and_apply_none_twice(store, redis_url):
    bots = make_bots(store, 8)
    played = random_matches(bots, 60, seed=9)
    for seats, ranks in played:
        finish_rated(store, seats, ranks)
    assert queue_length(store) == 60

    start = threading.Barrier(6)
    counts: list[int] = []
    errors: list[BaseException] = []

    def drain() -> None:
        client = redis_lib.Redis.from_url(redis_url)
        try:
            own = Store(client, secret_key(client))
            start.wait()
            counts.append(update_ratings(own, GAME))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            client.close()

    run_together([threading.Thread(target=drain) for _ in range(6)])
    assert not errors
    assert queue_length(store) == 0
    assert sum(counts) == 60  # every match rated by exactly one of them
    for bot in bots:
        history = store.rating_history(bot)
        assert len(history) == sum(bot in seats for seats, _ in played)
        assert len({p["match"] for p in history}) == len(history)
    assert_same_ratings(stored(store, bots), sequential(played))


def test_workers_finishing_matches_while_others_rate_lose_no_update(store, redis_url):
    """Six workers each conclude matches and drain the ladder after each, as match jobs do.

    The queue order then depends on the race, so instead of one expected
    order the test checks every rating step: each point of a bot's history
    must be openskill applied to that match's seats' previous points.
    """
    bots = make_bots(store, 6)
    plans = [random_matches(bots, 10, seed=100 + w) for w in range(6)]
    start = threading.Barrier(6)
    errors: list[BaseException] = []

    def work(plan) -> None:
        client = redis_lib.Redis.from_url(redis_url)
        try:
            own = Store(client, secret_key(client))
            start.wait()
            for seats, ranks in plan:
                finish_rated(own, seats, ranks)
                update_ratings(own, GAME)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            client.close()

    run_together([threading.Thread(target=work, args=(plan,)) for plan in plans])
    assert not errors
    assert queue_length(store) == 0

    histories = {b: store.rating_history(b) for b in bots}
    for bot in bots:
        assert len(histories[bot]) == sum(bot in seats for plan in plans for seats, _ in plan)
    # the position of each match in each of its bots' histories
    where: dict[str, dict[str, int]] = {}
    for bot, history in histories.items():
        for i, point in enumerate(history):
            assert point["match"] not in where.get(bot, {})  # never applied twice
            where.setdefault(bot, {})[point["match"]] = i
    matches = {mid for positions in where.values() for mid in positions}
    assert len(matches) == 60
    for mid in matches:
        match = store.get_match(mid)
        seats, ranks = match["seats"], match["result"]["ranks"]
        before = []
        for bot in seats:
            i = where[bot][mid]
            prev = histories[bot][i - 1] if i else {"mu": DEFAULT_MU, "sigma": DEFAULT_SIGMA}
            before.append({"mu": prev["mu"], "sigma": prev["sigma"]})
        for bot, (mu, sigma) in zip(seats, new_ratings(before, ranks), strict=True):
            point = histories[bot][where[bot][mid]]
            assert point["mu"] == pytest.approx(mu, rel=1e-12)
            assert point["sigma"] == pytest.approx(sigma, rel=1e-12)
    for bot in bots:
        last = histories[bot][-1]
        assert stored(store, [bot])[bot] == (last["mu"], last["sigma"])


def finish_deal(store, seatings: list[list[str]], ranks: list[list[int]], tag: str) -> list[str]:
    """A duplicate deal (twins), each rotation concluded as the runner concludes one."""
    ids = [f"m_{tag}_{r}" for r in range(len(seatings))]
    for mid, seats in zip(ids, seatings, strict=True):
        store.create_match(GAME, seats, seed=1, options={}, rated=True, match_id=mid, twins=ids)
    for mid, seats, rk in zip(ids, seatings, ranks, strict=True):
        result = {"scores": [float(-r) for r in rk], "ranks": rk}
        assert store.conclude_match(mid, "finished", result,
                                    records=[record(b, r, rk) for b, r in zip(seats, rk, strict=True)])
    return ids


@pytest.mark.parametrize(("second", "expected"), [([2, 1], [1, 2]), ([1, 2], [1, 1])])
def test_a_duplicate_deal_is_rated_once_by_the_match_points_summed_over_its_rotations(store, second, expected):
    a, b = make_bots(store, 2)
    # a wins the first rotation; the second (seats swapped) is a's win again, or b's (a split deal: a tie)
    ids = finish_deal(store, [[a, b], [b, a]], [[1, 2], second], "deal")
    assert store.rating_events(GAME) == [",".join(ids)]  # one event: the whole deal
    assert update_ratings(store, GAME) == 1
    assert_same_ratings(stored(store, [a, b]), sequential([([a, b], expected)]))
    assert [p["match"] for p in store.rating_history(a)] == [ids[-1]]


def test_a_deal_of_four_seats_ranks_its_bots_by_their_summed_points(store):
    from core.ratings import deal_ranks

    bots = make_bots(store, 4)
    rotations = [(bots[r:] + bots[:r], [1, 2, 3, 4]) for r in range(4)]  # each bot wins one rotation
    assert deal_ranks(rotations) == (bots, [1, 1, 1, 1])
    rotations[0] = (bots, [1, 1, 3, 4])  # bots[1] shares bots[0]'s win: half a point moves
    assert deal_ranks(rotations) == (bots, [4, 1, 2, 2])


def test_a_bots_rating_history_keeps_its_latest_points_only(store):
    """A bot on the ladder all year would grow its history by hundreds of thousands of points:
    the store keeps the latest `RATING_HISTORY_POINTS`, oldest first, on both ways of saving."""
    a, b = make_bots(store, 2)
    extra = 5
    ids = [f"m_history_{k}" for k in range(RATING_HISTORY_POINTS + extra)]
    store.r.rpush(rating_queue_key(GAME), *ids)
    for k, mid in enumerate(ids):
        assert store.apply_rating_event(GAME, mid, {a: (25.0 + k / 1000, 8.0), b: (25.0, 8.0)})
    history = store.rating_history(a)
    assert len(history) == RATING_HISTORY_POINTS
    assert [p["match"] for p in history[:2]] == ids[extra:extra + 2] and history[-1]["match"] == ids[-1]
    store.save_rating(GAME, a, 30.0, 5.0, match_id="m_saved")
    history = store.rating_history(a)
    assert len(history) == RATING_HISTORY_POINTS and history[-1]["match"] == "m_saved"
    assert history[0]["match"] == ids[extra + 1]
