"""Collusion: a test, per pair of accounts, of their bots' ladder results against what the
ratings predict (docs/api.md, the ladder: "Collusion does not pay").

Bots that recognise an accomplice — by its id, or by a signature in its play — can lose to
it on purpose and play their best against everyone else. No single deal shows it; the
results between two accounts do: a farmer that loses to honest bots of its strength yet
wins every deal against bots the ratings place far above it. So the rating worker keeps,
for every pair of accounts whose bots met at a ladder table, each pair of their entrants'
encounters (`PairRecord`: deals, and the first entrant's score, 1 a deal it finished ahead,
½ level), and for every entrant its results against each opponent (`MetRecord`). After
every batch it rates it tests each pair of accounts the batch touched (`pair_test`): the
score the first account's bots made against the second's, minus what the ladder expects
of them, over its standard deviation (a z score; ties count as less spread than a win or a
loss, so z is cautious). What the ladder expects is each entrant rated from its results
against everyone *but* the other account (`fit_without`): rated with its own deals, a
farmer that won every deal against its accomplices would be rated as strong as those wins
say, and the prediction would vouch for the very deals under test.

The matchmaker bounds what any one account supplies of a bot's rated deals (`crowding`):
24 throwaways on 3 accounts, each the focus of its own tables, would otherwise hand a farmer
most of its deals, and then no test could tell which side of its record is the honest one.

A pair is flagged (`flagged`) when it met at least `MIN_DEALS` times, its z is at least
`Z_FLAG` either way and its mean score is off by at least `MIN_EXCESS`: z alone would in
time flag any honest pair whose styles suit one another a little better than two numbers
say; an accomplice that throws its deals is off by half a deal or more. A flagged pair's
deals leave the ratings — the game's ratings are fitted again from its rated deals without
them (core/ratings.py `refit`) — its bots are never seated together again
(worker/matchmaker.py), and the admin sees it (`GET /admin/collusion/{game}`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: a pair is flagged at this z (either way): an honest pair's results drift this far from the
#: ratings' prediction about once in 3.5 million looks
Z_FLAG = 5.0
#: ... once its bots met in at least this many deals
MIN_DEALS = 8
#: ... and its mean score is off the prediction by at least this much (a deal is worth 1)
MIN_EXCESS = 0.25
#: a pair is a suspect at this |z|: its accounts' entrants are rated without each other's
#: deals in the next round of the test (`suspects_and_flags`)
Z_SUSPECT = 3.0
#: rounds of the test at most
ROUNDS = 4
#: an account supplies at most this many times an even share of a bot's rated deals ...
CROWD_FACTOR = 1.5
#: ... or this share, whichever is more ...
MIN_CROWD_SHARE = 0.1
#: ... once it supplied this many
CROWD_FLOOR = 3


def pair_key(a: str, b: str) -> str:
    """The key of a pair of accounts (or of entrants): the two in order, joined by "|"."""
    return "|".join(sorted((a, b)))


def win_probability(a: tuple[float, float], b: tuple[float, float], beta: float) -> float:
    """The chance that the entrant rated `a` (μ, σ) finishes a deal ahead of the one rated `b`:
    Plackett–Luce for two, 1 / (1 + exp(−(μa − μb) / c)), c² = σa² + σb² + 2β²."""
    c = math.sqrt(a[1] ** 2 + b[1] ** 2 + 2 * beta * beta)
    return 1.0 / (1.0 + math.exp(-(a[0] - b[0]) / c))


def encounters(entrants: list[str], ranks: list[int]) -> list[tuple[str, str, float]]:
    """Every pair at one deal's table, from its ranking: (a, b, a's score), a before b in
    `pair_key` order, score 1 if a finished ahead, ½ level, 0 behind."""
    out = []
    for i in range(len(entrants)):
        for j in range(i + 1, len(entrants)):
            a, b, ra, rb = entrants[i], entrants[j], ranks[i], ranks[j]
            if a > b:
                a, b, ra, rb = b, a, rb, ra
            out.append((a, b, 1.0 if ra < rb else 0.5 if ra == rb else 0.0))
    return out


#: the encounters of one pair of accounts: "entrant|entrant" (`pair_key`) -> [deals, first's score]
PairRecord = dict[str, list[float]]


def add_encounter(record: PairRecord, a: str, b: str, score: float) -> None:
    """Count one deal between entrants `a` and `b` (a before b in `pair_key` order), a's score."""
    counts = record.setdefault(f"{a}|{b}", [0, 0.0])
    counts[0] += 1
    counts[1] += score


