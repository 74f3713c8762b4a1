"""Duck Soup: properties of random matches, in both editions and with every option."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games import duck_soup
from games.cards import deck_52
from tests.examples import examples
from tests.games.engine_checks import (
    assert_all_illegal_rejected,
    assert_illegal_rejected,
    assert_replays_identically,
    assert_result_shape,
    json_strings,
    play_random,
)

GAME = games.get("duck-soup")
ALL_CARDS = Counter(str(c) for c in deck_52())

seeds = st.integers(min_value=0, max_value=2**40)
options = st.fixed_dictionaries({
    "edition": st.sampled_from(["fr", "de"]),
    # small targets and ponds as well as the book's, so matches of many deals and sets occur
    "target": st.sampled_from([1, 60, 250, 700]),
    "pond": st.sampled_from([1, 90, 125, 400]),
    "sets": st.sampled_from([1, 2, 3]),
    "deal_only": st.booleans(),
})
matches = st.tuples(seeds, options, seeds)
FEW = settings(max_examples=examples(120), deadline=None)
MANY = settings(max_examples=examples(200), deadline=None)


def zones(state) -> list[str]:
    """Every card of the current deal where it lies: hands, stock, table, tricks taken."""
    cards = [c for hand in state.hands for c in hand] + state.deck[state.top:]
    cards += [c for _, c, _ in state.trick]
    cards += [p["card"] for h in state.history for p in h["cards"]]
    return cards


def check_deal_invariants(state) -> None:
    """All 52 cards are somewhere; the stock is even; hands match the phase."""
    assert Counter(map(str, zones(state))) == ALL_CARDS
    stock = len(state.deck) - state.top
    assert stock % 2 == 0
    assert (state.phase == "low") == (stock > 0)
    if state.is_over:
        return
    sizes = [len(h) for h in state.hands]
    on_table = Counter(s for s, _, _ in state.trick)
    held = [sizes[s] + on_table[s] for s in (0, 1)]
    if state.pending in ("lead", "follow"):  # answers come mid coin-coin, one card short
        assert held[0] == held[1]
        if state.phase == "low":
            assert held == [13, 13]
    low, high = state.points["low"], state.points["high"]
    taken = [sum(h["points"] for h in state.history if h["phase"] == ph) for ph in ("low", "high")]
    assert taken == [sum(low), sum(high)]


def referee(deals: list[dict], options: dict) -> tuple[list[int], list[list[int]], int]:
    """Set points, set totals and the deals needed, recomputed from the deals' scores."""
    points, totals = [0, 0], [[0, 0]]
    for n, deal in enumerate(deals, 1):
        assert deal["score"] == [deal["low"][s] * deal["high"][s] for s in (0, 1)]
        score = deal["score"]
        both = [s for s in (0, 1) if score[s] >= options["pond"]]
        pond = both[0] if len(both) == 1 else None
        if len(both) == 2 and score[0] != score[1]:
            pond = score.index(max(score))
        assert deal["pond"] == pond
        totals[-1] = [totals[-1][s] + score[s] for s in (0, 1)]
        if options["deal_only"]:
            return points, totals, n
        t = totals[-1]
        winner, won = None, 0
        if pond is not None:
            winner, won = pond, 2
        elif max(t) >= options["target"] and t[0] != t[1]:
            winner = t.index(max(t))
            won = 2 if t[1 - winner] < options["pond"] else 1
        if winner is not None:
            points[winner] += won
            if points[winner] >= options["sets"]:
                return points, totals, n
            totals.append([0, 0])
    return points, totals, len(deals)


def beats(phase: str, a: str, b: str) -> bool:
    """Does `b`, played on the lead `a`, win the trick?"""
    ranks = "A 2 3 4 5 6 7 8 9 10 J Q K".split()
    if a[-1] != b[-1]:
        return False
    if phase == "low":
        return ranks.index(b[:-1]) < ranks.index(a[:-1])
    high = ranks[1:] + ["A"]
    return high.index(b[:-1]) > high.index(a[:-1])


def check_trick(trick: dict) -> None:
    """A completed trick's winner and points, from its cards, calls and case alone."""
    (lead, follow), case = trick["cards"], trick["case"]
    a, b = lead["card"], follow["card"]
    leader, follower = lead["seat"], follow["seat"]
    two_suits = 2 if a[-1] != b[-1] else 1
    if case is None:
        assert a[:-1] != b[:-1]
        expected = (follower if beats(trick["phase"], a, b) else leader), two_suits
    elif case == "A":
        assert a[:-1] == b[:-1] and follow["call"] is None
        expected = leader, 2
    elif case == "BA":
        assert follow["call"] == "coin"
        expected = follower, 2
    elif case == "BBA":
        assert follow["call"] in ("coin", "soupe-aux-canards") and a[:-1] == b[:-1]
        expected = follower, 2
    else:
        assert case == "BBB"
        second = lead["call"] == "coin-coin"  # the second trick is led by the coin-coin card
        expected = leader, (two_suits if second else 2)
    assert (trick["winner"], trick["points"]) == expected, trick


