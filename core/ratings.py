"""The ladder: which matches are rated, and openskill ratings updated from every finished one.

Matches are rated in the order they finished (the store's queue), one game
at a time under a Redis lock, and each match's new ratings are saved in the
same transaction that removes it from the queue (`apply_rating_event`). So
with many workers finishing matches at once no update is lost or applied
twice: whoever holds the lock drains the queue, looking again after it lets
the lock go, so a worker that finds the lock taken can leave its match to it.
The lock expires `RATING_LOCK_S` after it was last renewed (`Lease`), so a
worker that dies holding it frees the queue; a batch renews it as it goes and
stops, writing nothing more, once it finds it no longer its own (it stalled
past the lock's life and another worker may rate now: two workers each
carrying ratings in memory would overwrite each other's updates).

The model is Plackett–Luce (openskill's default), which rates k-seat
matches with ties as well as two-seat ones; a seat's rating is (μ, σ) and the
ladder orders by the ordinal μ − 3σ.

A duplicate deal is rated once, as a whole (`deal_ratings`): its bots ranked
by the match points they summed over the deal's rotations, in one openskill
update. Duplicate play exists to cancel the luck of the cards; rating each
rotation on its own would put that luck back into the ratings (bench/ladder.py
measures the difference). A lone match is a deal of one rotation: rated as
its ranks say. The queue therefore holds one event per deal: its finished
rotations' ids (core/store/ratings.py `queue_for_rating`).
"""

from __future__ import annotations

import logging
import secrets
import time
from functools import lru_cache

import redis

from core import collusion
from core.store.ratings import DEFAULT_MU, DEFAULT_SIGMA
from games.ranking import match_points, ranks_of
from sdk.clock import DEFAULT_TIME, TimeRules

log = logging.getLogger("cardarena.worker")


#: what a match is, for the rating rule: the matchmaker's, a tournament's, a challenge (`POST
#: /matches`) or a comparison's
KINDS = ("ladder", "tournament", "challenge", "comparison")


def kind_of(match: dict) -> str:
    """What a stored match is (`KINDS`): the ladder's, a tournament's, a comparison's, or a
    challenge."""
    if match.get("kind") == "ladder":
        return "ladder"
    if match.get("tournament"):
        return "tournament"
    if match.get("comparison"):
        return "comparison"
    return "challenge"


def is_rated(kind: str, seed: int | None = None, options: dict | None = None, *, by_admin: bool = False,
             clock: dict | None = None) -> bool:
    """Whether a match moves the ratings (docs/api.md §6 "The ladder is the platform's"). The one
    statement of the rule: the matchmaker, challenges and tournaments ask here.

    Only the ladder's matches (the matchmaker chose the opponents, the deal and the clock), and
    tournaments the admin created on the standard clock (`clock`: their `move_timeout_ms`,
    `time_bank_ms`, `max_faults`; a field left out is the standard) with a seed the server drew
    and no `deck`. Everything an account schedules — challenges, its tournaments, comparisons —
    is unrated: whoever picks the opponents, the deal or the clock could otherwise pick wins.
    """
    if kind == "ladder":
        return True
    if kind != "tournament" or not by_admin or seed is not None or (options or {}).get("deck"):
        return False
    return all((clock or {}).get(field, getattr(DEFAULT_TIME, field)) == getattr(DEFAULT_TIME, field)
               for field in TimeRules.RANGES)


#: openskill's dynamics τ, the spread a skill drifts by between matches: none. A rating belongs to
#: one version of a bot (core/store/ratings.py `entrant`), a fixed program; a changed program is a
#: new version, rated from scratch. With τ > 0 (openskill's default, 25/300) σ stops shrinking and
#: the latest deals weigh most.
TAU = 0.0


def full_variance_update(*_) -> float:
    """openskill's γ, the share of a match's information σ takes: all of it, as Bayes's rule does
    (openskill's default, σ/c, keeps σ large, so μ moves as much on the hundredth deal as on the
    tenth and close neighbours keep swapping: bench/ladder.py)."""
    return 1.0


@lru_cache(maxsize=1)
def model():
    """The ladder's model: openskill Plackett–Luce, its defaults but `TAU` and
    `full_variance_update`."""
    from openskill.models import PlackettLuce

    return PlackettLuce(tau=TAU, gamma=full_variance_update)


