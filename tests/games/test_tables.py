"""Each game's card table (`Game.table`): the layout games/table.py documents, the
right things on chosen deals, and never a hidden card from the spectator's view.

The spectator's table is built from `view(None)` and the log entry *without*
its action (how a running match's entry is public); the replay's table also
gets every seat's view. The hidden-card property walks random matches of
every game and seat count: each card a spectator table shows, in a hand, in
the middle or named in any text, must be a string the spectator view holds.
"""

from __future__ import annotations

import random
import re

import pytest

import games
from games.cards import deck_32, deck_52
from games.double.cards import double_sets
from games.soupe_gertrude.cards import full_deck
from games.table import card_strings, check, default_table

SEAT_COUNTS = [(name, n) for name in games.names()
               for n in sorted({games.get(name).min_seats, min(games.get(name).max_seats, 4)})]


def strings_in(value) -> set[str]:
    """Every string anywhere in a JSON value, and each half of a two-motif card."""
    if isinstance(value, str):
        return {value, *value.split("/")}
    if isinstance(value, dict):
        return set().union(*(strings_in(v) for v in value.values()), set())
    if isinstance(value, list):
        return set().union(*(strings_in(v) for v in value), set())
    return set()


def texts_in(table: dict) -> list[str]:
    """The free text of a table: facts, badges, notes, lines, the last action."""
    out = [f["value"] for f in table["facts"]]
    for s in table["seats"]:
        out += [b.get("value", "") + " " + b["label"] for b in s["badges"]]
    for p in table["centre"]:
        out += [p["title"], p.get("note", "")] + [c.get("note", "") for c in p["cards"]]
        out += [ln["text"] for ln in p.get("lines", ())]
    if table["last"]:
        out.append(table["last"]["text"])
    return out


def cards_named(game: games.Game, text: str) -> list[str]:
    """The words of `text` that are cards of `game` (card notation or a card's name)."""
    return [w for w in re.findall(r"[\w/-]+", text) if game.card_face(w) is not None]


def public(entry: dict | None) -> dict | None:
    """A log entry as a running match shows it: no action."""
    return None if entry is None else {k: v for k, v in entry.items() if k != "action"}


def walk(name: str, seats: int, seed: int, options: dict | None = None):
    """(state, last entry) at every step of a seeded random match."""
    state = games.get(name).new(seats, seed, options or {})
    rng = random.Random(seed)
    last = None
    yield state, last
    turn = 0
    while not state.is_over:
        action = rng.choice(state.legal_actions())
        last = {"turn": turn, "seat": state.to_act, "action": action}
        state.apply(action)
        turn += 1
        yield state, last


def play(name: str, seats: int, options: dict, actions: list[dict]):
    state = games.get(name).new(seats, 1, options)
    entries = []
    for turn, action in enumerate(actions):
        entries.append({"turn": turn, "seat": state.to_act, "action": action})
        state.apply(action)
    return state, (entries[-1] if entries else None)


def spectator_table(state, last):
    return state.game.table(state.view(None), public(last), None)


def replay_table(state, last):
    return state.game.table(state.view(None), last, [state.view(s) for s in range(state.seats)])


def pile_named(table: dict, title: str) -> dict:
    found = [p for p in table["centre"] if p["title"] == title]
    assert found, f"no {title!r} among {[p['title'] for p in table['centre']]}"
    return found[0]


def badges(table: dict, seat: int) -> dict[str, str | None]:
    return {b["label"]: b.get("value") for b in table["seats"][seat]["badges"]}


# -- every game, every step ------------------------------------------------------

@pytest.mark.parametrize(("name", "seats"), SEAT_COUNTS)
def test_every_game_has_a_table_of_the_documented_shape_at_every_step(name, seats):
    game = games.get(name)
    assert game.table is not None, f"{name} registers no table"
    for seed in range(6):
        for state, last in walk(name, seats, seed):
            check(spectator_table(state, last), seats)
            check(replay_table(state, last), seats)


@pytest.mark.parametrize(("name", "seats"), SEAT_COUNTS)
def test_a_spectator_table_shows_only_cards_the_spectator_view_holds(name, seats):
    game = games.get(name)
    for seed in range(40):
        for state, last in walk(name, seats, 1000 + seed):
            view = state.view(None)
            table = game.table(view, public(last), None)
            held = strings_in(view)
            shown = card_strings(table) + [w for t in texts_in(table) for w in cards_named(game, t)]
            hidden = [c for c in shown if c not in held]
            assert not hidden, f"seed {1000 + seed} turn {last and last['turn']}: {hidden} are not public"
            assert all(s["hand"] is None for s in table["seats"])


