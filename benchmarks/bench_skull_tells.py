"""Does a Skull bot's public bidding give its stack away? A spectator's predictor, measured.

Games are played in process through the one play-out driver (``shared.app.playout.play``, the
games ``tabletop simulate`` plays: game ``i`` of seed ``S`` has seed ``S:i``). At every bidding
decision of a measured seat (an opening bid during placing, a raise, a pass) the public
features of the moment are read from the spectator's view (its bid, the bid before it, discs on
the table, its stack and hand sizes, round, wins, discs, ...), and the label from the full
state: does its own stack hold a skull?

The predictor is the best of a few simple ones: for a cell of public features (a few feature
sets, coarse to fine), predict the label most often seen in that cell on the training games
(a cell never seen: the training games' majority). Games are split into ``folds`` by index,
each fold predicted from the others; the accuracy is pooled over the folds, and the best
feature set's is the figure (picking the best on the test folds favours the predictor, which
is the cautious side). The base rate is what needs none of the bot's bidding: the higher of
the majority label and the same predictor on public facts the bidding does not choose (discs
owned, wins, whether its skull is known to be gone, players in). A bot whose public choices
carry nothing about its stack keeps every predictor at the base rate, up to noise.

The measured bot is the heuristic by default: every seat plays it and every seat is measured.
``--bot SPEC`` (the CLI's spelling: ``ismcts:iterations=100``) measures another bot: in game
``i`` seat ``i mod players`` plays it (no seat's first-player luck counts more than another's)
and the other seats the heuristic, as in the default run.

The intervals are 95% ones, normal over games (a game's decisions are not independent of each
other, so the variance is taken between games' sums): of the best predictor's accuracy, and of
its gain over the base rate (both figures on the same decisions, so the gain's is paired). They
count the folds' noise only: picking the best feature set is not in them.

Run: ``python benchmarks/bench_skull_tells.py --games 400 --players 4 [--bot SPEC]
[--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import machine  # noqa: E402
from services.cli_args import parse_bot  # noqa: E402
from shared.app import bots as registry  # noqa: E402
from shared.app.playout import play  # noqa: E402
from shared.games import skull  # noqa: E402
from shared.match.record import GameRecord  # noqa: E402
from shared.tournaments.plan import spec_label  # noqa: E402

HEURISTIC: Mapping[str, Any] = {"bot": "heuristic"}
# A normal interval's half-width in standard errors (95%).
Z95 = 1.96

# Cells of public features, coarse to fine. ``kind`` is open / raise / pass; ``jump`` is the
# bid's rise over the standing bid. The last set adds what is public but not chosen by the
# bidding (discs, wins, whether everyone knows it still owns a skull).
FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "bid": ("kind", "bid"),
    "bid+stack": ("kind", "bid", "stack"),
    "jump+stack+table": ("kind", "jump", "stack", "table"),
    "bid+stack+hand+table": ("kind", "bid", "stack", "hand", "table"),
    "bidding": ("kind", "bid", "prev_bid", "stack", "hand", "table", "others_in"),
    "all": (
        "kind",
        "bid",
        "prev_bid",
        "stack",
        "hand",
        "table",
        "others_in",
        "discs",
        "wins",
        "known",
    ),
    "all+round": (
        "kind",
        "bid",
        "prev_bid",
        "stack",
        "hand",
        "table",
        "others_in",
        "discs",
        "wins",
        "known",
        "round",
    ),
}
# What is public but no choice of the bidding: how far the public state alone predicts.
CONTEXT: tuple[str, ...] = ("discs", "wins", "known", "players_in")


@dataclass(frozen=True, slots=True)
class Decision:
    """One bidding decision of a measured seat: the game it was in, its public features, and
    whether the seat's own stack held a skull."""

    game: int
    features: Mapping[str, Any]
    skull: bool


def public_features(record: GameRecord, seat: int, command: Any) -> dict[str, Any] | None:
    """The spectator-visible features of ``seat``'s bidding decision ``command`` (None for any
    other command): read from the spectator's view only."""
    if isinstance(command, skull.Bid):
        doc = skull.view(record.state, None)
        kind, bid = ("open" if doc["phase"] == skull.PLACING else "raise"), command.count
    elif isinstance(command, skull.Pass):
        doc = skull.view(record.state, None)
        kind, bid = "pass", 0
    else:
        return None
    me = doc["players"][seat]
    return {
        "kind": kind,
        "bid": bid,
        "prev_bid": doc["bid"],
        "jump": bid - doc["bid"] if bid else 0,
        "table": doc["table"],
        "stack": me["stack_size"],
        "hand": me["hand_size"],
        "discs": me["discs"],
        "wins": me["wins"],
        "known": me["known_skull"],
        "round": doc["round"],
        "others_in": sum(
            1
            for p in doc["players"]
            if p["seat"] != seat and not p["eliminated"] and not p["passed"]
        ),
        "players_in": sum(1 for p in doc["players"] if not p["eliminated"]),
    }


