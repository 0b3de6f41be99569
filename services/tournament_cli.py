"""``tabletop tournament``: run a tournament of bot games and show its standings.

``tabletop tournament run`` plays either in this process tree (``--local``: every core, no
service) or on a running service (``POST /v1/tournaments``, then polling its progress);
``tabletop tournament show ID`` prints a service's tournament. Both print the same standings
table and, with ``--plots DIR``, write the same PNGs.

Local games are the service's games: the plan (``shared.tournaments.plan``) gives each game its
seats and seed, and the one play-out driver (``shared.app.playout.play``) plays it, so a local
tournament and the service's from the same request and seed have the same wins, scores, ranks
and head-to-head. The parent folds outcomes into ``shared.tournaments.standings`` in game
order, which makes local ratings reproducible; the service folds games as its workers finish
them (openskill updates depend on the order) and replays the ratings in game order once the
last game is in, so a finished tournament's ratings equal the local run's.

Errors are one line on stderr: exit code 2 for a request that cannot work (a bad bot spec, a
game count the format cannot divide, a missing key), 1 when the service fails or refuses.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from rich.console import Console
    from rich.progress import Progress

    from shared.tournaments.plan import Plan

DEFAULT_API = "http://127.0.0.1:8000"
# Spelled out rather than imported from shared.tournaments.plan so that building the parser
# (every ``tabletop`` command) imports no engine; a unit test keeps the two equal.
FORMATS = ("round_robin", "duplicate")
LOCAL_MAX_GAMES = 1_000_000  # no service cap in process; this only bounds a typo
POLL_SECONDS = 0.5
HTTP_TIMEOUT = 30.0
PLOT_FILES = ("head_to_head.png", "ratings.png", "win_rates.png", "scores.png")
EXIT_SERVICE, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130

# (game index, outcome {scores, winners, ranks, draw}, actions): what a worker sends back
GameResult = tuple[int, dict[str, Any], int]


class CliError(Exception):
    """A failure reported as one line on stderr, with the exit code to return."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = " ".join(message.split())  # one line, whatever the service sent
        self.code = code


