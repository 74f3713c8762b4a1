"""Replays: a match's export rebuilds every decision exactly as its seat received it, and a bot
run on them again is judged as the referee judges.

The reference for "exactly" is what the bots themselves received: in local
play (every game, with faults, a forfeit and a bank drawn on) and on the
live platform (a polling bot's decisions, as the worker pool sent them).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import games
import sdk
from sdk import Bot, ExportError, Replay, load_replay
from sdk.bot import load_bot_class
from sdk.export import Writer, dumps, read
from sdk.faults import FORFEITED
from sdk.local import play_local
from tests.live import ADMIN_TOKEN
from tests.sdk.test_sdk_play import cardarena_command


def _tape(decision: dict) -> str:
    """A decision as JSON with sorted keys: equal only if every value and JSON type is."""
    return json.dumps(decision, sort_keys=True)


class Taped(Bot):
    """Plays at random among the first actions, from its own seed, and keeps every decision
    as it received it.

    With `misbehave`, its first answer overruns the move time (the bank pays),
    then it raises, answers an illegal action and answers garbage: three faults,
    so with `max_faults=3` it forfeits and the referee plays on for it.
    """

    def __init__(self, seed: int = 0, misbehave: bool = False) -> None:
        self.rng = random.Random(seed)
        self.misbehave = misbehave
        self.tape: list[str] = []

    def decide(self, decision):
        self.tape.append(_tape(decision))
        n = len(self.tape)
        if self.misbehave and n == 1:
            time.sleep(0.15)
        if self.misbehave and n == 2:
            raise KeyError("no_such_key")
        if self.misbehave and n == 3:
            return {"no": "such action"}
        if self.misbehave and n == 4:
            return "garbage"
        legal = decision["legal_actions"]
        return legal[self.rng.randrange(min(3, len(legal)))]  # the first few: long matches


class First(Bot):
    def act(self, view, legal_actions):
        return legal_actions[0]


RULES = {"move_timeout_ms": 100, "time_bank_ms": 1000, "max_faults": 3}


def taped_match(game: str, seed: int = 5):
    """A local match of `game` between two taped bots, the second misbehaving."""
    bots = [Taped(1), Taped(2, misbehave=True)]
    match = play_local(game, bots, seed=seed, match_id=f"m-{game}", **RULES)
    return match, bots


@pytest.mark.parametrize("game", games.names())
def test_every_decision_replayed_is_the_one_its_seat_received_in_local_play(game, tmp_path):
    match, bots = taped_match(game)
    path = tmp_path / "match.json"
    path.write_text(json.dumps(match.export))  # through a file, as a bot author has it
    replay = load_replay(str(path))
    rebuilt = list(replay.decisions())
    for seat, bot in enumerate(bots):
        assert [_tape(d) for d in rebuilt if d["seat"] == seat] == bot.tape
    assert len(rebuilt) == sum(len(bot.tape) for bot in bots)
    # the match exercised what a replay must get right: a bank drawn on, faults, a forfeit
    assert any(d["clock"]["bank_ms"] < RULES["time_bank_ms"] for d in rebuilt if d["seat"] == 1)
    assert match.forfeits == [1] and any(e.get("fault") == FORFEITED for e in match.log)
    assert {e["fault"].split(":")[0] for e in match.log if e.get("fault") not in (None, FORFEITED)} \
        == {"bot_error", "illegal", "bad_answer"}


def test_a_step_of_a_forfeited_seat_has_no_decision_and_asking_for_it_says_why():
    match, _ = taped_match("duck-soup")
    replay = Replay(match.export)
    turn = next(e["turn"] for e in match.log if e.get("fault") == FORFEITED)
    assert replay.step(turn).decision is None
    with pytest.raises(ExportError, match=f"turn {turn} .* forfeited: no decision was sent"):
        replay.decision(turn)
    with pytest.raises(ExportError, match="has turns 0 to"):
        replay.decision(len(match.log))


def test_a_match_exported_before_the_time_bank_replays_its_decisions_without_a_clock():
    match = play_local("double", [First(), First()], seed=2, move_timeout_ms=700)
    old = {k: v for k, v in match.export.items() if k != "time_bank_ms"}
    old["log"] = [{k: v for k, v in e.items() if k != "ms"} for e in match.log]
    decisions = list(Replay(old).decisions())
    assert decisions and all(d["deadline_ms"] == 700 for d in decisions)
    assert all(set(d) == {"type", "protocol", "match_id", "game", "turn", "seat", "view",
                          "legal_actions", "deadline_ms"} for d in decisions)


# -- a bot run again on the decisions -------------------------------------------------

class Wayward(Bot):
    """Plays the first action, except at chosen turns: raises, answers illegally, garbage,
    another legal action, or sleeps past its deadline."""

    def __init__(self, plan: dict[int, str]) -> None:
        self.plan = plan
        self.starts: list[tuple[str, int]] = []

    def on_match_start(self, match_id, seat, view):
        self.starts.append((match_id, seat))

    def decide(self, decision):
        what = self.plan.get(decision["turn"])
        legal = decision["legal_actions"]
        if what == "raise":
            return decision["view"]["no_such_key"]
        if what == "illegal":
            return {"play": "no such card"}
        if what == "garbage":
            return [1, 2, 3]
        if what == "other":
            return legal[-1]
        if what == "sleep":
            time.sleep(decision["deadline_ms"] / 1000 + 0.3)
        return legal[0]


def first_vs_first(game: str = "duck-soup"):
    return play_local(game, [First(), First()], seed=3, move_timeout_ms=100, time_bank_ms=0)


def test_a_deterministic_bot_rerun_answers_every_move_it_played():
    match = first_vs_first()
    rows = Replay(match.export).rerun(First)
    assert len(rows) == len(match.log) and all(r.same and r.fault is None for r in rows)
    assert [r.played for r in rows] == match.actions


def test_a_rerun_bot_is_judged_as_the_referee_judges_and_its_traceback_kept():
    match = first_vs_first()
    replay = Replay(match.export)
    seat0 = [e["turn"] for e in match.log if e["seat"] == 0]
    legal_count = {d["turn"]: len(d["legal_actions"]) for d in replay.decisions()}
    other = next(t for t in seat0[3:] if legal_count[t] > 1)
    plan = {seat0[0]: "raise", seat0[1]: "illegal", seat0[2]: "garbage", other: "other", seat0[-1]: "sleep"}
    rows = {r.turn: r for r in replay.rerun(Wayward(plan), seats=[0])}
    assert set(rows) == set(seat0)  # seat 0's decisions only
    assert rows[seat0[0]].fault.startswith("bot_error: KeyError")
    assert 'return decision["view"]["no_such_key"]' in rows[seat0[0]].traceback
    assert "sdk/replay.py" not in rows[seat0[0]].traceback  # from the bot's side of the call
    assert rows[seat0[1]].fault.startswith("illegal: ") and rows[seat0[1]].answered == {"play": "no such card"}
    assert rows[seat0[2]].fault.startswith("bad_answer: ")
    assert rows[other].fault is None and not rows[other].same
    assert rows[seat0[-1]].fault.startswith("timeout")
    assert all(r.same for t, r in rows.items() if t not in plan)


def test_without_a_deadline_a_slow_answer_is_no_timeout():
    match = play_local("double", [First(), First()], seed=3, move_timeout_ms=100, time_bank_ms=0)
    turn = match.log[0]["turn"]
    row, = Replay(match.export).rerun(Wayward({turn: "sleep"}), upto=turn, deadline=False)
    assert row.fault is None and row.same and row.ms > 100


def test_a_class_makes_one_bot_per_seat_each_started_once_and_an_object_holds_every_seat():
    replay = Replay(first_vs_first().export)
    made: list[Wayward] = []

    def make():
        made.append(Wayward({}))
        return made[-1]

    replay.rerun(make)
    assert [bot.starts for bot in made] == [[("local", 0)], [("local", 1)]]
    one = Wayward({})
    replay.rerun(one)
    assert one.starts == [("local", 0), ("local", 1)]
    with pytest.raises(ValueError, match="seats 0 to 1"):
        replay.rerun(First, seats=[2])


def test_a_rerun_up_to_a_turn_stops_there_and_the_moves_played_stay_the_logged_ones():
    match = first_vs_first()
    replay = Replay(match.export)
    rows = replay.rerun(Wayward({t: "other" for t in range(len(match.log))}), upto=10)
    assert [r.turn for r in rows] == list(range(11))
    assert [r.played for r in rows] == match.actions[:11]  # its answers did not change the match


# -- the format: written, read, refused -----------------------------------------------

def test_a_document_has_api_mds_fields_and_the_rules_a_replay_needs():
    match = first_vs_first()
    doc = match.export
    assert list(doc) == ["format", "version", "id", "game", "options", "seed", "seats", "log", "result",
                         "decks", "move_timeout_ms", "time_bank_ms", "max_faults"]
    assert (doc["format"], doc["version"], doc["id"], doc["game"]) == ("cardarena-match", 1, "local", "duck-soup")
    assert doc["seats"] == [{"seat": 0, "bot": f"{__name__}:First"}, {"seat": 1, "bot": f"{__name__}:First"}]
    assert doc["decks"] == match.result["decks"] and doc["log"] == match.log
    assert (doc["move_timeout_ms"], doc["time_bank_ms"], doc["max_faults"]) == (100, 0, 3)


def test_a_json_lines_file_is_read_a_match_at_a_time_picked_by_its_id(tmp_path):
    docs = [play_local("double", [First(), First()], seed=s, match_id=f"m{s}").export for s in range(3)]
    path = tmp_path / "t.jsonl"
    with Writer(path) as writer:
        for doc in docs:
            writer.add(doc)
    assert len(path.read_text().splitlines()) == 3
    assert read(path, "m1") == json.loads(dumps(docs[1]))
    with pytest.raises(ExportError, match=r"holds several matches \(m0, m1, …\): say which one"):
        read(path)
    with pytest.raises(ExportError, match=r"holds no match 'm9' \(it holds m0, m1, m2\)"):
        read(path, "m9")
    folder = tmp_path / "each"
    with Writer(str(folder) + "/") as writer:
        writer.add(docs[2])
    assert read(folder / "m2.json") == json.loads(dumps(docs[2]))


def tampered(change) -> dict:
    doc = json.loads(dumps(first_vs_first().export))
    change(doc)
    return doc


def _set(doc: dict, key: str, value) -> None:
    doc[key] = value


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: _set(d, "format", "other"), "not a match export: its format is 'other'"),
    (lambda d: _set(d, "version", 2), "version 2 of cardarena-match; this SDK reads version 1"),
    (lambda d: d.pop("log"), "lacks log"),
    (lambda d: _set(d, "seed", "7"), "'seed' has the wrong type"),
    (lambda d: _set(d, "game", "chess"), "unknown game 'chess'"),
    (lambda d: _set(d, "seats", d["seats"] * 5), "10 seats; duck-soup is played by 2 to"),
    (lambda d: _set(d, "max_faults", -1), "'max_faults' must be a whole number"),
    (lambda d: d["log"][7].update(action={"play": "ZZ"}), "turn 7 does not replay: IllegalAction"),
    (lambda d: d["log"][7].update(action="JD"), "log entry 7 is not a log entry"),
    (lambda d: d["log"][4].update(turn=5), "turn 4 does not replay: ValueError: entry 5"),
    (lambda d: d["log"][9].update(ms="slow"), "turn 9: 'ms' must be a whole number"),
    (lambda d: d["log"][12].update(fault=FORFEITED), "turn 12: seat . is marked forfeited after 0 faults"),
    (lambda d: d["log"].pop(), "the log ends at turn .* before the match is over, yet it has a result"),
    (lambda d: d["log"].append(dict(d["log"][-1], turn=len(d["log"]))), "the match was already over"),
    (lambda d: d["result"].update(ranks=d["result"]["ranks"][::-1]), "the log replays to ranks"),
])
def test_a_document_that_is_not_a_match_or_does_not_replay_is_refused_saying_why(change, message):
    with pytest.raises(ExportError, match=message):
        Replay(tampered(change))


def test_an_aborted_match_replays_the_turns_it_played():
    doc = tampered(lambda d: (d["log"].__delitem__(slice(20, None)), _set(d, "result", None)))
    replay = Replay(doc)
    assert len(list(replay.decisions())) == 20


@pytest.mark.parametrize(("text", "message"), [
    ("", "holds no match"),
    ("not json\n", "not a match export: not JSON"),
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ('{"format": "cardarena-match"}\n{oops\n', "line 2: not JSON"),
    ("[1, 2]", "not a match export: a JSON object is expected"),
])
def test_a_file_that_is_not_an_export_is_refused_saying_why(tmp_path, text, message):
    path = tmp_path / "x.json"
    path.write_text(text)
    with pytest.raises(ExportError, match=message):
        read(path, None if "line 2" not in message else "other")
    with pytest.raises(ExportError, match="cannot read .*nothing-here.json"):
        read(tmp_path / "nothing-here.json")


# -- URLs --------------------------------------------------------------------------

class Platform:
    """A loopback HTTP server standing in for a platform's export endpoints."""

    def __init__(self, matches: dict[str, dict], tournaments: dict[str, list[dict]]) -> None:
        self.paths: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                outer.paths.append(self.path)
                parts = self.path.strip("/").split("/")  # api v1 kind id export
                kind, ident = parts[2], parts[3]
                status, body = 404, json.dumps({"error": {"code": "not_found", "message": f"there is no {ident!r}"}})
                if ident == "running":
                    status, body = 409, json.dumps({"error": {"code": "not_public", "message":
                                                              "a match is exported once it is finished"}})
                elif kind == "matches" and ident in matches:
                    status, body = 200, json.dumps(matches[ident])
                elif kind == "tournaments" and ident in tournaments:
                    status, body = 200, "".join(dumps(d) + "\n" for d in tournaments[ident])
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def platform():
    docs = [play_local("double", [First(), First()], seed=s, match_id=f"m{s}").export for s in range(2)]
    server = Platform({"m0": docs[0]}, {"t1": docs})
    yield server
    server.close()


