"""Issue 37 (item 6): ``tabletop``'s help reads as plain text and leaves no option unexplained.

Every parser of the command line (``services.cli.build_parser``: ``run``, ``simulate``,
``tournament run``...) is walked: no reStructuredText markup (double backticks) in any help,
every option and positional argument has help text, and ``--entrants`` names all three kinds
of entrant and how they are counted."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from services.cli import build_parser, main


def parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ("tabletop",)
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``("tabletop tournament run", its parser)`` for the parser and every subcommand's."""
    yield " ".join(path), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from parsers(child, (*path, name))


ALL = list(parsers(build_parser()))


def test_every_subcommand_is_walked() -> None:
    names = {name for name, _ in ALL}
    for expected in ("tabletop run", "tabletop simulate", "tabletop tournament run",
                     "tabletop tournament show", "tabletop audit", "tabletop bots rotate-secret"):  # fmt: skip
        assert expected in names


@pytest.mark.parametrize("name,parser", ALL, ids=[name for name, _ in ALL])
def test_no_help_shows_rst_markup(name: str, parser: argparse.ArgumentParser) -> None:
    text = parser.format_help()
    assert "``" not in text, f"{name} --help shows RST markup:\n{text}"


@pytest.mark.parametrize("name,parser", ALL, ids=[name for name, _ in ALL])
def test_every_option_has_help(name: str, parser: argparse.ArgumentParser) -> None:
    missing = [
        "/".join(action.option_strings) or action.dest
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
        and not (action.help or "").strip()
    ]
    assert missing == [], f"{name}: no help for {missing}"


def test_the_help_printed_at_the_terminal_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--help"], ["tournament", "--help"], ["simulate", "--help"]):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 0
        out = capsys.readouterr().out
        assert "``" not in out and out.strip(), argv


def _option(path: str, flag: str) -> argparse.Action:
    parser = dict(ALL)[path]
    [action] = [a for a in parser._actions if flag in a.option_strings]
    return action


def test_entrants_help_names_every_kind_of_entrant() -> None:
    text = " ".join(str(_option("tabletop tournament run", "--entrants").help).split())
    assert "module.path:ClassName" in text and "--local only" in text
    assert "bot_id=ID" in text and "POST /v1/bots" in text
    assert "counted from 0" in text


@pytest.mark.parametrize(
    "path,flag",
    [
        ("tabletop simulate", "--game"),
        ("tabletop simulate", "--games"),
        ("tabletop simulate", "--players"),
        ("tabletop simulate", "--option"),
        ("tabletop run", "--port"),
    ],
)
def test_the_options_the_issue_named_are_explained(path: str, flag: str) -> None:
    assert len(str(_option(path, flag).help)) > 15


# --- what `tabletop tournament` prints and draws ---------------------------------------------

# Standings (best win rate first) and ratings (best ordinal first) in different orders: the
# entrant 2 leads the standings, the entrant 0 the ratings.
DOC = {
    "game": "fox",
    "format": "round_robin",
    "players": 2,
    "status": "finished",
    "progress": {"done": 60, "total": 60},
    "entrants": [{"name": n} for n in ("alpha-entrant-long", "beta-entrant-long", "gamma-long")],
    "standings": [
        {
            "entrant": e,
            "name": n,
            "games": 40,
            "wins": w,
            "win_rate": w / 40,
            "win_rate_ci": [w / 40 - 0.1, w / 40 + 0.1],
            "mean_score": 1.0,
            "mean_score_ci": [0.8, 1.2],
            "mean_rank": r,
        }
        for e, n, w, r in (
            (2, "gamma-long", 24, 1.4),
            (0, "alpha-entrant-long", 20, 1.5),
            (1, "beta-entrant-long", 16, 1.6),
        )
    ],  # fmt: skip
    "ratings": [
        {"entrant": 0, "name": "alpha-entrant-long", "mu": 27.0, "sigma": 1.5, "ordinal": 22.5},
        {"entrant": 2, "name": "gamma-long", "mu": 26.0, "sigma": 1.5, "ordinal": 21.5},
        {"entrant": 1, "name": "beta-entrant-long", "mu": 22.0, "sigma": 2.0, "ordinal": 16.0},
    ],
    "pairwise": {
        "names": ["alpha-entrant-long", "beta-entrant-long", "gamma-long"],
        "matrix": [
            [None, {"rate": 0.9, "games": 20}, {"rate": 0.5, "games": 20}],
            [{"rate": 0.1, "games": 20}, None, {"rate": 0.4, "games": 20}],
            [{"rate": 0.5, "games": 20}, {"rate": 0.6, "games": 20}, None],
        ],
    },
}


def test_the_ratings_table_is_numbered_in_rating_order(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 37: the ratings table's `#` followed the standings. At 80 columns the ratings have
    # a table of their own, in rating order and numbered by it (A leads, C second, B last).
    from rich.console import Console

    from services import tournament_render

    monkeypatch.setattr(tournament_render, "_stdout_console", lambda: Console(width=80))
    tournament_render.print_report(DOC)
    out = capsys.readouterr().out
    ratings = out.split("ratings (openskill)", 1)[1]
    rows = [line.split() for line in ratings.splitlines() if line.strip()[:1] == "│"]
    numbered = [(r[1], r[3]) for r in rows if len(r) > 3 and r[1].isdigit()]
    assert numbered == [("1", "A"), ("2", "C"), ("3", "B")], ratings


def _figures(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> dict[str, object]:
    """Every figure ``write_plots`` saves, by file name."""
    pytest.importorskip("matplotlib")
    from pathlib import Path

    from matplotlib.figure import Figure

    from services import tournament_plots

    saved: dict[str, object] = {}

    def savefig(self: Figure, path: object, **_: object) -> None:
        saved[Path(str(path)).name] = self

    monkeypatch.setattr(Figure, "savefig", savefig)
    tournament_plots.write_plots(DOC, Path(str(tmp_path)))
    return saved


def test_ratings_png_draws_the_95_percent_interval(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    # It drew mu ± 3 sigma, where the page and the README say 95%: mu ± 1.96 sigma.
    fig = _figures(monkeypatch, tmp_path)["ratings.png"]
    (ax,) = fig.axes  # type: ignore[attr-defined]
    (bars,) = ax.containers
    segments = bars.lines[2][0].get_segments()
    for segment, rating in zip(segments, DOC["ratings"], strict=True):  # type: ignore[call-overload]
        (_, low), (_, high) = segment
        assert high - low == pytest.approx(2 * 1.96 * rating["sigma"])
    assert "1.96" in " ".join(t.get_text() for t in ax.get_legend().get_texts())


def test_head_to_head_png_is_colour_blind_safe(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    fig = _figures(monkeypatch, tmp_path)["head_to_head.png"]
    ax = fig.axes[0]  # type: ignore[attr-defined]
    (image,) = ax.images
    name = image.get_cmap().name
    # Red-yellow-green (or any red-green map) is what colour-blind readers cannot read.
    assert name in ("PuOr", "PuOr_r", "RdBu", "RdBu_r", "viridis", "cividis"), name
