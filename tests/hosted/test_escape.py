"""Escape tests: hostile code in the real sandbox (core/sandbox.py), each played as a whole
match against a house bot by the real match runner.

Each bot tries one thing in every decision. Where the attempt is stopped it says
"blocked" (a `bot_error` fault: the seat forfeits at `max_faults`), where it got through it
says "ESCAPED". Each test checks the attempt was contained: the hostile seat faulted or
forfeited, the opponent was charged nothing, the worker (this process) and Redis are fine,
and no process of the sandbox survives the match.
"""

from __future__ import annotations

import os
import socket
import subprocess
import textwrap
from pathlib import Path

import pytest

from core import hosted_code
from tests.hosted.conftest import play, sandbox_processes

REPO = Path(__file__).resolve().parents[2]
RAISED = "bot_error: its code raised an exception"

TEMPLATE = '''
import ctypes, os, socket, sys, time
from sdk import Bot

ESCAPES = []

def blocked(call, *args):
    """`call(*args)` must fail: noted as an escape if it does not."""
    try:
        call(*args)
    except Exception:
        return
    ESCAPES.append(f"{{getattr(call, '__name__', call)}}{{args!r:.60}}")

def attempt():
{body}

class MyBot(Bot):
    def act(self, view, legal_actions):
        attempt()
        if ESCAPES:
            raise RuntimeError("ESCAPED " + "; ".join(ESCAPES))
        raise RuntimeError("blocked")
'''


def hostile(body: str) -> str:
    return TEMPLATE.format(body=textwrap.indent(textwrap.dedent(body).strip(), "    "))


def contained(store, redis_client, source: str, expected: str = RAISED, **rules) -> list[str]:
    """Play `source` (seat 0) against a house bot; check the match was contained; seat 0's faults.
    What its code raised ("blocked", or "ESCAPED …") is in its debug notes, its owner's only."""
    match, log = play(store, source, **rules)
    faults = [e["fault"] for e in log if e["seat"] == 0 and "fault" in e and e["fault"] != "forfeited"]
    assert faults and all(f.startswith(expected) for f in faults), faults
    if expected == RAISED:
        raised = [n["text"].splitlines()[-1] for n in store.debug_notes(match["id"], [0])]
        assert raised and all(r == "RuntimeError: blocked" for r in raised), raised
    assert match["result"]["forfeits"] == [0], match["result"]
    assert not any("fault" in e for e in log if e["seat"] == 1), "the opponent is charged nothing"
    assert all(e.get("ms", 0) < 1000 for e in log if e["seat"] == 1)
    assert redis_client.ping()
    assert sandbox_processes() == [], "no process of the sandbox survives its match"
    return faults


def paths_read(*paths: str) -> str:
    return "\n".join(f"blocked(lambda: open({p!r}, 'rb').read(1))" for p in paths)


def test_reading_etc_passwd(store, redis_client):
    contained(store, redis_client, hostile(paths_read("/etc/passwd", "/etc/shadow", "/proc/1/environ")))


def test_reading_the_workers_environment(store, redis_client, monkeypatch):
    monkeypatch.setenv("CARDARENA_TEST_SECRET", "s3cret")
    contained(store, redis_client, hostile("""
        blocked(lambda: os.environ["CARDARENA_TEST_SECRET"])
        blocked(lambda: [k for k in os.environ if k not in ("HOME", "PYTHONHASHSEED", "LC_CTYPE", "PWD")][0])
        blocked(lambda: open(f"/proc/{os.getppid()}/environ", "rb").read())
    """))


def test_reading_files_of_the_checkout(store, redis_client):
    contained(store, redis_client, hostile(paths_read(
        str(REPO / "pyproject.toml"), str(REPO / "core" / "sandbox.py"), "/opt/cardarena/lib/../pyproject.toml",
        str(Path(__file__)))))


def test_reading_other_bots_code_or_the_archive(store, redis_client, archive_dir):
    other = hosted_code.store({"secret.py": b"SECRET = 1\n"})
    copy = hosted_code.runnable_dir(other)
    contained(store, redis_client, hostile(paths_read(
        str(hosted_code.root() / other[:2] / f"{other}.zip"), f"{copy}/secret.py",
        f"{hosted_code.RUNNABLE_ROOT}/{other}/secret.py", f"/bot/../{hosted_code.RUNNABLE_ROOT}/{other}/secret.py")
        + f"\nblocked(lambda: os.listdir({str(archive_dir)!r}))"))


