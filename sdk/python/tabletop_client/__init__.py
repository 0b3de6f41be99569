"""tabletop-client: the tabletop service's HTTP API in Python, and a kit to bring your own bot.

``Client`` calls the service; ``Bot`` is what a bot implements (``act(view, legal_commands)``);
``serve_webhook`` and ``play_connected`` are the two ways the service reaches it."""

from tabletop_client.bot import (
    SIGNATURE_HEADER,
    Bot,
    make_webhook_server,
    play_connected,
    serve_webhook,
    sign,
    verify,
)
from tabletop_client.client import Client
from tabletop_client.errors import InvalidResponse, ProblemError, TabletopError, TransportError
from tabletop_client.loader import load_bot
from tabletop_client.sse import SseMessage

__all__ = [
    "SIGNATURE_HEADER",
    "Bot",
    "Client",
    "InvalidResponse",
    "ProblemError",
    "SseMessage",
    "TabletopError",
    "TransportError",
    "load_bot",
    "make_webhook_server",
    "play_connected",
    "serve_webhook",
    "sign",
    "verify",
]
