"""WSGI entry for gunicorn: ``services.gateway.wsgi:app``."""

from services.gateway.app import create_app

app = create_app()
