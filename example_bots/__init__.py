"""Ready opponents: a random bot for every game and a heuristic per game."""
