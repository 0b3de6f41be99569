"""Turn clocks, time-outs, resigning and seat take-over: no game stalls on a player who left.

A game created with ``"clock": {...}`` records the spec in ``game_created``. Every command in
such a game ends with the clock's own events, decided from the command's time (its envelopes'
``at``), so an audit re-decides them like the rest:

* ``clock_stopped`` for each human seat that was to act and no longer is (or acted): the time
  it used beyond ``turn_seconds`` comes off its reserve;
* ``deadline_armed`` for each human seat newly to act (or still to act after its own move): a
  deadline ``turn_seconds`` plus its reserve ahead, with the version it is armed at.

A time-out is a normal command (``{"type": "time_out", "armed_version": v}``, id
``timeout-<seat>-<v>``) that the deadline scheduler sends when a deadline is due: it is refused
unless that very deadline is still armed and due at the command's time, so a stale or early one
changes nothing, and its id makes a repeat a duplicate. It appends ``turn_timed_out``, then the
timeout bot's move for the seat (``on_timeout: bot``) or the seat's resignation (``forfeit``);
the ``takeover_after``-th time-out in a row hands the seat to the timeout bot for good.

Resigning (``{"type": "resign"}``, any time after the deal): when one seat alone is left un-
resigned it wins at once (a two-seat game ends); otherwise a bot (the timeout bot, else
``random``) plays the resigned seat to the end, and resigned seats rank below every other.

Times are integers (milliseconds since the epoch: hashed JSON has no floats) beside their
ISO-8601 spelling; all of them come from one clock (the ``Clock`` port: Redis's own time in
the service), so the scheduler and the workers agree on what is due.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.events import (
    CLOCK_STOPPED,
    DEADLINE_ARMED,
    SEAT_RESIGNED,
    SEAT_TAKEN_OVER,
    TURN_TIMED_OUT,
    NewEvent,
)
from shared.games import errors as rules
from shared.games.errors import GameError

TIME_OUT = "time_out"  # sent by the deadline scheduler only
RESIGN = "resign"
TIMEOUT_PREFIX = "timeout-"  # a time-out's command id: timeout-<seat>-<armed version>
BOT = "bot"
FORFEIT = "forfeit"
ON_TIMEOUT = (BOT, FORFEIT)

DEFAULTS: dict[str, Any] = {
    "turn_seconds": 60,
    "reserve_seconds": 300,
    "on_timeout": BOT,
    "timeout_bot": {"bot": "heuristic"},
    "takeover_after": 3,
}
BOUNDS: dict[str, tuple[int, int]] = {
    "turn_seconds": (1, 86_400),
    "reserve_seconds": (0, 7 * 86_400),
    "takeover_after": (1, 1_000),
}


def parse_clock(
    doc: Mapping[str, Any] | None, *, parse_bot: Callable[[Mapping[str, Any]], dict[str, Any]]
) -> dict[str, Any] | None:
    """The full clock spec (defaults filled in) for a creation's ``clock``, None for none.
    ``parse_bot`` checks the ``timeout_bot`` seat spec (the bot registry's ``parse_spec``: it
    raises a ``ValueError`` with ``field`` and ``message``). Raises ``options/invalid`` naming
    the field (``clock.turn_seconds``...)."""
    if doc is None:
        return None
    if not isinstance(doc, Mapping):
        raise rules.invalid_options("clock must be an object", clock=["an object"])
    unknown = sorted(set(doc) - set(DEFAULTS))
    if unknown:
        raise rules.invalid_options(
            f"unknown clock setting {unknown[0]!r}", **{f"clock.{unknown[0]}": ["unknown field"]}
        )
    spec = {**DEFAULTS, **doc}
    for name, (low, high) in BOUNDS.items():
        value = spec[name]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise rules.invalid_options(
                f"clock.{name} must be an integer from {low} to {high}",
                **{f"clock.{name}": [f"an integer from {low} to {high}"]},
            )
    if spec["on_timeout"] not in ON_TIMEOUT:
        raise rules.invalid_options(
            "clock.on_timeout must be bot or forfeit",
            **{"clock.on_timeout": [f"one of {', '.join(ON_TIMEOUT)}"]},
        )
    bot = spec["timeout_bot"]
    if not isinstance(bot, Mapping) or not isinstance(bot.get("bot"), str):
        raise rules.invalid_options(
            "clock.timeout_bot must be a bot seat spec",
            **{"clock.timeout_bot": ['a bot seat spec, e.g. {"bot": "heuristic"}']},
        )
    try:
        settings = parse_bot(bot)
    except ValueError as exc:
        field = getattr(exc, "field", "bot")
        message = getattr(exc, "message", str(exc))
        raise rules.invalid_options(
            f"clock.timeout_bot: {message}", **{f"clock.timeout_bot.{field}": [message]}
        ) from None
    spec["timeout_bot"] = {"bot": bot["bot"], **settings}
    return spec


# ---- the clock's state, folded by the match aggregate ------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatClock:
    """One seat's clock: its reserve, and while it is to act the deadline armed for it."""

    reserve_ms: int
    armed_version: int | None = None
    started_ms: int | None = None
    deadline_ms: int | None = None
    timeouts_in_a_row: int = 0

    @property
    def armed(self) -> bool:
        """Whether the seat's clock runs (it is to act)."""
        return self.armed_version is not None


