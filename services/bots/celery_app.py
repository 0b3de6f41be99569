"""The Celery application, built by a factory from the environment."""

from __future__ import annotations

from celery import Celery

from shared.config import Settings


def create_celery(settings: Settings | None = None) -> Celery:
    """A Celery app whose broker and result backend are the service's Redis."""
    settings = settings or Settings.from_env()
    app = Celery("tabletop", broker=settings.redis_url)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=4,
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        task_default_queue="tabletop",
        worker_hijack_root_logger=False,
    )
    from services.bots.tasks import register

    register(app)
    return app
