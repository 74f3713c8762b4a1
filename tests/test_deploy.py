"""docker-compose.yml and the Dockerfile: no Docker engine runs here, so they are
checked for what can go wrong without one — the file parses, persistence and
scaling are set up, and every command a service runs exists and starts here."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
import zipfile
from pathlib import Path

import pytest
import requests
import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def bin_of(command: str) -> str | None:
    """The console script `command` as installed beside this interpreter."""
    return shutil.which(command, path=str(Path(sys.executable).parent))


def test_the_services_are_redis_migrate_api_workers_and_dashboard():
    assert set(SERVICES) == {"redis", "migrate", "api", "worker", "dashboard"}
    for name in ("migrate", "api", "worker", "dashboard"):
        assert SERVICES[name]["build"] == "."
        assert SERVICES[name]["depends_on"]["redis"]["condition"] == "service_healthy"
    assert SERVICES["api"]["environment"]["REDIS_URL"] == SERVICES["worker"]["environment"]["REDIS_URL"]
    # one anchor: the same Redis, secrets and archive
    assert SERVICES["api"]["environment"] is SERVICES["worker"]["environment"] is SERVICES["migrate"]["environment"]


def test_migrate_runs_once_before_the_api_and_the_workers_start():
    """`cardarena migrate` is a one-shot service; the API and workers wait for it to end well."""
    from cardarena.cli import build_parser

    migrate = SERVICES["migrate"]
    assert migrate["command"] == ["cardarena", "migrate"] and migrate["restart"] == "no"
    assert build_parser().parse_args(migrate["command"][1:]).run.__module__ == "cardarena.migrate_command"
    for name in ("api", "worker"):
        assert SERVICES[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}


def test_redis_keeps_an_append_only_file_on_a_volume():
    redis = SERVICES["redis"]
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert redis["volumes"] == ["redis-data:/data"] and "redis-data" in COMPOSE["volumes"]


def test_the_api_and_every_worker_share_the_archive_volume():
    """Finished matches go to CARDARENA_ARCHIVE (core/store/archive.py): the API reads there
    what the workers wrote, so both mount one volume at the path the environment names."""
    path = SERVICES["api"]["environment"]["CARDARENA_ARCHIVE"]
    for name in ("api", "worker", "migrate"):  # a migration may move finished matches there
        assert f"archive:{path}" in SERVICES[name]["volumes"]
    assert "archive" in COMPOSE["volumes"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert f"mkdir -p {path}" in dockerfile and f"chown cardarena {path}" in dockerfile  # the user writes it


def test_the_worker_service_can_be_scaled():
    worker = SERVICES["worker"]
    assert "container_name" not in worker and "ports" not in worker  # --scale worker=N would clash otherwise


def dockerfile_command() -> list[str]:
    """The image's default command (its exec-form `CMD`)."""
    line = next(line for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("CMD "))
    return json.loads(line.removeprefix("CMD "))


def test_the_image_and_the_api_service_run_cardarena_serve():
    """One way to run the API: the image's command and the compose API service are both `cardarena
    serve`, listening on all interfaces on port 8000 (the port the image exposes and compose maps)."""
    from cardarena.cli import build_parser

    for command in (dockerfile_command(), SERVICES["api"]["command"]):
        assert command[:2] == ["cardarena", "serve"] and bin_of("cardarena"), command
        args = build_parser().parse_args(command[1:])
        assert args.run.__module__ == "server.serve" and (args.host, args.port) == ("0.0.0.0", 8000)
    assert re.search(r"^EXPOSE 8000$", (ROOT / "Dockerfile").read_text(), re.M)
    assert "8000:8000" in SERVICES["api"]["ports"]


def test_no_other_wsgi_server_is_a_dependency():
    extras = [d for group in PROJECT["optional-dependencies"].values() for d in group]
    assert not [d for d in PROJECT["dependencies"] + extras if re.match(r"(gunicorn|uwsgi)\b", d)]


def test_the_worker_service_runs_cardarena_worker():
    command = SERVICES["worker"]["command"]
    assert command[0] == "cardarena" and "cardarena" in PROJECT["scripts"]
    from cardarena.cli import build_parser

    args = build_parser().parse_args(command[1:])
    assert args.workers == 2 and args.run.__module__ == "worker.pool"


