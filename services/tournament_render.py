"""``tabletop tournament``: what it prints with rich: the progress bar while games are played,
then the standings table (with the head-to-head and an SPRT's verdict), the same for a local
run and a service's tournament (both are documents shaped as ``GET /v1/tournaments/{id}``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress


def stderr_console() -> Console:
    """The console of the progress bar: stderr, so that stdout holds the report alone."""
    from rich.console import Console

    return Console(stderr=True)


def _stdout_console() -> Console:
    from rich.console import Console

    console = Console()
    # A pipe or a file has no width; rich would assume 80 columns and fold the table.
    return console if console.is_terminal else Console(width=200)


def progress_bar(console: Console) -> Progress:
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
        # Numbered and ordered by rating (best ordinal first, as the service sorts them), not
        # by the standings above: its `#` is the entrant's place among the ratings.
        by_rating = [
            cells(place, row, letter(int(row["entrant"])))
            for place, row in enumerate(_by_rating(doc), start=1)
        ]
        console.print(
            table("ratings (openskill), best ordinal first", [0, 1, 8, 9, 10, 7], by_rating)
        )
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


def _by_rating(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The standings rows in rating order: best ordinal first (ties: entrant order), the
    entrants without a rating last."""
    ordinal = {r["entrant"]: r["ordinal"] for r in doc.get("ratings") or []}
    rows = list(doc.get("standings") or [])
    return sorted(
        rows,
        key=lambda r: (r["entrant"] not in ordinal, -ordinal.get(r["entrant"], 0.0), r["entrant"]),
    )


def report_plots(paths: Sequence[Path]) -> None:
    """A line on stdout for every chart written."""
    for path in paths:
        print(f"wrote {path}")