# --- the parser ----------------------------------------------------------------------------


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``tournament run`` and ``tournament show`` to the ``tabletop`` subcommands."""
    tournament = sub.add_parser(
        "tournament",
        help="run a tournament of bot games (locally or on the service) and show standings",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    actions = tournament.add_subparsers(dest="tournament_cmd", required=True)

    run_p = actions.add_parser(
        "run",
        help="play a tournament and print its standings",
        description="Play every game of a tournament, with a progress bar, then print the "
        "standings. --local plays in this machine's processes; otherwise the service at --api "
        "plays it (Ctrl-C stops watching, not the tournament).",
    )
    run_p.add_argument("--game", required=True, help="the game type, e.g. fox")
    run_p.add_argument(
        "--entrants",
        required=True,
        metavar="BOT[,BOT...]",
        help="comma-separated bots, each NAME or NAME:KEY=N[:KEY=N] "
        "(e.g. ismcts:iterations=200,heuristic,random); each is named by its spec",
    )
    run_p.add_argument(
        "--games",
        type=int,
        required=True,
        help="games to play: whole cycles of C(entrants, players) * players",
    )
    run_p.add_argument(
        "--format",
        choices=FORMATS,
        default="round_robin",
        help="round_robin: every game its own deal; duplicate: the seatings of a group share "
        "one deal (default: round_robin)",
    )
    run_p.add_argument("--players", type=int, default=None, help="seats a game")
    run_p.add_argument(
        "--seed", default=None, help="every game's seed derives from it (default: random)"
    )
    run_p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="a game option, e.g. target=1 (repeatable)",
    )
    where = run_p.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true", help="play in process (no service needed)")
    where.add_argument(
        "--api", default=None, help=f"the service (default: TABLETOP_API, else {DEFAULT_API})"
    )
    run_p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="with --local: worker processes (default: every core)",
    )
    run_p.add_argument(
        "--key",
        default=None,
        help="an organizer key (default: TABLETOP_ORGANIZER_KEY, else the first of "
        "TABLETOP_ORGANIZER_KEYS)",
    )
    run_p.add_argument("--plots", default=None, metavar="DIR", help="write PNG charts here")

    show_p = actions.add_parser("show", help="print a service's tournament and its standings")
    show_p.add_argument("id", help="the tournament id (what `tournament run` printed)")
    show_p.add_argument(
        "--api", default=None, help=f"the service (default: TABLETOP_API, else {DEFAULT_API})"
    )
    show_p.add_argument(
        "--key",
        default=None,
        help="an organizer or auditor key (default: TABLETOP_ORGANIZER_KEY, the first of "
        "TABLETOP_ORGANIZER_KEYS, else TABLETOP_AUDITOR_KEY)",
    )
    show_p.add_argument("--plots", default=None, metavar="DIR", help="write PNG charts here")


def run(args: argparse.Namespace) -> int:
    """Run ``tabletop tournament run|show``; returns the exit code (errors: one line)."""
    try:
        if args.tournament_cmd == "run":
            return _run(args)
        return _show(args)
    except CliError as exc:
        print(f"tabletop tournament {args.tournament_cmd}: {exc.message}", file=sys.stderr)
        return exc.code


# --- reading the command line ----------------------------------------------------------------


def parse_entrants(text: str) -> list[dict[str, Any]]:
    """``ismcts:iterations=200,heuristic`` -> checked bot specs; CliError names the bad one."""
    from services.cli import parse_bot
    from shared.app import bots

    specs = []
    for n, item in enumerate(text.split(","), start=1):
        if not item.strip():
            raise CliError(f"--entrants: entrant {n} is empty (bots are separated by commas)")
        try:
            spec = parse_bot(item)
            bots.parse_spec(spec)
        except bots.BotSpecError as exc:
            raise CliError(
                f"--entrants: entrant {n} {item.strip()!r}: {exc}; bots: {', '.join(bots.names())}"
            ) from None
        except ValueError as exc:
            raise CliError(f"--entrants: entrant {n} {item.strip()!r}: {exc}") from None
        specs.append(spec)
    return specs


def parse_options(items: Sequence[str]) -> dict[str, Any]:
    """``["target=1", "first_dealer=0"]`` -> ``{"target": 1, "first_dealer": 0}``."""
    options: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--option {item!r} is not KEY=JSON")
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            raise CliError(
                f"--option {item!r}: the value is not JSON (a string needs quotes: "
                f"{key.strip()}='\"{value}\"')"
            ) from None
    return options


def _body(args: argparse.Namespace) -> dict[str, Any]:
    """The ``POST /v1/tournaments`` body of the command line (the local plan reads it too)."""
    body: dict[str, Any] = {
        "game": args.game,
        "entrants": parse_entrants(args.entrants),
        "games": args.games,
        "format": args.format,
    }
    if args.players is not None:
        body["players"] = args.players
    if args.seed is not None:
        body["seed"] = args.seed
    options = parse_options(args.option)
    if options:
        body["options"] = options
    return body


def _api(args: argparse.Namespace) -> str:
    api = (args.api or os.environ.get("TABLETOP_API") or DEFAULT_API).rstrip("/")
    if not api.startswith(("http://", "https://")):
        raise CliError(f"--api {api!r} is not an http:// or https:// URL")
    return api


def organizer_key(env: Mapping[str, str] | None = None) -> str | None:
    """``TABLETOP_ORGANIZER_KEY``, else the first of ``TABLETOP_ORGANIZER_KEYS`` (the
    service's own list, so a shell that starts the service can also drive it)."""
    env = os.environ if env is None else env
    if env.get("TABLETOP_ORGANIZER_KEY"):
        return env["TABLETOP_ORGANIZER_KEY"]
    keys = [k.strip() for k in env.get("TABLETOP_ORGANIZER_KEYS", "").split(",") if k.strip()]
    return keys[0] if keys else None


def _check_plots(directory: str | None) -> Path | None:
    """The plot directory, checked before any game is played (not after an hour of them)."""
    if directory is None:
        return None
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise CliError("--plots needs matplotlib (pip install matplotlib)")
    path = Path(directory)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"--plots {directory}: {exc.strerror or exc}") from None
    return path