def start_clocks(spec: Mapping[str, Any] | None, seats: int) -> tuple[SeatClock, ...]:
    """Every seat's clock before the first turn (no clock: none)."""
    if spec is None:
        return ()
    return tuple(SeatClock(reserve_ms=spec["reserve_seconds"] * 1000) for _ in range(seats))


def evolve_clocks(
    clocks: tuple[SeatClock, ...], type_: str, data: Mapping[str, Any]
) -> tuple[SeatClock, ...]:
    """The clocks after one clock event (others leave them as they are)."""
    if not clocks or type_ not in (DEADLINE_ARMED, CLOCK_STOPPED, TURN_TIMED_OUT):
        return clocks
    out = list(clocks)
    seat = data["seat"]
    c = out[seat]
    if type_ == DEADLINE_ARMED:
        out[seat] = SeatClock(
            reserve_ms=data["reserve_ms"],
            armed_version=data["armed_version"],
            started_ms=data["started_ms"],
            deadline_ms=data["deadline_ms"],
            timeouts_in_a_row=c.timeouts_in_a_row,
        )
    elif type_ == CLOCK_STOPPED:
        in_a_row = 0 if data.get("acted") else c.timeouts_in_a_row
        out[seat] = SeatClock(reserve_ms=data["reserve_ms"], timeouts_in_a_row=in_a_row)
    else:
        out[seat] = SeatClock(reserve_ms=0, timeouts_in_a_row=data["in_a_row"])
    return tuple(out)


def clock_doc(spec: Mapping[str, Any] | None, clocks: Sequence[SeatClock]) -> dict[str, Any] | None:
    """The clock as views show it: the spec, and per seat its deadline (UTC) while it is to
    act, its reserve left and its time-outs in a row."""
    if spec is None:
        return None
    seats = []
    for i, c in enumerate(clocks):
        doc: dict[str, Any] = {
            "seat": i,
            "reserve_ms": c.reserve_ms,
            "timeouts_in_a_row": c.timeouts_in_a_row,
            "deadline": None,
        }
        if c.armed:
            assert c.deadline_ms is not None and c.started_ms is not None
            doc.update(
                deadline=iso_ms(c.deadline_ms),
                deadline_ms=c.deadline_ms,
                armed_version=c.armed_version,
                turn_started=iso_ms(c.started_ms),
            )
        seats.append(doc)
    return {**dict(spec), "seats": seats}


# ---- the events a command ends with -------------------------------------------------------------


def tick_events(
    spec: Mapping[str, Any] | None,
    clocks: Sequence[SeatClock],
    humans: Sequence[bool],
    to_act_before: Sequence[int],
    to_act_after: Sequence[int],
    *,
    actor: int | None,
    acted: bool,
    over: bool,
    now_ms: int,
    version_after: int,
) -> list[NewEvent]:
    """The clock's events after a command: stop the clock of every seat that was to act and
    no longer is, or that acted (``acted``: by its own move, which resets its time-outs in a
    row); arm one for every human seat to act whose clock does not run. ``version_after`` is
    the game's version once these events are appended too (the armed version); ``over``: the
    game ended, nothing is armed."""
    if spec is None:
        return []
    turn_ms = spec["turn_seconds"] * 1000
    after = set() if over else set(to_act_after)
    running = [c.armed for c in clocks]
    stops: list[NewEvent] = []
    for seat, c in enumerate(clocks):
        if not c.armed:
            continue
        if seat in after and seat != actor:
            continue
        assert c.started_ms is not None
        used = max(0, now_ms - c.started_ms)
        reserve = max(0, c.reserve_ms - max(0, used - turn_ms))
        data = {"seat": seat, "armed_version": c.armed_version, "used_ms": used,
                "reserve_ms": reserve}  # fmt: skip
        if seat == actor and acted:
            data["acted"] = True
        stops.append(NewEvent(type=CLOCK_STOPPED, data=data))
        running[seat] = False
    stopped_reserve = {e.data["seat"]: e.data["reserve_ms"] for e in stops}
    to_arm = [s for s in sorted(after) if humans[s] and not running[s]]
    arms = []
    for seat in to_arm:
        reserve = stopped_reserve.get(seat, clocks[seat].reserve_ms)
        deadline = now_ms + turn_ms + reserve
        arms.append(
            NewEvent(
                type=DEADLINE_ARMED,
                data={
                    "seat": seat,
                    "armed_version": version_after,
                    "started": iso_ms(now_ms),
                    "started_ms": now_ms,
                    "deadline": iso_ms(deadline),
                    "deadline_ms": deadline,
                    "reserve_ms": reserve,
                },
            )
        )
    del to_act_before  # who acted before is in the clocks themselves (armed or not)
    return [*stops, *arms]


