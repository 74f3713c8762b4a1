"""`cardarena play` lives in the SDK (`sdk.play`), so it comes with `pip install cardarena-sdk`
too; this module keeps the older import path working."""

from sdk.play import HELP, Record, add_arguments, parse_option, run, run_matches, standings_rows

__all__ = ["HELP", "Record", "add_arguments", "parse_option", "run", "run_matches", "standings_rows"]
