"""Where the rules pages (docs/rules/<game>.md) are, however cardarena is installed.

In a checkout — the README's `pip install -e .` — they are read from the
repository's `docs/rules/`, so an edited page shows at once. A wheel carries
them as data files (pyproject's `[tool.setuptools.data-files]`), installed
under `<prefix>/share/cardarena/rules` (or the user scheme's data directory
for `pip install --user`).
"""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import games

#: the pages in a checkout of the repository
CHECKOUT = Path(__file__).resolve().parents[2] / "docs" / "rules"
#: the wheel's data-files destination, relative to an install scheme's data directory
INSTALLED = Path("share") / "cardarena" / "rules"


def rules_dirs() -> list[Path]:
    """Where to look, in order: the checkout, then the install schemes' data directories."""
    dirs = [CHECKOUT]
    for scheme in (None, f"{os.name}_user"):
        try:
            data = sysconfig.get_path("data", scheme) if scheme else sysconfig.get_path("data")
        except KeyError:
            continue
        dirs.append(Path(data) / INSTALLED)
    return dirs


def rules_markdown(game: str) -> str | None:
    """The rules page of `game` as Markdown; None for an unknown game or a page not installed."""
    if game not in games.names():
        return None
    for directory in rules_dirs():
        page = directory / f"{game}.md"
        if page.is_file():
            return page.read_text(encoding="utf-8")
    return None