def new_ratings(current: list[dict], ranks: list[int]) -> list[tuple[float, float]]:
    """(μ, σ) after one match, for each seat's `current` {"mu", "sigma"} and its rank."""
    m = model()
    teams = [[m.rating(mu=r["mu"], sigma=r["sigma"])] for r in current]
    rated = m.rate(teams, ranks=list(ranks))
    return [(team[0].mu, team[0].sigma) for team in rated]


def deal_ranks(rotations: list[tuple[list[str], list[int]]]) -> tuple[list[str], list[int]]:
    """One ranking for a whole duplicate deal: its `rotations` (each: the entrant in each seat,
    and that rotation's ranks) summed into each entrant's match points, ranked highest first
    (ties share a rank). A rotation with an entrant in two seats counts for nothing. With one
    rotation, its own ranks."""
    totals: dict[str, float] = {}
    for seats, ranks in rotations:
        if not ranks or len(set(seats)) != len(seats) or len(seats) != len(ranks):
            continue
        for seat, who in enumerate(seats):
            totals[who] = totals.get(who, 0.0) + match_points(list(ranks), seat)
    entrants = list(totals)
    return entrants, ranks_of([round(totals[e], 9) for e in entrants])


def deal_ratings(current: dict[str, tuple[float, float]],
                 rotations: list[tuple[list[str], list[int]]]) -> dict[str, tuple[float, float]]:
    """(μ, σ) after one duplicate deal, by entrant: `deal_ranks` rated in one openskill update
    from each entrant's `current` (μ, σ). Nothing when fewer than two entrants played it out.
    The platform's queue (`rate_queue`) and bench/ladder.py both rate through here."""
    entrants, ranks = deal_ranks(rotations)
    if len(entrants) < 2:
        return {}
    before = [{"mu": current[e][0], "sigma": current[e][1]} for e in entrants]
    return dict(zip(entrants, new_ratings(before, ranks), strict=True))


def refit(deals: list[tuple[list[str], list[int]]], apart: set[str] | frozenset[str],
          account_of: dict[str, str]) -> dict[str, tuple[float, float]]:
    """The ratings fitted again from scratch, by entrant: the rated `deals` (each its entrants
    and their deal ranks, `deal_ranks`), in order, but those where two accounts `apart` sat at
    one table (core/collusion.py: a flagged pair's deals leave the ratings). An entrant all of
    whose deals are left out has no rating."""
    ratings: dict[str, tuple[float, float]] = {}
    for entrants, ranks in deals:
        if collusion.accounts_at(entrants, account_of) & apart:
            continue
        before = [{"mu": m, "sigma": s} for m, s in (ratings.get(e, (DEFAULT_MU, DEFAULT_SIGMA)) for e in entrants)]
        ratings.update(zip(entrants, new_ratings(before, ranks), strict=True))
    return ratings


#: how long the rating lock lives after it was taken or last renewed (`Lease`): how long a
#: worker that died while rating keeps the others from the queue
RATING_LOCK_S = 60.0


class Lease:
    """A game's rating lock (redis-py `Lock`) held through a batch: renewed
    (`Lock.reacquire`, its life back to its full timeout) before each deal once a
    third of its life has passed since its last renewal — a clock check, no round
    trip, otherwise — and before each long step. A renewal that finds the lock no
    longer ours (`LockError`: it expired, and another worker may hold it now) tells
    the batch to stop. A process can stall between a renewal and its next write, so
    each write checks the lock too, in its own step (`held`: the lock's key and
    this lease's token)."""

    def __init__(self, lock) -> None:
        self.lock = lock
        self.renewed_at = time.monotonic()
        self.held = (lock.name, secrets.token_hex(16))

    def acquire(self) -> bool:
        """Take the lock if it is free, without waiting."""
        self.renewed_at = time.monotonic()  # before the round trip: its life starts no earlier
        return bool(self.lock.acquire(blocking=False, token=self.held[1]))

    def renew(self) -> bool:
        """Renew the lock now; whether it was still ours."""
        started = time.monotonic()
        try:
            self.lock.reacquire()
        except redis.exceptions.LockError:
            return False
        self.renewed_at = started
        return True

    def keep(self) -> bool:
        """Whether the lock is still ours, renewed first if a third of its life has passed."""
        if time.monotonic() - self.renewed_at < self.lock.timeout / 3:
            return True
        return self.renew()

    def release(self) -> bool:
        """Let the lock go; whether it was still ours."""
        try:
            self.lock.release()
        except redis.exceptions.LockError:
            return False
        return True


