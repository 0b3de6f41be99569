"""The worker's stream consumer (it lives with the Redis adapters it reads)."""

from shared.adapters.redis_consumer import (
    CLAIM_EVERY_S,
    CLAIM_IDLE_MS,
    GROUP,
    MAX_DELIVERIES,
    RETRY_EVERY_S,
    StreamConsumer,
)

__all__ = [
    "CLAIM_EVERY_S",
    "CLAIM_IDLE_MS",
    "GROUP",
    "MAX_DELIVERIES",
    "RETRY_EVERY_S",
    "StreamConsumer",
]