# --- run and show ----------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    if args.jobs is not None and not args.local:
        raise CliError("--jobs only applies to --local")
    if args.jobs is not None and args.jobs < 1:
        raise CliError("--jobs must be at least 1")
    if args.games < 1:
        raise CliError("--games must be a positive integer")
    body = _body(args)
    plots = _check_plots(args.plots)
    if args.local:
        return _run_local(body, args.jobs or os.cpu_count() or 1, plots)
    key = args.key or organizer_key()
    if not key:
        raise CliError(
            "an organizer key is needed (--key, TABLETOP_ORGANIZER_KEY or "
            "TABLETOP_ORGANIZER_KEYS), or play with --local"
        )
    return _run_remote(body, _api(args), key, plots)


def _show(args: argparse.Namespace) -> int:
    api = _api(args)
    key = args.key or organizer_key() or os.environ.get("TABLETOP_AUDITOR_KEY")
    if not key:
        raise CliError(
            "an organizer or auditor key is needed (--key, TABLETOP_ORGANIZER_KEY, "
            "TABLETOP_ORGANIZER_KEYS or TABLETOP_AUDITOR_KEY)"
        )
    plots = _check_plots(args.plots)
    doc = fetch_tournament(api, key, args.id)
    print_report(doc, remote_id=args.id)
    if plots is not None:
        _report_plots(write_plots(doc, plots))
    return 0


