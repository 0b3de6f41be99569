"""The worker's driving loop lives under ``services/worker/`` (issue 27): the Redis adapter of
the command streams only reads, acknowledges, claims and beats; fetching, deciding,
acknowledging, publishing and retrying is the worker's own loop."""

from __future__ import annotations

import inspect

from services.worker import consumer as loop
from shared.adapters import redis_consumer
from tests.unit.test_rings import _within, all_imports


def test_the_stream_adapter_knows_nothing_of_deciding() -> None:
    graph = all_imports("shared")
    bad = [
        imp
        for imp in graph["shared.adapters.redis_consumer"]
        if _within(imp, "shared.app") or _within(imp, "shared.adapters.metrics")
    ]
    assert bad == [], "the stream adapter decides nothing, counts nothing: " + ", ".join(bad)
    # Nothing of the loop is left in the adapter: no polling, running or retrying there.
    names = {name for name, _ in inspect.getmembers(redis_consumer)}
    assert "StreamConsumer" not in names and "MAX_DELIVERIES" not in names


def test_the_loop_is_the_workers_and_reads_through_the_adapter() -> None:
    assert loop.StreamConsumer.__module__ == "services.worker.consumer"
    for step in ("run", "poll_once", "recover", "retry_pending", "claim_stale"):
        assert step in vars(loop.StreamConsumer), step
    imports = all_imports("services")["services.worker.consumer"]
    assert "shared.adapters.redis_consumer.CommandStreams" in imports
    # The loop talks to Redis only through the adapter: no redis-py call of its own.
    assert not [imp for imp in imports if _within(imp, "redis")]
