"""`cardarena demo`, the README's main job, run as a user runs it: a subprocess.

It must finish on its own with standings for every game and leave no process
behind (Redis, API, workers, horses); with `--stay`, every URL it prints answers
until it is stopped. Whatever `REDIS_URL` says, it runs on a Redis of its own. Stopped by Ctrl-C or SIGTERM mid-tournament, it leaves none
either: tests/test_signals.py. A demo a test starts dies with the test's process, even one killed
with SIGKILL, and leaves none either.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

import games
from core.signals import PARENT_ENV
from tests.demo_platform import platform_state
from tests.games.builtin import builtin_names
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]


def start_demo(*args: str, redis_url_env: str | None = None, stdout=subprocess.PIPE) -> subprocess.Popen:
    """A fresh machine's demo: no Redis configured (unless `redis_url_env`), the ladder at its default.
    Its output (both streams) goes to `stdout`, a pipe by default."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CARDARENA_LADDER_MATCHES")}
    env.update(COLUMNS="160", CARDARENA_HOME=str(ROOT / "test-output" / "demo-home"))
    env[PARENT_ENV] = str(os.getpid())  # it dies with the test's process, should that be killed
    if redis_url_env:
        env["REDIS_URL"] = redis_url_env
    return subprocess.Popen([sys.executable, "-m", "cardarena.cli", "demo", "--port", "0", *args],
                            cwd=ROOT, env=env, stdout=stdout, stderr=subprocess.STDOUT, text=True)


