"""`cardarena compare`: the platform's comparison (docs/api.md §5) played locally — the same
seating, statistic and sequential test (`sdk.comparison`), the same verdict line as
`Client.compare` (`sdk.client.Comparison.verdict`)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from example_bots.random import RandomBot
from sdk import cli
from sdk.client import Comparison
from sdk.comparison import deal_seatings, deal_statistic

HEURISTIC = "example_bots.duck_soup:DuckSoupHeuristic"
SEEDED_RANDOM = "tests.sdk.test_sdk_compare:SeededRandom"
#: duck-soup's one-deal matches: a comparison's deals in a fraction of a second
QUICK = ["--game", "duck-soup", "--option", "deal_only=true"]
#: Client.compare's verdict line (sdk.client.Comparison.verdict), whatever the figures
VERDICT = re.compile(r"^(H1|H0|inconclusive): .+ after \d+ deals \(llr -?\d+\.\d\d, bounds -?\d+\.\d\d and "
                     r"-?\d+\.\d\d; mean [+-]\d\.\d{3}, 95% \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]\)$")


class SeededRandom(RandomBot):
    """A random bot whose every instance draws the same choices: a comparison of it with
    itself is the same run every time."""

    def __init__(self) -> None:
        super().__init__(seed=1)


def compare(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["compare", *args])
    out, err = capsys.readouterr()
    return code, out.strip().splitlines()[-1] if out.strip() else "", err


def test_the_heuristic_is_better_than_random_head_to_head(capsys):
    code, verdict, _ = compare(capsys, HEURISTIC, "example_bots.random:RandomBot", *QUICK, "--deals", "200",
                               "--seed", "3")
    assert code == 0
    assert verdict.startswith(f"H1: {HEURISTIC} is better than example_bots.random:RandomBot after "), verdict
    assert VERDICT.match(verdict), verdict


def test_a_random_bot_is_not_better_than_itself_in_a_seeded_run(capsys):
    code, verdict, _ = compare(capsys, SEEDED_RANDOM, SEEDED_RANDOM, *QUICK, "--deals", "300", "--seed", "4")
    assert code == 0
    assert not verdict.startswith("H1"), verdict
    assert VERDICT.match(verdict), verdict


def test_an_h0_verdict_says_better_by_less_than_delta_not_no_better():
    """H0 is "the mean is at most delta0": the candidate may be a little better, just not by delta1."""
    raw = {"id": "c", "status": "H0", "candidate": "b_new", "baseline": "b_old", "deals": 900, "llr": -2.95,
           "bounds": [-2.94, 2.94], "mean": 0.018, "ci95": [-0.003, 0.039], "delta0": 0.0, "delta1": 0.05}
    verdict = Comparison.of(raw).verdict
    assert verdict.startswith("H0: b_new is not better than b_old by ≥ δ = 0.05 after 900 deals"), verdict
    assert VERDICT.match(verdict), verdict


def test_the_deals_flag_is_shown_as_a_number_of_deals(capsys):
    with pytest.raises(SystemExit):
        cli.main(["compare", "--help"])
    usage = capsys.readouterr().out
    assert "--deals N" in usage and "GAMES" not in usage, usage


def test_the_verdict_is_the_platform_clients_line_for_the_same_figures(capsys):
    args = [HEURISTIC, "example_bots.random:RandomBot", *QUICK, "--deals", "200", "--seed", "3"]
    _, printed, _ = compare(capsys, *args)
    cli.main(["compare", *args, "--json"])
    record = json.loads(capsys.readouterr().out)  # what GET /comparisons/{id} shows, by its names
    assert {"deals", "llr", "bounds", "mean", "ci95", "status"} <= set(record)
    assert printed == Comparison.of(record).verdict


def test_in_a_field_the_heuristic_is_better_than_random(capsys):
    code, verdict, _ = compare(capsys, HEURISTIC, "example_bots.random:RandomBot", *QUICK, "--deals", "200",
                               "--opponent", "example_bots.random:RandomBot", "--opponent", HEURISTIC)
    assert code == 0 and verdict.startswith("H1: "), verdict


def test_a_deals_statistic_is_the_platforms():
    _, head_to_head, _ = deal_seatings(7, 0)
    assert [s.entrants for s in head_to_head] == [("candidate", "baseline"), ("baseline", "candidate")]
    assert deal_statistic([1.0, 1.0], field=False) == 0.5  # won both rotations
    assert deal_statistic([1.0, 0.0], field=False) == 0.0
    _, field, _ = deal_seatings(7, 0, ["x", "y"], seats=2)
    assert [s.who for s in field] == ["candidate", "baseline"] * 2
    assert deal_statistic([1.0, 0.0, 0.5, 0.5], field=True) == 0.5


@pytest.mark.parametrize("args, message", [
    (["--seats", "3"], "--seats is for a field"),
    (["--opponent", "example_bots.random:RandomBot", "--seats", "3", "--game", "soupe-gertrude"],
     "tables of 3 need at least 2 opponents"),
    (["--deals", "0"], "--deals must be at least 1"),
])
def test_a_comparison_that_cannot_be_played_is_a_clear_error(capsys, args, message):
    game = [] if "--game" in args else ["--game", "duck-soup"]
    code, _, err = compare(capsys, HEURISTIC, "example_bots.random:RandomBot", *game, *args)
    assert code == 2 and message in err, err


def test_the_sdks_own_command_offers_compare():
    parser = cli.build_parser()
    args = parser.parse_args(["compare", "a:A", "b:B", "--game", "duck-soup"])
    assert args.command == "compare" and args.games == 2000


def test_the_pages_compare_commands_run_as_written(tmp_path):
    """docs/write-a-bot.md's `cardarena compare` lines, with the page's own bot as mybot.py."""
    from tests.sdk.test_sdk_docs import blocks
    from tests.sdk.test_sdk_play import cardarena_command

    (tmp_path / "mybot.py").write_text(blocks("python")[0])
    commands = [line.split() for block in blocks("sh") for line in block.splitlines()
                if line.startswith("cardarena compare ")]
    assert commands
    for command in commands:
        done = subprocess.run([*cardarena_command(), *command[1:]], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert VERDICT.match(done.stdout.strip().splitlines()[-1]), done.stdout


def test_export_writes_every_match_the_comparison_played(capsys, tmp_path):
    target = tmp_path / "runs.jsonl"
    code, verdict, err = compare(capsys, HEURISTIC, "example_bots.random:RandomBot", *QUICK, "--deals", "200",
                                 "--export", str(target))
    deals = int(re.search(r"after (\d+) deals", verdict).group(1))
    documents = [json.loads(line) for line in target.read_text().splitlines()]
    assert code == 0 and len(documents) == 2 * deals  # each deal in both rotations
    assert {d["seats"][0]["bot"] for d in documents} == {HEURISTIC, "example_bots.random:RandomBot"}
    assert f"exported {2 * deals} matches" in err
