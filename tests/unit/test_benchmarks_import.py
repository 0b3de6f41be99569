"""The benchmark scripts import against the current code (they are not run by the suite, so
a renamed module would otherwise go unnoticed until ``make bench``)."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "bench_archive",
    "bench_bot_faults",
    "bench_bots",
    "bench_cold_load",
    "bench_feed",
    "bench_commitment_attack",
    "bench_fox_engine",
    "bench_fox_iteration",
    "bench_gateway",
    "bench_kit_sprt",
    "bench_live_strength",
    "bench_log_store",
    "bench_memory",
    "bench_outside_bots",
    "bench_reject_flood",
    "bench_seal",
    "bench_search_load",
    "bench_sim_fox",
    "bench_sim_skull",
    "bench_sim_skye",
    "bench_simulate",
    "bench_slow_clients",
    "bench_tournament",
    "bench_worker_takeover",
    "compare",
    "run_all",
]


@pytest.mark.parametrize("name", MODULES)
def test_benchmark_module_imports(name: str) -> None:
    module = importlib.import_module(f"benchmarks.{name}")
    assert callable(
        getattr(module, "run", None)
        or getattr(module, "main", None)
        or getattr(module, "play_games", None)
    )