def seating(
    bot: Mapping[str, Any], players: int, game: int
) -> tuple[list[dict[str, Any]], set[int]]:
    """The seat specs of game ``game`` and its measured seats: with the heuristic measured every
    seat plays it and is measured; another bot plays seat ``game mod players``, the others the
    heuristic."""
    if dict(bot) == HEURISTIC:
        return [dict(HEURISTIC) for _ in range(players)], set(range(players))
    seat = game % players
    return [dict(bot) if s == seat else dict(HEURISTIC) for s in range(players)], {seat}


def collect(
    games: int,
    players: int,
    seed: str,
    bot: Mapping[str, Any] = HEURISTIC,
    options: Mapping[str, Any] | None = None,
) -> list[Decision]:
    """Every bidding decision of the seats playing ``bot`` (a seat spec) over ``games`` games,
    seated by ``seating``."""
    out: list[Decision] = []
    for g in range(games):
        specs, measured = seating(bot, players, g)

        def step(
            record: GameRecord,
            seat: int,
            command: Any,
            _events: Any,
            _after: Any,
            game: int = g,
            measured: set[int] = measured,
        ) -> None:
            if seat not in measured:
                return
            features = public_features(record, seat, command)
            if features is not None:
                holds = skull.SKULL in record.state.players[seat].stack
                out.append(Decision(game, features, holds))

        play("skull", specs, dict(options or {}), f"{seed}:{g}", keep_envelopes=False, on_step=step)
    return out


def _cell(decision: Decision, features: Sequence[str]) -> tuple[Any, ...]:
    return tuple(decision.features[f] for f in features)


def _majority(labels: Counter[bool]) -> bool:
    # A tie goes to the skull: any fixed rule will do, the same for every predictor.
    return labels[True] >= labels[False]


def held_out(
    decisions: Sequence[Decision], features: Sequence[str], folds: int
) -> list[tuple[int, bool]]:
    """Each decision's game and whether "the training games' majority label in this cell of
    ``features``" (no features: the majority) got it right, predicted from the other folds
    (games split by index)."""
    out: list[tuple[int, bool]] = []
    for fold in range(folds):
        train = [d for d in decisions if d.game % folds != fold]
        test = [d for d in decisions if d.game % folds == fold]
        if not train or not test:
            continue
        overall: Counter[bool] = Counter(d.skull for d in train)
        cells: dict[tuple[Any, ...], Counter[bool]] = defaultdict(Counter)
        for d in train:
            cells[_cell(d, features)][d.skull] += 1
        fallback = _majority(overall)
        for d in test:
            seen = cells.get(_cell(d, features))
            guess = _majority(seen) if seen else fallback
            out.append((d.game, guess == d.skull))
    return out


def cross_validate(decisions: Sequence[Decision], features: Sequence[str], folds: int) -> float:
    """Accuracy on held-out games of "the training games' majority label in this cell of
    ``features``" (no features: the base rate), pooled over ``folds`` splits by game."""
    hits = held_out(decisions, features, folds)
    return sum(hit for _game, hit in hits) / len(hits) if hits else float("nan")


def interval(scores: Sequence[tuple[int, float]]) -> tuple[float, float]:
    """A 95% interval of the mean of per-decision ``(game, score)``, normal over games: the
    variance is that of each game's sum about its share of the mean (games are the
    independent units, not decisions)."""
    n = len(scores)
    if n == 0:
        return float("nan"), float("nan")
    mean = sum(score for _game, score in scores) / n
    per_game: dict[int, tuple[float, int]] = {}
    for game, score in scores:
        total, count = per_game.get(game, (0.0, 0))
        per_game[game] = (total + score, count + 1)
    k = len(per_game)
    spread = sum((total - mean * count) ** 2 for total, count in per_game.values())
    half = Z95 * math.sqrt(spread * k / max(k - 1, 1)) / n
    return mean - half, mean + half


