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
    from tabletop_client import ProblemError

    from shared.tournaments.plan import Plan

# Spelled out rather than imported from shared.tournaments.plan so that building the parser
# (every ``tabletop`` command) imports no engine; a unit test keeps the two equal.
FORMATS = ("round_robin", "duplicate", "gauntlet", "sprt")
LOCAL_MAX_GAMES = 1_000_000  # no service cap in process; this only bounds a typo
POLL_SECONDS = 0.5
HTTP_TIMEOUT = 30.0
PLOT_FILES = ("head_to_head.png", "ratings.png", "win_rates.png", "scores.png")
EXIT_SERVICE, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130
API_HELP = (
    "the service (default: TABLETOP_API, else http://127.0.0.1:$PORT, PORT defaulting to 8000)"
)

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
    run_p.add_argument("--game", required=True, help="the game type (GET /v1/game-types lists them)")
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
        "one deal; gauntlet: the candidate against each other entrant in duplicate pairs; "
        "sprt: two entrants (candidate, baseline) in duplicate pairs until the SPRT decides, "
        "--games being the cap (default: round_robin)",
    )
    run_p.add_argument(
        "--candidate", type=int, default=None, help="gauntlet: the candidate's index (default 0)"
    )
    run_p.add_argument(
        "--field",
        default=None,
        metavar="BOT",
        help="gauntlet and sprt: the bot of the other seats in games of more seats "
        "(default: random)",
    )
    run_p.add_argument(
        "--sprt",
        default=None,
        metavar="KEY=N[,KEY=N]",
        help="sprt: elo0, elo1, alpha, beta (default elo0=0,elo1=10,alpha=0.05,beta=0.05)",
    )
    run_p.add_argument("--players", type=int, default=None, help="seats a game")
    run_p.add_argument(
        "--seed",
        default=None,
        help="every game's seed derives from it (default: one drawn at random, printed so "
        "that the run can be repeated)",
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
    where.add_argument("--api", default=None, help=API_HELP)
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
    show_p.add_argument("--api", default=None, help=API_HELP)
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
    """``ismcts:iterations=200,heuristic`` -> checked bot specs; CliError names the bad one.
    ``mypkg.mod:MyBot`` names a bot-kit class (``services.kit_entrants``: ``--local`` only);
    ``bot_id=<id>`` a bot registered with ``POST /v1/bots`` (the service only)."""
    from services import kit_entrants
    from services.cli import parse_bot
    from shared.app import bots

    specs: list[dict[str, Any]] = []
    for n, item in enumerate(text.split(","), start=1):
        if not item.strip():
            raise CliError(f"--entrants: entrant {n} is empty (bots are separated by commas)")
        key, sep, bot_id = item.strip().partition("=")
        if key == "bot_id" and sep:  # a registered bot (POST /v1/bots): the service checks it
            if not bot_id.strip():
                raise CliError(f"--entrants: entrant {n} {item.strip()!r}: bot_id=<id>")
            specs.append({"bot_id": bot_id.strip()})
            continue
        try:
            kit = kit_entrants.kit_spec(item)
        except kit_entrants.KitBotError as exc:
            raise CliError(f"--entrants: entrant {n} {item.strip()!r}: {exc}") from None
        if kit is not None:
            specs.append(kit)
            continue
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
    # Drawn here, not by the plan or the service (which would keep it to itself), short enough
    # to print and type again: the rule `tabletop simulate` follows too.
    body["seed"] = args.seed if args.seed is not None else secrets.token_hex(8)
    options = parse_options(args.option)
    if options:
        body["options"] = options
    if getattr(args, "candidate", None) is not None:
        body["candidate"] = args.candidate
    if getattr(args, "field", None):
        (body["field"],) = parse_entrants(args.field)
    if getattr(args, "sprt", None):
        body["sprt"] = parse_sprt(args.sprt)
    return body


def parse_sprt(text: str) -> dict[str, float]:
    """``elo0=0,elo1=5`` -> ``{"elo0": 0.0, "elo1": 5.0}`` (the plan checks the keys)."""
    out: dict[str, float] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise CliError(f"--sprt {item!r} is not KEY=NUMBER (elo0, elo1, alpha, beta)")
    return out


def _api(args: argparse.Namespace) -> str:
    from services.cli import default_api

    api = (args.api or default_api()).rstrip("/")
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

    if importlib.util.find_spec("matplotlib") is None:  # `make run` installs the runtime only
        raise CliError(
            "--plots needs matplotlib, in the plots extra: .venv/bin/python -m pip install -e "
            "'.[plots]' in the checkout (or pip install 'tabletop[plots]')"
        )
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
    registered = [e["bot_id"] for e in body["entrants"] if "bot_id" in e]
    if args.local and registered:
        raise CliError(
            f"--entrants: bot_id={registered[0]} is a registered bot, played only by the "
            "service (drop --local)"
        )
    plots = _check_plots(args.plots)
    if args.local:
        return _run_local(body, args.jobs or os.cpu_count() or 1, plots)
    kits = [e["path"] for e in body["entrants"] if e.get("bot") == "kit"]
    if kits:
        raise CliError(
            f"--entrants: {kits[0]} is a bot-kit class, played only with --local (the service "
            "plays bots registered with POST /v1/bots)"
        )
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
    from services.kit_entrants import parse_plan
    from shared.tournaments.plan import PlanError, parse

    doc = dict(body)
    try:
        plan = parse_plan(doc, parse, max_games=LOCAL_MAX_GAMES)  # kit entrants: local only
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
    counted = report["progress"]["done"]  # an sprt match stops at its decision
    print(
        f"games: {counted}  draws: {report['draws']}  actions: {games.actions}  "
        f"seconds: {seconds:.2f}  games/s: {counted / max(seconds, 1e-9):.1f}  "
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
    from services.cli import default_api

    # The hint works as typed in this shell: --api only when it is not what this shell defaults to.
    later = f"tabletop tournament show {tid}" + ("" if api == default_api() else f" --api {api}")
    print(
        f"tournament {tid} started at {api}: {total} games, seed {body['seed']!r}", file=sys.stderr
    )
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
    print(
        f"tournament: {tid}  status: {doc['status']}  seed: {body['seed']}  see it again: {later}"
    )
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
    from services import kit_entrants
    from shared import games
    from shared.app import playout

    specs = plan.seat_specs(index)
    if any(kit_entrants.is_kit(spec) for spec in specs):  # a bot-kit class plays a seat
        played = kit_entrants.play(plan.game, specs, plan.options, plan.game_seed(index))
    else:
        played = playout.play(
            plan.game, specs, plan.options, plan.game_seed(index), keep_envelopes=False
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
        if plan.format == "sprt":
            from shared.tournaments import sprt

            self.tally["sprt"] = sprt.empty()
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

            seated = [e.spec for e in self.plan.entrants] + [self.plan.field]
            slow = any(
                bots.get(str(spec["bot"])).slow for spec in seated if spec.get("bot") in bots.BOTS
            )  # a kit class (bot "kit") is taken as quick
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

    @property
    def decided(self) -> bool:
        """Whether an sprt match's test has decided (no game after its pair counts)."""
        return bool((self.tally.get("sprt") or {}).get("result"))

    def __iter__(self) -> Iterator[int]:
        if self._pool is None:
            for i in range(self.plan.games):
                self._take([play_game(self.plan, i)])
                yield self.done
                if self.decided:
                    return
            return
        from concurrent.futures import as_completed

        for future in as_completed(self._futures):
            self._take(future.result())
            yield self.done
            if self.decided:  # the batches not started are dropped on exit
                return

    def _take(self, results: Sequence[GameResult]) -> None:
        from shared.tournaments import standings

        for result in results:
            self._pending[result[0]] = result
        self.done += len(results)
        if self.plan.format == "sprt":
            self._take_pairs()
            return
        while self._folded in self._pending:
            index, outcome, actions = self._pending.pop(self._folded)
            seating = self.plan.seating(index)
            standings.fold(self.tally, seating, outcome)
            for seat, entrant in enumerate(seating):
                if entrant is not None:
                    self.scores[entrant].append(outcome["scores"][seat])
            self.actions += actions
            self._folded += 1

    def _take_pairs(self) -> None:
        """An sprt match: count complete pairs in pair order until the test decides, as the
        service does (``sprt.fold_pair``)."""
        from shared.tournaments import sprt

        plan = self.plan
        test = plan.sprt or sprt.params(None)
        baseline = plan.opponents()[0]
        while not self.decided and {self._folded, self._folded + 1} <= self._pending.keys():
            pair = [self._pending.pop(self._folded + j) for j in (0, 1)]
            games = [(plan.seating(index), outcome) for index, outcome, _ in pair]
            sprt.fold_pair(self.tally, games, plan.candidate, baseline, test)
            for (_, outcome, actions), (seating, _) in zip(pair, games, strict=True):
                for seat, entrant in enumerate(seating):
                    if entrant is not None:
                        self.scores[entrant].append(outcome["scores"][seat])
                self.actions += actions
            self._folded += 2


def play_local(plan: Plan, jobs: int) -> LocalRun:
    """Play every game of ``plan`` in ``jobs`` processes; the finished run (tally, scores)."""
    with LocalRun(plan, jobs) as games:
        for _ in games:
            pass
    return games


def local_doc(plan: Plan, tally: Mapping[str, Any]) -> dict[str, Any]:
    """A finished local tournament in the shape of ``GET /v1/tournaments/{id}`` (the parts
    the report and the plots read), so both modes print the same way."""
    from shared.tournaments import sprt, standings
    from shared.tournaments.plan import spec_label

    entrants = [{"name": e.name, **e.spec} for e in plan.entrants]
    rendered = standings.render(tally, entrants)
    decided = bool((tally.get("sprt") or {}).get("result"))
    return {
        "game": plan.game,
        "format": plan.format,
        "players": plan.players,
        "options": dict(plan.options),
        "entrants": [
            {"entrant": i, "name": e.name, "spec": dict(e.spec), "label": spec_label(e.spec)}
            for i, e in enumerate(plan.entrants)
        ],
        "status": "finished" if tally["done"] >= plan.games or decided else "running",
        "progress": {"done": tally["done"], "total": plan.games},
        "standings": rendered["standings"],
        "ratings": rendered["ratings"],
        "head_to_head": rendered["head_to_head"] if plan.players == 2 else None,
        "pairwise": rendered["head_to_head"],
        "draws": rendered["draws"],
        "candidate": plan.candidate if plan.duel else None,
        "field": dict(plan.field) if plan.duel else None,
        "sprt": None
        if plan.format != "sprt"
        else sprt.render(tally["sprt"], plan.sprt or sprt.params(None)),
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
    """One JSON call to the service through the bot kit's client (``tabletop_client``).
    Every failure becomes a CliError with its one line."""
    from tabletop_client import Client, InvalidResponse, ProblemError, TransportError

    try:
        with Client(api, key, timeout=HTTP_TIMEOUT) as client:
            doc = client.request(method, path, dict(body) if body is not None else None)
    except ProblemError as exc:
        raise _refusal(exc, api, tournament) from None
    except TransportError as exc:  # refused, reset, timed out, or no URL at all
        raise CliError(f"cannot reach the service at {api}: {exc.reason}", EXIT_SERVICE) from None
    except InvalidResponse:
        doc = None
    if not isinstance(doc, dict):
        raise CliError(f"the service at {api} did not answer {method} {path} with JSON", 1)
    return doc


def fetch_tournament(api: str, key: str, tournament_id: str) -> dict[str, Any]:
    """``GET /v1/tournaments/{id}`` with a one-game page (the CLI reads no game list)."""
    from urllib.parse import quote

    path = f"/v1/tournaments/{quote(tournament_id, safe='')}?limit=1"
    return request(api, "GET", path, key, tournament=tournament_id)


def _refusal(exc: ProblemError, api: str, tournament: str | None) -> CliError:
    """The one line of an HTTP error answer (a problem body: title, detail, code, errors)."""
    status = exc.status
    if status in (401, 403):
        return CliError(f"the service refused the key: {exc.detail}", EXIT_SERVICE)
    if status == 404:
        what = f"unknown tournament {tournament}" if tournament else "not found"
        return CliError(f"{what} at {api}: {exc.detail}", EXIT_SERVICE)
    if status in (400, 422):
        return CliError(
            f"the service refused the tournament: {exc.detail}{_fields(exc.errors)}",
            EXIT_USAGE,
        )
    return CliError(
        f"the service at {api} answered {status} {exc.title}: {exc.detail}", EXIT_SERVICE
    )


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


def letter(index: int) -> str:
    """Entrant 0 -> ``A``, 25 -> ``Z``, 26 -> ``AA``: its short name in a narrow table."""
    out = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        out = chr(ord("A") + rest) + out
    return out


def print_report(doc: Mapping[str, Any], *, remote_id: str | None = None) -> None:
    """The standings table (and, for two-seat games, the head-to-head) on stdout.

    Where the whole table is wider than the terminal (80 columns, its eleven columns and an
    entrant's spec), rich would cut every cell (``ismc…``, ``75.…``): the entrants are then
    named by letters, explained in a legend, and the mean rank and ratings get a table of their
    own, so that no value is ever cut."""
    from rich.measure import Measurement
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
    placed = list(enumerate(doc.get("standings") or [], start=1))

    def cells(place: int, row: Mapping[str, Any], name: str) -> list[str]:
        ci = row.get("win_rate_ci")
        score, score_ci = row.get("mean_score"), row.get("mean_score_ci")
        if score is None:
            mean = "—"
        elif score_ci:
            mean = f"{score:.2f} ± {(score_ci[1] - score_ci[0]) / 2:.2f}"
        else:
            mean = f"{score:.2f}"
        rating = ratings.get(row["entrant"], {})
        return [
            str(place),
            name,
            str(row["games"]),
            f"{row['wins']:g}",
            _pct(row.get("win_rate")),
            f"{ci[0]:.1%}–{ci[1]:.1%}" if ci else "—",
            mean,
            _num(row.get("mean_rank")),
            _num(rating.get("mu")),
            _num(rating.get("sigma")),
            _num(rating.get("ordinal")),
        ]

    headers = ["#", "entrant", "games", "wins", "win rate", "95% CI", "mean score", "mean rank"]
    headers += ["mu", "sigma", "ordinal"]
    whole = [cells(place, row, str(row["name"])) for place, row in placed]

    def table(title: str | None, columns: Sequence[int], grid: Sequence[Sequence[str]]) -> Table:
        out = Table(title=title)
        for c in columns:
            # A value is as wide as it needs: only the headers may wrap (onto two lines).
            widest = max((len(r[c]) for r in grid), default=0)
            out.add_column(headers[c], justify="left" if c == 1 else "right", min_width=widest)
        for r in grid:
            out.add_row(*(r[c] for c in columns))
        return out

    full = table(title, range(len(headers)), whole)
    # Its natural width, not one clamped to the terminal's (which console.measure gives).
    natural = Measurement.get(console, console.options.update_width(10**6), full).maximum
    narrow = natural > console.width
    if not narrow:
        console.print(full)
    else:
        short = [cells(place, row, letter(int(row["entrant"]))) for place, row in placed]
        console.print(table(title, range(7), short))
        console.print(table("mean rank and ratings (openskill)", [0, 1, 7, 8, 9, 10], short))
    test = doc.get("sprt")
    if test:
        verdict = {"H1": "H1: the candidate is better", "H0": "H0: not better"}.get(
            str(test.get("result")), "undecided"
        )
        console.print(
            f"SPRT [{test['elo0']:g}, {test['elo1']:g}] after {test['pairs']} pairs: "
            f"LLR {test['llr']:.2f} in [{test['lower']:.2f}, {test['upper']:.2f}] — {verdict}",
            markup=False,
        )
    h2h = doc.get("head_to_head")
    if h2h:
        names = [letter(i) if narrow else str(n) for i, n in enumerate(h2h["names"])]
        grid = Table(title="head to head")
        grid.add_column("")
        for name in names:
            grid.add_column(name, justify="right", no_wrap=True)
        for name, row_cells in zip(names, h2h["matrix"], strict=True):
            grid.add_row(
                name,
                *("—" if c is None else f"{c['rate']:.1%} ({c['games']})" for c in row_cells),
            )
        console.print(grid)
        console.print(
            "(how often the row finished ahead of the column; ties count half; games in brackets)"
        )
    if narrow:  # the names in full, however long: rich folds a long line, never cuts it
        console.print("entrants:", markup=False)
        for i, entrant in enumerate(doc.get("entrants") or []):
            console.print(f"  {letter(i)}  {entrant.get('name')}", markup=False, overflow="fold")


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
    # Lazily: matplotlib is heavy and only in the plots (and dev) extra. The Agg canvas, not
    # pyplot, so no GUI backend is ever tried and no global figure state is kept.
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
