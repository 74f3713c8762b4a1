"""`cardarena play` is the platform at home: its deadlines and bank, fault kinds, forfeits and standings.

Run as a bot author runs it: the installed `cardarena` command, in a folder
holding the author's bots.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sdk import cli as sdk_cli

BOTS = '''
import os
import time

from sdk import Bot


class Sleepy(Bot):
    """Sleeps past its move time, writing down the bank each decision showed."""

    def decide(self, decision):
        with open("banks.txt", "a") as f:
            f.write(f"{decision['clock']['bank_ms']}\\n")
        time.sleep(0.15)
        return decision["legal_actions"][0]


class Lowest(Bot):
    def act(self, view, legal_actions):
        return legal_actions[0]
'''

RAISER = '''
from helper_c1 import pick
from sdk import Bot


class Raiser(Bot):
    def act(self, view, legal_actions):
        if view["seat"] == 0:
            return view["no_such_key"]
        return pick(legal_actions)
'''


def cardarena_command() -> list[str]:
    """The installed console script (its folder, not the current one, is first on sys.path)."""
    script = Path(sys.executable).with_name("cardarena")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-P", "-c", "import sys; from cardarena.cli import main; sys.exit(main())"]


def play(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*cardarena_command(), "play", *args], cwd=folder, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture()
def author(tmp_path: Path) -> Path:
    """A bot author's folder: a module of bots, and a file in a subfolder beside its helper."""
    (tmp_path / "mybots_c1.py").write_text(BOTS)
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "helper_c1.py").write_text("def pick(legal):\n    return legal[-1]\n")
    (tmp_path / "more" / "raiser.py").write_text(RAISER)
    return tmp_path


def table_rows(stdout: str) -> dict[str, dict[str, str]]:
    """The plain standings table (stdout is not a terminal) as {bot: {column: cell}}."""
    lines = stdout.splitlines()
    rule = next(i for i, line in enumerate(lines) if set(line) <= {"-", " "} and line.strip())
    spans, start = [], 0
    for dashes in lines[rule].split("  "):
        spans.append((start, start + len(dashes)))
        start += len(dashes) + 2
    header = [lines[rule - 1][a:b].strip() for a, b in spans]
    out = {}
    for line in lines[rule + 1:]:
        if not line.strip() or not line[0].isdigit():
            break
        cells = dict(zip(header, [line[a:b].strip() for a, b in spans], strict=True))
        out[cells["bot"]] = cells
    return out


def test_a_bot_sleeping_past_its_deadline_draws_its_bank_then_times_out_and_forfeits(author):
    done = play(author, "duck-soup", "mybots_c1:Sleepy", "example_bots.random:RandomBot", "--games", "1",
                "--move-timeout-ms", "100", "--time-bank-ms", "200", "-v")
    assert done.returncode == 0, done.stderr
    banks = [int(b) for b in (author / "banks.txt").read_text().split()]
    first_match = banks[: banks.index(200, 1)] if 200 in banks[1:] else banks
    assert first_match[0] == 200 and first_match[-1] == 0
    assert all(a > b or a == b == 0 for a, b in zip(first_match, first_match[1:], strict=False))
    row = table_rows(done.stdout)["mybots_c1:Sleepy"]
    assert (row["matches"], row["faults"], row["forfeits"]) == ("2", "6", "2")  # 3 faults forfeit a match
    assert table_rows(done.stdout)["example_bots.random:RandomBot"]["forfeits"] == "0"
    faults = [line for line in done.stderr.splitlines() if "mybots_c1:Sleepy: " in line]
    assert len(faults) == 6 and all(": timeout: " in line for line in faults)
    assert any("no answer within 100 ms move + 0 ms bank" in line for line in faults)  # cut off once the bank was empty
    assert "match 1 (deal 0, rotation 0), turn" in faults[0] and "seat 0" in faults[0]


def test_verbose_shows_a_raising_bots_traceback_and_a_file_path_names_a_bot(author):
    done = play(author, "duck-soup", "more/raiser.py:Raiser", "mybots_c1:Lowest", "--games", "1",
                "--no-duplicate", "-v")
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "turn 0, seat 0, more/raiser.py:Raiser: bot_error: KeyError: 'no_such_key'" in err
    assert "Traceback (most recent call last)" in err and 'return view["no_such_key"]' in err
    assert str(author / "more" / "raiser.py") in err
    row = table_rows(done.stdout)["more/raiser.py:Raiser"]
    assert (row["faults"], row["forfeits"]) == ("3", "1")
    assert row["mean score ± 95% CI"].endswith("± —")  # one match: a mean, no interval


def test_without_verbose_faults_are_summed_by_kind(author):
    done = play(author, "duck-soup", "more/raiser.py:Raiser", "mybots_c1:Lowest", "--games", "1",
                "--no-duplicate")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "3 faults (bot_error 3): run with -v" in done.stdout


