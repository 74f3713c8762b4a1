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
#: the platform's own subcommands (cardarena/cli.py): named in the hint of an install without them
PLATFORM_COMMANDS = ("demo", "serve", "worker", "redis", "migrate")


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose "invalid choice" for a platform subcommand says where it is:
    a bot author with the SDK alone who types `cardarena serve` learns why it is missing."""

    offered: tuple[str, ...] = ()

    def error(self, message: str):
        wanted = next((c for c in PLATFORM_COMMANDS if c not in self.offered and f"'{c}'" in message), None)
        if "invalid choice" in message and wanted is not None:
            message = (f"'{wanted}' comes with the platform's install (pip install . at the root of a "
                       f"clone of the repository), not with the SDK's (cardarena-sdk), which has: "
                       f"{', '.join(self.offered)}. To host a bot, run it with sdk.serve (docs/write-a-bot.md)")
        super().error(message)


def build_parser(commands: dict[str, str] = COMMANDS, description: str = DESCRIPTION
                 ) -> argparse.ArgumentParser:
    parser = _Parser(prog="cardarena", description=description)
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
        parser.offered += (name,)
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
