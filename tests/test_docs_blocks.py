"""Every code block of the docs runs, or is checked against what it names.

- Python blocks run: `docs/write-a-bot.md`'s against a live platform
  (tests/sdk/test_sdk_docs.py) and its `py` ones in tests/test_example_bot_pimc.py;
  the others here.
- JSON blocks parse, and a decision among them is a well-formed protocol message.
- Shell blocks: each `cardarena …` command parses with the real command line (its
  subcommand and flags exist), each `python -m M` names a module that exists, each `curl`
  names an endpoint the API serves with that method, each path given to pip exists.
- A block with no language is a diagram, a file's text or a schematic, not code.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import re
import shlex
from pathlib import Path

import pytest

import sdk
from cardarena.cli import build_parser
from sdk.protocol import check_message

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
RUN_ELSEWHERE = {("write-a-bot.md", "python"), ("write-a-bot.md", "py")}
LANGUAGES = {"python", "py", "json", "bash", "sh", ""}


def blocks(language: str) -> list[tuple[str, str]]:
    return [(page.name, body) for page in PAGES for lang, body in FENCE.findall(page.read_text())
            if lang == language]


def commands(script: str) -> list[list[str]]:
    """The commands of a shell block: continuation lines joined, comments dropped, `&&` split."""
    out = []
    for line in script.replace("\\\n", " ").splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            out += [shlex.split(part) for part in line.split("&&")]
    return out


def test_every_block_is_in_a_language_this_test_knows():
    found = {(page.name, lang) for page in PAGES for lang, _ in FENCE.findall(page.read_text())}
    assert sorted(lang for _, lang in found if lang not in LANGUAGES) == []


@pytest.mark.parametrize("page,body", [b for b in blocks("python") if (b[0], "python") not in RUN_ELSEWHERE])
def test_python_blocks_run(page, body, monkeypatch):
    started = []

    def recorder(real):
        def start(*args, **kwargs):
            inspect.signature(real).bind(*args, **kwargs)  # the call is one the SDK takes
            started.append(real.__name__)
        return start

    monkeypatch.setattr(sdk, "serve", recorder(sdk.serve))
    monkeypatch.setattr(sdk, "connect", recorder(sdk.connect))
    namespace = {"__name__": "docs", "SECRET": "s" * 32, "TOKEN": "t" * 32}
    if page == "README.md":  # the README's bot is write-a-bot.md's first block
        ours = [b for p, b in blocks("python") if p == "write-a-bot.md"][:1]
        assert [body] == ours
    exec(compile(body, page, "exec"), namespace)


@pytest.mark.parametrize("page,body", blocks("json"))
def test_json_blocks_parse_and_decisions_are_protocol_messages(page, body):
    message = json.loads(body)
    if isinstance(message, dict) and message.get("type") == "turn":
        check_message(message)


def shell_commands() -> list[tuple[str, list[str]]]:
    return [(page, argv) for lang in ("bash", "sh") for page, body in blocks(lang) for argv in commands(body)]


@pytest.mark.parametrize("page,argv", shell_commands(), ids=lambda v: " ".join(v)[:60] if isinstance(v, list) else v)
def test_shell_commands_name_what_exists(page, argv, app):
    program = Path(argv[0]).name
    if program == "cardarena":
        build_parser().parse_args(argv[1:])  # exits (SystemExit) on an unknown command or flag
    elif program in ("python", "python3") and argv[1] == "-m":
        if argv[2] != "venv":
            assert importlib.util.find_spec(argv[2]) is not None, argv[2]
    elif program == "pip":
        paths = [a for a in argv[2:] if a.startswith(".")]
        assert all((ROOT / p.split("[")[0].strip("'")).exists() for p in paths), paths
    elif program == "curl":
        method = argv[argv.index("-X") + 1] if "-X" in argv else "GET"
        url = next(a for a in argv if a.startswith("http"))
        path = re.sub(r"^https?://[^/]+", "", url)
        adapter = app.url_map.bind("localhost")
        adapter.match(path, method=method)  # raises NotFound / MethodNotAllowed
    elif program in ("pytest", "ruff", "export", "apt-get"):
        pass
    elif argv[0].startswith(".") and "/" in argv[0]:  # a script of the repository's own, e.g. .ci/check
        assert os.access(ROOT / argv[0], os.X_OK), argv[0]
    else:
        pytest.fail(f"{page}: a shell command this test does not know how to check: {argv}")
