"""The Celery app: bot moves and post-game scoring."""
