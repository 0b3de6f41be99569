"""The Skull ``heuristic`` bot: always legal through whole games, pure, stronger than random,
without tells (its public choices are the same whether its skull is down or not), and
sensible in crafted positions."""

from __future__ import annotations

import copy
import dataclasses
import math
import random
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from functools import reduce
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.bench_skull_tells import analyse, collect
from shared.app import bots
from shared.app.playout import play
from shared.games import skull
from shared.games.rng import Rng, bot_random, seed_hash
from shared.games.skull import FLOWER, SKULL, Bid, Flip, Pass, Place, State
from shared.games.skull.bots import choose
from shared.match.aggregate import Match, Seat
from shared.match.projections import view
from shared.match.record import GameRecord

SEAT_COUNTS = (3, 4, 6, 8)
RULES = ("czech", "english")


# --- play-outs ---------------------------------------------------------------------------------


def playout(
    seats: int,
    rule: str,
    seed: str,
    heuristic: Collection[int],
    seen: Counter[str] | None = None,
) -> GameRecord:
    """One game through the play-out driver, ``heuristic`` seats choosing with the bot (each
    command checked against its view), the rest by the service's random bot."""

    def chooser(record: GameRecord, seat: int) -> tuple[str, dict[str, Any]] | None:
        if seat not in heuristic:
            return None
        doc = view(record, seat)
        command = choose(doc, bot_random(seed, seat, record.version))
        assert command is not None, "the seat to act had nothing to do"
        assert command in doc["legal_commands"]
        _check_flip_order(doc, command)
        if seen is not None:
            seen[doc["phase"] if command["type"] != "pick_disc" else "pick_disc"] += 1
            seen[command["type"]] += 1
        return f"h-{seat}-{record.version}", command

    played = play(
        "skull",
        [{"bot": "random"}] * seats,
        {"next_starter": rule},
        seed,
        chooser=chooser,
        keep_envelopes=False,
    )
    assert skull.outcome(played.record.state) is not None
    return played.record


def _check_flip_order(doc: dict[str, Any], command: dict[str, Any]) -> None:
    """A stack known to hold no skull is always flipped before one that may hold it."""
    if command["type"] != "flip" or len(doc["legal_commands"]) < 2:
        return
    known = {p["seat"]: p["known_skull"] for p in doc["players"]}
    if any(known[c["seat"]] is False for c in doc["legal_commands"]):
        assert known[command["seat"]] is False


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seats=st.sampled_from(SEAT_COUNTS),
    rule=st.sampled_from(RULES),
    salt=st.integers(min_value=0, max_value=2**32 - 1),
    mask=st.integers(min_value=1, max_value=2**8 - 1),
)
def test_any_game_is_played_legally(seats: int, rule: str, salt: int, mask: int) -> None:
    heuristic = {s for s in range(seats) if mask >> s & 1} or {0}
    playout(seats, rule, f"bot-skull-{salt}", heuristic)


def test_fixed_games_reach_every_phase() -> None:
    seen: Counter[str] = Counter()
    for seats in SEAT_COUNTS:
        for rule in RULES:
            for k in range(4):
                # All seats the bot, or one: bot-against-bot and bot-against-random positions.
                heuristic = range(seats) if k % 2 else [k % seats]
                playout(seats, rule, f"fixed-{seats}-{rule}-{k}", set(heuristic), seen)
    for key in (
        "placing",
        "bidding",
        "flipping",
        "penalty",
        "pick_disc",
        "choosing_starter",
        "place",
        "bid",
        "pass",
        "flip",
        "discard",
        "choose_starter",
    ):
        assert seen[key] > 0, f"the bot never played {key}: {seen}"


# --- purity ------------------------------------------------------------------------------------


def test_same_view_and_seed_give_same_command_and_leave_view_alone() -> None:
    docs: list[tuple[dict[str, Any], str, int, int]] = []
    seed = "purity"

    def chooser(record: GameRecord, seat: int) -> tuple[str, dict[str, Any]] | None:
        docs.append((view(record, seat), seed, seat, record.version))
        return None  # the random bot plays every seat; the bot is asked on the side

    play("skull", [{"bot": "random"}] * 5, {"next_starter": "english"}, seed, chooser=chooser)
    assert len({d["phase"] for d, *_ in docs}) >= 4
    for doc, s, seat, version in docs:
        before = copy.deepcopy(doc)
        first = choose(doc, bot_random(s, seat, version))
        second = choose(copy.deepcopy(doc), bot_random(s, seat, version))
        assert first == second
        assert doc == before
        assert first in doc["legal_commands"]


