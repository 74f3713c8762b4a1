"""`cardarena`: one command, one subcommand per job (docs/api.md §2).

Each subcommand lives in its own module exposing `HELP`, `add_arguments()`
and `run(args) -> int`; this file only lists them, so the command line is
described in one place and each job's code stays with its part. The
machinery, and the bot author's subcommands (`play`, `replay`), come from the SDK
(`sdk.cli`), which installs alone as `cardarena-sdk` with only those.
"""

from __future__ import annotations

import sys

from sdk import cli as sdk_cli

#: subcommand -> module implementing it
COMMANDS: dict[str, str] = {
    "demo": "cardarena.demo",
    "serve": "server.serve",
    "worker": "worker.pool",
    "redis": "cardarena.redis_command",
    "migrate": "cardarena.migrate_command",
    **sdk_cli.COMMANDS,
}
DESCRIPTION = "A bot tournament platform for card games."
#: the distribution whose version `cardarena --version` prints
DISTRIBUTION = "cardarena"


def build_parser():
    return sdk_cli.build_parser(COMMANDS, DESCRIPTION, DISTRIBUTION)


def main(argv: list[str] | None = None) -> int:
    return sdk_cli.main(argv, COMMANDS, DESCRIPTION, DISTRIBUTION)


if __name__ == "__main__":
    sys.exit(main())
