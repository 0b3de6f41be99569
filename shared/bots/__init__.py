"""Bots beyond ``random``: a hand-written heuristic per game and an information-set MCTS.

Every bot is a pure function of one seat's view (the document the service projects for that
seat) and a ``random.Random`` the caller derives from the game's secret seed with (seat,
version): it never reads what that seat may not see. The registry is ``shared/app/bots.py``.
"""