def leftovers(redis_port: str) -> list[str]:
    """Processes still naming the demo's Redis: its redis-server, workers, horses."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"127.0.0.1:{redis_port}" in text or f"--port {redis_port} " in text:
            found.append(f"{cmdline.parent.name}: {text[:120]}")
    return found


@pytest.mark.slow
def test_the_demo_plays_every_game_and_leaves_nothing_behind():
    demo = start_demo("--deals", "1")
    out, _ = demo.communicate(timeout=240)
    assert demo.returncode == 0, out
    port = re.search(r"redis://127\.0\.0\.1:(\d+)", out).group(1)
    for game in [name for name in builtin_names() if games.get(name).demo]:
        assert re.search(rf"{game}: tournament t_\w+ \(finished\)", out), out
    for kind in ("python", "hosted", "webhook", "polling"):  # every kind of bot took part
        assert f" {kind} " in out
    assert "the ladders" in out and "stopped: no process left behind." in out
    played = re.search(r"the ladder played on its own beside the tournaments: (\d+) ladder matches", out)
    assert played, out  # the demo's bots are on the ladder, and the matchmaker pairs them meanwhile
    assert "http://" not in out.split("the ladders")[1]  # no URL to browse once nothing answers it
    assert "demo-workers.log" in out and "demo-server.log" in out  # where its logs are
    wait_until(lambda: leftovers(port) == [], 10, "no process of the demo left")


@pytest.mark.slow
def test_with_stay_the_urls_it_prints_answer_until_it_is_stopped_and_REDIS_URL_is_not_touched():
    """The demo runs on its own Redis whatever `REDIS_URL` says: here a platform's
    (tests/demo_platform.py), left as it was, not one key written."""

    with platform_state("duck-soup") as (client, _, snapshot):
        before, keys = snapshot(), sorted(client.keys("*"))
        out, rest = stay_and_stop(client.url)
        assert snapshot() == before and sorted(client.keys("*")) == keys
    assert "fresh embedded Redis" in out and "REDIS_URL is not used" in out
    assert "stopped: no process left behind." in rest
    port = re.search(r"redis://127\.0\.0\.1:(\d+)", out).group(1)
    wait_until(lambda: leftovers(port) == [], 10, "no process of the demo left")


def stay_and_stop(redis_url_env: str) -> tuple[str, str]:
    """`cardarena demo --stay` of one game, with `REDIS_URL` set: every URL it prints answers; then
    SIGTERM. What it printed until then, and after."""
    from core.redis_server import free_port

    redis_port, bot_port = free_port(), free_port()  # every port of the demo is the caller's to choose
    demo = start_demo("--stay", "--deals", "1", "--games", "duck-soup", "--redis-port", str(redis_port),
                      "--bot-port", str(bot_port), redis_url_env=redis_url_env)
    try:
        lines = []
        for line in demo.stdout:  # bounded by the timeout of the test
            lines.append(line)
            if "Ctrl-C" in line and "stops it" in line:
                break
        out = "".join(lines)
        urls = re.findall(r"(http://127\.0\.0\.1:\d+/\S*)", out.split("Browse")[1])
        assert any("/tournaments/t_" in u for u in urls) and any(u.endswith("/docs") for u in urls), out
        for url in urls:  # every URL it printed answers while it stays up
            assert requests.get(url, timeout=10).status_code == 200, url
        assert f"redis://127.0.0.1:{redis_port}/" in out and f"http://127.0.0.1:{bot_port}/" in out, out
        api = re.search(r"(http://127\.0\.0\.1:\d+)/api/v1", out).group(1)
        bots = requests.get(f"{api}/api/v1/bots", params={"game": "duck-soup"}, timeout=10).json()["bots"]
        house = [b for b in bots if b["name"].startswith("house ") and b["kind"] == "python"]
        assert house and all(b["ladder"] for b in house), bots  # the example bots stay on the ladder
        demo.send_signal(signal.SIGTERM)
        rest, _ = demo.communicate(timeout=60)
    finally:
        if demo.poll() is None:  # a failed check above: stop it all the same
            demo.send_signal(signal.SIGTERM)
            demo.communicate(timeout=60)
    assert demo.returncode == 0, out + rest
    return out, rest


def start_and_tell(out: str) -> None:
    """What `test_a_demo_dies_with_the_process_that_started_it` runs in a process of its own: a
    demo that stays up (its output to the file `out`: no pipe of a dead process to write to),
    then, once its workers started, its pid, its Redis port and its API's port on one line;
    then it waits for the demo."""
    with open(out, "w") as log:
        demo = start_demo("--stay", "--deals", "1", "--games", "duck-soup", "--workers", "1", stdout=log)
    wait_until(lambda: "worker processes" in Path(out).read_text() or demo.poll() is not None, 60,
               "the demo's workers")
    text = Path(out).read_text()
    redis_port = re.search(r"redis://127\.0\.0\.1:(\d+)", text).group(1)
    api_port = re.search(r"http://127\.0\.0\.1:(\d+)/api/v1", text).group(1)
    print(demo.pid, redis_port, api_port, flush=True)
    demo.wait()


def gone(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie waiting for its new parent to reap it has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.slow
def test_a_demo_dies_with_the_process_that_started_it(tmp_path):
    """A test killed past its timeout (os._exit) or with kill -9 leaves no demo playing the ladder:
    here the process that started the demo is killed with SIGKILL once the demo is up, and the
    demo, its Redis, its API and its workers end too."""
    out = tmp_path / "demo.out"
    starter = subprocess.Popen([sys.executable, "-c", "import sys; from tests.test_demo import start_and_tell; "
                                "start_and_tell(sys.argv[1])", str(out)],
                               cwd=ROOT, stdout=subprocess.PIPE, text=True)
    told = starter.stdout.readline()  # bounded: the starter gives up on a demo not up in 60 s
    assert told, out.read_text() if out.exists() else "the starter failed"
    demo, redis_port, api_port = int(told.split()[0]), *told.split()[1:]
    try:
        assert not gone(demo) and leftovers(redis_port) and leftovers(api_port)
        starter.kill()
        starter.wait(timeout=10)
        wait_until(lambda: gone(demo), 30, "the demo's end")
        wait_until(lambda: leftovers(redis_port) == leftovers(api_port) == [], 30,
                   "the end of the demo's Redis, API and workers")
    finally:  # a failed check above: stop what is left
        for pid in [demo] + [int(p.split(":")[0]) for p in leftovers(redis_port) + leftovers(api_port)]:
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)
