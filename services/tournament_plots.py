"""``tabletop tournament ... --plots DIR``: the standings as PNG charts (head to head, ratings,
win rates, scores), drawn with matplotlib (the ``plots`` extra) on the Agg canvas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from services.tournament_request import CliError

PLOT_FILES = ("head_to_head.png", "ratings.png", "win_rates.png", "scores.png")
# The ratings' interval: 95%, as the tournament page and the ladder (``mu_ci``) draw it.
Z95 = 1.96
HEATMAP = "PuOr"  # the head-to-head's colour map: colour-blind-safe, diverging at 50%


def check_plots(directory: str | None) -> Path | None:
    """The plot directory, checked before any game is played (not after an hour of them)."""
    if directory is None:
        return None
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:  # `make run` installs the runtime only
        raise CliError(
            "--plots needs matplotlib, in the plots extra: run make plots in the checkout "
            "(it runs .venv/bin/python -m pip install -e '.[plots]')"
        )
    path = Path(directory)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"--plots {directory}: {exc.strerror or exc}") from None
    return path


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
    # Purple-white-orange (ColorBrewer's PuOr), read alike by colour-blind eyes (red-green is
    # not); 50% is white, as on the web page's heatmap.
    image = ax.imshow(rates, cmap=HEATMAP, vmin=0.0, vmax=1.0)
    for a in range(size):
        for b in range(size):
            cell = matrix[a][b]
            text = "—" if cell is None else f"{cell['rate']:.1%}\n{cell['games']} games"
            dark = cell is not None and abs(cell["rate"] - 0.5) > 0.3  # the deep ends
            ax.text(b, a, text, ha="center", va="center", fontsize=9,
                    color="white" if dark else "black")  # fmt: skip
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
        yerr=[Z95 * r["sigma"] for r in ratings],
        fmt="o",
        capsize=6,
        label="95% interval: mu ± 1.96 sigma",
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