@pytest.mark.parametrize(("name", "seats"), SEAT_COUNTS)
def test_a_public_replay_table_shows_every_seats_hand_and_who_acted(name, seats):
    for state, last in walk(name, seats, 7):
        table = replay_table(state, last)
        assert [s["hand"] for s in table["seats"]] == [list(state.view(s)["hand"]) for s in range(seats)]
        if last is not None:
            assert [s["seat"] for s in table["seats"] if s["last"]] == [last["seat"]]
            assert table["last"]["seat"] == last["seat"]
        to_act = [s["seat"] for s in table["seats"] if s["to_act"]]
        assert to_act == ([] if state.is_over else [state.to_act])


def test_a_game_without_a_table_gets_the_default_one():
    state = games.get("duck-soup").new(2, 3, {})
    table = default_table(state.view(None), {"turn": 0, "seat": 1}, None, seats=2)
    check(table, 2)
    assert [s["count"] for s in table["seats"]] == [13, 13]
    assert table["seats"][1]["last"] and table["seats"][0]["to_act"]


# -- chosen deals -----------------------------------------------------------------

def duck_deck() -> list[str]:
    """Seat 0 (leads) gets QH first, seat 1 QS: a coin to answer on the first trick."""
    rest = [c for c in map(str, deck_52()) if c not in ("QH", "QS")]
    return ["QH", "QS"] + rest


def test_duck_soup_table_shows_the_coin_in_the_trick_then_the_conceded_trick():
    options = {"deck": duck_deck()}
    state, last = play("duck-soup", 2, options, [])
    table = replay_table(state, last)
    assert {"label": "phase", "value": "low — the lowest card of the led suit wins"} in table["facts"]
    assert pile_named(table, "stock")["backs"] == 26
    assert "to lead" in badges(table, 0) and "dealer" in badges(table, 1)
    assert table["last"] is None

    state, last = play("duck-soup", 2, options, [{"play": "QH"}, {"play": "QS", "call": "coin"}])
    for table in (spectator_table(state, last), replay_table(state, last)):
        trick = pile_named(table, "trick")["cards"]
        assert trick == [{"card": "QH", "seat": 0}, {"card": "QS", "seat": 1, "note": "coin!", "last": True}]
        assert "to answer the coin" in badges(table, 0)
        assert table["last"] == {"seat": 1, "text": "plays (coin!)", "cards": ["QS"]}

    state, last = play("duck-soup", 2, options, [{"play": "QH"}, {"play": "QS", "call": "coin"}, {"call": "soupe"}])
    table = spectator_table(state, last)
    done = pile_named(table, "last trick")
    assert done["winner"] == 1 and done["note"] == "2 points · the coin conceded"
    assert [c["card"] for c in done["cards"] if c.get("win")] == ["QS"]
    assert table["last"] == {"seat": 0, "text": "concedes the trick — soupe!", "cards": []}
    assert badges(table, 1)["points"] == "low 2 · high 0"
    assert pile_named(table, "stock")["backs"] == 24


def test_double_table_shows_trump_bids_and_the_motif_each_card_was_played_as():
    deck = ["KS/4H", "KH/4D", "AS/2D", "QS/7D", "9S/6H"]
    deck += [str(c) for c in double_sets(1) if c not in deck]
    options = {"rounds": [2], "deck": deck}
    state, last = play("double", 2, options, [{"bid": 1}, {"bid": 1}])
    table = spectator_table(state, last)
    assert {"label": "trump", "value": "♠ spades"} in table["facts"]
    assert pile_named(table, "turned up")["cards"] == [{"card": "9S/6H"}]
    assert badges(table, 0)["bid"] == "1" and badges(table, 1)["bid"] == "1"
    assert table["last"] == {"seat": 1, "text": "bids 1", "cards": []}

    state, last = play("double", 2, options, [{"bid": 1}, {"bid": 1}, {"play": "KS/4H", "motif": "4H"}])
    table = spectator_table(state, last)
    assert pile_named(table, "trick")["cards"] == [{"card": "KS/4H", "seat": 0, "note": "as 4♥", "last": True}]
    assert {"label": "led suit", "value": "♥ hearts"} in table["facts"]

    state, last = play("double", 2, options, [{"bid": 1}, {"bid": 1}, {"play": "KS/4H", "motif": "4H"},
                                              {"play": "KH/4D", "motif": "KH"}])
    table = replay_table(state, last)
    done = pile_named(table, "last trick")
    assert done["winner"] == 1 and [c["card"] for c in done["cards"] if c.get("win")] == ["KH/4D"]
    assert badges(table, 1)["tricks"] == "1"
    assert table["last"] == {"seat": 1, "text": "plays (as K♥)", "cards": ["KH/4D"]}


