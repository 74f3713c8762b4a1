"""Whose seats at a match the account signed in on a page holds: its person seat (where it
plays by clicking, server/web/people.py) and its bots' seats, whose debug output the match
page shows to it alone (docs/api.md §6 "Debug output")."""

from __future__ import annotations

from server.auth import session_account, store


def person_seat(match: dict, account: dict | None) -> tuple[int, dict] | None:
    """(seat, person bot) of `account`'s person seat in `match`, or None."""
    if account is None:
        return None
    bot_id = store().person_seat(account["id"], match["game"])
    if bot_id is None or bot_id not in match["seats"]:
        return None
    bot = store().bot_record(bot_id)
    if bot is None or bot.get("owner") != account["id"]:
        return None
    return match["seats"].index(bot_id), bot


def signed_in_seats(match: dict, public: bool) -> tuple[int | None, dict[int, str]]:
    """For the account signed in on this page: its person seat in the match (None if none), and
    turn -> the debug text its own bots wrote, once the replay is shown."""
    account = session_account()
    if account is None:
        return None, {}
    mine = person_seat(match, account)
    seat = mine[0] if mine else None
    if not public:
        return seat, {}
    owned = {b["id"] for b in store().get_bots(sorted(set(match["seats"]))) if b.get("owner") == account["id"]}
    seats = [i for i, b in enumerate(match["seats"]) if b in owned]
    notes = store().debug_notes(match["id"], seats) if seats else []
    return seat, {n["turn"]: n["text"] for n in notes}
