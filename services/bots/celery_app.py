"""The Celery application, built by a factory from the environment.

Delivery: a task is acknowledged only once it has run (``acks_late``) and given back to the
broker if its pool process dies (``task_reject_on_worker_lost``), so a crash re-runs it (every
task is idempotent). Each pool process reserves one task at a time (prefetch 1): a killed main
process then holds few unacknowledged tasks, and the Redis broker gives them to another worker
after its visibility timeout, which is matched to the longest task's hard time limit (the
default hour would stall a bot game that long; a shorter one than a task would run it twice).
"""

from __future__ import annotations

from celery import Celery

from services.bots.tasks import TIME_LIMITS
from services.celery_client import BROKER_TRANSPORT_OPTIONS
from shared.config import Settings

VISIBILITY_MARGIN_S = 60  # past the longest time limit: the kill and the ack take a moment
VISIBILITY_TIMEOUT_S = max(TIME_LIMITS.values()) + VISIBILITY_MARGIN_S


def create_celery(settings: Settings | None = None) -> Celery:
    """A Celery app whose broker is the service's Redis, or on a Redis Cluster the plain Redis
    of ``TABLETOP_BROKER_URL`` (kombu's Redis transport runs MULTI/EXEC and BRPOP across its
    queue lists and ``unacked`` keys, which a cluster refuses as cross-slot). Results are not
    kept (``task_ignore_result``): the tasks write theirs to the service's own store."""
    settings = settings or Settings.from_env()
    app = Celery("tabletop", broker=settings.celery_broker_url)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        broker_transport_options={
            **BROKER_TRANSPORT_OPTIONS,  # the search queue's priorities, as senders use them
            "visibility_timeout": VISIBILITY_TIMEOUT_S,
        },
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        task_default_queue="tabletop",
        worker_hijack_root_logger=False,
    )
    from services.bots.tasks import register

    register(app)
    return app
