"""Structured logs (structlog) for every process: JSON lines or a human-readable console.

``TABLETOP_LOG_FORMAT=json`` gives one JSON object a line (for a log shipper), ``console``
(the default) the same fields readable at a terminal. Both go through the standard
``logging`` module, so the service's ``logging.getLogger`` calls and the libraries' (gunicorn,
Celery, redis-py) carry the same fields. ``context(game_id=..., command_id=...)`` binds
fields to everything logged inside it (a context variable: per thread, per greenlet).
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
from collections.abc import Mapping
from typing import Any

import structlog

FORMATS = ("console", "json")


def _processors(process: str) -> list[Any]:
    def add_process(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
        event.setdefault("process", process)
        event.setdefault("pid", os.getpid())
        return event

    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        add_process,
    ]


def formatter(process: str, fmt: str) -> logging.Formatter:
    """The ``logging`` formatter rendering records (structlog's and plain ones) as ``fmt``."""
    if fmt not in FORMATS:
        raise ValueError(f"TABLETOP_LOG_FORMAT must be one of {FORMATS}, not {fmt!r}")
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer(sort_keys=True)
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=False)
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*_processors(process), structlog.stdlib.ExtraAdder()],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            renderer,
        ],
    )


def configure(
    process: str, *, level: int = logging.INFO, env: Mapping[str, str] | None = None
) -> None:
    """Send every log record of this process to stderr in ``TABLETOP_LOG_FORMAT``; ``process``
    names the kind (gateway, worker-<game>, celery) in each line."""
    env = os.environ if env is None else env
    fmt = env.get("TABLETOP_LOG_FORMAT", "console").lower()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(process, fmt))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *_processors(process),
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )


class context:  # lower case: it was a function, and reads as one (``with logs.context()``)
    """Bind ``fields`` to every line logged inside the block (None values are left out); on
    leaving it they are as they were before. Bound directly and reset from the tokens: what
    ``structlog.contextvars.bound_contextvars`` does, without its context copy and the two
    generator context managers (the worker enters one per command)."""

    __slots__ = ("_fields", "_tokens")

    def __init__(self, **fields: Any) -> None:
        self._fields = {k: v for k, v in fields.items() if v is not None}
        self._tokens: Mapping[str, contextvars.Token[Any]] = {}

    def __enter__(self) -> None:
        self._tokens = structlog.contextvars.bind_contextvars(**self._fields)

    def __exit__(self, *_: object) -> None:
        try:
            structlog.contextvars.reset_contextvars(**self._tokens)
        except (ValueError, RuntimeError):  # left in another context: just unbind
            structlog.contextvars.unbind_contextvars(*self._tokens)


def get(name: str) -> Any:
    """A structlog logger (``log.info("event", key=value)``) over ``logging``."""
    return structlog.stdlib.get_logger(name)