def test_a_match_is_fetched_from_its_page_or_api_address_and_a_tournament_with_its_match(platform):
    base = platform.url
    for url in (f"{base}/matches/m0", f"{base}/api/v1/matches/m0", f"{base}/matches/m0/steps/3?x=1",
                f"{base}/api/v1/matches/m0/export"):
        assert load_replay(url).id == "m0"
    assert load_replay(f"{base}/tournaments/t1", match="m1").id == "m1"
    assert set(platform.paths) == {"/api/v1/matches/m0/export", "/api/v1/tournaments/t1/export"}
    with pytest.raises(ExportError, match="holds several matches"):
        load_replay(f"{base}/tournaments/t1")


def test_a_missing_or_unfinished_match_is_said_plainly(platform):
    with pytest.raises(ExportError, match=f"{platform.url} has no match 'nope'"):
        load_replay(f"{platform.url}/matches/nope")
    with pytest.raises(ExportError, match="match running is not public yet: a match is exported once"):
        load_replay(f"{platform.url}/matches/running")
    with pytest.raises(ExportError, match="not a match or tournament address"):
        load_replay(f"{platform.url}/bots/b1")


# -- the command line -----------------------------------------------------------------

BOTS = '''
from example_bots.random import RandomBot
from sdk import Bot


class First(Bot):
    def act(self, view, legal_actions):
        return legal_actions[0]


class Broken(Bot):
    def act(self, view, legal_actions):
        if len(legal_actions) == 1:
            return view["no_such_key"]
        return legal_actions[len(legal_actions) % 2]


class Seeded(RandomBot):
    """The random bot with a seed: the exported match is the same every run."""

    def __init__(self):
        super().__init__(seed=1)
'''


