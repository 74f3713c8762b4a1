"""The matchmaker: the ladder plays on its own (docs/api.md §6 "The ladder is the platform's").

Nobody schedules the ladder. Each game keeps up to `CARDARENA_LADDER_MATCHES`
(default 8; 0 turns the ladder off) ladder pairings in play: a pairing is
one duplicate deal at one table of `Game.ladder_seats` bots, every rotation
played one after the other (twins), on the standard clock
(`sdk.clock.DEFAULT_TIME`), with a seed drawn from the CSPRNG, rated, and
private until its last rotation is over (as a tournament's twins). Since
twins never overlap, a pairing is one ladder match in play at a time.

Who plays (`candidates`): bots of the game that are on the ladder (`ladder`
not false), not retired, `online`, not `paused`, with room — a free slot
(webhook and polling bots: `max_concurrent`) and fewer ladder pairings in
play than half their slots (at least one: `ladder_room`). The ladder has
that share of a bot's slots to itself: matches other accounts start with the
bot (challenges, /play, their tournaments and comparisons) hold at most the
rest (`guest_share`, enforced as they take their slots: core/store/slots.py),
and matches waiting for a slot do not keep the ladder out. So no account can
take another's bot off the ladder by queueing matches with it.

Whom it pairs (`choose_tables`, the one selection function, which
bench/ladder.py and bench/collusion.py run too): first the bot with the fewest ladder matches in
the last hour (ties: the larger σ, then at random) — the focus; then, seat
by seat, an opponent drawn at random from every eligible bot, each weighed by
how even its table with the focus is expected to be (`closeness`:
exp(−Δμ² / 2(2β² + σ² + σ²)), the Gaussian of the rating difference openskill's
β and their σ allow) times its account's share (`account_shares`: an account's
bots share one account's weight, so an account with 24 bots supplies a bot's
opponents no more often than one with a single bot of the same rating — a crowd
of throwaways on a few accounts cannot surround a bot), and never one whose account
supplied its share of the focus's rated deals already, or the other way round
(core/collusion.py `crowding`: 1.5 times an even share among the other accounts, at
least 10%). Two accounts the collusion test flagged (core/collusion.py) are never
seated together. Bots of unknown strength (large σ) are drawn nearly
alike, so a new field mixes; once the ratings are sure, the deals go to
neighbours, where they decide the order, and a far table is rare but never
impossible, so no group of bots is left to play only itself. Never two bots
of one account at a table (each bot the admin registered, a house bot,
counts as its own account). So an account cannot pick its opponents, the
deal or the clock: the rating of a bot can only come from bots of similar
strength of other accounts, and throwaway bots that lose on purpose lose to
everybody alike (tests/worker/test_farming.py).

kill -9 safe: a game's pairings are made under a lease (`lease:ladder:{game}`,
core/store/jobs.py), and each is written whole with its matches in one
transaction that checks the lease is still this matchmaker's
(core/store/ladder.py `create_pairing`): a dead matchmaker made a pairing
once or not at all, and any other (the next cycle, another machine's pool)
carries on. It runs as a thread of the worker pool (worker/pool.py): there
is nothing more to start.
"""

from __future__ import annotations

import logging
import math
import os
import random
import secrets
import threading
from dataclasses import dataclass, replace

import games
from core import liveness
from core.collusion import crowding, pair_key
from core.ratings import model
from core.store.bots import DEFAULT_MAX_CONCURRENT, ladder_room, on_ladder
from core.store.keys import now_ms
from core.store.ladder import HOUR_MS, ladder_lease
from core.store.probation import is_paused
from core.store.ratings import account_of, entrant
from core.store.slots import SLOTTED

log = logging.getLogger("cardarena.matchmaker")

#: the environment variable: ladder matches in play per game (0: the ladder is off)
LADDER_MATCHES_ENV = "CARDARENA_LADDER_MATCHES"
#: its default
LADDER_MATCHES = 8
#: seconds between cycles
TICK_S = 1.0
#: how long a game's lease lasts unless released (ms): a dead matchmaker's is free again then
LEASE_MS = 15_000


