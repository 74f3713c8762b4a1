"""`cardarena redis`: the embedded Redis server in the foreground."""

from __future__ import annotations

import argparse
import os
import subprocess

from cardarena.redis_server import server_args, state_dir

HELP = "run the embedded Redis server in the foreground"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=6379, help="port on 127.0.0.1 (default 6379)")
    parser.add_argument("--dir", default=None, help="data directory (default: the user state dir)")


def run(args: argparse.Namespace) -> int:
    data_dir = args.dir or str(state_dir() / "redis-foreground")
    os.makedirs(data_dir, exist_ok=True)
    print(f"redis on redis://127.0.0.1:{args.port}/0 (data in {data_dir}); Ctrl-C stops it")
    print(f"  export REDIS_URL=redis://127.0.0.1:{args.port}/0  # for serve and worker")
    try:
        return subprocess.call(server_args(args.port, data_dir, persist=True))
    except KeyboardInterrupt:
        return 0