def add_met(record: MetRecord, opponent: str, score: float) -> None:
    """Count one deal of an entrant against `opponent`, its score."""
    counts = record.setdefault(opponent, [0, 0.0])
    counts[0] += 1
    counts[1] += score


@dataclass(frozen=True)
class PairTest:
    """The test of one pair of accounts: its deals, the score the first account's bots made
    (`pair_key` order of the accounts), what the ratings expected, z."""

    deals: int
    score: float
    expected: float
    z: float

    @property
    def flagged(self) -> bool:
        return (self.deals >= MIN_DEALS and abs(self.z) >= Z_FLAG
                and abs(self.score - self.expected) >= MIN_EXCESS * self.deals)

    def as_dict(self) -> dict:
        return {"deals": self.deals, "score": round(self.score, 3), "expected": round(self.expected, 3),
                "z": round(self.z, 2)}


#: what a leave-out fit assumes before it sees a deal (core/store/ratings.py's new rating)
PRIOR_MU, PRIOR_SIGMA = 25.0, 25.0 / 3.0

#: an entrant's results against each opponent entrant: opponent -> [deals, its score]
MetRecord = dict[str, list[float]]


def fit_without(met: MetRecord, left_out: set[str], account_of: dict[str, str],
                ratings: dict[str, tuple[float, float]], beta: float) -> tuple[float, float]:
    """An entrant's (μ, σ) from its results against every account but those `left_out`: the most
    likely μ of the two-seat model against its opponents' current `ratings`, from the prior a
    new bot has (a Laplace fit: σ from the curvature). What the rest of the ladder says of it,
    so a pair's own deals cannot vouch for themselves."""
    games = [(ratings[o][0], math.sqrt(2 * beta * beta + ratings[o][1] ** 2), n, won)
             for o, (n, won) in met.items() if account_of.get(o) not in left_out and o in ratings]

    def slope_and_information(mu: float) -> tuple[float, float]:
        """The log-likelihood's slope at `mu` and its curvature (the information, > 0)."""
        slope, information = -(mu - PRIOR_MU) / PRIOR_SIGMA ** 2, 1 / PRIOR_SIGMA ** 2
        for m, c, n, won in games:
            p = 1 / (1 + math.exp(-(mu - m) / c))
            slope += (won - n * p) / c
            information += n * p * (1 - p) / (c * c)
        return slope, information

    # The slope falls with μ: Newton's steps to its zero, each kept inside the bracket that the
    # slope's signs so far leave (bisected when a step would leave it), so it always converges.
    low, high = PRIOR_MU - 200.0, PRIOR_MU + 200.0
    mu = PRIOR_MU
    for _ in range(100):
        slope, information = slope_and_information(mu)
        step = slope / information
        if abs(step) < 1e-12:
            break
        if slope > 0:
            low = mu
        else:
            high = mu
        mu = mu + step if low < mu + step < high else (low + high) / 2
    else:
        _, information = slope_and_information(mu)
    return mu, 1 / math.sqrt(information)


