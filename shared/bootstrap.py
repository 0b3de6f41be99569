"""The composition root: ``bootstrap(settings)`` builds the ports and the application.

The gateway's app factory, the worker, the Celery tasks and the CLI all start here; nothing
builds a client at import time. ``backend="memory"`` gives the same application on in-memory
adapters (tests, tools); a dispatcher factory receives the built ``App`` so an in-process
dispatcher can run bot turns through it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared.app.context import App
from shared.app.ports import BotDispatcher
from shared.config import Settings

DispatcherFactory = Callable[[App], BotDispatcher]


def bootstrap(
    settings: Settings | None = None,
    *,
    backend: str = "redis",
    client: Any = None,
    dispatcher: BotDispatcher | DispatcherFactory | None = None,
    clock: Any = None,
) -> App:
    """The application on Redis (``settings.redis_url``, a cluster node with
    ``settings.redis_cluster``; or ``client``) or in memory. On Redis, raises SettingsError
    for a bot secret file that cannot be used (``shared.adapters.redis.read_secret_file``)."""
    settings = settings or Settings.from_env()
    if backend == "memory":
        from shared.adapters.memory import memory_ports

        ports = memory_ports(clock=clock, shards=settings.shards, bot_secret=settings.bot_secret)
    elif backend == "redis":
        from shared.adapters.redis import connect, read_secret_file, redis_ports

        if not settings.bot_secret:
            # A bot secret file that is there but unusable stops the process now, naming it
            # (SettingsError); a missing one is made, or moved from Redis, on first use.
            read_secret_file(settings.bot_secret_file)
        if client is None:
            client = connect(settings.redis_url, cluster=settings.redis_cluster)
        ports = redis_ports(
            client,
            shards=settings.shards,
            rejected_ttl=settings.rejected_ttl,
            bot_secret=settings.bot_secret,
            bot_secret_file=settings.bot_secret_file,
        )
        if clock is not None:
            ports.clock = clock
        if settings.archive_url:
            from shared.adapters.archived import ArchiveBackedDirectory, ArchiveBackedStore
            from shared.archive import open_archive

            archive = open_archive(settings.archive_url)
            ports.archive = archive
            ports.store = ArchiveBackedStore(ports.store, archive)
            ports.directory = ArchiveBackedDirectory(ports.directory, archive)
    else:
        raise ValueError(f"unknown backend {backend!r}")
    from shared.adapters.webhook import HttpWebhooks

    ports.webhooks = HttpWebhooks(settings.bot_webhook_hosts)
    app = App(ports=ports)
    if dispatcher is not None:
        if hasattr(dispatcher, "move"):
            ports.dispatcher = dispatcher  # type: ignore[assignment]
        else:
            ports.dispatcher = dispatcher(app)
    return app