def test_the_dashboard_is_rq_dashboard_from_the_production_extra_and_reads_our_queue(redis_client, redis_url):
    command = SERVICES["dashboard"]["command"]
    assert command[0] == "rq-dashboard" and bin_of("rq-dashboard")
    assert any(re.match(r"rq-dashboard\b", d) for d in PROJECT["optional-dependencies"]["production"])
    from rq import Queue

    from core.redis_server import free_port
    from core.store.jobs import QUEUE

    Queue(QUEUE, connection=redis_client).enqueue("worker.jobs.run_match", "m_none")  # on an emptied database
    port = free_port()
    args = [bin_of("rq-dashboard"), *command[1:]]
    args[args.index("--redis-url") + 1], args[args.index("--port") + 1] = redis_url, str(port)
    dashboard = subprocess.Popen([*args, "--bind", "127.0.0.1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        end = time.monotonic() + 30
        while True:
            try:
                queues = requests.get(f"http://127.0.0.1:{port}/0/data/queues.json", timeout=5).json()
                break
            except requests.ConnectionError:
                assert dashboard.poll() is None, dashboard.stdout.read().decode()
                assert time.monotonic() < end
                time.sleep(0.1)
    finally:
        dashboard.terminate()
        dashboard.wait(timeout=10)
    assert {"name": QUEUE, "count": 1} in [{k: q[k] for k in ("name", "count")} for q in queues["queues"]]


def test_the_dockerfile_copies_every_package_and_installs_the_production_lock():
    dockerfile = (ROOT / "Dockerfile").read_text()
    packages = [p.rstrip("*") for p in
                tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]]
    for package in packages:
        assert re.search(rf"^COPY {package} \./{package}$", dockerfile, re.M), package
    assert "pip install --no-cache-dir -r requirements/production.txt" in dockerfile
    assert "pip install --no-cache-dir --no-deps ." in dockerfile  # nothing beyond the lock


def test_the_locks_pin_every_dependency_the_project_declares():
    """requirements/*.txt (pip-compile) pin an exact version of each dependency of the project and
    of the extra the lock is made for, within pyproject.toml's bounds, and what a dependency's
    own extras asked for (`redis[hiredis]`) within its bounds."""
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for lock, extra in (("production.txt", "production"), ("test.txt", "test")):
        pinned = {}
        for line in (ROOT / "requirements" / lock).read_text().splitlines():
            if "==" in line and not line.startswith(("#", " ")):
                name, _, version = line.partition("==")
                pinned[name.strip().lower().replace("_", "-")] = version.strip()
        for spec in [*project["dependencies"], *project["optional-dependencies"][extra]]:
            wanted = Requirement(spec)
            name = wanted.name.lower().replace("_", "-")
            assert name in pinned, (lock, name)
            assert wanted.specifier.contains(pinned[name]), (lock, name, pinned[name])
            assert any(s.operator == "<" for s in wanted.specifier), f"{name}: no upper bound"
            for extra_of_it in wanted.extras:
                for text in requires(wanted.name) or []:
                    needed = Requirement(text)
                    if needed.marker is None or not needed.marker.evaluate({"extra": extra_of_it}):
                        continue
                    its_name = needed.name.lower().replace("_", "-")
                    assert its_name in pinned, (lock, f"{name}[{extra_of_it}]", its_name)
                    assert needed.specifier.contains(pinned[its_name]), (lock, its_name, pinned[its_name])


def test_redis_replies_are_parsed_by_hiredis():
    """The platform's redis-py parses replies with hiredis (its `hiredis` extra, pinned in both
    locks): less CPU a command in the workers and the API (docs/performance.md)."""
    from packaging.requirements import Requirement

    redis = next(Requirement(d) for d in PROJECT["dependencies"] if Requirement(d).name == "redis")
    assert "hiredis" in redis.extras
    for lock in ("production.txt", "test.txt"):
        assert re.search(r"^hiredis==", (ROOT / "requirements" / lock).read_text(), re.M), lock


def dockerfile_copies() -> list[tuple[list[str], str]]:
    """The Dockerfile's `COPY` lines: (sources, destination), relative to the build context."""
    copies = []
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY "):
            words = [w for w in line.split()[1:] if not w.startswith("--")]
            copies.append((words[:-1], words[-1]))
    return copies


@pytest.mark.slow
def test_a_wheel_built_from_exactly_what_the_dockerfile_copies_has_the_rules_pages(tmp_path):
    """The image is the product: no Docker engine runs here, so the build context the Dockerfile
    keeps (its COPY lines, into /app) is laid out in a directory and the wheel `pip install .`
    would install is built from it. Every rules page must be in it, or /games/<game>/rules 404s
    in the image."""
    app = tmp_path / "app"
    app.mkdir()
    for sources, destination in dockerfile_copies():
        for source in sources:
            target = app / destination / Path(source).name if destination.endswith("/") else app / destination
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / source, target)
    # as the image's `pip install .` builds it: in an isolated build environment (pip's cache, else the index)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"),
                            str(app)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("cardarena-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    pages = {Path(n).name for n in names if "/data/share/cardarena/rules/" in n}
    written = {page.name for page in (ROOT / "docs" / "rules").glob("*.md")}  # one per game of the platform
    assert pages == written and "duck-soup.md" in pages
    assert "server/web/templates/web/signin.html" in names and "server/web/static/web.js" in names


@pytest.mark.slow
def test_the_api_service_waits_in_greenlets(redis_client, redis_url):
    """The compose file's API command, on loopback: 128 long-polls and 32 streams wait on two
    pub/sub connections (one per kind of channel: the bots' wakes, the matches' events), and
    `GET /games` answers meanwhile."""
    from core.redis_server import free_port
    from core.store.quotas import polls_key
    from tests.server.test_api_waiting import GAME, Held, server_connections, store_on
    from tests.waiting import wait_answering, wait_until

    command = SERVICES["api"]["command"]
    assert int(command[command.index("--connections") + 1]) >= 5_500
    s = store_on(redis_url)
    accounts = []
    for a in range(2):
        account, _ = s.create_account(f"a{a}")
        accounts.append((account["id"], [s.create_bot(account["id"], f"b{a}-{i}", GAME, "polling")[1]
                                         for i in range(16)]))
    bots = [s.create_bot(accounts[0][0], name, GAME, "polling")[0]["id"] for name in ("x", "y")]
    watched = s.create_match(GAME, bots, 1, {})["id"]
    port = free_port()
    args = [bin_of("cardarena"), *command[1:]]
    args[args.index("--host") + 1], args[args.index("--port") + 1] = "127.0.0.1", str(port)
    before = server_connections(redis_url)
    env = {**os.environ, "REDIS_URL": redis_url}
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    held = []
    try:
        base = f"http://127.0.0.1:{port}/api/v1"
        wait_answering(base + "/games", proc, "cardarena serve")
        held = [Held(port, "/api/v1/bots/me/turns?wait=20", secret)
                for _, secrets in accounts for secret in secrets for _ in range(4)]
        held += [Held(port, f"/api/v1/matches/{watched}/events", source=f"127.0.0.{2 + i % 2}") for i in range(32)]
        for account_id, _ in accounts:
            wait_until(lambda a=account_id: s.r.zcard(polls_key(a)) == 64, what="64 polls of each account")
        for _ in range(10):
            began = time.perf_counter()
            assert requests.get(base + "/games", timeout=10).status_code == 200
            assert time.perf_counter() - began < 2.0
        assert server_connections(redis_url) - before <= 2  # core/store/wakeups.py: a listener per kind
    finally:
        for h in held:
            h.close()
        proc.terminate()
        proc.wait(timeout=30)


def test_the_api_and_the_workers_can_run_hosted_bots_in_their_sandbox():
    """bubblewrap in the image; user namespaces allowed in the services that run uploaded code (the
    API's probe, the workers' matches); the code on a volume they share."""
    assert "bubblewrap" in (ROOT / "Dockerfile").read_text()
    for name in ("api", "worker"):
        service = COMPOSE["services"][name]
        assert {"seccomp=unconfined", "apparmor=unconfined"} <= set(service["security_opt"]), name
        assert service["user"] == "root" and service["pids_limit"] > 0, name
        assert service["environment"]["CARDARENA_CODE"] == "/var/lib/cardarena/code", name
        assert "code:/var/lib/cardarena/code" in service["volumes"], name