def pair_test(key: str, record: PairRecord, account_of: dict[str, str], met: dict[str, MetRecord],
              ratings: dict[str, tuple[float, float]], beta: float,
              suspect: set[str] | frozenset[str] = frozenset()) -> PairTest:
    """The test of the pair of accounts `key` (`pair_key`) from its `record`, scored for the
    first account's bots: each entrant rated from its results against everyone but the other
    account and the accounts it is `suspect` with (pairs: `pair_key`) (`fit_without`, from its
    `met` record and its opponents' current `ratings`), each entrant's account (`account_of`)."""
    first_account, second = key.split("|")
    left_out = {first_account: {second} | partners(first_account, suspect),
                second: {first_account} | partners(second, suspect)}
    fitted: dict[str, tuple[float, float]] = {}
    deals, score, expected, variance = 0, 0.0, 0.0, 0.0
    for key, (n, won) in record.items():
        a, b = key.split("|")
        if account_of.get(a) != first_account:
            a, b, won = b, a, n - won
        for e, account in ((a, first_account), (b, second)):
            if e not in fitted:
                fitted[e] = fit_without(met.get(e, {}), left_out[account], account_of, ratings, beta)
        p = win_probability(fitted[a], fitted[b], beta)
        deals += int(n)
        score += won
        expected += n * p
        variance += n * p * (1 - p)
    z = (score - expected) / math.sqrt(variance) if variance > 0 else 0.0
    return PairTest(deals, score, expected, z)


def crowding(met: MetRecord, account_of: dict[str, str], accounts: int) -> frozenset[str]:
    """The accounts that supplied their share of an entrant's rated deals already (its `met`
    record): at least `CROWD_FLOOR` deals and `crowd_share(accounts)` of them, `accounts` being
    how many accounts have bots on the ladder. The matchmaker seats it with none of their bots."""
    total = sum(n for n, _ in met.values())
    by_account: dict[str, float] = {}
    for opponent, (n, _) in met.items():
        account = account_of.get(opponent, opponent)
        by_account[account] = by_account.get(account, 0) + n
    bound = max(CROWD_FLOOR, crowd_share(accounts) * total)
    return frozenset(a for a, n in by_account.items() if n >= bound)


def crowd_share(accounts: int) -> float:
    """The most of a bot's rated deals one other account may supply: `CROWD_FACTOR` times an
    even share among the other `accounts` − 1, at least `MIN_CROWD_SHARE`."""
    return max(MIN_CROWD_SHARE, CROWD_FACTOR / max(1, accounts - 1))


def partners(account: str, pairs: set[str] | frozenset[str]) -> set[str]:
    """The accounts paired with `account` in `pairs` (`pair_key`s)."""
    out = set()
    for key in pairs:
        a, b = key.split("|")
        if account in (a, b):
            out.add(b if a == account else a)
    return out


def suspects_and_flags(pool: list[str], records: dict[str, PairRecord], account_of: dict[str, str],
                       met: dict[str, MetRecord], ratings: dict[str, tuple[float, float]], beta: float,
                       apart: set[str]) -> dict[str, PairTest]:
    """The pairs of accounts of `pool` flagged now: their tests. Tested in rounds: a pair whose
    |z| reaches `Z_SUSPECT` is a suspect, and the next round rates each entrant without the
    accounts it is suspect with (or `apart` from) too — a farmer helped by several accounts
    would otherwise be rated by the wins the others gave it, the test of each accomplice
    vouched for by the rest — until the suspects stay the same (at most `ROUNDS`)."""
    suspects: set[str] = set()
    tests: dict[str, PairTest] = {}
    for _ in range(ROUNDS):
        tests = {k: pair_test(k, records[k], account_of, met, ratings, beta, suspects | apart) for k in pool}
        now = {k for k, t in tests.items() if abs(t.z) >= Z_SUSPECT}
        if now == suspects:
            break
        suspects = now
    return {k: t for k, t in tests.items() if t.flagged}


def accounts_at(entrants: list[str], account_of: dict[str, str]) -> set[str]:
    """The pairs of accounts (`pair_key`) whose bots sat at one table."""
    accounts = sorted({account_of[e] for e in entrants})
    return {pair_key(a, b) for i, a in enumerate(accounts) for b in accounts[i + 1:]}