@pytest.mark.slow
@MANY
@given(matches)
def test_random_matches_conserve_cards_and_score_by_the_rules(match):
    seed, opts, play_seed = match
    state = GAME.new(seed=seed, options=opts)
    rng = random.Random(play_seed)
    while not state.is_over:
        check_deal_invariants(state)
        deal, done, top = len(state.decks), len(state.history), state.top
        before = [set(h) for h in state.hands]
        state.apply(rng.choice(state.legal_actions()))
        if len(state.decks) == deal:
            for trick in state.history[done:]:
                check_trick(trick)
            if state.top != top:  # a low trick ended: the winner drew first, then the other
                winner = state.history[-1]["winner"]
                each = (state.top - top) // 2
                assert each == (1 if top == 50 else len(state.history) - done)
                drawn = [set(h) - b for h, b in zip(state.hands, before, strict=True)]
                assert drawn[winner] == set(state.deck[top:top + each])
                assert drawn[1 - winner] == set(state.deck[top + each:top + 2 * each])
    check_deal_invariants(state)
    result = state.result()
    assert_result_shape(result, 2)
    points, totals, n = referee(result["deals"], opts)
    assert n == len(result["deals"]) == len(result["decks"]) and not result["capped"]
    assert result["totals"] == totals and result["set_points"] == points
    if opts["deal_only"]:
        assert result["scores"] == result["deals"][0]["score"] and points == [0, 0]
    else:
        assert result["scores"] == points and max(points) >= opts["sets"]
    for k, deck in enumerate(result["decks"]):
        assert deck == duck_soup.deal_deck(seed, state.options, k)  # never the actions
        assert Counter(deck) == ALL_CARDS


def check_views(state) -> None:
    """No view holds a card its seat may not know; each seat's hand is its own."""
    stock = set(state.deck[state.top:])
    for seat in (0, 1, None):
        view = state.view(seat)
        hidden = set(stock)
        for s in (0, 1):
            if s != seat:
                hidden |= set(state.hands[s])
        assert not set(json_strings(view)) & hidden, seat
        assert view["stock"] == len(stock)
        if seat is not None:
            assert sorted(view["hand"]) == sorted(state.hands[seat])


@pytest.mark.slow
@FEW
@given(matches)
def test_no_view_shows_the_other_hand_or_the_stock(match):
    seed, opts, play_seed = match
    state = GAME.new(seed=seed, options=opts)
    play_random(state, random.Random(play_seed), on_step=check_views)


def illegal_variants(state, rng: random.Random) -> list:
    """Actions near a legal one that the rules forbid now."""
    seat = state.to_act
    legal = state.legal_actions()
    mine = set(state.hands[seat])
    elsewhere = sorted(set(ALL_CARDS) - mine)
    # (a leader answering a coin on the last trick holds no card at all)
    card = rng.choice(sorted(mine)) if mine else rng.choice(elsewhere)
    variants = [
        {"play": rng.choice(elsewhere)},
        {"play": card, "call": "quack"},
        {"play": card, "call": None},
        {"play": card, "extra": True},
        {"call": "coin"},
        {"call": "soupe", "play": card},
        {"play": [card]},
        {"play": 7},
        {},
        None,
        card,
    ]
    listed = {(a.get("play"), a.get("call")) for a in legal}
    for call in ("coin", "coin-coin", "soupe-aux-canards"):
        if (card, call) not in listed:
            variants.append({"play": card, "call": call})
    if state.pending != "answer-coin":
        variants.append({"call": "soupe"})
    if state.edition == "de":  # a matching card without its call
        variants += [{"play": c} for c, k in listed if k in ("coin", "soupe-aux-canards")]
    return variants


@pytest.mark.slow
@FEW
@given(matches)
def test_legal_actions_are_accepted_and_illegal_ones_change_nothing(match):
    seed, opts, play_seed = match
    state = GAME.new(seed=seed, options=opts)
    rng = random.Random(play_seed)

    def probe(s):
        if not s.is_over:
            assert_all_illegal_rejected(s, rng.sample(illegal_variants(s, rng), 3))

    play_random(state, rng, on_step=probe)
    assert_illegal_rejected(state, {"play": "AS"})


@FEW
@given(matches)
def test_same_seed_and_actions_give_the_same_match(match):
    seed, opts, play_seed = match
    state = GAME.new(seed=seed, options=opts)
    actions = play_random(state, random.Random(play_seed))
    assert_replays_identically(lambda: GAME.new(seed=seed, options=opts), actions)
    # the first deck replays the first deal exactly, whatever the seed
    if opts["deal_only"]:
        replay = GAME.new(seed=seed + 1, options={**opts, "deck": state.result()["decks"][0]})
        for action in actions:
            replay.apply(action)
        assert replay.result() == state.result()


@FEW
@given(seeds, options, seeds, seeds)
def test_deals_do_not_depend_on_the_play(seed, opts, play_a, play_b):
    opts = {**opts, "deal_only": False, "target": 10_000, "pond": 10_000, "sets": 1}
    a, b = GAME.new(seed=seed, options=opts), GAME.new(seed=seed, options=opts)
    ra, rb = random.Random(play_a), random.Random(play_b)
    for state, rng in ((a, ra), (b, rb)):
        while len(state.decks) < 3:
            state.apply(rng.choice(state.legal_actions()))
    assert a.decks == b.decks
    assert len({tuple(d) for d in a.decks}) == 3
