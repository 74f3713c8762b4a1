"""docs/write-a-bot.md runs as written: its Python blocks, in order, against a live API and real workers.

The only edits are addresses: the page's `http://127.0.0.1:5000` becomes the
test server's URL and its port 8001 a free port. Where the page has the reader
export `CARDARENA_TOKEN` in a shell, the test sets it to the token its client kept.
The page's tournament enters a webhook bot registered before it was served:
it must come online and play, not be left out as `offline`.
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

import sdk
from sdk.protocol import check_message
from tests.games.builtin import builtin_names
from tests.live import ADMIN_TOKEN

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "write-a-bot.md"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


def blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(PAGE.read_text()) if lang == language]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_bot_is_ten_lines_and_hosting_and_entering_it_six_more():
    bot, _, enter, *_ = blocks("python")
    assert len([line for line in bot.splitlines() if line.strip()]) <= 10
    assert len([line for line in enter.splitlines() if line.strip()]) <= 6


@pytest.mark.slow
def test_the_python_blocks_run_as_written(api, worker_pool, monkeypatch, capsys):
    admin = sdk.Client(api.live.url, token=ADMIN_TOKEN)  # rivals, as `cardarena demo` registers them
    admin.register_bot("random", "soupe-gertrude", kind="python", entrypoint="example_bots.random:RandomBot")
    admin.register_bot("heuristic", "soupe-gertrude", kind="python",
                       entrypoint="example_bots.soupe_gertrude:SoupeGertrudeHeuristic")
    handles = []  # the background loops and servers, to stop them afterwards

    def keeping(real):
        def start(*args, **kwargs):
            handle = real(*args, **kwargs)
            handles.append(handle)
            return handle
        return start

    monkeypatch.setattr(sdk, "connect", keeping(sdk.connect))
    monkeypatch.setattr(sdk, "serve", keeping(sdk.serve))
    port = str(_free_port())
    namespace: dict = {"__name__": "write_a_bot"}
    try:
        for source in blocks("python"):
            source = source.replace("http://127.0.0.1:5000", api.live.url).replace("8001", port)
            if "CARDARENA_TOKEN" in source:  # the page's `export CARDARENA_TOKEN=...` step
                kept = namespace["client"].token
                monkeypatch.setenv("CARDARENA_TOKEN", kept)
            exec(compile(source, str(PAGE), "exec"), namespace)
    finally:
        for handle in handles:
            handle.stop(timeout=40)
    out = capsys.readouterr().out
    me, poller = namespace["me"], namespace["poller"]
    assert me.reachable is False and me.warnings  # registered before it was served: warned of
    mine = api.get(f"/bots/{me.id}").json()
    assert mine["matches"] >= 5 and mine["faults"] == 0  # yet it played its tournament (and the challenge)
    assert "online (answered in" in out  # the page's ping found it served
    assert api.get(f"/bots/{poller.id}").json()["faults"] == 0  # and the polling one its challenge
    assert namespace["client"].token == kept  # a later client read the kept token
    assert api.get(f"/bots/{poller.id}").json()["retired"] is True  # and acted as its owner
    assert "tournament" in out and "cautious" in out  # the progress bar's last state and the standings
    assert re.search(r"\[[123], [123]\]", out)  # the printed ranks


def test_every_decision_shown_is_the_engines_first_decision():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_decisions", ROOT / "docs" / "gen_decisions.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    shown = {}
    for body in blocks("json"):
        message = check_message(json.loads(body))  # every example is a well-formed message
        if message["turn"] == 0:
            shown[message["game"]] = message
    for name, message in shown.items():
        assert message == gen.first_decision(name), f"{name}: rerun docs/gen_decisions.py"
    # every game the project ships (a test's toy game, registered by another module, is not one)
    missing = [name for name in builtin_names() if name not in shown]
    assert not missing, f"no decision shown for {missing}: rerun docs/gen_decisions.py"


def test_the_readme_shows_the_pages_own_bot():
    """The README's bot is the page's first block, which the test above runs."""
    readme = [body for lang, body in FENCE.findall((ROOT / "README.md").read_text()) if lang == "python"]
    assert readme == blocks("python")[:1]
