"""Metric names and labels (prometheus-client's registry), the Celery signal handlers, the
stream gauges on a fake Redis, structured log lines, and the Celery delivery settings."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import fakeredis
import pytest
import redis
from prometheus_client import REGISTRY, CollectorRegistry, Counter, generate_latest

import services.worker.consumer as consumer_module
from services.bots import celery_app, observe, tasks
from services.gateway.app import create_app
from services.gateway.ready import readiness
from shared import keys, logs
from shared.adapters import metrics
from shared.adapters.redis_consumer import heartbeat_key
from shared.app.bot_moves import BotMove, Moved
from shared.app.messages import CommandMessage
from shared.bootstrap import bootstrap
from shared.config import Settings


def sample(name: str, **labels: str) -> float:
    """A sample's value in the default registry (0 when it was never set)."""
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_every_metric_is_named_tabletop_with_bounded_labels() -> None:
    expected = {
        metrics.HTTP_REQUESTS: ("tabletop_http_requests", ("method", "route", "status")),
        metrics.HTTP_LATENCY: ("tabletop_http_request_duration_seconds", ("method", "route")),
        metrics.COMMANDS: ("tabletop_commands", ("game", "outcome")),
        metrics.DECIDE_LATENCY: ("tabletop_decide_duration_seconds", ("game",)),
        metrics.DEAD_LETTERS: ("tabletop_dead_letters", ("game",)),
        metrics.BOT_MOVES: ("tabletop_bot_moves", ("outcome",)),
        metrics.BOT_LATENCY: ("tabletop_bot_move_duration_seconds", ("outcome",)),
        metrics.CELERY_TASKS: ("tabletop_celery_tasks", ("task", "state")),
        metrics.CELERY_LATENCY: ("tabletop_celery_task_duration_seconds", ("task",)),
    }
    for metric, (name, labels) in expected.items():
        assert metric._name == name
        assert tuple(metric._labelnames) == labels


@pytest.fixture
def memory_http() -> Any:
    app = create_app(Settings(rate_limits={}), application=bootstrap(backend="memory"))
    return app.test_client()


def test_requests_are_counted_by_route_template_and_status(memory_http: Any) -> None:
    route = "/v1/games/<game_id>"
    before_404 = sample("tabletop_http_requests_total", method="GET", route=route, status="404")
    before_ok = sample("tabletop_http_requests_total", method="GET", route="/healthz", status="200")
    count = sample("tabletop_http_request_duration_seconds_count", method="GET", route="/healthz")
    unmatched = sample(
        "tabletop_http_requests_total", method="GET", route="<unmatched>", status="404"
    )
    assert memory_http.get("/healthz").status_code == 200
    assert memory_http.get("/v1/games/no-such-game").status_code == 404
    assert memory_http.get("/no/such/path/12345").status_code == 404
    assert (
        sample("tabletop_http_requests_total", method="GET", route="/healthz", status="200")
        == before_ok + 1
    )
    assert (
        sample("tabletop_http_requests_total", method="GET", route=route, status="404")
        == before_404 + 1
    )
    assert (
        sample("tabletop_http_request_duration_seconds_count", method="GET", route="/healthz")
        == count + 1
    )
    # A path no route matches is one label, not a label per path.
    assert (
        sample("tabletop_http_requests_total", method="GET", route="<unmatched>", status="404")
        == unmatched + 1
    )


def test_metrics_endpoint_speaks_the_prometheus_text_format(memory_http: Any) -> None:
    memory_http.get("/healthz")
    resp = memory_http.get("/metrics")
    assert resp.status_code == 200
    assert resp.headers["Content-Type"].startswith("text/plain; version=")
    text = resp.get_data(as_text=True)
    assert "# TYPE tabletop_http_requests_total counter" in text
    assert 'tabletop_http_requests_total{method="GET",route="/healthz",status="200"}' in text
    assert "# TYPE tabletop_decide_duration_seconds histogram" in text


def test_readyz_on_the_memory_backend_is_ready(memory_http: Any) -> None:
    resp = memory_http.get("/readyz")
    assert resp.status_code == 200 and resp.get_json()["status"] == "ready"


@pytest.fixture
def fake() -> Iterator[fakeredis.FakeRedis]:
    client = fakeredis.FakeRedis()
    yield client
    client.close()


