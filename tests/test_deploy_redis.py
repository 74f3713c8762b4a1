"""docker-compose's Redis is private: a password, no published port, and every service
that needs it (API, workers, dashboard) carries the password in its URL (issue 13:
anyone who reached the password-less Redis could enqueue an RQ job, i.e. run code in
the workers).

No Docker engine runs here, so the file is read, and the same `redis-server`
options are run for real on loopback with the embedded binary.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path
from string import Template

import pytest
import redis as redis_lib
import yaml

from core.redis_server import free_port, redis_binary, wait_for_ping

ROOT = Path(__file__).resolve().parents[1]
SERVICES = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
REQUIRED = "${REDIS_PASSWORD:?set REDIS_PASSWORD in .env}"


def test_redis_requires_the_password_from_env_and_is_not_published():
    redis = SERVICES["redis"]
    command = redis["command"]
    assert command[command.index("--requirepass") + 1] == REQUIRED
    assert "ports" not in redis  # reachable on the compose network only
    assert redis["environment"]["REDISCLI_AUTH"] == REQUIRED  # the healthcheck authenticates
    assert "redis-cli ping" in " ".join(redis["healthcheck"]["test"])


def test_every_redis_url_carries_the_password():
    urls = [SERVICES["api"]["environment"]["REDIS_URL"], SERVICES["worker"]["environment"]["REDIS_URL"]]
    dashboard = SERVICES["dashboard"]["command"]
    urls.append(dashboard[dashboard.index("--redis-url") + 1])
    assert urls == [f"redis://:{REQUIRED}@redis:6379/0"] * 3
    for service in SERVICES.values():  # no other way in
        assert not any(re.search(r"redis://redis", str(v)) for v in _strings(service))


def _strings(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    else:
        yield value


@pytest.fixture()
def compose_redis():
    """redis-server with the compose service's options (password substituted), on loopback."""
    password = "0123456789abcdef" * 4
    command = [Template(part.replace(":?set REDIS_PASSWORD in .env", "")).substitute(REDIS_PASSWORD=password)
               for part in SERVICES["redis"]["command"][1:]]
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        proc = subprocess.Popen([redis_binary(), *command, "--port", str(port), "--bind", "127.0.0.1",
                                 "--dir", data], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_ping(f"redis://:{password}@127.0.0.1:{port}/0", proc=proc)
            yield port, password
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.mark.slow
def test_the_compose_redis_refuses_a_client_without_the_password(compose_redis):
    port, password = compose_redis
    with pytest.raises(redis_lib.AuthenticationError):
        redis_lib.Redis(port=port).ping()
    with pytest.raises(redis_lib.AuthenticationError):
        redis_lib.Redis.from_url(f"redis://:wrong@127.0.0.1:{port}/0").ping()
    assert redis_lib.Redis.from_url(f"redis://:{password}@127.0.0.1:{port}/0").ping()
