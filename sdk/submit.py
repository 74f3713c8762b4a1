"""`cardarena submit PATH --game G [--name N]`: upload a bot's code; the platform hosts it.

The code is one Python file, or a folder (a package and whatever it holds),
sent as a zip. The platform runs it in its sandbox, asks it a probe decision
and puts it on its game's ladder (docs/write-a-bot.md): nothing of yours needs
to keep running. Submitting again under the same name uploads a new version
of that bot.

Which class plays: `PATH:Class` says; else the one `sdk.Bot` subclass the
code defines (`sdk.packing`). The platform is
`--server` (or `CARDARENA_SERVER`), the account `--token` (or
`CARDARENA_TOKEN`).
"""

from __future__ import annotations

import argparse
import os
import sys

HELP = "upload a bot's code (a .py file or a folder): the platform hosts it on the ladder"
SERVER_ENV = "CARDARENA_SERVER"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="mybot.py, a package folder, or either with :Class")
    parser.add_argument("--game", required=True, help="the game it plays")
    parser.add_argument("--name", default=None, help="its name on the platform (default: its class's)")
    parser.add_argument("--server", default=os.environ.get(SERVER_ENV),
                        help=f"the platform's URL (default ${SERVER_ENV})")
    parser.add_argument("--token", default=None, help="your account's token (default $CARDARENA_TOKEN)")


def run(args: argparse.Namespace) -> int:
    from sdk.client import CardarenaError, Client

    if not args.server:
        print(f"cardarena submit: name the platform with --server URL or {SERVER_ENV}", file=sys.stderr)
        return 2
    try:
        with Client(args.server, token=args.token) as client:
            bot = client.submit(args.path, game=args.game, name=args.name)
    except (ValueError, OSError) as exc:
        print(f"cardarena submit: {exc}", file=sys.stderr)
        return 2
    except CardarenaError as exc:
        print(f"cardarena submit: {exc}", file=sys.stderr)
        return 1
    print(f"{bot.name} ({bot.id}) version {bot.version}: {bot.status}")
    if bot.status != "online":
        print(bot.probe_error or bot.status_reason or "", file=sys.stderr)
        return 1
    print(f"{args.server.rstrip('/')}/bots/{bot.id}")
    return 0
