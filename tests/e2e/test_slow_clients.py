"""200 connections trickling a body and 200 clients holding `Prefer: wait=30` (no worker for
their game type) do not stop the gateway under gunicorn (``deploy/gunicorn.conf.py``, gevent)
from answering: `/healthz` answers 200 throughout, no request gets a 5xx, every wait is held
past redis-py's 5 s socket timeout and then answered once a worker starts, and every slow body
is served when it completes. Correctness only: the latency is measured by
``benchmarks/bench_slow_clients.py`` and kept in BENCHMARKS.md."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from benchmarks.bench_slow_clients import gateway, scenario

pytestmark = pytest.mark.e2e

SLOW = 200
WAITS = 200
HOLD_S = 7.0  # past the 5 s socket timeout that used to end a wait with a 503


@pytest.mark.timeout(240)
def test_slow_and_waiting_clients_leave_the_gateway_answering() -> None:
    with gateway() as gw:
        result = scenario(gw, SLOW, WAITS, HOLD_S, every=0.05)
    assert result["healthz_statuses"] == [200], result["healthz_statuses"]
    assert result["healthz_probes"] >= 10  # it kept answering through the hold
    assert result["waits_held_through_the_hold"] == WAITS
    assert sorted(result["wait_statuses"]) == [200] * WAITS
    assert result["slow_statuses"] == [201] * SLOW

    # /metrics of one gunicorn worker sums both (multiprocess mode), and no 5xx anywhere.
    requests_by: dict[tuple[str, str, str], float] = {}
    for family in text_string_to_metric_families(result["metrics"]):
        if family.name == "tabletop_http_requests":
            for s in family.samples:
                if s.name.endswith("_total"):
                    key = (s.labels["method"], s.labels["route"], s.labels["status"])
                    requests_by[key] = requests_by.get(key, 0) + s.value
    assert requests_by[("POST", "/v1/games/<game_id>/commands", "200")] == WAITS
    assert requests_by[("POST", "/v1/games", "201")] == WAITS + SLOW
    assert not {k: v for k, v in requests_by.items() if k[2].startswith("5")}
