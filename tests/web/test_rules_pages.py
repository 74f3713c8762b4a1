"""The rules pages on the web: every game's page rendered, linked and found; nothing unescaped."""

from __future__ import annotations

import html as html_lib
import json
import re
import tomllib
from pathlib import Path

import pytest

import games
from server.web import rules
from server.web.markdown import render

ROOT = Path(__file__).resolve().parents[2]
#: the real games (read before any test registers a toy one)
GAMES = games.names()


@pytest.mark.parametrize("name", GAMES)
def test_each_games_rules_page_renders_its_markdown_as_html(client, name):
    r = client.get(f"/games/{name}/rules")
    assert r.status_code == 200 and r.mimetype == "text/html"
    html = r.get_data(as_text=True)
    assert re.search(rf"<h1[^>]*>.*<code>{re.escape(name)}</code>.*</h1>", html)
    assert "<th>option</th><th>default</th>" in html  # the options table
    assert '<pre><code class="language-json">' in html and "legal_actions" in html  # the examples
    assert "<!--" not in html.split("<article", 1)[1]  # the generated-block markers are dropped


def test_an_unknown_games_rules_are_an_html_404(client):
    r = client.get("/games/chess/rules")
    assert r.status_code == 404 and r.mimetype == "text/html"
    assert "no game" in r.get_data(as_text=True)


def test_every_page_links_each_games_rules_and_the_leaderboard_links_them_per_game(client):
    html = client.get("/").get_data(as_text=True)
    for name in GAMES:
        assert html.count(f'href="/games/{name}/rules"') == 2, name  # the navigation bar and its board


def test_get_games_gives_each_rules_url_and_it_answers(client):
    listed = client.get("/api/v1/games").get_json()["games"]
    real = [g for g in listed if g["name"] in GAMES]
    assert [g["name"] for g in real] == GAMES
    for game in real:
        assert game["rules_url"] == f"/games/{game['name']}/rules"
        assert client.get(game["rules_url"]).status_code == 200


def test_the_openapi_document_has_rules_url(client):
    spec = client.get("/api/v1/openapi.json").get_json()
    game = spec["components"]["schemas"]["Game"]
    assert "rules_url" in game["properties"] and "rules_url" in game.get("required", [])


def test_the_pages_are_read_from_the_checkout_in_an_editable_install():
    assert rules.rules_dirs()[0] == ROOT / "docs" / "rules"
    for name in GAMES:
        assert rules.rules_markdown(name) == (ROOT / "docs" / "rules" / f"{name}.md").read_text(encoding="utf-8")
    assert rules.rules_markdown("chess") is None


def test_without_a_checkout_the_pages_a_wheel_installed_are_found(monkeypatch, tmp_path):
    installed = tmp_path / "share" / "cardarena" / "rules"
    installed.mkdir(parents=True)
    (installed / "duck-soup.md").write_text("# installed\n", encoding="utf-8")
    monkeypatch.setattr(rules, "CHECKOUT", tmp_path / "no-checkout")
    monkeypatch.setattr(rules.sysconfig, "get_path", lambda name, *scheme: str(tmp_path))
    assert rules.rules_markdown("duck-soup") == "# installed\n"
    assert rules.rules_markdown("double") is None  # not installed: the page answers 404


def test_the_wheel_carries_the_pages_where_the_lookup_finds_them():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    data_files = config["tool"]["setuptools"]["data-files"]
    assert data_files[str(rules.INSTALLED)] == ["docs/rules/*.md"]


# -- the renderer ------------------------------------------------------------

def test_no_raw_html_passes_through_the_renderer():
    html = render('<script>alert(1)</script>\n\n**<b>x</b>** `<i>` "q" & [a](javascript:alert(1))\n'
                  "\n| <td> | x |\n|---|---|\n| <img src=x onerror=y> | `<a>` |\n\n```\n</code><script>\n```\n")
    assert "<script>" not in html and "<b>" not in html and "<img" not in html and "<i>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "javascript:" not in html and "<a " not in html  # the unsafe link kept only its text
    assert "&lt;/code&gt;&lt;script&gt;" in html


def test_markers_are_dropped_and_links_kept_when_safe():
    html = render("<!-- generated: x -->\nsee [the API](/docs) and [here](#options)\n<!-- end: x -->\n")
    assert html == '<p>see <a href="/docs">the API</a> and <a href="#options">here</a></p>'


def test_lists_nest_by_indentation_and_numbered_lists_stay_numbered():
    html = render("1. **first**\n   * a\n   * b\n\n   more of the first\n2. second\n\n- loose\n")
    assert html.startswith("<ol>\n<li><p><strong>first</strong></p>\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>")
    assert "<p>more of the first</p></li>\n<li>second</li>\n</ol>" in html
    assert html.endswith("<ul>\n<li>loose</li>\n</ul>")


def test_tables_headings_and_emphasis():
    html = render("## The *view* `x`\n\n| a | b |\n|---|---|\n| `1` | *2* |\n")
    assert '<h2 id="the-view-x">The <em>view</em> <code>x</code></h2>' in html
    assert "<thead><tr><th>a</th><th>b</th></tr></thead>" in html
    assert "<tr><td><code>1</code></td><td><em>2</em></td></tr>" in html


def test_every_example_decision_survives_rendering_as_the_same_json():
    for name in GAMES:
        text = (ROOT / "docs" / "rules" / f"{name}.md").read_text(encoding="utf-8")
        shown = re.findall(r"```json\n(.*?)```", text, re.S)
        rendered = re.findall(r'<code class="language-json">(.*?)</code>', render(text), re.S)
        assert [json.loads(html_lib.unescape(r)) for r in rendered] == [json.loads(s) for s in shown]
