"""The store's Redis scripts, one `.lua` file each, read by name: `source("settle")`.

Each script takes its keys in KEYS (named at its top) and its arguments as one
JSON table in ARGV[1] (`args`), decoded in the script: an argument is found by
its name, never by its position. The Python method that runs a script is its
one caller (`Store.script(source(name))`).

A step several scripts share is one Lua function in a library file, `lib/{name}.lua`, defining
`local function {name}` and nothing else. A script names the libraries it calls on its first
line, `--! uses credited pending`, and `source` puts them before it: a script is always whole
files, never pieces of text cut from Python modules.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib.resources import files

#: a script's first line when it calls library functions: their names, separated by spaces
USES = re.compile(r"--! uses ([a-z_ ]+)\n")


def read(path: str) -> str:
    return files(__name__).joinpath(path).read_text(encoding="utf-8")


def uses(name: str) -> list[str]:
    """The libraries `name`.lua calls (its first line `--! uses …`), in order."""
    declared = USES.match(read(f"{name}.lua"))
    return declared[1].split() if declared else []


@cache
def source(name: str) -> str:
    """The text of `name`.lua, after the library files it uses."""
    return "".join(read(f"lib/{lib}.lua") for lib in uses(name)) + read(f"{name}.lua")


def args(**named) -> str:
    """A script's arguments as the one JSON table it decodes (ARGV[1])."""
    return json.dumps(named, separators=(",", ":"))