def test_nothing_to_do_gives_none() -> None:
    record = _record(4, [])  # seat 0 starts
    assert choose(view(record, 1), bot_random("x", 1, record.version)) is None
    done = playout(3, "czech", "over", {0})
    for seat in range(3):
        assert choose(view(done, seat), bot_random("x", seat, done.version)) is None


# --- strength ----------------------------------------------------------------------------------

STRENGTH_GAMES = 300
STRENGTH_SEATS = 4


def test_beats_random_bots() -> None:
    wins = 0
    for g in range(STRENGTH_GAMES):
        seat = g % STRENGTH_SEATS  # rotated: no seat's first-player luck counts twice
        record = playout(STRENGTH_SEATS, "czech", f"strength-{g}", {seat})
        wins += seat in record.state.winners
    rate = wins / STRENGTH_GAMES
    half = 1.96 * math.sqrt(rate * (1 - rate) / STRENGTH_GAMES)
    print(
        f"heuristic vs 3 random: {wins}/{STRENGTH_GAMES} = {rate:.3f} "
        f"(95% CI {rate - half:.3f}-{rate + half:.3f}; chance 0.25)"
    )
    assert rate >= 0.33


# --- no tells ----------------------------------------------------------------------------------

TELL_GAMES = 100
# Generous for a 100-game sample (the benchmark holds 400 games to 0.05): the bot before its
# bids were mixed gave a spectator about 0.26 over the base rate.
TELL_MARGIN = 0.08


def test_public_bidding_does_not_give_the_stack_away() -> None:
    # All-heuristic games read as a spectator: from its bids, passes and stack size, a
    # predictor learnt on other games must not guess whether its skull is down much better
    # than one that never sees its bidding.
    result = analyse(collect(TELL_GAMES, 4, "tells-unit"))
    print(
        f"{result['decisions']} decisions, skull share {result['skull_share']:.3f}: best "
        f"predictor ({result['best']}) {result['best_accuracy']:.3f}, base rate "
        f"{result['base_rate']:.3f}"
    )
    assert result["decisions"] > 1000
    assert result["best_accuracy"] <= result["base_rate"] + TELL_MARGIN, result["by_kind_and_bid"]


def _public(command: dict[str, Any]) -> tuple[Any, ...]:
    """What a spectator sees of a command: not the face of a placed disc."""
    return (command["type"], command.get("count"), command.get("seat"))


def _twin(state: State, seat: int) -> State | None:
    """The same public position with the other label: ``seat``'s skull swapped between its
    stack and its hand (None when it cannot be: no skull owned, or no flower to swap)."""
    p = state.players[seat]
    stack = list(p.stack)
    if SKULL in stack:
        if p.in_hand(FLOWER) == 0:
            return None
        stack[stack.index(SKULL)] = FLOWER
    elif p.in_hand(SKULL) and FLOWER in stack:
        stack[stack.index(FLOWER)] = SKULL
    else:
        return None
    players = list(state.players)
    players[seat] = dataclasses.replace(p, stack=tuple(stack))
    return dataclasses.replace(state, players=tuple(players))


Decide = Callable[[dict[str, Any], random.Random], dict[str, Any] | None]


def _twin_choices(
    decide: Decide, games: int, seats: Sequence[int], salts: Sequence[str], asked: int | None
) -> tuple[Counter[str], Counter[str]]:
    """In all-heuristic games, every placing and bidding position of seat ``asked`` (None:
    of every seat) with a twin (``_twin``) put to ``decide`` in both, with the same draws
    (from the game's seed, then from each of ``salts``): per phase, how many were compared
    and how many gave different public choices."""
    compared: Counter[str] = Counter()
    different: Counter[str] = Counter()
    for g in range(games):
        seed = f"twins-{g}"

        def chooser(
            record: GameRecord, seat: int, seed: str = seed
        ) -> tuple[str, dict[str, Any]] | None:
            state = record.state
            if asked not in (None, seat):
                return None
            if state.phase in (skull.PLACING, skull.BIDDING) and state.players[seat].stack:
                twin = _twin(state, seat)
                if twin is not None:
                    other = dataclasses.replace(record, state=twin)
                    for salt in (seed, *salts):
                        mine = decide(view(record, seat), bot_random(salt, seat, record.version))
                        theirs = decide(view(other, seat), bot_random(salt, seat, other.version))
                        assert mine is not None and theirs is not None
                        if _public(mine) != _public(theirs):
                            different[state.phase] += 1
                    compared[state.phase] += 1
            return None  # the seat's own bot plays on

        play("skull", [{"bot": "heuristic"}] * seats[g % len(seats)], {}, seed, chooser=chooser)
    return compared, different


