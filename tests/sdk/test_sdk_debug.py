"""`Bot.debug`: a bot's note for the decision under way, sent with its answer and shown in
local play (docs/api.md §6 "Debug output")."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

from sdk import Bot, play_local, serve
from sdk.debug import MAX_DEBUG, debug_text
from sdk.protocol import BotHooks
from tests.sdk.conftest import SECRET, post_signed, real_decision
from tests.sdk.test_sdk_play import play


class Thinker(Bot):
    """Notes which match and turn it decides, twice, and plays the first legal action."""

    def act(self, view, legal_actions):
        self.debug(f"seat {view['seat']}: {len(legal_actions)} choices")
        self.debug("taking the first")
        return legal_actions[0]


def test_debug_text_keeps_strings_cut_at_1000_printable_and_drops_the_rest():
    assert debug_text("a" * (MAX_DEBUG + 1)) == "a" * MAX_DEBUG
    assert debug_text("é\n\tok") == "é\n\tok"
    assert debug_text("bell\x07 esc\x1b nul\x00 surrogate\ud800") == "bell\ufffd esc\ufffd nul\ufffd surrogate\ufffd"
    for not_text in (None, "", 3, ["a"], {"a": 1}, True):
        assert debug_text(not_text) is None


def test_each_decisions_notes_are_its_own_and_join_one_line_a_call():
    hooks = BotHooks(Thinker())
    decision = real_decision()
    answer = hooks.answer(decision)
    assert answer == {"action": decision["legal_actions"][0],
                      "debug": f"seat {decision['seat']}: {len(decision['legal_actions'])} choices\ntaking the first"}
    assert Thinker().debug("outside any decision") is None  # dropped, never raises


def test_one_instance_answering_two_matches_at_once_keeps_each_decisions_debug_apart():
    """Both decisions are under way together (a barrier inside `act`): each answer carries
    only what was written while deciding it."""
    together = threading.Barrier(2, timeout=30)

    class Meeting(Bot):
        def decide(self, decision):
            self.debug(f"begin {decision['match_id']}")
            together.wait()
            self.debug(f"end {decision['match_id']}")
            return decision["legal_actions"][0]

    hooks = BotHooks(Meeting())
    answers = {}

    def answer(match_id):
        answers[match_id] = hooks.answer(real_decision(match_id=match_id))

    threads = [threading.Thread(target=answer, args=(m,)) for m in ("m_one", "m_two")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert {m: a["debug"] for m, a in answers.items()} == {"m_one": "begin m_one\nend m_one",
                                                         "m_two": "begin m_two\nend m_two"}


def test_a_served_webhook_bot_sends_its_debug_with_its_answer_cut_at_1000():
    class Chatty(Bot):
        def act(self, view, legal_actions):
            self.debug("y" * 3000)
            return legal_actions[-1]

    decision = real_decision()
    with serve(Chatty(), port=0, secret=SECRET, block=False) as server:
        body = post_signed(server.url, decision).json()
    assert body == {"action": decision["legal_actions"][-1], "debug": "y" * MAX_DEBUG}


def test_a_bot_without_debug_answers_as_before():
    class Quiet(Bot):
        def act(self, view, legal_actions):
            return legal_actions[0]

    assert BotHooks(Quiet()).answer(real_decision()) == {"action": real_decision()["legal_actions"][0]}


def test_local_play_returns_each_turns_debug_and_exports_it():
    played = play_local("double-carre", [Thinker(), Thinker()], seed=1)
    assert [n["turn"] for n in played.debug] == list(range(len(played.log)))
    assert all(n["seat"] == e["seat"] and n["text"].endswith("taking the first")
               for n, e in zip(played.debug, played.log, strict=True))
    assert played.export["debug"] == played.debug
    assert all("debug" not in entry for entry in played.log)  # the log stays as the platform's


def test_local_debug_of_a_bot_that_then_raises_is_kept():
    class Confused(Bot):
        def act(self, view, legal_actions):
            self.debug("about to fail")
            raise RuntimeError("lost")

    played = play_local("double-carre", [Confused(), Thinker()], seed=1, max_faults=10)
    mine = [n for n in played.debug if n["seat"] == 0]
    assert mine and all(n["text"] == "about to fail" for n in mine)


CLI_BOT = '''
from sdk import Bot


class Talker(Bot):
    def act(self, view, legal_actions):
        self.debug(f"I hold {len(view['hand'])} cards")
        return legal_actions[0]
'''


def test_cardarena_play_prints_debug_with_v_and_writes_it_in_the_export(tmp_path: Path):
    (tmp_path / "talker_d1.py").write_text(CLI_BOT)
    done: subprocess.CompletedProcess = play(tmp_path, "double-carre", "talker_d1:Talker",
                                             "example_bots.random:RandomBot", "--games", "1", "--no-duplicate",
                                             "-v", "--export", "out.jsonl")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "talker_d1:Talker debug: I hold" in line]
    assert lines and "match 1 (deal 0, rotation 0), turn 0, seat 0" in lines[0]
    [document] = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert document["debug"] and all(n["seat"] == 0 and n["text"].startswith("I hold") for n in document["debug"])
    quiet = play(tmp_path, "double-carre", "talker_d1:Talker", "example_bots.random:RandomBot", "--games", "1",
                 "--no-duplicate")
    assert "debug:" not in quiet.stderr  # only with -v