def test_stream_collector_reports_length_pending_lag_and_dead_letters(
    fake: fakeredis.FakeRedis,
) -> None:
    stream = keys.command_stream("fox", 0)
    fake.xgroup_create(stream, "workers", id="0", mkstream=True)
    for i in range(5):
        fake.xadd(stream, {"n": str(i)})
    fake.xreadgroup("workers", "w1", {stream: ">"}, count=2)  # 2 pending, 3 not delivered
    fake.xadd(keys.dead_letters(stream), {"error": "x"})
    other = keys.command_stream("skull", 0)  # no group yet: only its length
    collector = metrics.StreamCollector(fake, [stream, other])
    got = {
        (family.name, tuple(s.labels.values())): s.value
        for family in collector.collect()
        for s in family.samples
    }
    assert got[("tabletop_stream_length", (stream,))] == 5
    assert got[("tabletop_stream_pending", (stream,))] == 2
    assert got[("tabletop_stream_lag", (stream,))] == 3
    assert got[("tabletop_stream_consumers", (stream,))] == 1
    assert got[("tabletop_dead_letter_entries", (stream,))] == 1
    assert got[("tabletop_stream_length", (other,))] == 0
    assert ("tabletop_stream_pending", (other,)) not in got
    assert got[("tabletop_stream_scrape_ok", ())] == 1


def test_stream_lag_is_counted_where_the_server_does_not_report_it(
    fake: fakeredis.FakeRedis,
) -> None:
    stream = keys.command_stream("fox", 0)
    ids = [fake.xadd(stream, {"n": str(i)}) for i in range(4)]
    collector = metrics.StreamCollector(fake, [stream])
    assert collector.lag(stream, {"last-delivered-id": ids[0]}) == 3
    assert collector.lag(stream, {"last-delivered-id": b"0-0"}) == 4
    assert collector.lag(stream, {"lag": 7}) == 7


def test_a_scrape_with_redis_down_still_answers() -> None:
    class Down:
        def xinfo_groups(self, stream: str) -> Any:
            raise ConnectionError("down")

    families = list(metrics.StreamCollector(Down(), ["cmd:fox:0"]).collect())
    ok = next(f for f in families if f.name == "tabletop_stream_scrape_ok")
    assert ok.samples[0].value == 0


def test_readiness_names_what_is_missing(fake: fakeredis.FakeRedis) -> None:
    ok, doc = readiness(fake, ["fox", "skull"], now=1000.0)
    assert not ok and doc["status"] == "unready"
    assert doc["missing"] == [
        "fox: no worker has polled its streams",
        "skull: no worker has polled its streams",
    ]
    fake.zadd(heartbeat_key("fox"), {"w1": 999.5, "w2": 900.0})
    fake.zadd(heartbeat_key("skull"), {"w3": 980.0})
    ok, doc = readiness(fake, ["fox", "skull"], max_idle_ms=10_000, now=1000.0)
    assert not ok
    assert doc["games"]["fox"] == {"workers": 1, "last_seen_ms": 500}
    assert doc["missing"] == ["skull: no worker seen for 20000 ms (limit 10000)"]
    fake.zadd(heartbeat_key("skull"), {"w3": 999.0})
    ok, doc = readiness(fake, ["fox", "skull"], max_idle_ms=10_000, now=1000.0)
    assert ok and doc["status"] == "ready" and doc["missing"] == []


def test_a_polling_consumer_beats_and_leaves(fake: fakeredis.FakeRedis) -> None:
    app = SimpleNamespace(forget=lambda gid: None)
    consumer = consumer_module.StreamConsumer(fake, app, "fox", name="w9")  # type: ignore[arg-type]
    consumer.ensure_groups()
    consumer.poll_once(block_ms=1)
    assert readiness(fake, ["fox"])[0]
    consumer.leave_group()
    assert fake.zscore(heartbeat_key("fox"), "w9") is None
    assert not readiness(fake, ["fox"])[0]


