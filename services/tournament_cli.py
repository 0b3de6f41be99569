"""``tabletop tournament``: run a tournament of bot games and show its standings.

``tabletop tournament run`` plays either in this process tree (``--local``: every core, no
service) or on a running service (``POST /v1/tournaments``, then polling its progress);
``tabletop tournament show ID`` prints a service's tournament. Both print the same standings
table and, with ``--plots DIR``, write the same PNGs.

This module holds the commands: the parser and what each subcommand does, in order. The rest
has a module each: reading the command line and the one-line errors (``tournament_request``),
local play (``tournament_local``), the service's calls through the bot kit's client
(``tournament_service``), printing (``tournament_render``) and charts (``tournament_plots``).

Errors are one line on stderr: exit code 2 for a request that cannot work (a bad bot spec, a
game count the format cannot divide, a missing key), 1 when the service fails or refuses.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from services.cli_args import API_HELP, default_api, plain
from services.tournament_plots import check_plots, write_plots
from services.tournament_render import (
    print_report,
    progress_bar,
    report_plots,
    stderr_console,
)
from services.tournament_request import (
    EXIT_INTERRUPTED,
    EXIT_SERVICE,
    FORMATS,
    CliError,
    api_url,
    fields,
    organizer_key,
    request_body,
)
from services.tournament_service import create_tournament, fetch_tournament

POLL_SECONDS = 0.5
PLOTS_HELP = (
    "write PNG charts here (head_to_head, ratings, win_rates, scores); needs matplotlib: "
    "make plots in the checkout"
)


# --- the parser ----------------------------------------------------------------------------


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``tournament run`` and ``tournament show`` to the ``tabletop`` subcommands."""
    tournament = sub.add_parser(
        "tournament",
        help="run a tournament of bot games (locally or on the service) and show standings",
        description=plain(__doc__.split("\n\n")[0]) if __doc__ else None,
    )
    actions = tournament.add_subparsers(dest="tournament_cmd", required=True)

    run_p = actions.add_parser(
        "run",
        help="play a tournament and print its standings",
        description="Play every game of a tournament, with a progress bar, then print the "
        "standings. --local plays in this machine's processes; otherwise the service at --api "
        "plays it (Ctrl-C stops watching, not the tournament).",
    )
    run_p.add_argument(
        "--game", required=True, help="the game type (GET /v1/game-types lists them)"
    )
    run_p.add_argument(
        "--entrants",
        required=True,
        metavar="BOT[,BOT...]",
        help="comma-separated entrants, counted from 0 as the API counts them, each one of: "
        "a built-in bot NAME or NAME:KEY=N[:KEY=N] (e.g. ismcts:iterations=200,heuristic,"
        "random); module.path:ClassName, a bot-kit class (tabletop_client.Bot) played in "
        "process, --local only; bot_id=ID, a bot registered with POST /v1/bots, played by "
        "the service only. Each is named by its spec",
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
        "--candidate",
        type=int,
        default=None,
        help="gauntlet and sprt: the candidate's index in --entrants, counted from 0 (default 0)",
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
    run_p.add_argument(
        "--players", type=int, default=None, help="seats a game (default: the game's fewest)"
    )
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
    run_p.add_argument("--plots", default=None, metavar="DIR", help=PLOTS_HELP)

    show_p = actions.add_parser("show", help="print a service's tournament and its standings")
    show_p.add_argument("id", help="the tournament id (what tournament run printed)")
    show_p.add_argument("--api", default=None, help=API_HELP)
    show_p.add_argument(
        "--key",
        default=None,
        help="an organizer or auditor key (default: TABLETOP_ORGANIZER_KEY, the first of "
        "TABLETOP_ORGANIZER_KEYS, else TABLETOP_AUDITOR_KEY)",
    )
    show_p.add_argument("--plots", default=None, metavar="DIR", help=PLOTS_HELP)


def run(args: argparse.Namespace) -> int:
    """Run ``tabletop tournament run|show``; returns the exit code (errors: one line)."""
    try:
        if args.tournament_cmd == "run":
            return _run(args)
        return _show(args)
    except CliError as exc:
        print(f"tabletop tournament {args.tournament_cmd}: {exc.message}", file=sys.stderr)
        return exc.code


# --- run and show ----------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    if args.jobs is not None and not args.local:
        raise CliError("--jobs only applies to --local")
    if args.jobs is not None and args.jobs < 1:
        raise CliError("--jobs must be at least 1")
    if args.games < 1:
        raise CliError("--games must be a positive integer")
    body = request_body(args)
    registered = [e["bot_id"] for e in body["entrants"] if "bot_id" in e]
    if args.local and registered:
        raise CliError(
            f"--entrants: bot_id={registered[0]} is a registered bot, played only by the "
            "service (drop --local)"
        )
    plots = check_plots(args.plots)
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
    return _run_remote(body, api_url(args), key, plots)


def _show(args: argparse.Namespace) -> int:
    api = api_url(args)
    key = args.key or organizer_key() or os.environ.get("TABLETOP_AUDITOR_KEY")
    if not key:
        raise CliError(
            "an organizer or auditor key is needed (--key, TABLETOP_ORGANIZER_KEY, "
            "TABLETOP_ORGANIZER_KEYS or TABLETOP_AUDITOR_KEY)"
        )
    plots = check_plots(args.plots)
    doc = fetch_tournament(api, key, args.id)
    print_report(doc, remote_id=args.id)
    if plots is not None:
        report_plots(write_plots(doc, plots))
    return 0


def _run_local(body: Mapping[str, Any], jobs: int, plots: Path | None) -> int:
    from services.kit_entrants import parse_plan
    from services.tournament_local import LOCAL_MAX_GAMES, LocalRun, local_doc
    from shared.tournaments.plan import PlanError, parse

    doc = dict(body)
    try:
        plan = parse_plan(doc, parse, max_games=LOCAL_MAX_GAMES)  # kit entrants: local only
    except PlanError as exc:
        raise CliError(exc.detail + fields(exc.errors)) from None
    jobs = max(1, min(jobs, plan.games))
    stderr = stderr_console()
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
        with games, progress_bar(stderr) as bar:
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
        report_plots(write_plots(report, plots, scores=games.scores))
    return 0


def _run_remote(body: Mapping[str, Any], api: str, key: str, plots: Path | None) -> int:
    stderr = stderr_console()
    try:
        created = create_tournament(api, key, body)
    except KeyboardInterrupt:
        print("interrupted before the service answered", file=sys.stderr)
        return EXIT_INTERRUPTED
    tid = str(created["id"])
    total = int(created.get("progress", {}).get("total") or body["games"])
    # The hint works as typed in this shell: --api only when it is not what this shell defaults to.
    later = f"tabletop tournament show {tid}" + ("" if api == default_api() else f" --api {api}")
    print(
        f"tournament {tid} started at {api}: {total} games, seed {body['seed']!r}", file=sys.stderr
    )
    doc: dict[str, Any] = created
    try:
        with progress_bar(stderr) as bar:
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
        report_plots(write_plots(doc, plots))
    if doc["status"] == "cancelled":
        done = doc["progress"]["done"]
        print(f"tournament {tid} was cancelled after {done} of {total} games", file=sys.stderr)
        return EXIT_SERVICE
    return 0
