"""``tabletop tournament``: local tournaments end to end, their standings against a sequential
fold of the same games, plots, one-line errors, and the remote mode against a stub HTTP server
(the service itself is covered by the integration tests)."""

from __future__ import annotations

import concurrent.futures
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from services import (
    tournament_cli,
    tournament_local,
    tournament_plots,
    tournament_render,
    tournament_request,
)
from services.cli import main
from shared.app import playout
from shared.games import get as engine_of
from shared.tournaments import plan as plans
from shared.tournaments import standings

PNG = b"\x89PNG\r\n\x1a\n"
FOX = ["--game", "fox", "--option", "target=1"]


@pytest.fixture(autouse=True)
def _no_service_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "TABLETOP_API",
        "PORT",
        "TABLETOP_ORGANIZER_KEY",
        "TABLETOP_ORGANIZER_KEYS",
        "TABLETOP_AUDITOR_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


def rows(out: str) -> dict[str, list[str]]:
    """The standings table's rows by entrant name: ``[#, entrant, games, wins, ...]``."""
    table: dict[str, list[str]] = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if len(cells) == 11 and cells[0].isdigit():
            table[cells[1]] = cells
    return table


def sequential(plan: plans.Plan) -> tuple[dict[str, Any], list[list[float]]]:
    """The plan's games played one after the other and folded by hand."""
    engine = engine_of(plan.game)
    tally = standings.empty(len(plan.entrants))
    scores: list[list[float]] = [[] for _ in plan.entrants]
    for i in range(plan.games):
        played = playout.play(
            plan.game, plan.seat_specs(i), plan.options, plan.game_seed(i), keep_envelopes=False
        )
        outcome = engine.outcome(played.record.state)
        assert outcome is not None
        standings.fold(tally, plan.seating(i), outcome)
        for seat, e in enumerate(plan.seating(i)):
            scores[e].append(outcome["scores"][seat])
    return tally, scores


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_formats_match_the_plan() -> None:
    assert tournament_request.FORMATS == plans.FORMATS


def test_the_tournament_command_is_modules_of_one_job_each() -> None:
    # Issue 27: the parser and commands, reading the command line, local play, the service's
    # calls, printing and charts each a module of its own, none over 400 lines.
    here = Path(tournament_cli.__file__).parent
    sizes = {p.stem: len(p.read_text().splitlines()) for p in here.glob("tournament_*.py")}
    assert set(sizes) >= {
        "tournament_cli",
        "tournament_request",
        "tournament_local",
        "tournament_service",
        "tournament_render",
        "tournament_plots",
    }
    assert max(sizes.values()) <= 400, sizes


def test_local_run_prints_standings_and_writes_plots(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["tournament", "run", "--local", "--jobs", "2", *FOX, "--entrants", "heuristic,random"]
    argv += ["--games", "8", "--format", "duplicate", "--seed", "unit", "--plots", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    table = rows(out)
    assert set(table) == {"heuristic", "random"}
    assert [table[n][2] for n in ("heuristic", "random")] == ["8", "8"]
    assert "games: 8 " in out
    assert "head to head" in out
    # The printed wins are those of the same games folded by hand.
    plan = plans.parse(
        {
            "game": "fox",
            "entrants": [{"bot": "heuristic"}, {"bot": "random"}],
            "games": 8,
            "format": "duplicate",
            "seed": "unit",
            "options": {"target": 1},
        }
    )
    tally, _ = sequential(plan)
    for e, name in enumerate(("heuristic", "random")):
        assert float(table[name][3]) == pytest.approx(tally["entrants"][e]["wins"])
    for name in tournament_plots.PLOT_FILES:
        path = tmp_path / name
        assert path.read_bytes().startswith(PNG), name
        assert str(path) in out


def test_local_standings_equal_a_sequential_fold(monkeypatch: pytest.MonkeyPatch) -> None:
    # Three entrants, batches of one game on two processes: games finish out of order, and
    # the ratings (folded in order) would differ if the parent folded them as they came.
    plan = plans.parse(
        {
            "game": "fox",
            "entrants": [{"bot": "heuristic"}, {"bot": "random"}, {"bot": "random"}],
            "games": 12,
            "format": "duplicate",
            "seed": "fold",
            "options": {"target": 1},
        }
    )
    run = tournament_local.play_local(plan, jobs=2)
    tally, scores = sequential(plan)
    assert run.tally == tally
    assert run.scores == scores
    assert tournament_local.play_local(plan, jobs=1).tally == tally
    # The worst order of arrival, every time: the last batch first.
    monkeypatch.setattr(concurrent.futures, "as_completed", lambda fs: list(fs)[::-1])
    run = tournament_local.play_local(plan, jobs=2)
    assert run.tally == tally
    assert run.scores == scores


@pytest.mark.parametrize(
    ("entrants", "games", "needle"),
    [
        ("heuristic,nosuch", "2", "entrants[1] 'nosuch'"),  # counted from 0, as the API
        ("ismcts:iterations=0", "2", "iterations"),
        ("random:depth", "2", "is not KEY=N"),
        ("heuristic,random,random", "5", "try 6"),
    ],
)
def test_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], entrants: str, games: str, needle: str
) -> None:
    argv = ["tournament", "run", "--local", *FOX, "--entrants", entrants, "--games", games]
    assert main([*argv, "--players", "2"]) == 2
    captured = capsys.readouterr()
    assert needle in one_line(captured.err)
    assert captured.out == ""