def check_time_out(
    spec: Mapping[str, Any] | None,
    clocks: Sequence[SeatClock],
    seat: int,
    body: Mapping[str, Any],
    now_ms: int | None,
) -> SeatClock:
    """The seat's clock when a time-out of it is due now; else GameError (a stale or early
    time-out changes nothing)."""
    if spec is None or not clocks:
        raise GameError(rules.ILLEGAL, "this game has no clock", rule="no_clock")
    armed = body.get("armed_version")
    c = clocks[seat]
    if not c.armed or c.armed_version != armed:
        raise GameError(
            rules.ILLEGAL,
            f"no deadline of seat {seat} armed at version {armed} is running",
            rule="stale_time_out",
        )
    assert c.deadline_ms is not None
    if now_ms is None or now_ms < c.deadline_ms:
        raise GameError(
            rules.ILLEGAL, f"seat {seat}'s deadline ({iso_ms(c.deadline_ms)}) is not due",
            rule="not_due",
        )  # fmt: skip
    return c


def timed_out_event(c: SeatClock, seat: int, now_ms: int) -> NewEvent:
    """``turn_timed_out`` for the seat's running deadline."""
    return NewEvent(
        type=TURN_TIMED_OUT,
        data={
            "seat": seat,
            "armed_version": c.armed_version,
            "deadline_ms": c.deadline_ms,
            "at_ms": now_ms,
            "in_a_row": c.timeouts_in_a_row + 1,
        },
    )


def resigned_event(seat: int, reason: str) -> NewEvent:
    """``seat_resigned`` (``reason``: ``resigned`` or ``forfeit``)."""
    return NewEvent(type=SEAT_RESIGNED, data={"seat": seat, "reason": reason})


def taken_over_event(seat: int, bot: Mapping[str, Any], reason: str) -> NewEvent:
    """``seat_taken_over``: ``bot`` (a seat spec) plays the seat from now on."""
    settings = {k: v for k, v in bot.items() if k != "bot"}
    data: dict[str, Any] = {"seat": seat, "bot": bot["bot"], "reason": reason}
    if settings:
        data["bot_spec"] = settings
    return NewEvent(type=SEAT_TAKEN_OVER, data=data)


def substitute(spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """The bot that plays a resigned or taken-over seat: the timeout bot, else ``random``."""
    return dict(spec["timeout_bot"]) if spec else {"bot": "random"}


# ---- the outcome, with resignations ----------------------------------------------------------------


def with_resignations(
    engine_outcome: Mapping[str, Any] | None, resigned: Sequence[bool]
) -> dict[str, Any] | None:
    """The engine's outcome with every resigned seat ranked below every other (their order
    among themselves and the others' kept); winners are the best-ranked seats left. When one
    seat alone did not resign, it has won, whatever the engine's state (``engine_outcome`` may
    then be None)."""
    n = len(resigned)
    if not any(resigned):
        return dict(engine_outcome) if engine_outcome is not None else None
    left = [s for s in range(n) if not resigned[s]]
    if engine_outcome is None:
        if len(left) != 1:
            return None
        ranks = [1 if s == left[0] else 2 for s in range(n)]
        return {
            "scores": None,
            "winners": [left[0]],
            "ranks": ranks,
            "draw": False,
            "resigned": [s for s in range(n) if resigned[s]],
            "ended_by": "resignation",
        }
    engine_ranks = list(engine_outcome["ranks"])
    key = [(1 if resigned[s] else 0, engine_ranks[s]) for s in range(n)]
    ranks = [1 + sum(1 for other in key if other < key[s]) for s in range(n)]
    winners = [s for s in range(n) if ranks[s] == 1]
    return {
        **dict(engine_outcome),
        "ranks": ranks,
        "winners": winners,
        "draw": len(winners) > 1,
        "resigned": [s for s in range(n) if resigned[s]],
    }


# ---- time ------------------------------------------------------------------------------------


def iso_ms(epoch_ms: int) -> str:
    """ISO-8601 UTC with milliseconds, as envelopes' ``at``."""
    moment = _EPOCH + timedelta(milliseconds=epoch_ms)  # exact: no float on the way
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ms_of(at: str) -> int:
    """Milliseconds since the epoch of an envelope's ``at``."""
    moment = datetime.fromisoformat(at.replace("Z", "+00:00"))
    return (moment - _EPOCH) // timedelta(milliseconds=1)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