def cardarena(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*cardarena_command(), *args], cwd=folder, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture()
def exported(tmp_path: Path) -> Path:
    """A bot author's folder with `cardarena play --export` run in it: runs.jsonl."""
    (tmp_path / "mine.py").write_text(BOTS)
    # a seeded opponent (the reruns below need a deal where the broken bot meets a lone legal
    # move, and with an unseeded random bot some deals had none) and a generous
    # clock (on a busy machine no decision of these quick bots may be cut)
    done = cardarena(tmp_path, "play", "duck-soup", "mine:First", "mine:Seeded",
                     "--games", "1", "--move-timeout-ms", "10000", "--time-bank-ms", "60000",
                     "--export", "runs.jsonl", "--json")
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)  # the standings' JSON stays alone on stdout
    assert "exported 2 matches to runs.jsonl" in done.stderr
    return tmp_path


def test_play_exports_each_match_named_as_its_seats_were_and_replay_lists_its_decisions(exported):
    docs = [json.loads(line) for line in (exported / "runs.jsonl").read_text().splitlines()]
    assert [d["id"] for d in docs] == ["local-1", "local-2"]
    assert [s["bot"] for s in docs[1]["seats"]] == ["mine:Seeded", "mine:First"]
    done = cardarena(exported, "replay", "runs.jsonl", "--match", "local-2", "--seat", "1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("match local-2: duck-soup, seed ") and "1 mine:First" in lines[0]
    rows = lines[lines.index(next(x for x in lines if x.startswith("----"))) + 1:]
    seat1 = [e for e in docs[1]["log"] if e["seat"] == 1]
    assert len(rows) == len(seat1) and all(row.split()[1] == "1" for row in rows)
    assert rows[0].split()[0] == str(seat1[0]["turn"]) and json.dumps(seat1[0]["action"],
                                                                      separators=(",", ":")) in rows[0]


def test_replay_turn_prints_the_decision_in_full_as_the_seat_received_it(exported):
    done = cardarena(exported, "replay", "runs.jsonl", "--match", "local-1", "--turn", "5")
    assert done.returncode == 0, done.stderr
    expected = load_replay(str(exported / "runs.jsonl"), match="local-1").decision(5)
    assert json.loads(done.stdout) == expected and expected["turn"] == 5


def test_replay_with_a_bot_shows_its_answers_beside_the_moves_played(exported):
    done = cardarena(exported, "replay", "runs.jsonl", "--match", "local-1", "--bot", "mine.py:Broken",
                     "--seat", "0")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    rows = Replay(read(exported / "runs.jsonl", "local-1")).rerun(_load_broken(exported), seats=[0])
    same = sum(r.same for r in rows)
    raised = sum(1 for r in rows if r.traceback)
    assert 0 < raised and 0 < same < len(rows) - raised  # the same, different, and raising where one move is legal
    assert f"{same} as played" in out and f"{len(rows) - same - raised} different" in out
    assert f"{raised} bot_error" in out
    assert out.count("mine.py:Broken raised") == raised and 'return view["no_such_key"]' in out
    assert re.search(r"  ≠$", out, re.M) and re.search(r"  =$", out, re.M)


def test_replay_with_a_bot_marks_the_moves_the_referee_played_for_a_fault(exported):
    done = cardarena(exported, "play", "duck-soup", "mine:Broken", "mine:First", "--games", "1",
                     "--no-duplicate", "--max-faults", "10", "--export", "faulty.jsonl")
    assert done.returncode == 0, done.stderr
    log = read(exported / "faulty.jsonl")["log"]
    faulted = [e["turn"] for e in log if e.get("fault")]
    assert faulted and all(e["fault"].startswith("bot_error: KeyError") for e in log if e.get("fault"))
    done = cardarena(exported, "replay", "faulty.jsonl", "--bot", "mine:First", "--seat", "0")
    marked = [int(line.split()[0]) for line in done.stdout.splitlines() if "(bot_error)" in line]
    assert marked == faulted


def _load_broken(folder: Path) -> type[Bot]:
    return load_bot_class(str(folder / "mine.py") + ":Broken", allow_path=True)


def test_replay_turn_with_a_bot_shows_that_one_answer(exported):
    done = cardarena(exported, "replay", "runs.jsonl", "--match", "local-1", "--bot", "mine:First",
                     "--turn", "0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:3] == [
        "turn 0, seat 0 (the decision: cardarena replay SOURCE --turn 0)",
        f"played: {json.dumps(read(exported / 'runs.jsonl', 'local-1')['log'][0]['action'], separators=(',', ':'))}",
        done.stdout.splitlines()[2]]
    assert "the same move" in done.stdout


def test_the_pages_replay_commands_on_a_file_run_as_written(tmp_path):
    """docs/write-a-bot.md's `cardarena play --export` line, then its `cardarena replay` lines
    that read the file it wrote, with the page's own bot as mybot.py."""
    from tests.sdk.test_sdk_docs import blocks

    (tmp_path / "mybot.py").write_text(blocks("python")[0])
    lines = [line.split("#")[0].split() for block in blocks("sh") for line in block.splitlines()]
    export = next(line for line in lines if line[:2] == ["cardarena", "play"] and "--export" in line)
    replays = [line for line in lines if line[:2] == ["cardarena", "replay"] and "://" not in line[2]]
    assert replays, "the page replays no exported file"
    for command in [export, *replays]:
        done = cardarena(tmp_path, *command[1:])
        assert done.returncode == 0, done.stderr
    assert "turn 2, seat " in done.stdout and "bot: " in done.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["runs.jsonl"], "holds several matches"),
    (["runs.jsonl", "--match", "local-1", "--seat", "4"], "--seat 4: match local-1 has seats 0 to 1"),
    (["runs.jsonl", "--match", "local-1", "--turn", "1000"], "has turns 0 to"),
    (["runs.jsonl", "--match", "local-1", "--bot", "mine:Nope"], "does not name a subclass of sdk.Bot"),
    (["runs.jsonl", "--match", "local-1", "--bot", "example_bots.double:DoubleHeuristic"],
     "plays double, not duck-soup"),
    (["missing.json"], "cannot read missing.json"),
])
def test_replay_refuses_bad_input_with_one_clear_line(exported, args, message):
    done = cardarena(exported, "replay", *args)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_both_distributions_offer_replay():
    from cardarena.cli import build_parser as platform_parser
    from sdk.cli import build_parser as sdk_parser

    for parser in (sdk_parser(), platform_parser()):
        args = parser.parse_args(["replay", "x.json", "--bot", "m:C", "--seat", "1", "--turn", "3"])
        assert args.run.__module__ == "sdk.replay_command" and args.seat == [1] and args.turn == 3


