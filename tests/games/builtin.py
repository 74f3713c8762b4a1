"""The games the project ships (`games.BUILTIN`), by name.

A plug-in owes the platform only what tests/games/test_conformance.py checks;
the project's own games owe more (card faces, a demo table, a heuristic bot, a
pinned replay digest), and the tests that check that read this list rather
than `games.names()`, where a test may have registered a toy game.
"""

from __future__ import annotations

import importlib

import games


def builtin_names() -> list[str]:
    """The names of the games `games.BUILTIN` registers, sorted."""
    return sorted(importlib.import_module(module).GAME.name for module in games.BUILTIN)