def test_connecting_to_redis_the_api_loopback_or_the_outside(store, redis_client, redis_url):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    host, port = redis_client.connection_pool.connection_kwargs.get("host", "127.0.0.1"), \
        redis_client.connection_pool.connection_kwargs.get("port", 6379)
    targets = [(host, port), ("127.0.0.1", listener.getsockname()[1]), ("127.0.0.1", 22), ("1.1.1.1", 80),
               ("10.0.0.1", 80), ("::1", listener.getsockname()[1])]
    try:
        contained(store, redis_client, hostile("\n".join(
            f"blocked(socket.create_connection, {t!r}, 0.2)" for t in targets)
            + "\nblocked(socket.getaddrinfo, 'example.com', 80)"))
    finally:
        listener.close()


@pytest.mark.slow
def test_a_fork_bomb(store, redis_client):
    contained(store, redis_client, hostile("""
        def bomb():
            while True:
                os.fork()
        blocked(bomb)
    """), move_timeout_ms=1000)


def test_allocating_4_gb(store, redis_client):
    contained(store, redis_client, hostile("blocked(bytearray, 4 << 30)"))


def test_filling_the_disk(store, redis_client):
    contained(store, redis_client, hostile("""
        def fill():
            for i in range(64):
                with open(f"/tmp/fill{i}", "wb") as f:
                    f.write(b"x" * (1 << 20))
        blocked(fill)
        blocked(lambda: open("/tmp/big", "wb").write(b"x" * (4 << 20)))
    """))


def test_writing_outside_its_tmpfs(store, redis_client):
    targets = ["/bot/x.py", "/opt/cardarena/lib/sdk/x.py", "/usr/lib/x", "/x", "/dev/x",
               str(REPO / "x"), "/etc/x"]
    contained(store, redis_client, hostile("\n".join(f"blocked(lambda: open({t!r}, 'wb'))" for t in targets)))


def test_signalling_or_ptracing_the_worker(store, redis_client):
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        contained(store, redis_client, hostile(f"""
            libc = ctypes.CDLL(None, use_errno=True)
            for pid in ({os.getpid()}, {bystander.pid}, {os.getppid()}):
                blocked(os.kill, pid, 9)
                def attach(pid=pid):
                    if libc.ptrace(16, pid, 0, 0) != 0:  # PTRACE_ATTACH
                        raise OSError(ctypes.get_errno(), "ptrace")
                blocked(attach)
            blocked(os.kill, -1, 9)
        """))
        assert bystander.poll() is None, "a process of the worker's survived"
    finally:
        bystander.kill()
        bystander.wait()


@pytest.mark.slow
def test_printing_1_gb(store, redis_client):
    contained(store, redis_client, """
import os
from sdk import Bot

class MyBot(Bot):
    def act(self, view, legal_actions):
        chunk = b"x" * (1 << 20)
        for _ in range(1024):
            print(chunk)
            for fd in range(1, 10):
                try:
                    os.write(fd, chunk)
                except OSError:
                    pass
        return legal_actions[0]
""", expected="too_large: an answer over 64 KB")


@pytest.mark.slow
def test_sleeping_forever(store, redis_client):
    contained(store, redis_client, """
import time
from sdk import Bot

class MyBot(Bot):
    def act(self, view, legal_actions):
        time.sleep(10 ** 6)
""", expected="timeout: no answer within 200 ms", move_timeout_ms=200)


def test_ctypes_and_raw_syscalls(store, redis_client):
    contained(store, redis_client, hostile("""
        libc = ctypes.CDLL(None, use_errno=True)
        def syscall(*args):
            if libc.syscall(*args) != 0:
                raise OSError(ctypes.get_errno(), f"syscall {args[0]}")
        blocked(syscall, 272, 0x10000000)                      # unshare(CLONE_NEWUSER)
        blocked(syscall, 272, 0x00020000)                      # unshare(CLONE_NEWNS)
        blocked(syscall, 165, b"none", b"/tmp", b"tmpfs", 0, 0)  # mount
        blocked(syscall, 161, b"/tmp")                         # chroot
        blocked(syscall, 105, 0)                               # setuid(0)
        blocked(syscall, 169, 0xfee1dead, 672274793, 0x4321fedc, 0)  # reboot
        blocked(syscall, 246, 0, 0, 0)                         # kexec_load
        blocked(os.setuid, 0)
    """))


def test_a_process_left_behind_after_the_match(store, redis_client):
    match, log = play(store, """
import os, time
from sdk import Bot

class MyBot(Bot):
    def act(self, view, legal_actions):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                while True:
                    time.sleep(1)
            os._exit(0)
        return legal_actions[0]
""")
    assert not any("fault" in e for e in log), [e.get("fault") for e in log]
    assert sandbox_processes() == [], "no process of the sandbox survives its match"
