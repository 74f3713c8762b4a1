"""`Client.submit` and `cardarena submit`: one command uploads a bot; the platform hosts it."""

from __future__ import annotations

import io
import zipfile

from sdk import Client
from sdk.cli import main

GAME = "double-carre"
BOT = """
from sdk import Bot

class Steady(Bot):
    def act(self, view, legal_actions):
        return legal_actions[-1]
"""


def test_submit_a_file_then_again_as_its_next_version(api, tmp_path):
    token = api.account("author")
    path = tmp_path / "steady.py"
    path.write_text(BOT)
    client = Client(api.live.url, token=token)
    bot = client.submit(str(path), game=GAME)
    assert (bot.name, bot.kind, bot.status, bot.version) == ("Steady", "hosted", "online", 1)
    assert bot.raw["entrypoint"] == "steady:Steady"
    again = client.submit(str(path), game=GAME)
    assert (again.id, again.version, again.status) == (bot.id, 2, "online")


def test_submit_a_package_folder_naming_its_class(api, tmp_path):
    token = api.account("author")
    folder = tmp_path / "brainy"
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "logic.py").write_text("def pick(legal):\n    return legal[0]\n")
    (folder / "player.py").write_text(BOT.replace("legal_actions[-1]", "pick(legal_actions)")
                                      .replace("from sdk import Bot", "from sdk import Bot\nfrom brainy.logic import pick"))
    (folder / "__pycache__" / "junk.pyc").write_bytes(b"\0")
    bot = Client(api.live.url, token=token).submit(f"{folder}:Steady", game=GAME, name="brainy")
    assert (bot.name, bot.status, bot.raw["entrypoint"]) == ("brainy", "online", "brainy.player:Steady")
    code = api.get(f"/bots/{bot.id}/versions/1/code", token=token).content
    assert sorted(zipfile.ZipFile(io.BytesIO(code)).namelist()) == [
        "brainy/__init__.py", "brainy/logic.py", "brainy/player.py"]


def test_the_command_says_online_or_why_not(api, tmp_path, capsys):
    token = api.account("author")
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(BOT)
    bad.write_text(BOT.replace("return legal_actions[-1]", "raise KeyError('oops')"))
    args = ["--game", GAME, "--server", api.live.url, "--token", token]
    assert main(["submit", str(good), *args]) == 0
    assert "online" in capsys.readouterr().out
    assert main(["submit", str(bad), "--name", "bad", *args]) == 1
    out = capsys.readouterr()
    assert "rejected" in out.out and "KeyError: 'oops'" in out.err
    assert main(["submit", str(tmp_path / "missing.py"), *args]) == 2