def test_celery_signals_count_outcomes_and_time() -> None:
    task = SimpleNamespace(name="bots.move")
    ok = sample("tabletop_celery_tasks_total", task="bots.move", state="succeeded")
    failed = sample("tabletop_celery_tasks_total", task="bots.move", state="failed")
    timed = sample("tabletop_celery_task_duration_seconds_count", task="bots.move")
    observe.on_prerun(task_id="t1", task=task, args=("g1", 0, 3))
    observe.on_postrun(task_id="t1", task=task, state="SUCCESS")
    observe.on_prerun(task_id="t2", task=task, args=("g1", 0, 4))
    observe.on_postrun(task_id="t2", task=task, state="FAILURE")
    assert sample("tabletop_celery_tasks_total", task="bots.move", state="succeeded") == ok + 1
    assert sample("tabletop_celery_tasks_total", task="bots.move", state="failed") == failed + 1
    assert sample("tabletop_celery_task_duration_seconds_count", task="bots.move") == timed + 2


def test_bot_outcomes_are_a_few_labels() -> None:
    assert tasks.bot_outcome(BotMove.sent("bot-1-12")) == "submitted"
    assert tasks.bot_outcome(BotMove(Moved.STALE)) == "stale"
    assert tasks.bot_outcome(BotMove(Moved.IDLE)) == "idle"
    assert tasks.bot_outcome(BotMove(Moved.MISSING)) == "missing"


def test_celery_runs_tasks_late_one_at_a_time_within_the_visibility_timeout() -> None:
    app = celery_app.create_celery(Settings())
    conf = app.conf
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    visibility = conf.broker_transport_options["visibility_timeout"]
    limits = {name: app.tasks[name].time_limit for name in tasks.TIME_LIMITS}
    assert limits == tasks.TIME_LIMITS
    # Longer than any task may run (else a running task is handed out again), and far below
    # the transport's default hour (a killed worker's tasks come back that much sooner).
    assert max(limits.values()) < visibility < 3600
    for name in tasks.TIME_LIMITS:
        assert app.tasks[name].acks_late is True


def _capture(fmt: str) -> tuple[logging.Handler, io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logs.formatter("test", fmt))
    return handler, out


def test_json_log_lines_carry_the_bound_game_and_command() -> None:
    handler, out = _capture("json")
    logger = logging.getLogger("tabletop.test.json")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        with logs.context(game_id="g-1", command_id="c-1", seat=None):
            logger.warning("command %s failed", "c-1")
        logger.warning("outside")
    finally:
        logger.removeHandler(handler)
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["event"] == "command c-1 failed"
    assert first["game_id"] == "g-1" and first["command_id"] == "c-1"
    assert "seat" not in first  # None values are left out
    assert first["level"] == "warning" and first["process"] == "test" and "timestamp" in first
    assert "game_id" not in second


def test_console_log_lines_are_readable() -> None:
    handler, out = _capture("console")
    logger = logging.getLogger("tabletop.test.console")
    logger.addHandler(handler)
    try:
        with logs.context(game_id="g-2"):
            logger.warning("hello")
    finally:
        logger.removeHandler(handler)
    line = out.getvalue()
    assert "hello" in line and "game_id=g-2" in line and not line.startswith("{")


def test_an_unknown_log_format_is_refused() -> None:
    with pytest.raises(ValueError, match="TABLETOP_LOG_FORMAT"):
        logs.formatter("test", "xml")


