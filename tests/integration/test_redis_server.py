"""The stack's redis-server: it refuses a port another server holds and a data directory another
stack holds, runs with a memory limit and no eviction, and comes back after a kill -9 with
every write it answered."""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import pytest
import redis

from shared.redis_server import DataDirLocked, PortTaken, RedisServer


def test_a_port_another_redis_holds_is_refused_not_used(tmp_path: Path) -> None:
    other = RedisServer()
    try:
        with pytest.raises(
            PortTaken, match=rf"port {other.port} is already taken by another Redis"
        ):
            RedisServer(other.port, persist=True, data_dir=str(tmp_path))
        # The refused one let go of its directory.
        RedisServer(persist=True, data_dir=str(tmp_path)).stop()
    finally:
        other.stop()


def test_a_port_anything_else_holds_is_refused() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(PortTaken, match=rf"port {port} is already taken by another process"):
            RedisServer(port)


def test_a_data_directory_is_held_by_one_server_at_a_time(tmp_path: Path) -> None:
    first = RedisServer(persist=True, data_dir=str(tmp_path))
    try:
        with pytest.raises(DataDirLocked, match="in use by another tabletop stack"):
            RedisServer(persist=True, data_dir=str(tmp_path))
    finally:
        first.stop()
    RedisServer(persist=True, data_dir=str(tmp_path)).stop()  # free again once stopped


def test_a_server_left_running_by_a_dead_owner_still_holds_the_directory(tmp_path: Path) -> None:
    orphan = RedisServer(persist=True, data_dir=str(tmp_path))
    try:
        assert orphan._lock is not None
        orphan._lock.close()  # as if its owner had been killed: only redis-server holds it now
        with pytest.raises(DataDirLocked, match=rf"redis-server pid {orphan.proc.pid}"):
            RedisServer(persist=True, data_dir=str(tmp_path))
    finally:
        orphan._lock = None
        orphan.stop()
    RedisServer(persist=True, data_dir=str(tmp_path)).stop()


def test_it_runs_with_a_memory_limit_and_never_evicts() -> None:
    server = RedisServer(maxmemory="2mb")
    client = redis.Redis.from_url(server.url)
    try:
        config = client.config_get("maxmemory*")
        assert config["maxmemory"] == str(2 * 1024 * 1024)
        assert config["maxmemory-policy"] == "noeviction"
        stored = 0
        with pytest.raises(redis.ResponseError, match="used memory > 'maxmemory'"):
            while stored < 10_000:
                client.xadd("cmd:fox:0", {"body": "x" * 1000})
                stored += 1
        assert client.xlen("cmd:fox:0") == stored, "what was stored stays"
    finally:
        client.close()
        server.stop()


def test_a_killed_server_comes_back_on_its_port_with_every_answered_write(tmp_path: Path) -> None:
    server = RedisServer(persist=True, data_dir=str(tmp_path))
    try:
        client = redis.Redis.from_url(server.url)
        # `always`: with `everysec` a write answered while the background fsync still runs is
        # written after its answer, and a kill right then may lose it (README, "Running it").
        client.config_set("appendfsync", "always")
        for i in range(500):
            client.xadd("game:{g}:events", {"v": i})
        first = server.run_id
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait()
        server.start()
        assert server.run_id != first
        client = redis.Redis.from_url(server.url)
        assert client.xlen("game:{g}:events") == 500
        client.close()
    finally:
        server.stop()