def rate_queue(store, game: str, lease: Lease, limit: int = 1000) -> int:
    """Rate the queued matches in order, holding the rating lock (`lease`); how many were
    applied. Stops at once, applying nothing more, if the lock is no longer ours.

    Each event is a deal (`deal_ratings`: its finished rotations in one update).
    Reads every queued deal's rotations and their bots' ratings in a few round
    trips, then applies one deal per Lua step, carrying the new ratings forward
    in memory: most of a deal's rating is then a single write. The same step
    keeps the deal (its entrants and ranks, for a `refit`) and counts its
    encounters for each pair of accounts at the table (core/collusion.py); a
    deal of two accounts flagged already is not rated. Then each pair of
    accounts the batch touched is tested, and a pair newly flagged has its deals
    taken out: the game's ratings are fitted again without them (`refit_game`).
    """
    events = store.rating_events(game, limit=limit)
    if not events:
        return 0
    deals = store.rating_deals(events)
    entrants = sorted({b for deal in deals for _, seats, _ in deal for b in seats})
    current = store.bot_ratings(game, entrants)
    accounts = store.entrant_accounts(entrants)
    apart = set(store.collusion_flags(game))
    ranked = [deal_ranks([(seats, ranks) for status, seats, ranks in deal if status == "finished" and ranks])
              for deal in deals]
    pairs = sorted({key for who, _ in ranked for key in collusion.accounts_at(who, accounts)})
    records = store.pair_records(game, pairs)
    met = store.met_records(game, entrants)
    touched: set[str] = set()
    applied = 0
    for match_id, (who, ranks) in zip(events, ranked, strict=True):
        if not lease.keep():
            return lost_lock(game, applied)
        ratings, changed, changed_met = rate_deal(who, ranks, current, accounts, apart, records, met)
        deal = (who, ranks) if ratings else None
        if not store.apply_rating_event(game, match_id, ratings, deal, changed, changed_met, held=lease.held):
            break  # another worker applied it, or holds the lock now: this batch is over
        current.update(ratings)
        touched.update(changed)
        applied += 1
    if not lease.renew():
        return lost_lock(game, applied)
    flagged = test_pairs(store, game, touched, records, met, current, accounts, apart)
    if flagged:
        if not lease.renew():
            return lost_lock(game, applied)
        if not refit_game(store, game, flagged, lease.held):
            return lost_lock(game, applied)
    return applied


def lost_lock(game: str, applied: int) -> int:
    """A batch stopped because its rating lock is no longer its own: the rest of the queue is
    left to the lock's holder now; what the batch applied."""
    log.warning("ratings of %s: the rating lock was lost after %d deals: batch stopped", game, applied)
    return applied


def test_pairs(store, game: str, touched: set[str], records: dict, met: dict, current: dict,
               accounts: dict, apart: set[str]) -> dict:
    """The pairs of accounts flagged now (`newly_flagged`) among those of the accounts of the
    pairs a batch `touched` that met `MIN_DEALS` times: reads what their test needs that the
    batch did not — the other pairs of those accounts, their entrants' results, their
    opponents' ratings and accounts."""
    tested = [k for k in touched if sum(n for n, _ in records[k].values()) >= collusion.MIN_DEALS]
    if not tested:
        return {}
    entrants = {e for k in tested for pair in records[k] for e in pair.split("|")}
    met.update(store.met_records(game, sorted(entrants - set(met))))
    opponents = {o for e in entrants for o in met.get(e, {})}
    accounts.update(store.entrant_accounts(sorted((entrants | opponents) - set(accounts))))
    pairs = {collusion.pair_key(accounts[e], accounts[o]) for e in entrants for o in met.get(e, {})
             if accounts[e] != accounts[o]}
    records.update(store.pair_records(game, sorted(pairs - set(records))))
    everyone = {e for k in pairs for pair in records[k] for e in pair.split("|")}
    met.update(store.met_records(game, sorted(everyone - set(met))))
    everyone |= {o for e in everyone for o in met.get(e, {})}
    current.update(store.bot_ratings(game, sorted(everyone - set(current))))  # earlier opponents: rated now
    accounts.update(store.entrant_accounts(sorted(everyone - set(accounts))))
    return newly_flagged(records, tested, apart, accounts, met, current)


