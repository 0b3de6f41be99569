"""The Celery worker's entry: ``celery -A services.bots.worker worker``.

The Celery command line finds an app instance by module, so this one module builds it when the
worker process starts; everything else builds its app with ``create_celery``.
"""

from services.bots.celery_app import create_celery

app = create_celery()