def test_the_worker_counts_outcomes_and_logs_with_the_command_ids(
    fake: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcomes = iter([{"status": "accepted"}, {"status": "rejected"}])

    def decide(app: Any, message: CommandMessage, ack: Any = None) -> dict[str, Any]:
        if message.command_id == "c-down":
            raise redis.ConnectionError("redis went away")
        return next(outcomes)

    monkeypatch.setattr(consumer_module.commands, "decide_command", decide)
    forgotten: list[str] = []
    app = SimpleNamespace(forget=forgotten.append)
    consumer = consumer_module.StreamConsumer(fake, app, "skull")  # type: ignore[arg-type]
    handler, out = _capture("json")
    consumer_module.log.addHandler(handler)
    before = {
        o: sample("tabletop_commands_total", game="skull", outcome=o)
        for o in ("accepted", "rejected", "retry")
    }
    timed = sample("tabletop_decide_duration_seconds_count", game="skull")
    try:
        for cid in ("c-ok", "c-no", "c-down"):
            message = CommandMessage(command_id=cid, game_id="g-9", seat=0, body={"type": "x"})
            consumer._handle_one("cmd:skull:0", b"1-0", message.to_fields())
    finally:
        consumer_module.log.removeHandler(handler)
    for o in ("accepted", "rejected", "retry"):
        assert sample("tabletop_commands_total", game="skull", outcome=o) == before[o] + 1
    assert sample("tabletop_decide_duration_seconds_count", game="skull") == timed + 3
    (line,) = (json.loads(x) for x in out.getvalue().splitlines())
    assert line["game_id"] == "g-9" and line["command_id"] == "c-down"
    assert line["level"] == "warning" and forgotten == ["g-9"]


def _write(
    path: Any, typ: str, pid: int, metric: str, sample: str, labels: dict, value: float
) -> None:
    """One value in a prometheus-client multiprocess file, as a process of that pid writes it."""
    from prometheus_client.mmap_dict import MmapedDict, mmap_key

    path.mkdir(parents=True, exist_ok=True)
    d = MmapedDict(str(path / f"{typ}_{pid}.db"))
    d.write_value(mmap_key(metric, sample, list(labels), list(labels.values()), "help"), value, 0.0)
    d.close()


def test_files_of_several_directories_make_one_family_per_name(tmp_path: Any) -> None:
    # Issue 25: the gateway's scrape reads its own, the stream workers' and the Celery
    # workers' directories; a name in two of them must be one family (a second TYPE line
    # for a name makes a Prometheus server refuse the whole scrape).
    from prometheus_client.parser import text_string_to_metric_families

    _write(tmp_path / "gateway", "counter", 1, "tabletop_http_requests",
           "tabletop_http_requests_total", {"method": "GET"}, 2)  # fmt: skip
    _write(tmp_path / "workers", "counter", 2, "tabletop_commands", "tabletop_commands_total",
           {"game": "fox", "outcome": "accepted"}, 3)  # fmt: skip
    _write(tmp_path / "workers", "counter", 3, "tabletop_commands", "tabletop_commands_total",
           {"game": "fox", "outcome": "accepted"}, 4)  # fmt: skip  # a restarted worker's
    for node, pid in (("bots", 4), ("search", 5)):  # nested: one directory per Celery worker
        _write(tmp_path / "celery" / node, "counter", pid, "tabletop_bot_moves",
               "tabletop_bot_moves_total", {"outcome": "submitted"}, 1)  # fmt: skip
    # The same file seen through two of the directories given counts once.
    dirs = [tmp_path / "gateway", tmp_path / "workers", tmp_path / "celery", tmp_path / "workers"]
    registry = CollectorRegistry()
    registry.register(metrics.FilesCollector([str(d) for d in dirs]))
    text = generate_latest(registry).decode()
    families = [f.name for f in text_string_to_metric_families(text)]
    assert sorted(families) == ["tabletop_bot_moves", "tabletop_commands", "tabletop_http_requests"]
    assert (
        registry.get_sample_value("tabletop_commands_total", {"game": "fox", "outcome": "accepted"})
        == 7
    )
    assert registry.get_sample_value("tabletop_bot_moves_total", {"outcome": "submitted"}) == 2

    # Outside gunicorn the gateway's own values are in memory: they join the files' families.
    mine = CollectorRegistry()
    Counter("tabletop_commands", "h", ["game", "outcome"], registry=mine).labels(
        "fox", "accepted"
    ).inc()
    merged = CollectorRegistry()
    merged.register(metrics.Combined([mine, registry]))
    text = generate_latest(merged).decode()
    names = [f.name for f in text_string_to_metric_families(text)]
    assert len(names) == len(set(names)) and "tabletop_commands" in names
    assert (
        merged.get_sample_value("tabletop_commands_total", {"game": "fox", "outcome": "accepted"})
        == 8
    )


def test_a_worker_serves_only_its_own_files(tmp_path: Any) -> None:
    # The stream workers share one directory; a worker's own port (TABLETOP_METRICS_PORT)
    # still answers for that worker alone, as before.
    _write(tmp_path, "counter", 11, "tabletop_commands", "tabletop_commands_total",
           {"game": "fox", "outcome": "accepted"}, 3)  # fmt: skip
    _write(tmp_path, "counter", 111, "tabletop_commands", "tabletop_commands_total",
           {"game": "fox", "outcome": "accepted"}, 5)  # fmt: skip
    registry = CollectorRegistry()
    registry.register(metrics.FilesCollector([str(tmp_path)], pid=11))
    assert (
        registry.get_sample_value("tabletop_commands_total", {"game": "fox", "outcome": "accepted"})
        == 3
    )