def _run_local(body: Mapping[str, Any], jobs: int, plots: Path | None) -> int:
    from shared.tournaments.plan import PlanError, parse

    doc = dict(body)
    # Chosen here rather than by the plan so that it is short enough to print and type again.
    doc.setdefault("seed", secrets.token_hex(8))
    try:
        plan = parse(doc, max_games=LOCAL_MAX_GAMES)
    except PlanError as exc:
        raise CliError(exc.detail + _fields(exc.errors)) from None
    jobs = max(1, min(jobs, plan.games))
    stderr = _stderr_console()
    # print, not rich: a pipe's 80 columns would fold the line
    print(
        f"{plan.game} {plan.format}: {len(plan.entrants)} entrants, {plan.players} seats, "
        f"{plan.games} games, seed {plan.seed!r}, {jobs} process{'es' if jobs > 1 else ''}",
        file=sys.stderr,
    )
    start = time.perf_counter()
    games = LocalRun(plan, jobs)
    try:
        # The workers start before the progress bar's refresh thread: forking a process
        # that runs other threads can copy a lock held by one of them.
        with games, _progress(stderr) as bar:
            task = bar.add_task(f"{plan.game} {plan.format}", total=plan.games)
            for done in games:
                bar.update(task, completed=done)
    except KeyboardInterrupt:
        print(
            f"interrupted after {games.done} of {plan.games} games; nothing was kept",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except Exception as exc:  # a game that failed in a worker: one line, not its traceback
        raise CliError(f"a game failed: {type(exc).__name__}: {exc}", EXIT_SERVICE) from None
    seconds = time.perf_counter() - start
    report = local_doc(plan, games.tally)
    print_report(report)
    print(
        f"games: {plan.games}  draws: {report['draws']}  actions: {games.actions}  "
        f"seconds: {seconds:.2f}  games/s: {plan.games / max(seconds, 1e-9):.1f}  "
        f"seed: {plan.seed}"
    )
    if plots is not None:
        _report_plots(write_plots(report, plots, scores=games.scores))
    return 0


def _run_remote(body: Mapping[str, Any], api: str, key: str, plots: Path | None) -> int:
    stderr = _stderr_console()
    try:
        created = request(api, "POST", "/v1/tournaments", key, body)
    except KeyboardInterrupt:
        print("interrupted before the service answered", file=sys.stderr)
        return EXIT_INTERRUPTED
    tid = str(created["id"])
    total = int(created.get("progress", {}).get("total") or body["games"])
    later = f"tabletop tournament show {tid}" + ("" if api == DEFAULT_API else f" --api {api}")
    print(f"tournament {tid} started at {api}: {total} games", file=sys.stderr)
    doc: dict[str, Any] = created
    try:
        with _progress(stderr) as bar:
            task = bar.add_task(f"{tid} {body['game']} {body['format']}", total=total)
            while True:
                asked = time.monotonic()
                doc = fetch_tournament(api, key, tid)
                bar.update(task, completed=int(doc["progress"]["done"]))
                if doc["status"] in ("finished", "cancelled"):
                    break
                time.sleep(max(0.0, POLL_SECONDS - (time.monotonic() - asked)))
    except KeyboardInterrupt:
        print(
            f"stopped watching tournament {tid}; the service plays on. See it later with: {later}",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    print_report(doc, remote_id=tid)
    print(f"tournament: {tid}  status: {doc['status']}  see it again: {later}")
    if plots is not None:
        _report_plots(write_plots(doc, plots))
    if doc["status"] == "cancelled":
        done = doc["progress"]["done"]
        print(f"tournament {tid} was cancelled after {done} of {total} games", file=sys.stderr)
        return EXIT_SERVICE
    return 0


# --- local play --------------------------------------------------------------------------------

_WORKER_PLAN: Plan | None = None


def _init_worker(plan_doc: Mapping[str, Any]) -> None:
    """Each worker rebuilds the plan once, so a batch is sent as its game indexes only."""
    import signal

    from shared.tournaments.plan import Plan

    global _WORKER_PLAN
    _WORKER_PLAN = Plan.from_doc(plan_doc)
    # Ctrl-C is the parent's to handle: workers would each print a KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _play_batch(indexes: Sequence[int]) -> list[GameResult]:
    assert _WORKER_PLAN is not None, "the pool's initializer sets the plan"
    return [play_game(_WORKER_PLAN, i) for i in indexes]


def play_game(plan: Plan, index: int) -> GameResult:
    """Game ``index`` of ``plan``, played as the service's task plays it (same seats, seed and
    options) but without sealing envelopes: only its outcome travels back."""
    from shared import games
    from shared.app import playout

    played = playout.play(
        plan.game,
        plan.seat_specs(index),
        plan.options,
        plan.game_seed(index),
        keep_envelopes=False,
    )
    outcome = games.get(plan.game).outcome(played.record.state)
    assert outcome is not None, "a play-out ends with an outcome"
    small = {
        "scores": list(outcome["scores"]),
        "winners": list(outcome["winners"]),
        "ranks": list(outcome["ranks"]),
        "draw": bool(outcome.get("draw")),
    }
    return index, small, played.actions


def batches(total: int, jobs: int, *, slow: bool = False) -> list[list[int]]:
    """Game indexes in batches: about eight a worker, so the pool stays busy to the end and
    the bar moves, but at most 32 games each, so one result is never large; one game each
    when a bot searches (``slow``), whose games take long enough to hide the overhead."""
    size = 1 if slow else max(1, min(32, -(-total // (jobs * 8))))
    return [list(range(i, min(i + size, total))) for i in range(0, total, size)]


class LocalRun:
    """The games of a plan played in ``jobs`` processes (in this one for ``jobs == 1``) and
    folded into a tally in game order, whatever order they finish in: ratings depend on the
    order of games, and this one is the service's and a sequential fold's.

    As a context manager it starts the workers on entry; iterating yields the number of
    games finished after each batch; then ``tally``, ``scores`` (per entrant, its score in
    each game, in game order) and ``actions`` hold the results.
    """

    def __init__(self, plan: Plan, jobs: int) -> None:
        from shared.tournaments import standings

        self.plan = plan
        self.jobs = max(1, jobs)
        self.tally: dict[str, Any] = standings.empty(len(plan.entrants))
        self.scores: list[list[float]] = [[] for _ in plan.entrants]
        self.actions = 0
        self.done = 0
        self._folded = 0
        self._pending: dict[int, GameResult] = {}
        self._pool: ProcessPoolExecutor | None = None
        self._futures: list[Future[list[GameResult]]] = []

    def __enter__(self) -> LocalRun:
        if self.jobs > 1:
            from concurrent.futures import ProcessPoolExecutor

            from shared.app import bots

            slow = any(bots.get(str(e.spec["bot"])).slow for e in self.plan.entrants)
            work = batches(self.plan.games, self.jobs, slow=slow)
            self._pool = ProcessPoolExecutor(
                max_workers=min(self.jobs, len(work)),
                initializer=_init_worker,
                initargs=(self.plan.to_doc(),),
            )
            # With the fork start method the first submit starts every worker: now, before
            # the caller starts any thread.
            self._futures = [self._pool.submit(_play_batch, b) for b in work]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            # After an error or Ctrl-C the queued batches are dropped; running ones end soon.
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __iter__(self) -> Iterator[int]:
        if self._pool is None:
            for i in range(self.plan.games):
                self._take([play_game(self.plan, i)])
                yield self.done
            return
        from concurrent.futures import as_completed

        for future in as_completed(self._futures):
            self._take(future.result())
            yield self.done

    def _take(self, results: Sequence[GameResult]) -> None:
        from shared.tournaments import standings

        for result in results:
            self._pending[result[0]] = result
        self.done += len(results)
        while self._folded in self._pending:
            index, outcome, actions = self._pending.pop(self._folded)
            seating = self.plan.seating(index)
            standings.fold(self.tally, seating, outcome)
            for seat, entrant in enumerate(seating):
                self.scores[entrant].append(outcome["scores"][seat])
            self.actions += actions
            self._folded += 1


def play_local(plan: Plan, jobs: int) -> LocalRun:
    """Play every game of ``plan`` in ``jobs`` processes; the finished run (tally, scores)."""
    with LocalRun(plan, jobs) as games:
        for _ in games:
            pass
    return games


def local_doc(plan: Plan, tally: Mapping[str, Any]) -> dict[str, Any]:
    """A finished local tournament in the shape of ``GET /v1/tournaments/{id}`` (the parts
    the report and the plots read), so both modes print the same way."""
    from shared.tournaments import standings
    from shared.tournaments.plan import spec_label

    entrants = [{"name": e.name, **e.spec} for e in plan.entrants]
    rendered = standings.render(tally, entrants)
    return {
        "game": plan.game,
        "format": plan.format,
        "players": plan.players,
        "options": dict(plan.options),
        "entrants": [
            {"entrant": i, "name": e.name, "spec": dict(e.spec), "label": spec_label(e.spec)}
            for i, e in enumerate(plan.entrants)
        ],
        "status": "finished" if tally["done"] >= plan.games else "running",
        "progress": {"done": tally["done"], "total": plan.games},
        "standings": rendered["standings"],
        "ratings": rendered["ratings"],
        "head_to_head": rendered["head_to_head"] if plan.players == 2 else None,
        "pairwise": rendered["head_to_head"],
        "draws": rendered["draws"],
    }


# --- the service -----------------------------------------------------------------------------


def request(
    api: str,
    method: str,
    path: str,
    key: str | None,
    body: Mapping[str, Any] | None = None,
    *,
    tournament: str | None = None,
) -> dict[str, Any]:
    """One JSON call to the service (standard library only: ``requests`` is not a runtime
    dependency). Every failure becomes a CliError with its one line."""
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    headers = {"Accept": "application/json"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    if key:
        headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(api + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT) as resp:
            raw = resp.read()
    except urllib.error.HTTPError as exc:  # before URLError: it is one
        raise _refusal(exc, api, tournament) from None
    except urllib.error.URLError as exc:
        raise CliError(f"cannot reach the service at {api}: {exc.reason}", EXIT_SERVICE) from None
    except OSError as exc:  # a reset or a timeout once connected
        raise CliError(f"cannot reach the service at {api}: {exc}", EXIT_SERVICE) from None
    try:
        doc = json.loads(raw)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise CliError(f"the service at {api} did not answer {method} {path} with JSON", 1)
    return doc


def fetch_tournament(api: str, key: str, tournament_id: str) -> dict[str, Any]:
    """``GET /v1/tournaments/{id}`` with a one-game page (the CLI reads no game list)."""
    from urllib.parse import quote

    return request(
        api, "GET", f"/v1/tournaments/{quote(tournament_id)}?limit=1", key, tournament=tournament_id
    )


def _refusal(exc: Any, api: str, tournament: str | None) -> CliError:
    """The one line of an HTTP error answer (a problem body: title, detail, code, errors)."""
    try:
        problem = json.loads(exc.read() or b"{}")
    except (ValueError, OSError):
        problem = {}
    if not isinstance(problem, dict):
        problem = {}
    status = int(exc.code)
    detail = str(problem.get("detail") or problem.get("title") or exc.reason or "")
    if status in (401, 403):
        return CliError(f"the service refused the key: {detail}", EXIT_SERVICE)
    if status == 404:
        what = f"unknown tournament {tournament}" if tournament else "not found"
        return CliError(f"{what} at {api}: {detail}", EXIT_SERVICE)
    if status in (400, 422):
        return CliError(
            f"the service refused the tournament: {detail}{_fields(problem.get('errors'))}",
            EXIT_USAGE,
        )
    title = problem.get("title") or exc.reason
    return CliError(f"the service at {api} answered {status} {title}: {detail}", EXIT_SERVICE)


def _fields(errors: Any) -> str:
    """`` (field: reason; field: reason)`` from a PlanError's or a problem body's errors."""
    if not errors:
        return ""
    if isinstance(errors, Mapping):
        parts = [
            f"{k or 'request'}: {'; '.join(map(str, v)) if isinstance(v, list) else v}"
            for k, v in errors.items()
        ]
    else:
        parts = [str(errors)]
    return " (" + ", ".join(parts) + ")"


# --- printing ----------------------------------------------------------------------------------


def _stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def _stdout_console() -> Console:
    from rich.console import Console

    console = Console()
    # A pipe or a file has no width; rich would assume 80 columns and fold the table.
    return console if console.is_terminal else Console(width=200)


def _progress(console: Console) -> Progress:
    """A bar with done/total, games a second, elapsed time and the ETA."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """Games finished a second (rich's own speed column counts bytes)."""

        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(
                f"{speed:.1f} games/s" if speed else "– games/s", style="progress.data.speed"
            )

    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def print_report(doc: Mapping[str, Any], *, remote_id: str | None = None) -> None:
    """The standings table (and, for two-seat games, the head-to-head) on stdout."""
    from rich.table import Table

    console = _stdout_console()
    progress = doc.get("progress") or {}
    done, total = progress.get("done", 0), progress.get("total", 0)
    who = f"tournament {remote_id}: " if remote_id else ""
    title = (
        f"{who}{doc.get('game')} {doc.get('format')}, {doc.get('players')} seats — "
        f"{doc.get('status')}, {done} of {total} games"
    )
    ratings = {r["entrant"]: r for r in doc.get("ratings") or []}
    table = Table(title=title)
    table.add_column("#", justify="right")
    table.add_column("entrant")
    table.add_column("games", justify="right")
    table.add_column("wins", justify="right")
    table.add_column("win rate", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("mean score", justify="right")
    table.add_column("mean rank", justify="right")
    table.add_column("mu", justify="right")
    table.add_column("sigma", justify="right")
    table.add_column("ordinal", justify="right")
    for place, row in enumerate(doc.get("standings") or [], start=1):
        ci = row.get("win_rate_ci")
        score, score_ci = row.get("mean_score"), row.get("mean_score_ci")
        if score is None:
            mean = "—"
        elif score_ci:
            mean = f"{score:.2f} ± {(score_ci[1] - score_ci[0]) / 2:.2f}"
        else:
            mean = f"{score:.2f}"
        rating = ratings.get(row["entrant"], {})
        table.add_row(
            str(place),
            str(row["name"]),
            str(row["games"]),
            f"{row['wins']:g}",
            _pct(row.get("win_rate")),
            f"{ci[0]:.1%}–{ci[1]:.1%}" if ci else "—",
            mean,
            _num(row.get("mean_rank")),
            _num(rating.get("mu")),
            _num(rating.get("sigma")),
            _num(rating.get("ordinal")),
        )
    console.print(table)
    h2h = doc.get("head_to_head")
    if h2h:
        names = h2h["names"]
        grid = Table(title="head to head")
        grid.add_column("")
        for name in names:
            grid.add_column(str(name), justify="right")
        for name, cells in zip(names, h2h["matrix"], strict=True):
            grid.add_row(
                str(name),
                *("—" if c is None else f"{c['rate']:.1%} ({c['games']})" for c in cells),
            )
        console.print(grid)
        console.print(
            "(how often the row finished ahead of the column; ties count half; games in brackets)"
        )


def _report_plots(paths: Sequence[Path]) -> None:
    for path in paths:
        print(f"wrote {path}")


# --- plots -------------------------------------------------------------------------------------


def write_plots(
    doc: Mapping[str, Any], directory: Path, *, scores: Sequence[Sequence[float]] | None = None
) -> list[Path]:
    """``head_to_head.png``, ``ratings.png``, ``win_rates.png`` and ``scores.png`` in
    ``directory``; ``scores`` (per entrant index, every game's score) draws box plots, else the
    mean scores with their intervals. Returns the paths written."""
    # Lazily: matplotlib is heavy and only a dev dependency. The Agg canvas, not pyplot,
    # so no GUI backend is ever tried and no global figure state is kept.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    def figure(n: int, height: float = 4.8) -> Figure:
        fig = Figure(figsize=(max(6.4, 1.1 * n + 2.5), height), layout="constrained")
        FigureCanvasAgg(fig)
        return fig

    def save(fig: Figure, name: str) -> Path:
        path = directory / name
        try:
            fig.savefig(path, dpi=120)
        except OSError as exc:
            raise CliError(f"--plots: cannot write {path}: {exc.strerror or exc}") from None
        return path

    game = f"{doc.get('game')} {doc.get('format')}"
    done = (doc.get("progress") or {}).get("done", 0)
    where = f"{game}, {done} games"
    rows = list(doc.get("standings") or [])
    names = [str(r["name"]) for r in rows]
    # Slanted labels once they would run into each other under their columns.
    tilt = 30 if sum(len(n) + 2 for n in names) > 45 else 0
    written = []

    # Head to head: the pairwise matrix of any seat count.
    pairwise = doc.get("pairwise") or doc.get("head_to_head") or {"names": [], "matrix": []}
    labels, matrix = [str(n) for n in pairwise["names"]], pairwise["matrix"]
    size = len(labels)
    fig = figure(size, height=max(4.8, 0.9 * size + 2))
    ax = fig.add_subplot()
    rates = [[float("nan") if c is None else c["rate"] for c in row] for row in matrix]
    image = ax.imshow(rates, cmap="RdYlGn", vmin=0.0, vmax=1.0)
    for a in range(size):
        for b in range(size):
            cell = matrix[a][b]
            text = "—" if cell is None else f"{cell['rate']:.1%}\n{cell['games']} games"
            ax.text(b, a, text, ha="center", va="center", fontsize=9)
    ax.set_xticks(range(size), labels, rotation=tilt, ha="right" if tilt else "center")
    ax.set_yticks(range(size), labels)
    ax.set_xlabel("opponent")
    ax.set_ylabel("entrant")
    ax.set_title(f"Head to head ({where}):\nhow often the entrant finished ahead of the opponent")
    fig.colorbar(
        image, ax=ax, shrink=0.8, label="finished ahead (ties count half)", format="{x:.0%}"
    )
    written.append(save(fig, "head_to_head.png"))

    # Ratings, best ordinal first (the order the service sorts them in).
    ratings = list(doc.get("ratings") or [])
    fig = figure(len(ratings))
    ax = fig.add_subplot()
    xs = range(len(ratings))
    mus = [r["mu"] for r in ratings]
    ax.errorbar(
        xs,
        mus,
        yerr=[3 * r["sigma"] for r in ratings],
        fmt="o",
        capsize=6,
        label="mu ± 3 sigma",
    )
    ax.scatter(
        xs,
        [r["ordinal"] for r in ratings],
        marker="_",
        s=400,
        color="black",
        zorder=3,
        label="ordinal = mu − 3 sigma (sorted by it)",
    )
    ax.set_xticks(list(xs), [str(r["name"]) for r in ratings], rotation=tilt)
    ax.set_xlim(-0.5, len(ratings) - 0.5)  # room for the caps of the first and last
    ax.set_ylabel("rating (openskill Plackett-Luce)")
    ax.set_title(f"Ratings ({where}), best first")
    ax.legend(loc="best")
    ax.grid(axis="y", alpha=0.3)
    written.append(save(fig, "ratings.png"))

    # Win rates with their 95% Wilson intervals, and the rate of equal players.
    fig = figure(len(rows))
    ax = fig.add_subplot()
    xs = range(len(rows))
    win = [r["win_rate"] or 0.0 for r in rows]
    cis = [r.get("win_rate_ci") or [0.0, 0.0] for r in rows]
    low = [max(0.0, w - ci[0]) for w, ci in zip(win, cis, strict=True)]
    high = [max(0.0, ci[1] - w) for w, ci in zip(win, cis, strict=True)]
    ax.bar(xs, win, yerr=[low, high], capsize=6, color="tab:blue", alpha=0.8)
    players = int(doc.get("players") or 2)
    ax.axhline(1 / players, color="grey", linestyle="--", label=f"equal players (1/{players})")
    for x, w in zip(xs, win, strict=True):
        ax.text(x, w / 2, f"{w:.1%}", ha="center", va="center", color="white", fontsize=9)
    ax.set_xticks(list(xs), names, rotation=tilt)
    ax.set_ylim(0, 1)
    ax.yaxis.set_major_formatter("{x:.0%}")
    ax.set_ylabel("win rate (shared wins count as fractions)")
    ax.set_title(f"Win rates with 95% intervals (Wilson) ({where})")
    ax.legend(loc="upper right")
    ax.grid(axis="y", alpha=0.3)
    written.append(save(fig, "win_rates.png"))

    # Scores: every game's score when this process played them, else the service's means.
    fig = figure(len(rows))
    ax = fig.add_subplot()
    if scores is not None:
        ax.boxplot([list(scores[r["entrant"]]) for r in rows], showmeans=True)
        ax.set_xticks(range(1, len(rows) + 1), names, rotation=tilt)
        ax.set_title(f"Score per game ({where})\nbox: middle half, line: median, triangle: mean")
    else:
        means = [r["mean_score"] if r["mean_score"] is not None else 0.0 for r in rows]
        intervals = [r.get("mean_score_ci") for r in rows]
        down = [m - ci[0] if ci else 0.0 for m, ci in zip(means, intervals, strict=True)]
        up = [ci[1] - m if ci else 0.0 for m, ci in zip(means, intervals, strict=True)]
        ax.errorbar(range(len(rows)), means, yerr=[down, up], fmt="o", capsize=6)
        ax.set_xticks(range(len(rows)), names, rotation=tilt)
        ax.set_xlim(-0.5, len(rows) - 0.5)
        ax.set_title(
            f"Mean score per game with 95% interval ({where})\n"
            "(the service does not list per-game scores: no distribution)"
        )
    ax.set_ylabel("score")
    ax.grid(axis="y", alpha=0.3)
    written.append(save(fig, "scores.png"))
    return written