def test_json_carries_the_platforms_standings_rows(author):
    done = play(author, "duck-soup", "mybots_c1:Lowest", "example_bots.random:RandomBot", "--games", "2",
                "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["move_timeout_ms"], out["time_bank_ms"], out["max_faults"]) == (2000, 10000, 3)
    rows = out["standings"]
    assert {r["bot"] for r in rows} == {"mybots_c1:Lowest", "example_bots.random:RandomBot"}
    for row in rows:
        assert set(row) >= {"rank", "bot", "points", "matches", "wins", "draws", "mean_score", "ci95",
                            "faults", "forfeits", "faults_by_kind"}
        assert row["matches"] == 4 and row["faults"] == 0


@pytest.mark.parametrize("args, message", [
    (["--move-timeout-ms", "50"], "--move-timeout-ms must be 100 to 10000"),
    (["--time-bank-ms", "-1"], "--time-bank-ms must be 0 to 60000"),
    (["--max-faults", "0"], "--max-faults must be 1 to 10"),
    (["--deals", "0"], "--deals must be at least 1"),
])
def test_limits_outside_the_platforms_are_refused(author, args, message):
    done = play(author, "duck-soup", "mybots_c1:Lowest", "mybots_c1:Lowest", *args)
    assert done.returncode == 2 and message in done.stderr


def test_a_missing_bot_is_a_clear_error(author):
    done = play(author, "duck-soup", "mybots_c1:Lowest", "nowhere/bot.py:Bot")
    assert done.returncode == 2 and "no such file: nowhere/bot.py" in done.stderr


def test_the_sdks_command_offers_play_and_the_platforms_offers_it_too():
    from cardarena.cli import COMMANDS

    assert sdk_cli.COMMANDS == {"play": "sdk.play", "replay": "sdk.replay_command", "compare": "sdk.compare_command",
                                "submit": "sdk.submit"}
    assert COMMANDS["play"] == "sdk.play"
    args = sdk_cli.build_parser().parse_args(["play", "duck-soup", "a:B", "a:B", "-v"])
    assert args.verbose and args.move_timeout_ms == 2000 and args.time_bank_ms == 10000


def test_the_plain_table_aligns_its_columns():
    from sdk.textout import plain_table

    text = plain_table("t", ("#", "bot", "points"), [("1", "long-bot-name", "3.5"), ("2", "b", "10.0")])
    assert text.splitlines() == textwrap.dedent("""\
        t
        #  bot            points
        -  -------------  ------
        1  long-bot-name     3.5
        2  b                10.0""").splitlines()


def test_the_pages_play_commands_run_as_written(tmp_path):
    """docs/write-a-bot.md's `cardarena play` lines, with the page's own bot as mybot.py."""
    from tests.sdk.test_sdk_docs import blocks

    bot = blocks("python")[0]
    (tmp_path / "mybot.py").write_text(bot)
    (tmp_path / "path" / "to").mkdir(parents=True)
    (tmp_path / "path" / "to" / "mybot.py").write_text(bot)
    commands = [line.split() for block in blocks("sh") for line in block.splitlines()
                if line.startswith("cardarena play ")]
    assert len(commands) == 3  # the third also exports its matches (see test_sdk_replay)
    for command in commands:
        done = subprocess.run([*cardarena_command(), *command[1:]], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        bots = table_rows(done.stdout)
        assert bots[command[3]]["matches"] == bots[command[4]]["matches"] != "0"
        assert bots[command[3]]["faults"] == "0"


def test_deals_names_the_count_and_games_is_its_old_name_with_a_warning(author):
    new = play(author, "duck-soup", "mybots_c1:Lowest", "mybots_c1:Lowest", "--deals", "1", "--json")
    old = play(author, "duck-soup", "mybots_c1:Lowest", "mybots_c1:Lowest", "--games", "1", "--json")
    assert new.returncode == old.returncode == 0, new.stderr + old.stderr
    assert json.loads(new.stdout)["standings"] == json.loads(old.stdout)["standings"]
    assert json.loads(new.stdout)["deals"] == 1
    assert "warning" not in new.stderr and "--games is now --deals" in old.stderr
    assert "--deals" in play(author, "--help").stdout


def test_a_forfeited_seat_shows_no_better_mean_score_than_the_winner(author):
    # seed 1: the referee's autopilot earns the forfeiting seat 2, the winner 0 (the case)
    done = play(author, "duck-soup", "more/raiser.py:Raiser", "mybots_c1:Lowest", "--deals", "1",
                "--no-duplicate", "--seed", "1", "--json", "--export", "match.json")
    assert done.returncode == 0, done.stderr
    rows = {r["bot"]: r for r in json.loads(done.stdout)["standings"]}
    forfeiter, winner = rows["more/raiser.py:Raiser"], rows["mybots_c1:Lowest"]
    assert forfeiter["forfeits"] == 1 and forfeiter["points"] == 0 and winner["wins"] == 1
    assert forfeiter["mean_score"] <= winner["mean_score"]
    result = json.loads((author / "match.json").read_text())["result"]
    assert result["scores"] == [2, 0]  # the match keeps the engine's scores
