"""sdk/bot.py: `decide` is what every host calls; `load_bot_class` names a bot by module or, locally, by file."""

from __future__ import annotations

import logging
import textwrap

import pytest

from sdk import Bot
from sdk.bot import load_bot_class
from sdk.protocol import BotHooks
from tests.sdk.conftest import real_decision


class Lowest(Bot):
    def act(self, view, legal_actions):
        return legal_actions[0]


class ClockWatcher(Bot):
    """Wants the whole decision: plays the last action when its bank is low."""

    def __init__(self) -> None:
        self.seen: list[dict] = []

    def decide(self, decision):
        self.seen.append(decision)
        legal = decision["legal_actions"]
        return legal[-1] if decision["clock"]["bank_ms"] < 1000 else legal[0]


def test_decide_calls_act_with_the_view_and_the_legal_actions_by_default():
    decision = real_decision()
    assert Lowest().decide(decision) is decision["legal_actions"][0]


def test_the_dispatcher_asks_decide_so_a_bot_can_read_its_clock():
    bot = ClockWatcher()
    decision = {**real_decision(), "clock": {"move_ms": 2000, "bank_ms": 300}, "last_latency_ms": 12}
    assert BotHooks(bot).decide(decision) == decision["legal_actions"][-1]
    assert bot.seen == [decision]


def test_the_dispatcher_warns_with_the_referees_rule(caplog):
    decision = real_decision("double")  # [{"bid": 0}, {"bid": 1}]

    class Says(Bot):
        answer = None

        def act(self, view, legal_actions):
            return self.answer

    bot = Says()
    with caplog.at_level(logging.WARNING, logger="sdk"):
        bot.answer = {"bid": 1}  # equal, another object: listed
        BotHooks(bot).decide(decision)
        assert not caplog.records
        bot.answer = {"bid": True}  # == says equal; the referee says illegal
        BotHooks(bot).decide({**decision, "match_id": "m_other"})
    assert "not one of legal_actions" in caplog.text


def write(path, text: str):
    path.write_text(textwrap.dedent(text))
    return path


def test_a_file_path_names_a_bot_for_local_play_and_it_imports_its_neighbours(tmp_path):
    write(tmp_path / "helpers_c1.py", "def first(legal):\n    return legal[0]\n")
    bot_file = write(tmp_path / "mine.py", """
        from helpers_c1 import first
        from sdk import Bot

        class Mine(Bot):
            def act(self, view, legal_actions):
                return first(legal_actions)
    """)
    cls = load_bot_class(f"{bot_file}:Mine", allow_path=True)
    assert issubclass(cls, Bot) and cls.__name__ == "Mine"
    assert load_bot_class(f"{bot_file}:Mine", allow_path=True) is cls  # loaded once


def test_the_platform_refuses_a_path(tmp_path):
    bot_file = write(tmp_path / "mine2.py", "from sdk import Bot\nclass Mine(Bot):\n    pass\n")
    with pytest.raises(ValueError, match="file path is taken only by local play"):
        load_bot_class(f"{bot_file}:Mine")


@pytest.mark.parametrize("spec, reason", [
    ("nocolon", "is not module:Class"),
    ("no_such_module_c1:Bot", "cannot import"),
    ("sdk.bot:load_bot_class", "does not name a subclass"),
    ("missing/file.py:Bot", "no such file"),
])
def test_a_bad_name_says_why(spec, reason):
    with pytest.raises(ValueError, match=reason):
        load_bot_class(spec, allow_path=True)


def test_a_file_that_raises_on_import_is_a_clear_error(tmp_path):
    bot_file = write(tmp_path / "broken_c1.py", "raise RuntimeError('half written')\n")
    with pytest.raises(ValueError, match="cannot load .*RuntimeError: half written"):
        load_bot_class(f"{bot_file}:Bot", allow_path=True)


def test_a_helper_named_decide_with_the_acts_arguments_is_refused_when_the_class_is_defined():
    with pytest.raises(TypeError, match="give your own helper another name"):
        class Clashing(Bot):
            def act(self, view, legal_actions):
                return self.decide(view, legal_actions)

            def decide(self, view, legal_actions):
                return legal_actions[0]


def test_a_decide_taking_the_decision_alone_is_the_hook_overridden():
    class Whole(Bot):
        def decide(self, decision, extra=None):
            return decision["legal_actions"][-1]

    decision = {"view": {}, "legal_actions": [{"a": 1}, {"a": 2}]}
    assert Whole().decide(decision) == {"a": 2}
