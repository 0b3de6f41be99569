"""The REST gateway: a Flask app (``create_app``) served by gunicorn."""

from services.gateway.app import create_app

__all__ = ["create_app"]