def test_double_carre_table_shows_who_took_what_and_discards_face_down():
    deck = [str(c) for c in deck_32()]
    revealed = deck[16:20]
    state, last = play("double-carre", 2, {"deck": deck, "first": 0}, [])
    table = spectator_table(state, last)
    assert [c["card"] for c in pile_named(table, "revealed")["cards"]] == revealed
    assert [s["count"] for s in table["seats"]] == [8, 8]
    assert pile_named(table, "stock")["backs"] == 12

    take = {"take": revealed[:2]}
    state, last = play("double-carre", 2, {"deck": deck, "first": 0}, [take])
    table = spectator_table(state, last)
    assert [(c["card"], c.get("seat")) for c in pile_named(table, "revealed")["cards"]] == [
        (revealed[0], 0), (revealed[1], 0), (revealed[2], 1), (revealed[3], 1)]
    assert [s["count"] for s in table["seats"]] == [10, 10]
    assert table["last"] == {"seat": 0, "text": "takes", "cards": revealed[:2]}

    thrown = [c for c in state.view(0)["hand"] if c not in revealed][:2]
    state, last = play("double-carre", 2, {"deck": deck, "first": 0}, [take, {"discard": thrown}])
    table = spectator_table(state, last)
    assert badges(table, 0)["discarded"] == "2 face down"
    assert [s["count"] for s in table["seats"]] == [8, 10]
    assert table["last"] == {"seat": 0, "text": "discards two cards face down", "cards": []}
    assert not set(thrown) & set(card_strings(table))
    replay = replay_table(state, last)
    assert [c["card"] for c in pile_named(replay, "discarded (shown in the replay)")["cards"]] == thrown


def soupe_deck() -> list[str]:
    """Seat 0 holds 18 in money, seat 1 holds 4; the first lot is tomate, oseille-3, souris."""
    deck = ["oseille-5", "oseille-5", "oseille-4", "oseille-4", "oseille-1", "oseille-1", "oseille-1",
            "oseille-1", "tomate", "oseille-3", "souris"]
    rest = full_deck(False)
    for c in deck:
        rest.remove(c)
    return deck + rest


def test_soupe_gertrude_table_shows_the_lot_face_up_the_auction_and_the_payment():
    moves = [{"pass": True}, {"face_up": "tomate"}]
    state, last = play("soupe-gertrude", 2, {"deck": soupe_deck()}, moves)
    table = spectator_table(state, last)
    lot = pile_named(table, "lot")
    assert lot["cards"] == [{"card": "tomate", "note": "face up"}] and lot["backs"] == 2
    assert "souris" not in card_strings(table) and not any("souris" in t for t in texts_in(table))
    replay = replay_table(state, last)
    assert sorted(c["card"] for c in pile_named(replay, "lot")["cards"]) == ["oseille-3", "souris", "tomate"]
    assert badges(replay, 0)["worth"] == "18" and "drawer" in badges(replay, 0)

    moves += [{"bid": 2}, {"pass": True}, {"give": "oseille-4", "to": 1}]
    state, last = play("soupe-gertrude", 2, {"deck": soupe_deck()}, moves)
    table = spectator_table(state, last)
    assert pile_named(table, "auction")["lines"] == [{"text": "bids 2", "seat": 0}, {"text": "passes", "seat": 1}]
    payment = pile_named(table, "payment")
    assert payment["note"] == "bid 2, 4 given so far"
    assert payment["lines"] == [{"text": "gives oseille-4 to", "seat": 0, "to": 1}]
    assert table["last"] == {"seat": 0, "text": "gives oseille-4 to", "cards": [], "to": 1}
    assert replay_table(state, last)["last"] == {"seat": 0, "text": "gives", "cards": ["oseille-4"], "to": 1}