def test_bad_option_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tournament", "run", "--local", "--game", "fox", "--entrants", "heuristic,random"]
    assert main([*argv, "--games", "2", "--option", "target=one"]) == 2
    assert "not JSON" in one_line(capsys.readouterr().err)


def test_unreachable_service_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    argv = ["tournament", "run", *FOX, "--entrants", "heuristic,random", "--games", "2"]
    assert main([*argv, "--api", url, "--key", "k"]) == 1
    assert one_line(capsys.readouterr().err).endswith(
        f"cannot reach the service at {url}: [Errno 111] Connection refused"
    )


def test_remote_run_needs_a_key(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tournament", "run", *FOX, "--entrants", "heuristic,random", "--games", "2"]
    assert main(argv) == 2
    assert "organizer key is needed" in one_line(capsys.readouterr().err)


def test_organizer_key_defaults() -> None:
    assert tournament_request.organizer_key({"TABLETOP_ORGANIZER_KEYS": " a , b"}) == "a"
    assert (
        tournament_request.organizer_key(
            {"TABLETOP_ORGANIZER_KEY": "k", "TABLETOP_ORGANIZER_KEYS": "a"}
        )
        == "k"
    )
    assert tournament_request.organizer_key({}) is None


# --- the remote mode against a stub ------------------------------------------------------------


class Stub(BaseHTTPRequestHandler):
    """Answers from ``script``: (method, path prefix) -> list of (status, body), one each call
    (the last repeats); records every request."""

    script: ClassVar[dict[tuple[str, str], list[tuple[int, Any]]]] = {}
    seen: ClassVar[list[tuple[str, str, str | None, Any]]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        self.seen.append((self.command, self.path, self.headers.get("Authorization"), body))
        for (method, prefix), answers in self.script.items():
            if method == self.command and self.path.startswith(prefix):
                status, doc = answers.pop(0) if len(answers) > 1 else answers[0]
                break
        else:
            status, doc = 404, {"title": "Not Found", "detail": "no route", "errors": {}}
        raw = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(tournament_cli, "POLL_SECONDS", 0.01)
    Stub.script, Stub.seen = {}, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def finished_doc() -> dict[str, Any]:
    """What the service answers for a finished 2-game tournament (from a local fold)."""
    plan = plans.parse(
        {
            "game": "fox",
            "entrants": [{"bot": "heuristic"}, {"bot": "random"}],
            "games": 2,
            "seed": "remote",
            "options": {"target": 1},
        }
    )
    doc = tournament_local.local_doc(plan, sequential(plan)[0])
    return {**doc, "id": "t1"}


def test_remote_run_polls_until_finished(
    stub: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    done = finished_doc()
    running = {**done, "status": "running", "progress": {"done": 1, "total": 2}}
    Stub.script = {
        ("POST", "/v1/tournaments"): [(201, {"id": "t1", "progress": {"done": 0, "total": 2}})],
        ("GET", "/v1/tournaments/t1"): [(200, running), (200, done)],
    }
    argv = ["tournament", "run", *FOX, "--entrants", "heuristic,random", "--games", "2"]
    assert main([*argv, "--api", stub, "--key", "org", "--plots", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert set(rows(out)) == {"heuristic", "random"}
    assert "tournament: t1" in out and "tabletop tournament show t1" in out
    method, path, auth, body = Stub.seen[0]
    assert (method, path, auth) == ("POST", "/v1/tournaments", "Bearer org")
    # The seed rule simulate follows too: one drawn unless given, sent, and printed so that
    # the tournament can be run again exactly.
    seed = body.pop("seed")
    assert len(seed) == 16 and int(seed, 16) >= 0
    assert f"seed: {seed}" in out
    assert body == {
        "game": "fox",
        "entrants": [{"bot": "heuristic"}, {"bot": "random"}],
        "games": 2,
        "format": "round_robin",
        "options": {"target": 1},
    }
    assert [s[0] for s in Stub.seen[1:]] == ["GET", "GET"]
    assert (tmp_path / "scores.png").read_bytes().startswith(PNG)


def test_remote_refusals_are_one_line(stub: str, capsys: pytest.CaptureFixture[str]) -> None:
    problem: dict[str, Any] = {
        "title": "Unprocessable Content",
        "detail": "round_robin with 3 entrants and 2 seats plays whole cycles of 6 games",
        "code": "tournament/invalid",
        "errors": {"games": "a multiple of 6"},
    }
    Stub.script = {("POST", "/v1/tournaments"): [(422, problem)]}
    argv = ["tournament", "run", *FOX, "--entrants", "heuristic,random,random", "--games", "5"]
    assert main([*argv, "--api", stub, "--key", "org"]) == 2
    line = one_line(capsys.readouterr().err)
    assert problem["detail"] in line and "(games: a multiple of 6)" in line

    Stub.script = {("POST", "/v1/tournaments"): [(403, {"detail": "this needs an organizer key"})]}
    assert main([*argv, "--api", stub, "--key", "nope"]) == 1
    assert "the service refused the key: this needs" in one_line(capsys.readouterr().err)


def test_show(stub: str, capsys: pytest.CaptureFixture[str]) -> None:
    Stub.script = {("GET", "/v1/tournaments/t1"): [(200, finished_doc())]}
    assert main(["tournament", "show", "t1", "--api", stub, "--key", "aud"]) == 0
    assert [r[2] for r in rows(capsys.readouterr().out).values()] == ["2", "2"]

    Stub.script = {("GET", "/v1/tournaments/"): [(404, {"detail": "no tournament t9"})]}
    assert main(["tournament", "show", "t9", "--api", stub, "--key", "aud"]) == 1
    assert "unknown tournament t9" in one_line(capsys.readouterr().err)


def test_the_service_is_tabletop_api_else_the_port_make_run_listens_on(
    stub: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    Stub.script = {("GET", "/v1/tournaments/t1"): [(200, finished_doc())]}
    # PORT alone, as `PORT=8123 make run` was started: http://127.0.0.1:$PORT.
    monkeypatch.setenv("PORT", stub.rsplit(":", 1)[1])
    assert main(["tournament", "show", "t1", "--key", "aud"]) == 0
    assert set(rows(capsys.readouterr().out)) == {"heuristic", "random"}
    # TABLETOP_API wins over PORT.
    monkeypatch.setenv("PORT", str(free_port()))
    monkeypatch.setenv("TABLETOP_API", stub + "/")
    assert main(["tournament", "show", "t1", "--key", "aud"]) == 0
    capsys.readouterr()
    # `tournament run` too, and its "see it again" hint needs no --api for the default service.
    monkeypatch.delenv("TABLETOP_API")
    monkeypatch.setenv("PORT", stub.rsplit(":", 1)[1])
    Stub.script[("POST", "/v1/tournaments")] = [(201, {"id": "t1", "progress": {"total": 2}})]
    argv = ["tournament", "run", *FOX, "--entrants", "heuristic,random", "--games", "2"]
    assert main([*argv, "--key", "org", "--seed", "s"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("see it again: tabletop tournament show t1"), out


# --- bot-kit classes as local entrants ----------------------------------------------------------

KIT = "tests.unit.kit_bots:FirstLegal"


def test_a_kit_bot_class_plays_a_local_tournament_from_its_seats_view(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.unit.kit_bots import FirstLegal

    FirstLegal.views.clear()
    FirstLegal.endings.clear()
    argv = ["tournament", "run", "--local", "--jobs", "1", *FOX, "--entrants", f"{KIT},heuristic"]
    assert main([*argv, "--games", "4", "--format", "duplicate", "--seed", "kit"]) == 0
    table = rows(capsys.readouterr().out)
    assert set(table) == {KIT, "heuristic"} and table[KIT][2] == "4"
    # It moved from its own seat's view: its hand, no other hand, the legal commands.
    assert FirstLegal.views and all(v["seat"] in v["to_act"] for v in FirstLegal.views)
    assert all("hand" in v and "hands" not in v for v in FirstLegal.views)
    assert [m["seat"] for m in FirstLegal.endings] == [0, 1, 0, 1]  # seats alternate
    # The same games played by hand: its seat chose the first legal command each time.
    plan = plans.parse(
        {"game": "fox", "entrants": [{"bot": "random"}, {"bot": "heuristic"}], "games": 4,
         "format": "duplicate", "seed": "kit", "options": {"target": 1}}
    )  # fmt: skip
    wins = 0.0
    for i in range(4):
        kit_seat = plan.seating(i).index(0)
        specs = plan.seat_specs(i)
        specs[kit_seat] = {"name": "kit"}

        def first(record: Any, seat: int, kit_seat: int = kit_seat) -> Any:
            if seat != kit_seat:
                return None
            return "k", engine_of("fox").command_to_json(
                engine_of("fox").legal_commands(record.state, seat)[0]
            )

        played = playout.play("fox", specs, {"target": 1}, plan.game_seed(i), chooser=first)
        outcome = engine_of("fox").outcome(played.record.state)
        assert outcome is not None
        wins += 1 / len(outcome["winners"]) if kit_seat in outcome["winners"] else 0
    assert float(table[KIT][3]) == pytest.approx(wins)


def test_a_kit_bot_plays_in_worker_processes_too(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tournament", "run", "--local", "--jobs", "2", *FOX, "--entrants", f"random,{KIT}"]
    assert main([*argv, "--games", "4", "--seed", "kit2"]) == 0
    assert rows(capsys.readouterr().out)[KIT][2] == "4"


@pytest.mark.parametrize(
    ("entrant", "needle", "code"),
    [
        ("nosuch_pkg.mod:Bot", "cannot import nosuch_pkg", 2),
        ("tests.unit.kit_bots:Missing", "has no class Missing", 2),
        ("tests.unit.kit_bots:Cheater", "not one of its legal_commands", 1),
    ],
)
def test_a_kit_bot_that_cannot_play_is_one_line(
    capsys: pytest.CaptureFixture[str], entrant: str, needle: str, code: int
) -> None:
    argv = ["tournament", "run", "--local", "--jobs", "1", *FOX, "--games", "2"]
    assert main([*argv, "--entrants", f"{entrant},random"]) == code
    err = capsys.readouterr().err
    if code == 2:  # refused before any game
        assert needle in one_line(err)
    else:  # the game that failed ends the run, after the header and the progress bar
        assert "Traceback" not in err and needle in err.strip().splitlines()[-1], err


def test_a_kit_bot_is_never_sent_to_the_service(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tournament", "run", *FOX, "--entrants", f"{KIT},random", "--games", "2"]
    assert main([*argv, "--api", "http://127.0.0.1:9", "--key", "org"]) == 2
    assert "only with --local" in one_line(capsys.readouterr().err)


def test_a_registered_bot_entrant_is_spelt_bot_id_and_refused_locally() -> None:
    assert tournament_request.parse_entrants("bot_id=ab12,random") == [
        {"bot_id": "ab12"},
        {"bot": "random"},
    ]
    with pytest.raises(tournament_request.CliError):
        tournament_request.parse_entrants("bot_id=")


def test_plots_without_matplotlib_name_the_plots_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # `make run` installs the runtime alone: matplotlib comes with the `plots` extra.
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "matplotlib" else real(name, *a),
    )
    argv = ["tournament", "run", "--local", *FOX, "--entrants", "heuristic,random"]
    assert main([*argv, "--games", "2", "--plots", str(tmp_path / "p")]) == 2
    line = one_line(capsys.readouterr().err)
    assert "--plots needs matplotlib" in line and "'.[plots]'" in line, line
    assert not (tmp_path / "p").exists()  # refused before anything was played or made


def test_the_standings_fit_80_columns_with_names_whole_in_a_legend(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 25: at 80 columns rich cut every cell (`ismc…`, `75.…`). A table too wide for the
    # terminal names the entrants by letters with a legend and splits off the ratings; no
    # value is ever cut.
    from rich.console import Console

    plan = plans.parse(
        {
            "game": "fox",
            "entrants": [
                {"bot": "ismcts", "iterations": 20},
                {"bot": "heuristic"},
                {"name": "a-rather-long-entrant-name", "bot": "random"},
            ],
            "games": 6,
            "seed": "narrow",
            "options": {"target": 1},
        }
    )
    doc = tournament_local.local_doc(plan, sequential(plan)[0])
    monkeypatch.setattr(tournament_render, "_stdout_console", lambda: Console(width=80))
    tournament_render.print_report(doc)
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80, out
    assert "…" not in out, out
    for name in ("ismcts:iterations=20", "heuristic", "a-rather-long-entrant-name"):
        assert name in out, out  # whole, in the legend
    for row in doc["standings"]:
        ci = row["win_rate_ci"]
        assert f"{ci[0]:.1%}–{ci[1]:.1%}" in out
        assert f"{row['mean_rank']:.2f}" in out
    for rating in doc["ratings"]:
        assert f"{rating['ordinal']:.2f}" in out and f"{rating['sigma']:.2f}" in out

    # Where the whole table fits (a pipe: 200 columns), it is one table with the names.
    monkeypatch.setattr(tournament_render, "_stdout_console", lambda: Console(width=200))
    tournament_render.print_report(doc)
    assert set(rows(capsys.readouterr().out)) == {e.name for e in plan.entrants}
