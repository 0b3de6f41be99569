"""The match: the service's own rules about a game, beside the engines' rules of play.

``aggregate`` folds the service's events (who sits where, resignations, time-outs, client
seeds) into the ``Match``; ``clock`` holds the clocks' rules and state; ``fairness`` the
contributed-seed rules; ``record`` a game as the service knows it (match, engine state, log
head) and its fold; ``projections`` what each seat, a spectator or an auditor may see of it.
Pure like the engines: no I/O, no clock of its own. The application (``shared/app``) decides
with them; nothing here imports the application.
"""
