"""What the steps' mixins (auction, payment, specials, winning, views) read and write of a
`SoupeState`: its fields and the helpers it defines, declared once for the type checker.
Annotations only: nothing here exists at run time, `SoupeState` (state.py) sets it all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any


class Fields:
    # games.base.State's
    seats: int
    seed: int
    _to_act: int | None
    # SoupeState's (state.py)
    variant: bool
    manches: int
    max_bid: int
    totals: list[int]
    manche_points: list[list[int]]
    log: list[tuple[frozenset | None, dict]]
    final_scores: list[int] | None
    final_eliminated: list[int]
    pending: str | None
    manche: int
    starter: int
    drawer: int
    hands: list[list[str]]
    pile: list[str]
    out: list[str]
    eliminated: list[int]
    lot: list[str]
    face_up: str | None
    auction: dict[str, Any] | None
    payment: dict[str, Any] | None
    special: dict[str, Any] | None
    play: dict[str, Any] | None
    claim: dict[str, Any] | None
    lot_specials: list[str]
    reshuffles: int
    gertrudes: int

    if TYPE_CHECKING:  # defined by SoupeState and the other mixins
        def _ask(self, pending: str, seat: int) -> None: ...
        def _event(self, event: dict, seats: Any = None) -> None: ...
        def in_game(self) -> list[int]: ...
        def others(self, seat: int) -> list[int]: ...
        def _take(self, seat: int, card: str) -> str: ...
        def _continue(self, step: str) -> None: ...
        def _end_manche(self, winner: int | None) -> None: ...
        def _run_checks(self, seats: list[int], after: str) -> None: ...
        def _start_payment(self, winner: int, bid: int) -> None: ...
        def _ask_special(self, seat: int, allowed: tuple[str, ...], after: str) -> None: ...
        def _open_auction(self, opener: int) -> None: ...
        def _start_turn(self, drawer: int) -> None: ...
