"""`cardarena`: one command, one subcommand per job (api.md §2).

Each subcommand lives in its own module exposing `HELP`, `add_arguments()`
and `run(args) -> int`; this file only lists them, so the command line is
described in one place and each job's code stays with its part.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: subcommand -> module implementing it
COMMANDS: dict[str, str] = {
    "demo": "cardarena.demo",
    "serve": "server.serve",
    "worker": "worker.pool",
    "redis": "cardarena.redis_command",
    "play": "cardarena.play",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cardarena", description="A bot tournament platform for card games."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module_name in COMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # a part not installed in this build
            raise
        command = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command)
        command.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