def ladder_matches(value: int | str | None = None) -> int:
    """Ladder matches in play per game: `value`, else `CARDARENA_LADDER_MATCHES`, else 8."""
    raw = os.environ.get(LADDER_MATCHES_ENV) if value is None else value
    if raw is None or raw == "":
        return LADDER_MATCHES
    n = int(raw)
    if n < 0:
        raise ValueError(f"{LADDER_MATCHES_ENV} is 0 (off) or more, not {n}")
    return n


@dataclass(frozen=True)
class Candidate:
    """A bot the matchmaker may seat now."""

    id: str
    #: whose it is: no two bots of one account at a table
    account: str
    mu: float
    sigma: float
    #: ladder matches it was given in the last hour
    recent: int
    #: ladder pairings it may still join now
    room: int = 1
    #: its weight as an opponent beside its closeness: 1 / its account's candidates (`account_shares`)
    share: float = 1.0
    #: the accounts that supplied their share of its rated deals already (core/collusion.py `crowding`)
    crowded: frozenset[str] = frozenset()


def choose_tables(candidates: list[Candidate], seats: int, wanted: int,
                  rng: random.Random, apart: frozenset[str] = frozenset()) -> list[tuple[str, ...]]:
    """Up to `wanted` tables of `seats` bots among `candidates` (the policy: see the module).

    Each table is the focus — the bot with the fewest recent ladder matches, ties
    to the larger σ, then at random — and, seat by seat, an opponent drawn among
    the bots whose account is not at the table yet, with a chance in proportion
    to its `closeness` to the focus times its `share`, and whose account is not
    `apart` (core/collusion.py `pair_key`) from one at the table. A table counts `seats` matches (its
    rotations) for each of its bots, so the next focus is somebody else. A focus
    that cannot be seated (too few other accounts left) sits this round out.
    """
    room = {c.id: c.room for c in candidates}
    recent = {c.id: c.recent for c in candidates}
    left_out: set[str] = set()
    tables: list[tuple[str, ...]] = []
    while len(tables) < wanted:
        free = [c for c in candidates if room[c.id] > 0]
        focuses = [c for c in free if c.id not in left_out]
        if len(free) < seats or not focuses:
            break
        focus = min(focuses, key=lambda c: (recent[c.id], -c.sigma, rng.random()))
        table = _opponents(focus, free, seats, rng, apart)
        if table is None:
            left_out.add(focus.id)
            continue
        for c in table:
            room[c.id] -= 1
            recent[c.id] += seats
        tables.append(tuple(c.id for c in table))
    return tables


def closeness(a: Candidate, b: Candidate) -> float:
    """How even a table of `a` and `b` is expected to be, in (0, 1]: exp(−Δμ² / 2s²), s² = 2β² + σa² +
    σb² (β: the rating model's performance spread) — 1 for equal μ, near 1 for any two bots while
    their σ are large."""
    beta = model().beta
    spread = 2 * beta * beta + a.sigma * a.sigma + b.sigma * b.sigma
    return math.exp(-(a.mu - b.mu) ** 2 / (2 * spread))


def account_shares(candidates: list[Candidate]) -> list[Candidate]:
    """The candidates, each with its `share`: 1 / how many of them are its account's."""
    count: dict[str, int] = {}
    for c in candidates:
        count[c.account] = count.get(c.account, 0) + 1
    return [replace(c, share=1.0 / count[c.account]) for c in candidates]


def _opponents(focus: Candidate, free: list[Candidate], seats: int,
               rng: random.Random, apart: frozenset[str]) -> list[Candidate] | None:
    """The focus and `seats - 1` opponents drawn by `closeness` to it times their `share`, of
    accounts all different, none `apart` from another at the table."""
    table, accounts = [focus], {focus.account}
    pool = [c for c in free if c.id != focus.id]
    while len(table) < seats:
        eligible = [c for c in pool if c.account not in accounts
                    and not any(c.account in t.crowded or t.account in c.crowded for t in table)
                    and not (apart and any(pair_key(c.account, a) in apart for a in accounts))]
        if not eligible:
            return None
        pick = rng.choices(eligible, weights=[closeness(focus, c) * c.share for c in eligible])[0]
        table.append(pick)
        accounts.add(pick.account)
        pool.remove(pick)
    return table


