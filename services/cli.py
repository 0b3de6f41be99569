"""The ``tabletop`` command: run the stack, a worker, simulations, rebuilds."""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from services.cli_args import API_HELP, default_api, parse_bot, plain, stack_redis_url

ROOT = Path(__file__).resolve().parents[1]


def build_parser() -> argparse.ArgumentParser:
    """The ``tabletop`` command line: every subcommand and option, each with its help."""
    from shared import games

    parser = argparse.ArgumentParser(prog="tabletop", description=plain(__doc__))
    sub = parser.add_subparsers(dest="cmd", required=True)

    run = sub.add_parser("run", help="start Redis (unless REDIS_URL), gateway, workers, Celery")
    run.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("PORT", "8000")),
        help="the gateway's port: the web page, the API and /docs (default: PORT, else 8000)",
    )
    run.add_argument(
        "--redis-port",
        type=int,
        default=int(os.environ["REDIS_PORT"]) if os.environ.get("REDIS_PORT") else None,
        help="port for the redis-server it starts (default: REDIS_PORT, else free)",
    )
    run.add_argument(
        "--gateway-workers",
        type=int,
        default=int(os.environ.get("GATEWAY_WORKERS", "2")),
        help="gunicorn worker processes of the gateway (default: GATEWAY_WORKERS, else 2)",
    )
    run.add_argument(
        "--workers",
        type=int,
        default=int(os.environ.get("TABLETOP_WORKERS", "1")),
        help="worker processes per game type (default: TABLETOP_WORKERS, else 1)",
    )
    run.add_argument(
        "--data-dir",
        default=os.environ.get("TABLETOP_DATA_DIR") or None,
        help="where the stack keeps its Redis data, locked while it runs "
        "(default: TABLETOP_DATA_DIR, else ./run)",
    )

    worker = sub.add_parser("worker", help="consume one game type's command streams")
    worker.add_argument("--game", required=True, help="the game type whose commands it decides")

    sim = sub.add_parser("simulate", help="play bot games in-process (no Redis)")
    sim.add_argument("--game", required=True, help=f"the game type: {', '.join(games.names())}")
    sim.add_argument("--games", type=int, default=100, help="games to play (default: 100)")
    sim.add_argument(
        "--seed",
        default=None,
        help="game i plays seed SEED:i (default: one drawn at random, printed to repeat the run)",
    )
    sim.add_argument(
        "--players",
        type=int,
        default=None,
        help="seats a game (default: one per --bots entrant, else the game's fewest)",
    )
    sim.add_argument(
        "--bots",
        default=None,
        help="comma-separated bots, one per entrant, each NAME or NAME:KEY=N[:KEY=N] "
        "(e.g. ismcts:iterations=500,heuristic); seats rotate from game to game",
    )
    sim.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="a game option, e.g. target=1 (repeatable; GET /v1/game-types lists them)",
    )

    rebuild = sub.add_parser("rebuild", help="rewrite every game's projections from its events")
    rebuild.add_argument(
        "game_ids", nargs="*", metavar="GAME_ID", help="the games to rebuild (default: every game)"
    )
    rebuild.add_argument(
        "--data-dir",
        default=os.environ.get("TABLETOP_DATA_DIR") or None,
        help="the data directory of the stack whose Redis to use when REDIS_URL is not set "
        "(default: TABLETOP_DATA_DIR, else ./run, as tabletop run does)",
    )

    aud = sub.add_parser(
        "audit",
        help="prove a game: chain, seed, opening draw, every command and bot move re-decided, "
        "final digest",
    )
    aud.add_argument("game_id", nargs="?", help="the game to fetch from the service")
    aud.add_argument(
        "--api",
        default=default_api(),
        help=API_HELP,
    )
    aud.add_argument(
        "--key",
        default=None,
        help="an auditor key (default: TABLETOP_AUDITOR_KEY, else the first of "
        "TABLETOP_AUDITOR_KEYS); a finished game needs none",
    )
    aud.add_argument(
        "--file",
        "--events",
        dest="path",
        help="audit an export offline instead (JSONL from GET /v1/games/{id}/export, or the "
        "JSON of GET /events); no service, no Redis",
    )

    bots = sub.add_parser("bots", help="registered bots: what an operator does")
    bots_sub = bots.add_subparsers(dest="bots_cmd", required=True)
    rotate = bots_sub.add_parser(
        "rotate-secret",
        help="a new bot secret (or TABLETOP_BOT_SECRET's new value): every bot's key issued "
        "again and printed, one JSON line per bot, for its owner; restart every process after",
    )
    rotate.add_argument(
        "--data-dir",
        default=os.environ.get("TABLETOP_DATA_DIR") or None,
        help="the stack's data directory: its bot-secret file, and its Redis when REDIS_URL "
        "is not set (default: TABLETOP_DATA_DIR, else ./run, as tabletop run does)",
    )

    for name, text in (
        ("migrate", "bring the Redis store and the archive to this build's formats "
                    "(idempotent; tabletop run does it on start)"),
        ("archive", "move the finished, scored games from Redis to the archive now"),
    ):  # fmt: skip
        store = sub.add_parser(name, help=text)
        store.add_argument(
            "--data-dir",
            default=os.environ.get("TABLETOP_DATA_DIR") or None,
            help="the stack's data directory: its Redis when REDIS_URL is not set, and its "
            "archive (default: TABLETOP_DATA_DIR, else ./run, as tabletop run does)",
        )
        if name == "archive":
            store.add_argument(
                "--after-s",
                type=float,
                default=0.0,
                help="only games finished at least this many seconds ago (default: 0)",
            )

    from services import tournament_cli

    tournament_cli.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tabletop`` console script."""
    from services import tournament_cli

    args = build_parser().parse_args(argv)
    if args.cmd == "run":
        return run_stack(
            args.port, args.redis_port, args.gateway_workers, args.workers, args.data_dir
        )
    if args.cmd == "worker":
        # Checked before the worker module (and its Redis) is touched: a worker for a game
        # nobody hosts would wait on its empty streams forever.
        if args.game not in available_games():
            print(
                f"tabletop worker: unknown game {args.game!r}; games: "
                f"{', '.join(available_games())}",
                file=sys.stderr,
            )
            return 2
        # Before prometheus-client is imported (by the worker module): file-backed values in
        # the stack's workers' directory, which the gateway's /metrics sums in.
        from shared import metrics_dir

        metrics_dir.adopt(os.environ.get("TABLETOP_WORKER_METRICS_DIR"))
        from services.worker.main import run as run_worker

        run_worker(args.game)
        return 0
    if args.cmd == "simulate":
        return run_simulation(args)
    if args.cmd == "rebuild":
        return run_rebuild(args.game_ids, args.data_dir)
    if args.cmd in ("migrate", "archive"):
        from services import store_cli

        if args.cmd == "migrate":
            return store_cli.run_migrate(args.data_dir)
        return store_cli.run_archive(args.data_dir, args.after_s)
    if args.cmd == "audit":
        from services.audit_cli import run_audit

        return run_audit(args.game_id, args.api, args.key, args.path)
    if args.cmd == "tournament":
        return tournament_cli.run(args)
    if args.cmd == "bots":
        return rotate_bot_secret(args.data_dir)
    return 2


def run_simulation(args: argparse.Namespace) -> int:
    """``tabletop simulate``: print results and games per second."""
    import json

    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from shared import games
    from shared.simulate import simulate
    from shared.tournaments import standings

    def refuse(message: str) -> int:
        print(f"tabletop simulate: {message}", file=sys.stderr)
        return 2

    if args.game not in games.names():
        return refuse(f"unknown game {args.game!r}; games: {', '.join(games.names())}")
    engine = games.get(args.game)
    if args.games < 1:
        return refuse("--games must be at least 1")
    seats = args.players
    if seats is not None and not engine.MIN_SEATS <= seats <= engine.MAX_SEATS:
        return refuse(f"{args.game} seats {engine.MIN_SEATS} to {engine.MAX_SEATS} players")
    if args.bots:
        from shared.app import bots as registry

        bots = []
        for item in args.bots.split(","):
            try:  # the entrant named: in a list of five, "bot: one of ..." says not which
                bots.append(parse_bot(item))
                registry.parse_spec(bots[-1])
            except (ValueError, registry.BotSpecError) as exc:
                return refuse(
                    f"--bots: {item.strip()!r}: {exc}; bots: {', '.join(registry.names())}"
                )
        seats = seats or len(bots)
        if len(bots) != seats:
            return refuse(f"--bots names {len(bots)} seats but --players is {seats}")
    seats = seats or engine.MIN_SEATS
    chosen: list[dict[str, Any]] | None = bots if args.bots else None
    options = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            return refuse(f"--option {item!r}: give KEY=JSON, e.g. target=1")
        if not sep or not key:
            return refuse(f"--option {item!r}: give KEY=JSON, e.g. target=1")
    from shared.games.errors import GameError

    try:
        engine.parse_options(seats, dict(options))
    except GameError as exc:
        return refuse(str(exc))
    # The rule `tournament run` follows too: a seed drawn unless given, and printed, so that
    # any run can be played again exactly (short enough to type back).
    seed = args.seed if args.seed is not None else secrets.token_hex(8)
    console = Console(stderr=True)
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(f"{args.game}: {args.games} games", total=args.games)
        result = simulate(
            args.game,
            games_count=args.games,
            seed=seed,
            seats=seats,
            options=options,
            progress=lambda done: progress.update(task, completed=done),
            bots=chosen,
            rotate=chosen is not None,
        )
    who = "entrant (seats rotated)" if chosen else "seat"
    table = Table(title=f"{args.game}: {result.games} bot games, seed {seed!r}")
    table.add_column(who)
    table.add_column("bot")
    table.add_column("wins", justify="right")
    table.add_column("win rate", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("mean score", justify="right")
    for i in range(seats):
        low, high = standings.wilson(result.wins[i], result.games)
        spec = chosen[i] if chosen else {"bot": "random"}
        table.add_row(
            str(i),
            ":".join([spec["bot"], *(f"{k}={v}" for k, v in spec.items() if k != "bot")]),
            f"{result.wins[i]:g}",
            f"{result.wins[i] / max(result.games, 1):.1%}",
            f"{low:.1%}–{high:.1%}",
            f"{result.score_sums[i] / max(result.games, 1):.2f}",
        )
    Console().print(table)
    print(
        f"games: {result.games}  draws: {result.draws}  actions: {result.actions}  "
        f"seconds: {result.seconds:.2f}  games/s: {result.games_per_second:.1f}  "
        f"actions/s: {result.actions_per_second:.0f}  seed: {seed}"
    )
    return 0


def _migrate_store(url: str) -> str | None:
    """Bring the store to this build's layout before any process reads it (``tabletop
    migrate``); why it cannot be, or None."""
    from shared.adapters.store_format import StoreFormatError, StoreUnreachable, migrate_at

    try:
        migrate_at(url)
    except (StoreFormatError, StoreUnreachable) as exc:
        return str(exc)
    return None


def run_rebuild(game_ids: Sequence[str], data_dir: str | None = None) -> int:
    """``tabletop rebuild``: projections from events, with progress and a summary line, on the
    stack's Redis (``REDIS_URL``, or the one ``make run`` started on ``data_dir``, by default
    ``./run``); never a guessed one."""
    from rich.progress import track

    from shared.app import projecting, queries
    from shared.bootstrap import bootstrap
    from shared.config import Settings

    data = Path(data_dir) if data_dir else Path.cwd() / "run"
    url = os.environ.get("REDIS_URL") or stack_redis_url(data)
    if not url:
        print(
            f"tabletop rebuild: no Redis to rebuild: no running stack's {data / 'redis.url'}; "
            "set REDIS_URL, or give the stack's TABLETOP_DATA_DIR (--data-dir)",
            file=sys.stderr,
        )
        return 2
    app = bootstrap(Settings.from_env({**os.environ, "REDIS_URL": url}))
    try:
        ids = list(game_ids) or queries.list_games(app, limit=10**9)
    except Exception as exc:  # the Redis is not there: one line, not a traceback
        print(f"tabletop rebuild: cannot read the games at {url}: {exc}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    failed: list[str] = []
    for gid in track(ids, description=f"rebuilding {len(ids)} games"):
        try:
            projecting.rebuild_projections(app, gid)
        except LookupError:
            failed.append(gid)
    seconds = time.perf_counter() - started
    print(
        f"rebuilt {len(ids) - len(failed)} of {len(ids)} games in {seconds:.1f} s"
        + (f"; no events for {', '.join(failed[:5])}" if failed else "")
    )
    return 1 if failed else 0


def rotate_bot_secret(data_dir: str | None = None) -> int:
    """``tabletop bots rotate-secret``: a new secret for registered bots' keys, on the stack's
    Redis (``REDIS_URL``, or the one ``tabletop run`` started on ``data_dir``). Without
    TABLETOP_BOT_SECRET a new one is staged in ``<bot-secret>.new`` (a run cut short is
    finished by running it again), every bot's key is derived again and its hash replaced,
    Redis's check value follows, and the file takes the staged secret's place; with it, the
    same under its (new) value. Prints ``{"id", "name", "retired", "key"}`` per bot: the old
    keys no longer work, so each owner needs the new one, and every process of the stack must
    be restarted (they keep the old secret until then)."""
    import json

    from shared.adapters.redis import RedisBotRegistry
    from shared.app import bot_registration
    from shared.bootstrap import bootstrap
    from shared.config import Settings, SettingsError

    data = Path(data_dir) if data_dir else Path.cwd() / "run"
    url = os.environ.get("REDIS_URL") or stack_redis_url(data)
    if not url:
        print(f"tabletop bots: no Redis: no running stack's {data / 'redis.url'}; set "
              "REDIS_URL, or give the stack's TABLETOP_DATA_DIR (--data-dir)", file=sys.stderr)  # fmt: skip
        return 2
    env = {**os.environ, "REDIS_URL": url, "TABLETOP_DATA_DIR": str(data.absolute())}
    try:
        app = bootstrap(Settings.from_env(env))
        registry = app.ports.bots
        assert isinstance(registry, RedisBotRegistry)
        registry.stage_rotation()
        issued = bot_registration.reissue_keys(app)
        registry.finish_rotation()
    except SettingsError as exc:
        print(f"tabletop bots: {exc}", file=sys.stderr)
        return 2
    for doc in issued:
        print(json.dumps(doc))
    where = "TABLETOP_BOT_SECRET" if os.environ.get("TABLETOP_BOT_SECRET") else registry.secret_file
    print(f"tabletop bots: {len(issued)} keys issued again under the new secret ({where}); "
          "restart every process of the stack now, and hand each owner its bot's key",
          file=sys.stderr)  # fmt: skip
    return 0


def ensure_bot_secret(env: dict[str, str]) -> str | None:
    """Before ``tabletop run`` starts its processes: the bot secret read, made or moved from
    Redis (``RedisBotRegistry.secret``), so that a problem with it stops the stack with one
    message instead of every process failing; None when all is well (or Redis does not
    answer yet: the processes will say)."""
    from shared.adapters.redis import RedisBotRegistry, connect
    from shared.config import Settings, SettingsError

    settings = Settings.from_env(env)
    if settings.bot_secret:
        return None
    client = connect(settings.redis_url, cluster=settings.redis_cluster)
    try:
        RedisBotRegistry(client, "", settings.bot_secret_file).secret()
    except SettingsError as exc:
        return str(exc)
    except Exception:  # Redis does not answer (yet): each process reports it
        return None
    finally:
        client.close()
    return None


def available_games() -> list[str]:
    """Game types whose engine is present."""
    from shared import games

    out = []
    for name in games.names():
        try:
            games.get(name)
        except KeyError:
            continue
        out.append(name)
    return out


def run_stack(
    port: int,
    redis_port: int | None,
    gateway_workers: int,
    workers: int = 1,
    data_dir: str | None = None,
) -> int:
    """``tabletop run``: every process of the service on this machine, kept up by a supervisor
    (services/supervisor.py) until Ctrl-C or SIGTERM stops them in order."""
    from services import supervisor
    from shared.redis_server import DEFAULT_MAXMEMORY, RedisServer, RedisServerError

    def refuse(message: str) -> int:
        print(f"tabletop run: {message}", file=sys.stderr)
        return 2

    if workers < 1:
        return refuse("--workers (TABLETOP_WORKERS) must be at least 1")
    if _port_taken(port):
        return refuse(f"port {port} is already in use: choose another PORT (or --port)")
    # Until the supervisor takes over the signals: a SIGTERM while Redis starts must still
    # reach the `finally` that stops it (it runs in its own session, untouched otherwise).
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    env = dict(os.environ)
    data = Path(data_dir) if data_dir else Path.cwd() / "run"
    # Every process finds the bot secret's file (<data dir>/bot-secret) where this one does.
    env["TABLETOP_DATA_DIR"] = str(data.absolute())
    server = None
    try:
        if not env.get("REDIS_URL"):
            # Games outlive a restart: the AOF lives in <data dir>/redis (./run/redis, ignored
            # by git), locked while this stack runs.
            try:
                server = RedisServer(
                    redis_port,
                    persist=True,
                    data_dir=str(data / "redis"),
                    maxmemory=env.get("TABLETOP_REDIS_MAXMEMORY") or DEFAULT_MAXMEMORY,
                    preexec=supervisor.die_with_parent(),
                )
            except RedisServerError as exc:
                return refuse(str(exc))
            env["REDIS_URL"] = server.url
            # Where `tabletop rebuild` (and other tools beside the stack) find this Redis.
            (data / "redis.url").write_text(server.url + "\n")
        if (problem := ensure_bot_secret(env)) is not None:
            return refuse(problem)
        if (problem := _migrate_store(env["REDIS_URL"])) is not None:
            return refuse(problem)
        # Every process's metrics under <data dir>/metrics, read by the gateway's /metrics;
        # a new stack starts from zero (a restarted child keeps counting, see observability).
        from shared import metrics_dir

        metrics_dir.clean_tree(data / "metrics")
        specs = supervisor.stack_specs(
            python=sys.executable,
            env=env,
            port=port,
            gateway_workers=gateway_workers,
            workers=workers,
            games=available_games(),
            gunicorn_conf=str(ROOT / "deploy" / "gunicorn.conf.py"),
            stack_id=str(os.getpid()),
            metrics_root=str(data / "metrics"),
        )
        if server is not None:
            specs.append(supervisor.ChildSpec("redis", server.start, supervisor.STORE))
        base = f"http://127.0.0.1:{port}"

        def announce() -> None:
            # What a newcomer opens first: the page, then the API's interactive docs.
            print(f"tabletop is running at {base}/  (the web page; API docs: {base}/docs)")
            print(
                f"Redis: {env['REDIS_URL']}; {workers} worker{'s' if workers > 1 else ''} per "
                "game type — Ctrl-C stops everything",
                flush=True,
            )

        # "Running" only once it answers: a newcomer's first request must not be a refusal.
        sup = supervisor.Supervisor(
            specs, readiness=supervisor.http_readiness(f"{base}/readyz"), on_ready=announce
        )
        if server is not None:
            sup.adopt("redis", server.proc)
        print(f"tabletop: starting; waiting for {base}/readyz", file=sys.stderr, flush=True)
        sup.run()
    except KeyboardInterrupt:
        pass
    finally:
        if server is not None:
            server.stop()
    return 0


def _port_taken(port: int) -> bool:
    """Whether something listens on ``port`` of loopback (gunicorn would fail to bind it, and
    the supervisor restart it forever)."""
    import socket

    with socket.socket() as s:
        # As gunicorn binds: a port with connections in TIME_WAIT counts as free.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


if __name__ == "__main__":
    sys.exit(main())
