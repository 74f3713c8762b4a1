"""The three ways a caller can misuse an engine.

Each is a subclass of a builtin so callers that do not know cardarena can
still catch them sensibly (an unknown name is a lookup failure, bad options
and bad actions are bad values).
"""


class UnknownGame(KeyError):
    """`games.get()` was asked for a game that is not registered."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want a sentence
        return str(self.args[0]) if self.args else "unknown game"


class InvalidOptions(ValueError):
    """`Game.new()` was given seats, a seed or options the rules do not allow."""


class IllegalAction(ValueError):
    """`State.apply()` was given an action that is not legal now.

    The message is built from the acting seat's view only, so it can be shown
    to that seat (a bot) without leaking anything it may not know.
    """
