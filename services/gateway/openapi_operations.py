"""The operations endpoints in the OpenAPI document: ``/healthz`` is a route of the blueprint;
``/readyz`` and ``/metrics`` are plain Flask routes (``observe``) for operators, documented here
(``openapi_contract.install`` calls ``add``)."""

from __future__ import annotations

from typing import Any

from apispec import APISpec

from services.gateway import view_schemas
from shared import games

Schema = dict[str, Any]
REF = view_schemas.REF


def add(spec: APISpec) -> None:
    """``/healthz`` is in the document (a route of the blueprint); ``/readyz`` and ``/metrics``
    are plain Flask routes (``observe``) for operators: documented here."""
    spec.components.schema("Readiness", READINESS)
    readiness = {"schema": {"$ref": REF + "Readiness"}}
    spec._paths["/readyz"] = {
        "get": {
            "summary": "Readiness: may this gateway be sent traffic",
            "description": "200 when Redis answers and takes writes and every game type has a "
            "worker that polled its streams lately (`degraded`: ready, with `warnings`); 503 "
            "with what is `missing` otherwise. `/healthz` is the liveness check.",
            "responses": {
                "200": {"description": "ready (or degraded)",
                        "content": {"application/json": {**readiness, "example": READY}}},
                "503": {"description": "not ready: `missing` says why",
                        "content": {"application/json": {**readiness, "example": UNREADY}}},
            },
        },
    }  # fmt: skip
    spec._paths["/metrics"] = {
        "get": {
            "summary": "Metrics, in the Prometheus text format",
            "description": "Requests by route and status, their latency, the command streams' "
            "lengths and lags, the workers' decide times.",
            "responses": {
                "200": {
                    "description": "Prometheus text exposition format (0.0.4)",
                    "content": {"text/plain": {"schema": {"type": "string"},
                                               "example": METRICS_EXAMPLE}},
                },
            },
        },
    }  # fmt: skip


READINESS: Schema = {
    "type": "object",
    "description": "`GET /readyz`: whether this gateway can do its job",
    "required": ["status"],
    "properties": {
        "status": {"type": "string", "enum": ["ready", "degraded", "unready"]},
        "redis": {"type": "string", "description": "ok, unreachable, or none (in memory)"},
        "games": {
            "type": "object",
            "description": "per game type: workers that polled within the limit, and how long "
            "ago the freshest did",
            "additionalProperties": {
                "type": "object",
                "properties": {"workers": {"type": "integer"},
                               "last_seen_ms": {"type": "integer", "nullable": True}},
            },
        },  # fmt: skip
        "missing": {"type": "array", "items": {"type": "string"},
                    "description": "what keeps the service from being ready"},
        "warnings": {"type": "array", "items": {"type": "string"},
                     "description": "what degrades it"},
        "memory": {"type": "object", "description": "Redis's memory against the thresholds"},
    },
}  # fmt: skip
READY: dict[str, Any] = {
    "status": "ready", "redis": "ok",
    "games": {g: {"workers": 1, "last_seen_ms": 412} for g in games.names()},
    "missing": [], "warnings": [],
    "memory": {"used_bytes": 1843200, "maxmemory_bytes": 268435456, "used_ratio": 0.0069,
               "warn_ratio": 0.8, "critical_ratio": 0.95, "policy": "noeviction",
               "refusing_writes": False, "status": "ok"},
}  # fmt: skip
UNREADY: dict[str, Any] = {
    "status": "unready", "redis": "unreachable", "games": {},
    "missing": ["redis: Error 111 connecting to localhost:6379. Connection refused."],
}  # fmt: skip
METRICS_EXAMPLE = (
    "# HELP tabletop_http_requests_total HTTP requests\n"
    "# TYPE tabletop_http_requests_total counter\n"
    'tabletop_http_requests_total{method="POST",route="/v1/games",status="201"} 3.0\n'
)
