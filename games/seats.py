"""Seat rotation around a table: "to the left" is seat + 1."""

from __future__ import annotations

from collections.abc import Container, Iterator


def left_of(seat: int, seats: int) -> int:
    """The seat to the left of `seat` (the next to play)."""
    return (seat + 1) % seats


def around(start: int, seats: int, skip: Container[int] = ()) -> Iterator[int]:
    """Every seat once, from `start` round the table, leaving out `skip`."""
    for i in range(seats):
        seat = (start + i) % seats
        if seat not in skip:
            yield seat


def next_in_game(seat: int, seats: int, skip: Container[int] = ()) -> int | None:
    """The first seat left of `seat` that is not in `skip` (None if none is)."""
    for i in range(1, seats + 1):
        other = (seat + i) % seats
        if other not in skip:
            return other
    return None


def rotate(seq: list, k: int) -> list:
    """`seq` rotated left by `k` (seat i of the result is seat i+k of `seq`)."""
    if not seq:
        return []
    k %= len(seq)
    return seq[k:] + seq[:k]


def rotations(seats: int, duplicate: bool, deal: int) -> list[int]:
    """The seat rotations deal number `deal` is played in: every one in duplicate
    play (each entrant holds each hand), else one, advancing with the deal so
    nobody keeps the first seat. Use with `rotate`."""
    return list(range(seats)) if duplicate else [deal % seats]
