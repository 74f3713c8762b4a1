"""Run an example bot from the command line, hosted or polling.

    python -m example_bots.random --serve 8001 --secret S          # a webhook bot
    python -m example_bots.random --connect http://127.0.0.1:5000  # a polling bot

Each bot module ends with::

    if __name__ == "__main__":
        from example_bots.run import main
        main(TheBot())

The secret may come from `CARDARENA_BOT_SECRET` instead of `--secret`, which
keeps it out of the process list.
"""

from __future__ import annotations

import argparse
import os
import sys

from sdk.bot import Bot


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Host a cardarena bot as a webhook, or poll for its turns.")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--serve", metavar="PORT", type=int, help="host it as a webhook bot on PORT")
    how.add_argument("--connect", metavar="SERVER", help="poll SERVER (http://host:port) for turns")
    p.add_argument("--host", default="127.0.0.1", help="--serve: the address to listen on (default %(default)s)")
    p.add_argument("--secret", default=os.environ.get("CARDARENA_BOT_SECRET"),
                   help="the bot's secret from registration (default: $CARDARENA_BOT_SECRET)")
    p.add_argument("--wait", type=float, default=25.0, help="--connect: seconds per long-poll (≤ 30)")
    return p


def main(bot: Bot, argv: list[str] | None = None) -> int:
    """Parse `argv` (default: the command line) and run `bot` as it says."""
    from sdk import connect, serve

    prog = None
    module = getattr(sys.modules.get("__main__"), "__spec__", None)
    if module is not None and module.name:
        prog = f"python -m {module.name}"
    args = parser(prog).parse_args(argv)
    if not args.secret:
        parser(prog).error("the bot's secret is needed: --secret S or CARDARENA_BOT_SECRET")
    if args.serve is not None:
        serve(bot, host=args.host, port=args.serve, secret=args.secret)
    else:
        connect(bot, args.connect, secret=args.secret, wait=args.wait)
    return 0