def test_the_sdk_exports_the_replay():
    assert sdk.load_replay is sdk.replay.load and sdk.Replay is Replay


# -- a match on the platform ----------------------------------------------------------

def platform_document(match: dict) -> dict:
    """The match's document from its public record (the export endpoint's fields)."""
    fields = ("id", "game", "options", "seed", "seats", "log", "result", "decks", "move_timeout_ms",
              "max_faults", "time_bank_ms")
    return {"format": "cardarena-match", "version": 1, **{k: match[k] for k in fields if k in match}}


def test_a_platform_match_replays_to_the_decisions_its_polling_bot_received(api, worker_pool):
    token = api.account("author")
    mine = api.bot(token, "taped", "duck-soup", kind="polling")
    heuristic = api.ok(api.post("/bots", {"name": "heuristic", "game": "duck-soup", "kind": "python",
                                          "entrypoint": "example_bots.duck_soup:DuckSoupHeuristic"},
                                token=ADMIN_TOKEN), 201)
    taped = Taped(3)
    poller = sdk.connect(taped, api.live.url, secret=mine["secret"], wait=1, block=False)
    try:
        match_id = api.match(token, "duck-soup", [mine["id"], heuristic["id"]], seed=11)["id"]
        sdk.Client(api.live.url).wait_match(match_id, timeout=120)
        match = api.ok(api.get(f"/matches/{match_id}"), 200)
    finally:
        poller.stop(timeout=40)
    assert match["status"] == "finished" and match["result"]["faults"] == [0, 0]
    replay = Replay(platform_document(match))
    assert [_tape(d) for d in replay.decisions() if d["seat"] == 0] == taped.tape
    # GET /matches/{id}/steps/{k} carries the decision the seat to act received there (docs/api.md §5)
    steps = [api.ok(api.get(f"/matches/{match_id}/steps/{k}"), 200) for k in range(len(match["log"]) + 1)]
    assert [_tape(s["decision"]) for s in steps if s["to_act"] == 0] == taped.tape
    assert all(s["decision"]["seat"] == s["to_act"] for s in steps[:-1]) and steps[-1]["decision"] is None
    rows = replay.rerun(load_bot_class("example_bots.duck_soup:DuckSoupHeuristic"), seats=[1])
    assert rows and all(r.same for r in rows)  # the in-process bot, run again, plays what it played


def test_replay_of_a_platform_match_names_each_seat_by_its_bots_name(api, tmp_path):
    from tests.server.driving import played

    bots = [api.store.create_bot("acct", name, "duck-soup", "polling")[0]["id"] for name in ("alice-bot", "bob-bot")]
    match_id = played(api.store, bots, seed=4)
    done = cardarena(tmp_path, "replay", f"{api.live.url}/matches/{match_id}")
    assert done.returncode == 0, done.stderr
    assert f"seats 0 alice-bot ({bots[0]}), 1 bob-bot ({bots[1]})" in " ".join(done.stdout.split())