def candidates(store, game: str, in_play: list[dict], now: int | None = None) -> list[Candidate]:
    """The bots of `game` the matchmaker may seat now, given the game's pairings `in_play`."""
    now = now_ms() if now is None else now
    bots = [b for b in store.list_bots(game)
            if not b.get("retired") and on_ladder(b) and not is_paused(b)
            and liveness.judge(b, now)[0] == "online"]
    if not bots:
        return []
    laddering: dict[str, int] = {}
    for pairing in in_play:
        for bot_id in set(pairing["bots"]):
            laddering[bot_id] = laddering.get(bot_id, 0) + 1
    slots = store.slot_use([b["id"] for b in bots if b["kind"] in SLOTTED])
    recent = store.ladder_recent([b["id"] for b in bots], now - HOUR_MS)
    entrants = {b["id"]: entrant(b["id"], b.get("version")) for b in bots}
    met = store.met_records(game, sorted(entrants.values()))
    opponents = sorted({o for record in met.values() for o in record})
    accounts = {entrants[b["id"]]: account_of(b) for b in bots}
    accounts.update(store.entrant_accounts([o for o in opponents if o not in accounts]))
    on_ladder_accounts = len({account_of(b) for b in bots})
    out = []
    for bot in bots:
        room = ladder_room(bot) - laddering.get(bot["id"], 0)
        if bot["id"] in slots:
            used, _ = slots[bot["id"]]  # matches waiting for a slot keep no room from the ladder
            room = min(room, int(bot.get("max_concurrent") or DEFAULT_MAX_CONCURRENT) - used)
        if room > 0:
            rating = bot["rating"]
            crowded = crowding(met[entrants[bot["id"]]], accounts, on_ladder_accounts)
            out.append(Candidate(bot["id"], account_of(bot), rating["mu"], rating["sigma"],
                                 recent[bot["id"]], room, crowded=crowded))
    return account_shares(out)


class Matchmaker:
    """Keeps each game's ladder pairings topped up, a cycle at a time (`cycle`) or in a thread."""

    def __init__(self, store, per_game: int | None = None, tick_s: float = TICK_S,
                 game_names: list[str] | None = None, rng: random.Random | None = None) -> None:
        self.store, self.tick_s = store, tick_s
        self.per_game = ladder_matches(per_game)
        self.game_names = game_names
        self.rng = rng or random.SystemRandom()
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def cycle(self) -> dict[str, list[dict]]:
        """One pass over every game: the pairings made, by game."""
        return {game: self.fill(game) for game in (self.game_names or games.names())}

    def fill(self, game: str) -> list[dict]:
        """Top the game's ladder up to `per_game` pairings in play, under its lease."""
        store = self.store
        token = store.take_lease(*ladder_lease(game), ttl_ms=LEASE_MS)
        if token is None:  # another matchmaker is at it
            return []
        made: list[dict] = []
        try:
            for pairing in store.pairings_in_play(game):  # the net under core/conclusion.py's settling
                store.settle_pairing(game, pairing["id"])
            in_play = store.pairings_in_play(game)
            wanted = self.per_game - len(in_play)
            if wanted <= 0:
                return made
            seats = games.get(game).ladder_table
            apart = frozenset(store.collusion_flags(game))
            for table in choose_tables(candidates(store, game, in_play), seats, wanted, self.rng, apart):
                seated = list(table)
                self.rng.shuffle(seated)  # who sits first
                order = list(range(seats))
                self.rng.shuffle(order)  # the rotations' playing order: nobody counts on going first
                pairing = store.create_pairing(game, seated, secrets.randbits(63), order, token)
                if pairing is None:  # the lease lapsed and another matchmaker has it
                    break
                made.append(pairing)
            if made:
                log.info("ladder %s: %d pairings made (%s)", game, len(made),
                         "; ".join(" v ".join(p["bots"]) for p in made))
        finally:
            store.release_lease(*ladder_lease(game), token)
        return made

    def start(self) -> Matchmaker:
        self.thread = threading.Thread(target=self._run, name="matchmaker", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout=10)

    def _run(self) -> None:
        while not self.stopping.wait(self.tick_s):
            try:
                self.cycle()
            except Exception:  # Redis away for a moment: the next cycle will do
                log.exception("a matchmaker cycle failed")