def tells(decisions: Iterable[Decision]) -> dict[str, dict[str, Any]]:
    """Per kind of decision and bid: how many, and how many with a skull on the stack (the
    table that shows a tell at a glance)."""
    table: dict[str, dict[str, Any]] = defaultdict(lambda: {"n": 0, "skull": 0})
    for d in decisions:
        key = (
            d.features["kind"]
            if d.features["kind"] == "pass"
            else (f"{d.features['kind']} {d.features['bid']}")
        )
        table[key]["n"] += 1
        table[key]["skull"] += d.skull
    return dict(sorted(table.items(), key=lambda item: _by_kind_and_bid(item[0])))


def _by_kind_and_bid(key: str) -> tuple[str, int]:
    # "raise 11" after "raise 9": bids in numeric order.
    kind, _, bid = key.partition(" ")
    return kind, int(bid or 0)


def analyse(decisions: Sequence[Decision], folds: int = 5) -> dict[str, Any]:
    """The base rate, each feature set's cross-validated accuracy, the best, and the gain.

    The base rate is what a spectator predicts without the bot's bidding: the higher of the
    majority label and the majority per cell of ``CONTEXT`` (a player down to one disc, or
    known to have lost its skull, is less likely to have a skull down whatever it bids)."""
    majority = cross_validate(decisions, (), folds)
    context = cross_validate(decisions, CONTEXT, folds)
    base = max(majority, context)
    per_set = {name: cross_validate(decisions, f, folds) for name, f in FEATURE_SETS.items()}
    best = max(per_set, key=lambda name: per_set[name])
    best_hits = held_out(decisions, FEATURE_SETS[best], folds)
    base_hits = held_out(decisions, CONTEXT if context > majority else (), folds)
    # Both lists hold the same decisions in the same order (the folds' test games in turn).
    gains = [(g, float(b) - float(a)) for (g, b), (_g, a) in zip(best_hits, base_hits, strict=True)]
    return {
        "decisions": len(decisions),
        "skull_share": sum(d.skull for d in decisions) / len(decisions) if decisions else 0.0,
        "majority": majority,
        "context_only": context,
        "base_rate": base,
        "predictors": per_set,
        "best": best,
        "best_accuracy": per_set[best],
        "gain": per_set[best] - base,
        "best_interval": list(interval([(g, float(hit)) for g, hit in best_hits])),
        "gain_interval": list(interval(gains)),
        "by_kind_and_bid": tells(decisions),
    }


def run(
    games: int, players: int, seed: str, folds: int = 5, bot: Mapping[str, Any] = HEURISTIC
) -> dict[str, Any]:
    """``bot``'s games measured (by default all-heuristic): the analysis, with what was
    played."""
    result = analyse(collect(games, players, seed, bot), folds)
    out = {"machine": machine(), "games": games, "players": players, "seed": seed}
    if dict(bot) != HEURISTIC:  # the default run's file stays as it was
        out["bot"] = spec_label(bot)
    return {**out, **result}


def bot_spec(text: str) -> dict[str, Any]:
    """``--bot``'s value: a seat spec in the CLI's spelling, checked by the bot registry."""
    try:
        spec = parse_bot(text)
        registry.parse_spec(spec)
    except (ValueError, registry.BotSpecError) as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r}: {exc}; bots: {', '.join(registry.names())}"
        ) from exc
    return spec


def main() -> None:
    """Parses the arguments, plays and measures, prints the figures and writes ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--seed", default="tells")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument(
        "--bot",
        type=bot_spec,
        default=dict(HEURISTIC),
        help="the measured bot, e.g. ismcts:iterations=100 (default heuristic: every seat; "
        "another bot plays one seat, rotating, the others the heuristic)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()
    print(machine(), flush=True)
    out = run(args.games, args.players, args.seed, args.folds, args.bot)
    seats = f", {out['bot']} in one seat" if "bot" in out else ""
    print(f"{out['decisions']} bidding decisions in {args.games} games of {args.players}{seats}")
    for key, row in out["by_kind_and_bid"].items():
        print(f"  {key:>9}: {row['skull']:>5} of {row['n']:>5} with a skull down")
    for name, acc in out["predictors"].items():
        print(f"  predictor {name:<22} {acc:.3f}")
    print(
        f"majority {out['majority']:.3f}, context only {out['context_only']:.3f}: "
        f"base rate {out['base_rate']:.3f}"
    )
    print(
        f"best predictor ({out['best']}) {out['best_accuracy']:.3f}: "
        f"{out['gain'] * 100:+.1f} points over the base rate"
    )
    (low, high), (gain_low, gain_high) = out["best_interval"], out["gain_interval"]
    print(
        f"95% intervals (over games): best predictor {low:.3f}-{high:.3f}, "
        f"gain {gain_low * 100:+.1f} to {gain_high * 100:+.1f} points"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
