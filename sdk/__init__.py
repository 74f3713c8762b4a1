"""The cardarena SDK: write a bot in a few lines, then host it or enter it.

    from sdk import Bot

    class Lowest(Bot):
        game = "duck-soup"
        def act(self, view, legal_actions):
            return legal_actions[0]
"""

from sdk.bot import Bot, load_bot_class

__all__ = ["Bot", "load_bot_class"]
