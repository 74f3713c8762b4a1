"""`cardarena redis`: the embedded Redis server in the foreground.

Its redis-server is a child of this command: SIGTERM or SIGINT (Ctrl-C) is
passed on to it as SIGTERM, on which Redis flushes its append-only file and
exits, and the command waits for it — it never leaves the server running.
"""

from __future__ import annotations

import argparse
import os
import subprocess

from core.redis_server import server_args, state_dir

HELP = "run the embedded Redis server in the foreground"

#: seconds Redis gets to shut down cleanly before it is killed
STOP_TIMEOUT_S = 10.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=6379, help="port on 127.0.0.1 (default 6379)")
    parser.add_argument("--dir", default=None, help="data directory (default: the user state dir)")


def run(args: argparse.Namespace) -> int:
    from core.signals import shielded, stop_on_signals

    data_dir = args.dir or str(state_dir() / "redis-foreground")
    os.makedirs(data_dir, exist_ok=True)
    print(f"redis on redis://127.0.0.1:{args.port}/0 (data in {data_dir}); Ctrl-C stops it")
    print(f"  export REDIS_URL=redis://127.0.0.1:{args.port}/0  # for serve and worker", flush=True)
    with stop_on_signals():
        with shielded():  # a stop signal now waits until the child is known
            proc = subprocess.Popen(server_args(args.port, data_dir, persist=True))
        try:
            return proc.wait()
        except KeyboardInterrupt:
            return 0
        finally:
            with shielded():
                if proc.poll() is None:
                    proc.terminate()
                    try:
                        proc.wait(timeout=STOP_TIMEOUT_S)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