def test_every_public_choice_is_the_same_with_the_skull_down_or_in_hand() -> None:
    # The bot is a pure function of view and rng: the same public choice for the same draws
    # whether the skull is on its stack or in its hand means the same distribution of public
    # actions, whatever predictor reads them.
    compared, different = _twin_choices(choose, 24, (3, 4, 6), ("other",), None)
    assert compared[skull.PLACING] > 50 and compared[skull.BIDDING] > 50, compared
    assert not different, (different, compared)


# The search at a count of iterations (not a time budget): a pure function of view and rng too.
ISMCTS_TWINS = {"bot": "ismcts", "iterations": 20}


class PublicChoiceDiffers(AssertionError):
    """A public choice that changed with the place of the bot's skull alone: a tell."""


def test_the_search_makes_the_same_public_choice_with_the_skull_down_or_in_hand() -> None:
    # What the heuristic's twin test holds, for the search, one seat asked on the side of
    # all-heuristic games: its public choices must not depend on whether its skull is down.
    # Policy version 2 (its public choices valued knowing its stack) failed it: 54 of 82
    # twin pairs differed; version 3 values them on spectator deals of its own discs.
    def search(doc: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        command: dict[str, Any] | None = bots.play(ISMCTS_TWINS, doc, rng)
        return command

    compared, different = _twin_choices(search, 6, (3, 4, 6), (), 0)
    assert compared[skull.PLACING] > 30 and compared[skull.BIDDING] > 20, compared
    if different:  # only this is the known failure: anything else fails the test
        raise PublicChoiceDiffers(f"{dict(different)} of {dict(compared)}")


# --- scenarios ---------------------------------------------------------------------------------


def _record(
    seats: int,
    commands: Sequence[tuple[int, Any]],
    *,
    rule: str = "czech",
    tweak: dict[int, dict[str, Any]] | None = None,
) -> GameRecord:
    """The game after ``commands`` from a table where seat 0 starts; ``tweak`` first rewrites
    players (a history of lost discs), as earlier rounds could have left them."""
    seed = "scenario"
    events = skull.setup(seats, {"next_starter": rule, "first_player": 0}, Rng(seed, "setup"))
    initial = reduce(skull.evolve, events, None)
    assert initial is not None
    state: State = initial
    players = list(state.players)
    for s, fields in (tweak or {}).items():
        players[s] = dataclasses.replace(players[s], **fields)
    state = dataclasses.replace(state, players=tuple(players))
    version = 1 + len(events)
    for seat, command in commands:
        new = skull.decide(state, seat, command, Rng(seed, f"v{version}"))
        state = reduce(skull.evolve, new, state)
        version += len(new)
    match = Match(
        game="skull",
        seats=tuple(Seat(name=f"seat {i}", bot="random") for i in range(seats)),
        options={"next_starter": rule, "first_player": 0},
        seed_sha256=seed_hash(seed),
    )
    return GameRecord(id="scenario", match=match, version=version, head_hash="", state=state)


def _decide(record: GameRecord, seat: int, salt: str = "s") -> dict[str, Any]:
    doc = view(record, seat)
    command = choose(doc, bot_random(salt, seat, record.version))
    assert command is not None and command in doc["legal_commands"]
    return command


F, S = Place(disc=FLOWER), Place(disc=SKULL)


def test_all_flower_stack_bids_at_least_its_stack() -> None:
    # Seat 0 holds two flowers down; seat 1 opened at 1, the others passed.
    record = _record(
        4, [(0, F), (1, F), (2, F), (3, F), (0, F), (1, Bid(count=1)), (2, Pass()), (3, Pass())]
    )
    for salt in ("a", "b", "c", "d"):
        command = _decide(record, 0, salt)
        assert command["type"] == "bid" and command["count"] >= 2


def test_all_flower_stack_keeps_a_disc_then_opens_safely() -> None:
    # Three flowers down, only the skull in hand: never place it, open the bidding instead.
    moves = [(0, F), (1, F), (2, F), (3, F), (0, F), (1, F), (2, F), (3, F), (0, F)]
    moves += [(1, F), (2, F), (3, F)]
    command = _decide(_record(4, moves), 0)
    assert command["type"] == "bid" and command["count"] >= 3


def test_passes_when_the_bid_is_out_of_safe_reach() -> None:
    # Seat 0 has three flowers down, every other stack two discs of a player known to own a
    # skull; the bid of 7 already needs four of theirs: far too likely to meet a skull.
    moves = [(s, F) for s in range(4)] * 2 + [(0, F), (1, Bid(count=7)), (2, Pass()), (3, Pass())]
    record = _record(4, moves)
    assert _decide(record, 0) == {"type": "pass"}


@pytest.mark.parametrize("first", ["skull", "flower"])
def test_a_raise_out_of_reach_is_passed_skull_down_or_not(first: str) -> None:
    # Seat 0 opened at 1 on one disc; seat 1 raised to 3, the others passed. Taking it to 4
    # needs every other disc: a pass, whatever seat 0 put down.
    moves = [(0, Place(disc=first)), (1, F), (2, F), (3, F), (0, Bid(count=1)), (1, Bid(count=3))]
    moves += [(2, Pass()), (3, Pass())]
    record = _record(4, moves)
    for salt in ("a", "b", "c"):
        assert _decide(record, 0, salt) == {"type": "pass"}


def test_a_skull_down_builds_the_stack_as_a_flower_does() -> None:
    # Before the bids were mixed, a skull on top opened at 1 at once and a flower built its
    # stack: the opening alone told which. Now both place another disc (a flower), keeping
    # the skull where it is or in hand.
    for salt in ("a", "b", "c", "d"):
        skull_down = _decide(_record(4, [(0, S), (1, F), (2, F), (3, F)]), 0, salt)
        flower_down = _decide(_record(4, [(0, F), (1, F), (2, F), (3, F)]), 0, salt)
        assert skull_down == flower_down == {"type": "place", "disc": FLOWER}


def test_flips_the_skull_free_player_first() -> None:
    # Seat 2 lost its skull in an earlier round and everyone saw its flowers: known skull-free.
    tweak = {2: {"skulls": 0, "lost": (SKULL,), "known_skull": False}}
    moves = [(0, F), (1, F), (2, F), (3, F), (0, Bid(count=4)), (0, Flip(seat=0))]
    record = _record(4, moves, tweak=tweak)
    assert view(record, 0)["phase"] == "flipping"
    for salt in ("a", "b", "c"):
        assert _decide(record, 0, salt) == {"type": "flip", "seat": 2}


def test_own_skull_discards_a_flower_while_flowers_are_plenty() -> None:
    moves = [(0, S), (1, F), (2, F), (3, F), (0, Bid(count=4)), (0, Flip(seat=0))]
    record = _record(4, moves)
    assert view(record, 0)["phase"] == "penalty"
    assert _decide(record, 0) == {"type": "discard", "disc": FLOWER}


def test_own_skull_with_one_flower_left_discards_the_skull() -> None:
    tweak = {0: {"flowers": 1, "lost": (FLOWER, FLOWER), "known_skull": None}}
    moves = [(0, S), (1, F), (2, F), (3, F), (0, Bid(count=4)), (0, Flip(seat=0))]
    assert _decide(_record(4, moves, tweak=tweak), 0) == {"type": "discard", "disc": SKULL}


@pytest.mark.parametrize("lost", [0, 3])
def test_english_rule_starter_choice(lost: int) -> None:
    # Own skull under the English rule: start ourselves if still in, else the weakest player.
    tweak: dict[int, dict[str, Any]] = {1: {"wins": 1}}
    if lost:
        tweak[0] = {"flowers": 0, "lost": (FLOWER,) * 3, "known_skull": True}
    moves: list[tuple[int, Any]] = [(0, S), (1, F), (2, F), (3, F), (0, Bid(count=4))]
    moves += [(0, Flip(seat=0)), (0, skull.Discard(disc=SKULL if lost else FLOWER))]
    record = _record(4, moves, rule="english", tweak=tweak)
    assert view(record, 0)["phase"] == "choosing_starter"
    command = _decide(record, 0)
    if lost:
        assert command["type"] == "choose_starter" and command["seat"] in (2, 3)
    else:
        assert command == {"type": "choose_starter", "seat": 0}
