"""docs/rules/<game>.md: one page per game for bot authors, its generated parts fresh.

The options table and one example decision per kind (`pending` value) come from
the engines (docs/gen_rules.py); these tests fail when either goes stale, when a
kind of decision or a view field is missing from a page, or when an option's
documented default is not the one `GET /games` gives.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest

import games
from sdk.protocol import check_message
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "rules"
FIX = "run .venv/bin/python docs/gen_rules.py"
#: the real games (read before any test registers a toy one)
GAMES = games.names()


gen = load_script("docs/gen_rules.py", "gen_rules")


@functools.cache
def generated(name: str) -> dict[str, str]:
    return gen.blocks(name)


def page(name: str) -> str:
    return (RULES / f"{name}.md").read_text(encoding="utf-8")


def table_rows(text: str, header: str) -> list[list[str]]:
    """The cells of the markdown table whose header row starts with `header`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


@pytest.mark.parametrize("name", GAMES)
def test_every_generated_block_of_the_page_is_fresh(name):
    text = page(name)
    assert gen.refresh(text, generated(name)) == text, f"docs/rules/{name}.md is stale: {FIX}"


@pytest.mark.parametrize("name", GAMES)
def test_the_options_table_gives_each_option_with_its_get_games_default(name):
    rows = table_rows(page(name), "| option | default |")
    documented = {option.strip("`"): json.loads(default.strip("`")) for option, default, _ in rows}
    assert documented == games.get(name).describe()["options"]


@pytest.mark.parametrize("name", GAMES)
def test_each_kind_of_decision_is_said_in_plain_words_for_a_person(name):
    """/play tells a person what they will decide in the words of `Decision.words`: a sentence,
    no JSON (no braces, no quoted names)."""
    for decision in games.get(name).decisions:
        assert decision.words.endswith(".") and len(decision.words) > 20, decision.kind
        assert not re.search(r'[{}\[\]"`]', decision.words), decision.words


@pytest.mark.parametrize("name", GAMES)
def test_each_kind_of_decision_has_a_section_and_a_real_example(name):
    text = page(name)
    headings = re.findall(r"^### `([^`]+)`$", text, re.M)
    declared = [decision.kind for decision in games.get(name).decisions]
    assert headings == declared, "one section per declared decision (Game.decisions), in its order"
    for kind in headings:
        body = re.search(rf"<!-- generated: decision: {re.escape(kind)} -->\n```json\n(.*?)```", text, re.S)
        assert body, f"no example decision for {kind!r}: {FIX}"
        message = check_message(json.loads(body.group(1)))  # as a bot receives it
        assert message["game"] == name and message["view"]["pending"] == kind
        assert message["legal_actions"], kind


@pytest.mark.parametrize("name", GAMES)
def test_the_view_table_lists_exactly_the_fields_a_view_has(name):
    documented = set()
    for field, _ in table_rows(page(name), "| field | what it holds |"):
        documented.update(re.findall(r"`([^`]+)`", field))
    shown = {key for message in gen.examples(name).values() for key in message["view"]}
    assert documented == shown, f"documented but absent: {documented - shown}; absent: {shown - documented}"


@pytest.mark.parametrize("name", GAMES)
def test_each_page_says_what_a_seat_can_infer_and_that_sample_respects_it(name):
    """Issue 31: the facts the rules reveal beyond the view are written per game."""
    sections = page(name).split("\n## ")
    infer = [s for s in sections if s.startswith("What a seat can infer")]
    assert len(infer) == 1, "a section 'What a seat can infer'"
    assert "sample()" in infer[0] or "card counting" in infer[0].lower()


@pytest.mark.parametrize("name", GAMES)
def test_each_page_names_the_project_rules_page_as_the_authority(name):
    top = page(name).split("## ", 1)[0]
    assert f"docs/rulings/{name}.md" in top and "authority" in top


def test_the_readme_links_every_rules_page_inside_the_repository():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)]+)\)", readme)
    assert not [link for link in links if link.startswith("../")], "a link outside the repository"
    for name in GAMES:
        assert f"docs/rules/{name}.md" in links, name


def test_a_missing_block_or_an_unknown_one_is_an_error_not_a_silent_pass():
    with pytest.raises(KeyError):
        gen.refresh("no markers here\n", {"options": "x\n"})
    with pytest.raises(KeyError):
        gen.refresh("<!-- generated: nothing -->\n<!-- end: nothing -->\n", {})