def rate_deal(who: list[str], ranks: list[int], current: dict[str, tuple[float, float]],
              account_of: dict[str, str], apart: set[str], records: dict[str, collusion.PairRecord],
              met: dict[str, collusion.MetRecord]) -> tuple[dict[str, tuple[float, float]], dict, dict]:
    """One deal's new ratings by entrant (`who`, their deal ranks: `deal_ranks`), from their
    `current` ones; its encounters counted in `records` (by pair of accounts) and `met` (by
    entrant), the changed ones returned too. Nothing when fewer than two entrants played it out
    or two accounts `apart` (flagged) sat at its table."""
    if len(who) < 2 or collusion.accounts_at(who, account_of) & apart:
        return {}, {}, {}
    before = [{"mu": current[e][0], "sigma": current[e][1]} for e in who]
    ratings = dict(zip(who, new_ratings(before, ranks), strict=True))
    changed, changed_met = {}, {}
    for a, b, score in collusion.encounters(who, ranks):
        if account_of[a] != account_of[b]:
            key = collusion.pair_key(account_of[a], account_of[b])
            collusion.add_encounter(records.setdefault(key, {}), a, b, score)
            changed[key] = records[key]
            collusion.add_met(met.setdefault(a, {}), b, score)
            collusion.add_met(met.setdefault(b, {}), a, 1.0 - score)
            changed_met[a], changed_met[b] = met[a], met[b]
    return ratings, changed, changed_met


def newly_flagged(records: dict[str, collusion.PairRecord], keys, apart: set[str], account_of: dict[str, str],
                  met: dict[str, collusion.MetRecord], current: dict[str, tuple[float, float]]) -> dict:
    """The pairs of accounts that the collusion test flags now, among those of the accounts of
    `keys` (the pairs a batch touched) in `records` that are not `apart` yet and met at least
    `MIN_DEALS` times: their tests (core/collusion.py; `records` must hold every pair of those
    accounts, `met` and `current` every entrant of those and every opponent of theirs)."""
    accounts = {a for k in keys for a in k.split("|")}
    pool = sorted(k for k, record in records.items()
                  if k not in apart and set(k.split("|")) & accounts
                  and sum(n for n, _ in record.values()) >= collusion.MIN_DEALS)
    return collusion.suspects_and_flags(pool, records, account_of, met, current, model().beta, apart)


def refit_game(store, game: str, flagged: dict[str, collusion.PairTest], held: tuple[str, str]) -> bool:
    """Flag the pairs of accounts `flagged` (their tests) and fit the game's ratings again from
    its rated deals without any flagged pair's (`refit`), in one transaction made only while
    the caller still holds the rating lock (`held`: `Lease.held`); whether it was made."""
    deals = store.rated_deals(game)
    accounts = store.entrant_accounts(sorted({e for who, _ in deals for e in who}))
    apart = set(store.collusion_flags(game)) | set(flagged)
    fitted = refit(deals, apart, accounts)
    log.warning("ratings of %s: pairs of accounts flagged for collusion (%s), %d deals refitted",
                game, ", ".join(f"{k} z={t.z:.1f}" for k, t in flagged.items()), len(deals))
    return store.save_refit(game, fitted, {k: t.as_dict() for k, t in flagged.items()}, held)


def update_ratings(store, game: str) -> int:
    """Drain the game's rating queue unless another worker is at it; the matches rated here.

    Never waits for the lock: a caller queues its match before it gets here,
    and the lock's holder looks at the queue again after releasing the lock,
    so a match queued while the lock was taken is rated by the holder.
    """
    rated = 0
    while store.rating_events(game, limit=1):
        lease = Lease(store.rating_lock(game, timeout_s=RATING_LOCK_S))
        if not lease.acquire():
            return rated
        try:
            rated += rate_queue(store, game, lease)
        finally:
            if not lease.release():
                log.warning("ratings of %s: the lock expired while rating", game)
    return rated
