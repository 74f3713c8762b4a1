"""The store's Redis scripts, one `.lua` file each, read by name: `source("settle")`.

Each script takes its keys in KEYS (named at its top) and its arguments as one
JSON table in ARGV[1] (`args`), decoded in the script: an argument is found by
its name, never by its position. The Python method that runs a script is its
one caller (`Store.script(source(name))`).
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files


@cache
def source(name: str) -> str:
    """The text of `name`.lua."""
    return files(__name__).joinpath(f"{name}.lua").read_text(encoding="utf-8")


def args(**named) -> str:
    """A script's arguments as the one JSON table it decodes (ARGV[1])."""
    return json.dumps(named, separators=(",", ":"))
