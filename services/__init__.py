"""Entry points: the gateway (Flask), the stream workers, the Celery bots, the CLI."""
