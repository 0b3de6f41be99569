"""Helpers shared by the benchmark scripts: machine facts, a raw Redis round trip, percentiles."""

from __future__ import annotations

import os
import platform
import statistics
import time

import redis


def machine() -> str:
    """One line describing this machine."""
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        mem = f", {pages / 2**30:.0f} GiB"
    except (ValueError, OSError):
        pass
    return (
        f"{os.cpu_count()} cores ({cpu}){mem}, Python {platform.python_version()}, "
        f"{platform.system()} {platform.machine()}"
    )


def redis_round_trip(url: str, n: int = 5000) -> dict[str, float]:
    """Sequential PINGs on one connection: the floor under any command path."""
    client = redis.Redis.from_url(url)
    client.ping()
    lat = []
    start = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        client.ping()
        lat.append(time.perf_counter() - t)
    total = time.perf_counter() - start
    return {"ops_per_s": n / total, "p50_ms": pct(lat, 50) * 1e3, "p99_ms": pct(lat, 99) * 1e3}


def pct(values: list[float], p: float) -> float:
    """The p-th percentile (nearest rank)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered)) - 1))
    return ordered[k]


def mean(values: list[float]) -> float:
    """Arithmetic mean (nan when empty)."""
    return statistics.fmean(values) if values else float("nan")


def ratio_summary(rounds: list[dict[str, float]]) -> dict[str, float]:
    """Medians of interleaved simulator-against-engine rounds (each with ``ratio``,
    ``engine_games_per_s`` and ``sim_games_per_s``), and the lowest ratio."""
    ratios = [row["ratio"] for row in rounds]
    return {
        "median_ratio": statistics.median(ratios),
        "min_ratio": min(ratios),
        "median_engine_games_per_s": statistics.median(r["engine_games_per_s"] for r in rounds),
        "median_sim_games_per_s": statistics.median(r["sim_games_per_s"] for r in rounds),
    }


def cpu_seconds(pid: int) -> float:
    """User+system CPU seconds of a process and all its live descendants (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return total


def redis_cpu_seconds(client: redis.Redis) -> float:
    """The Redis server's own user+system CPU seconds (INFO cpu)."""
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
