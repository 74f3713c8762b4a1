"""`cardarena` as the SDK installs it: the bot author's subcommands (`play`, `replay`, `compare`).

Each subcommand lives in its own module exposing `HELP`, `add_arguments()`
and `run(args) -> int`; a table names them. The platform's own `cardarena`
(cardarena/cli.py) is this same machinery over a longer table, the SDK's
subcommands included, so both installs offer them identically.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

#: subcommand -> module implementing it
COMMANDS: dict[str, str] = {
    "play": "sdk.play",
    "replay": "sdk.replay_command",
    "compare": "sdk.compare_command",
}
DESCRIPTION = "Write, test and host bots for cardarena, the card-game bot arena."


def build_parser(commands: dict[str, str] = COMMANDS, description: str = DESCRIPTION
                 ) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cardarena", description=description)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module_name in commands.items():
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


def main(argv: list[str] | None = None, commands: dict[str, str] = COMMANDS,
         description: str = DESCRIPTION) -> int:
    args = build_parser(commands, description).parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `cardarena replay … | head`: the reader has seen enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0


if __name__ == "__main__":
    sys.exit(main())
