"""`cardarena` as the SDK installs it: the bot author's subcommands (`play`, `replay`, `compare`,
`submit`).

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
    "submit": "sdk.submit",
}
DESCRIPTION = "Write, test and host bots for cardarena, the card-game bot arena."
#: the installed distribution whose version `cardarena --version` prints
DISTRIBUTION = "cardarena-sdk"
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


def version_line(distribution: str) -> str:
    """`cardarena --version`'s line: the version of `distribution`, else of the other install
    holding these packages (the SDK's modules come with the platform's too)."""
    from importlib import metadata

    for name in dict.fromkeys((distribution, "cardarena", "cardarena-sdk")):
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        return f"cardarena {version}" + ("" if name == "cardarena" else f" ({name})")
    return "cardarena (version unknown: not installed as a distribution)"


class _Version(argparse.Action):
    """`--version`: `version_line`, looked up only when asked (it reads the installed
    distributions' metadata)."""

    def __init__(self, option_strings, dest, distribution: str, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit", **kwargs)
        self.distribution = distribution

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_line(self.distribution))  # on stdout, as argparse's own version action
        parser.exit()


def build_parser(commands: dict[str, str] = COMMANDS, description: str = DESCRIPTION,
                 distribution: str = DISTRIBUTION, only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser, every subcommand in it; with `only`, that subcommand alone, so
    running one imports its module and no other's (`main` does, for the one its command names)."""
    parser = _Parser(prog="cardarena", description=description)
    parser.add_argument("--version", action=_Version, distribution=distribution)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module_name in commands.items():
        if only is not None and name != only:
            continue
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
         description: str = DESCRIPTION, distribution: str = DISTRIBUTION) -> int:
    argv = sys.argv[1:] if argv is None else argv
    named = argv[0] if argv and argv[0] in commands else None  # else `--help`, `--version`, a typo
    parser = build_parser(commands, description, distribution, only=named)
    if not argv:  # bare `cardarena`: what it can do, no error
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
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
