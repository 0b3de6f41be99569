"""A consistent forgery of a bot's move fails the audit (issue 23, item 5).

The attack: an operator holds the seed. It replays an all-bot game with one bot move changed,
lets the bots' policies play on from there, seals the new history with the seed (the project's
own sealing code: every salt and hash right) and rewrites the store. Every move is legal and
every draw comes from the seed, so only one thing gives it away: a bot's move follows from the
seed and that seat's view, and the forged one is not what the bot plays. The audit's
``bot moves`` check re-decides every bot move (random, heuristic, ISMCTS with its iterations,
or the iterations a ``budget_ms`` search recorded) and fails at the first one that differs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from shared import games
from shared.adapters.memory import FixedClock, MemoryCommandBus
from shared.app import bots, clocks, commands, creation, queries, service_commands
from shared.app.bots import bot_spec
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.messages import CommandMessage
from shared.app.playout import play
from shared.app.results import bot_label
from shared.app.service_commands import decide_any
from shared.audit import audit
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.events import Envelope, seal
from shared.games.rng import bot_random
from shared.match import fairness
from shared.match.clock import ms_of
from shared.match.projections import AUDITOR, view, visible_events
from shared.match.record import GameRecord, fold
from tests.unit.test_audit_redecide import rehash

Doc = dict[str, Any]


def _same(engine: Any, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return bool(engine.parse_command(a) == engine.parse_command(b))


def forge(
    game: str, specs: list[Doc], options: Doc, seed: str, at: int
) -> tuple[list[Doc], str] | None:
    """The forger's replay: the same game, except that the bot to act at version ``at`` plays
    another legal command than its own (the first the view lists that the bot would not
    play), and every bot after it plays on by its policy; sealed with the seed by the play-out
    driver's own sealing. (the log, the spec label of the forged seat), or None when that bot
    had no other choice."""
    engine = games.get(game)
    forged_spec: list[str] = []

    def chooser(record: GameRecord, seat: int) -> tuple[str, Doc] | None:
        if record.version != at:
            return None
        seen = view(record, seat)
        spec = bot_spec(seen, seat)
        own = bots.play(spec, seen, bot_random(seed, seat, at))
        assert own is not None
        other = [c for c in seen["legal_commands"] if not _same(engine, c, own)]
        if not other or other[0].get("template"):
            return None
        forged_spec.append(bot_label(spec["bot"], {k: v for k, v in spec.items() if k != "bot"}))
        return f"bot-{seat}-{at}", dict(other[0])

    played = play(game, specs, options, seed, chooser=chooser)
    if not forged_spec:
        return None
    return [e.to_dict() for e in played.envelopes], forged_spec[0]


def bot_move_versions(docs: list[Doc], seat: int | None = None) -> list[int]:
    """The versions the bots (of ``seat``, or all) decided at (their command ids say:
    ``bot-<seat>-<version>``)."""
    return [int(d["command_id"].rsplit("-", 1)[1]) for d in docs
            if d.get("command") and d["command_id"].startswith("bot-")
            and seat in (None, d["seat"])]  # fmt: skip


def winners(docs: list[Doc]) -> list[int]:
    outcome = fold("g", [Envelope.from_dict(d) for d in docs]).outcome
    assert outcome is not None
    return list(outcome["winners"])


def assert_caught(docs: list[Doc], version: int, spec: str) -> None:
    """The forged log passes every other check (it is consistent), and fails ``bot moves`` at
    the forged version, naming it."""
    report = audit("forged", docs)
    assert report.first_failure == {
        "check": "bot moves",
        "version": version,
        "reason": f"bot move at version {version} is not what {spec} plays from that seat's view",
    }, report.checks
    for name in ("hash chain", "seed commitment", "opening draw", "commands legal",
                 "outcomes recomputed"):  # fmt: skip
        assert report.checks[name].startswith("ok"), (name, report.checks)


def first_forgery(
    game: str,
    specs: list[Doc],
    options: Doc,
    seed: str,
    keep: Callable[[list[Doc], list[Doc]], bool] = lambda honest, forged: True,
    seat: int | None = None,
) -> tuple[list[Doc], int, str]:
    """The first forgery (by decision version, of ``seat``'s bot or any) that ``keep``
    accepts: (log, version of the forged move, the spec label of its bot)."""
    honest = [e.to_dict() for e in play(game, specs, options, seed).envelopes]
    assert audit("honest", honest).status == "passed"
    for at in bot_move_versions(honest, seat):
        found = forge(game, specs, options, seed, at)
        if found is not None and keep(honest, found[0]):
            return found[0], at + 1, found[1]
    raise AssertionError("no forgery found")


def test_a_forged_bot_move_that_changes_the_winner_fails_the_audit_at_its_version() -> None:
    """The attack of the issue: the winner changes, and the audit must say where."""
    specs = [{"bot": "heuristic"}, {"bot": "heuristic"}]
    docs, version, spec = first_forgery(
        "fox", specs, {"target": 1}, "forged-winner",
        keep=lambda honest, forged: winners(honest) != winners(forged),
    )  # fmt: skip
    assert_caught(docs, version, spec)


def test_a_forged_random_bots_move_fails_at_its_version() -> None:
    docs, version, spec = first_forgery("skull", [{"bot": "random"}] * 3, {}, "forged-random")
    assert_caught(docs, version, spec)


def test_a_forged_ismcts_move_with_fixed_iterations_fails_at_its_version() -> None:
    specs: list[Doc] = [{"bot": "ismcts", "iterations": 40}, {"bot": "random"}]
    docs, version, spec = first_forgery("fox", specs, {"target": 1}, "forged-ismcts", seat=0)
    assert spec == "ismcts:iterations=40"
    assert_caught(docs, version, spec)


# --- the service's own bots (handlers, in-memory adapters) ----------------------------------------

BUDGET = {"bot": "ismcts", "budget_ms": 10}


def memory_app() -> tuple[App, FixedClock]:
    fixed = FixedClock()
    app = bootstrap(Settings(), backend="memory", clock=fixed,
                    dispatcher=lambda a: InlineDispatcher().bind(a))  # fmt: skip
    return app, fixed


def drain(app: App, game: str) -> None:
    """Decide every queued command (the bots' moves, played inline), as a worker would."""
    bus = app.ports.bus
    assert isinstance(bus, MemoryCommandBus)
    while queued := bus.take(game):
        for fields in queued:
            commands.decide_command(app, CommandMessage.from_fields(fields))


def send(app: App, game: str, gid: str, seat: int, body: Doc, cid: str) -> dict[str, Any]:
    commands.submit_command(
        app, CommandMessage(command_id=cid, game_id=gid, seat=seat, body=body), game
    )
    bus = app.ports.bus
    assert isinstance(bus, MemoryCommandBus)
    [fields, *rest] = bus.take(game)
    outcome = commands.decide_command(app, CommandMessage.from_fields(fields))
    for more in rest:
        commands.decide_command(app, CommandMessage.from_fields(more))
    drain(app, game)
    return outcome


def finish(app: App, game: str, gid: str, fixed: FixedClock, sleeper: int | None = None) -> None:
    """Play the game out: bots move inline, each player sends its first legal command, except
    ``sleeper``, whose clock is let run out until its timeout bot takes the seat over."""
    for n in range(3000):
        public = queries.view(app, gid, None)
        assert public is not None
        if public["outcome"] is not None:
            return
        humans = [s for s in public["to_act"] if "bot" not in public["seats"][s]]
        if not humans:
            drain(app, game)
            continue
        if sleeper in humans:
            fixed.t = public["clock"]["seats"][sleeper]["deadline_ms"] / 1000 + 1
            clocks.fire_due_deadlines(app)
            drain(app, game)
            continue
        mine = queries.view(app, gid, humans[0])
        assert mine is not None
        outcome = send(app, game, gid, humans[0], mine["legal_commands"][0], f"s{humans[0]}-{n}")
        assert outcome["status"] == "accepted", outcome
    raise AssertionError("the game did not end")


def exported(app: App, gid: str) -> list[Doc]:
    return [e.to_dict() for e in app.ports.store.read(gid)]


def moves_checked(report: Any) -> int:
    """How many bot moves the passed ``bot moves`` check re-decided."""
    text = report.checks["bot moves"]
    assert text.startswith("ok: "), report.checks
    return int(text.split()[1])


def budget_game(seed: str = "budget") -> tuple[App, str, list[Doc]]:
    """A live Fox game of a search on a 10 ms budget against the heuristic bot."""
    app, fixed = memory_app()
    gid = creation.create_game(app, "fox", [BUDGET, {"bot": "heuristic"}], {"target": 1},
                               seed=seed).game_id  # fmt: skip
    finish(app, "fox", gid, fixed)
    return app, gid, exported(app, gid)


def searched(docs: list[Doc], seat: int = 0) -> list[Doc]:
    return [d for d in docs if d.get("command") and d["seat"] == seat
            and d["command_id"].startswith("bot-")]  # fmt: skip


def test_a_budget_ms_search_records_its_iterations_and_its_game_passes_the_audit() -> None:
    _, gid, docs = budget_game()
    moves = searched(docs)
    counts = [d["command"][bots.BOT_ITERATIONS] for d in moves]
    assert moves and all(isinstance(n, int) and n >= 0 for n in counts)
    assert max(counts) >= 1  # a real search, not only forced moves
    # The heuristic bot's moves record nothing: its spec alone says how it decides.
    assert all(bots.BOT_ITERATIONS not in d["command"] for d in searched(docs, 1))
    report = audit(gid, docs)
    assert report.status == "passed", report.checks
    assert moves_checked(report) == len(moves) + len(searched(docs, 1))


def test_the_iteration_count_is_shown_only_to_its_seat_and_to_auditors() -> None:
    """How many iterations fit in the budget depends on what the search explored, and so on
    the seat's hidden hand: other seats and spectators read the command without it."""
    app, gid, _ = budget_game("budget-hidden")
    envelopes = app.ports.store.read(gid)
    engine = games.get("fox")
    readers: tuple[int | None, ...] = (1, None)
    for reader in readers:
        theirs = [d for d in visible_events(engine, envelopes, reader)
                  if d.get("command") and d["seat"] == 0]  # fmt: skip
        assert theirs and all(bots.BOT_ITERATIONS not in d["command"] for d in theirs)
        assert all(d["command"]["redacted"] is True for d in theirs)
    for auditor in (0, AUDITOR):
        mine = searched(visible_events(engine, envelopes, auditor))
        assert mine and all(bots.BOT_ITERATIONS in d["command"] for d in mine)


def forge_running(docs: list[Doc], version: int, body: Doc) -> list[Doc]:
    """What the holder of a running game's store (and seed) can write: the log up to
    ``version``, where the command is replaced by ``body``, decided again by the service's own
    ``decide_any`` and sealed with the seed by its own ``seal`` (the recorded iteration
    count kept, if ``body`` has one)."""
    seed = docs[-1]["data"]["seed"]
    envelopes = [Envelope.from_dict(d) for d in docs]
    before = fold("g", envelopes[: version - 1])
    first = envelopes[version - 1]
    assert first.command is not None and first.seat is not None
    new, _, recorded = decide_any(before.engine, before.match, before.state, first.seat, body,
                                  seed, version - 1, ms_of(first.at))  # fmt: skip
    if bots.BOT_ITERATIONS in body:
        recorded = {**recorded, bots.BOT_ITERATIONS: body[bots.BOT_ITERATIONS]}
    sealed = seal(new, after_version=version - 1, prev_hash=before.head_hash,
                  command_id=first.command_id, seat=first.seat, at=first.at, seed=seed,
                  command=recorded)  # fmt: skip
    return docs[: version - 1] + [e.to_dict() for e in sealed]


def other_legal(docs: list[Doc], version: int, seat: int) -> Doc | None:
    """A legal command for ``seat`` before ``version`` other than the one the log records."""
    record = fold("g", [Envelope.from_dict(d) for d in docs[: version - 1]])
    seen = view(record, seat)
    recorded = docs[version - 1]["command"]
    if "move" in recorded:
        recorded = recorded["move"]
    other = [c for c in seen["legal_commands"] if not _same(record.engine, c, recorded)]
    return other[0] if other else None


def test_a_forged_budget_ms_move_fails_at_its_version() -> None:
    """The forger keeps the recorded count (and every hash right); the search replayed with
    that count plays the honest move, not the forged one."""
    _, gid, docs = budget_game("budget-forged")
    seed = docs[-1]["data"]["seed"]
    for d in searched(docs):
        other = other_legal(docs, d["version"], 0)
        if other is not None:
            break
    else:
        raise AssertionError("the search never had a choice")
    body = {**other, bots.BOT_ITERATIONS: d["command"][bots.BOT_ITERATIONS]}
    forged = forge_running(docs, d["version"], body)
    version = d["version"]
    # A running game: the service audits it with the seed it holds.
    assert audit(gid, forge_running(docs, version, d["command"]), seed=seed).status == "passed"
    report = audit(gid, forged, seed=seed)
    assert report.first_failure == {
        "check": "bot moves",
        "version": version,
        "reason": f"bot move at version {version} is not what ismcts:budget_ms=10 plays from "
        "that seat's view",
    }, report.checks
    # Without its count the move cannot be replayed at all: it is a game stored before counts
    # were recorded, as far as the audit can tell, so the move is not re-checked, and the
    # report says so (test_audit_bot_policies.py).
    bare = audit(gid, forge_running(docs, version, dict(other)), seed=seed)
    assert bare.unchecked == ["bot moves"], bare.checks
    assert "no recorded iteration count" in bare.checks["bot moves"]


CLOCKED = {"turn_seconds": 5, "reserve_seconds": 0, "takeover_after": 2, "timeout_bot": BUDGET}


def timed_out_game(seed: str) -> tuple[str, list[Doc]]:
    """Fox between two players with a clock; the first to act never moves: the timeout bot
    (a 10 ms search) moves for it twice, then takes its seat over."""
    app, fixed = memory_app()
    gid = creation.create_game(app, "fox", [{"name": "a"}, {"name": "b"}], {"target": 1},
                               seed=seed, clock_spec=CLOCKED).game_id  # fmt: skip
    sleeper = queries.view(app, gid, None)["to_act"][0]  # type: ignore[index]
    finish(app, "fox", gid, fixed, sleeper=sleeper)
    return gid, exported(app, gid)


def test_a_forged_timeout_bot_move_fails_at_its_version() -> None:
    gid, docs = timed_out_game("timeout-forged")
    seed = docs[-1]["data"]["seed"]
    outs = [d for d in docs if d.get("command") and d["command"]["type"] == "time_out"]
    assert len(outs) == 2 and all(bots.BOT_ITERATIONS in d["command"] for d in outs)
    for d in outs:
        other = other_legal(docs, d["version"], d["seat"])
        if other is not None:
            break
    else:
        raise AssertionError("the timeout bot never had a choice")
    body = {**d["command"], "move": other}
    report = audit(gid, forge_running(docs, d["version"], body), seed=seed)
    assert report.first_failure is not None, report.checks
    assert report.first_failure["check"] == "bot moves", report.first_failure
    assert report.first_failure["version"] == d["version"]
    assert "is not what ismcts:budget_ms=10 plays" in report.first_failure["reason"]


def test_a_bots_move_relabelled_as_a_players_fails() -> None:
    """Re-deciding only ``bot-`` commands is not enough: a forger would give its forged move
    another command id. A seat a bot plays takes only its bot's commands."""
    docs = [e.to_dict() for e in play("fox", [{"bot": "heuristic"}] * 2, {"target": 1},
                                      "relabelled").envelopes]  # fmt: skip
    first = next(d for d in docs if d.get("command"))
    for d in docs:
        if d["command_id"] == first["command_id"]:
            d["command_id"] = "s0-mine"
    report = audit("g", rehash(docs))
    assert report.first_failure is not None, report.checks
    assert report.first_failure["check"] == "bot moves"
    assert report.first_failure["version"] == first["version"]
    assert "is played by a bot" in report.first_failure["reason"]


def test_a_bot_move_said_to_be_decided_on_an_older_view_fails() -> None:
    """The command id names the view a bot read; alone to act, a bot moves right after it (it
    pins that version), so a forger cannot pick an older view whose move suits it better."""
    docs = [e.to_dict() for e in play("fox", [{"bot": "heuristic"}] * 2, {"target": 1},
                                      "older-view").envelopes]  # fmt: skip
    earlier, later = bot_move_versions(docs, 0)[3:5]
    moved = next(d for d in docs if d["command_id"] == f"bot-0-{later}" and d.get("command"))
    for d in docs:
        if d["command_id"] == f"bot-0-{later}":
            d["command_id"] = f"bot-0-{earlier}"
    report = audit("g", rehash(docs))
    assert report.first_failure is not None, report.checks
    assert (report.first_failure["check"], report.first_failure["version"]) == (
        "bot moves", moved["version"])  # fmt: skip
    assert f"decided at version {earlier}" in report.first_failure["reason"]


def test_a_players_command_records_no_iteration_count() -> None:
    app, fixed = memory_app()
    gid = creation.create_game(app, "fox", [{"name": "a"}, {"bot": "random"}], {"target": 1},
                               seed="player-count").game_id  # fmt: skip
    drain(app, "fox")
    mine = queries.view(app, gid, 0)
    assert mine is not None and 0 in mine["to_act"]
    body = {**mine["legal_commands"][0], bots.BOT_ITERATIONS: 7}
    assert send(app, "fox", gid, 0, body, "s0-1")["status"] == "accepted"
    recorded = [d["command"] for d in exported(app, gid) if d["command_id"] == "s0-1"]
    assert recorded and bots.BOT_ITERATIONS not in recorded[0]


# --- every honest kind of game the service plays still passes ----------------------------------


def _simultaneous() -> tuple[str, list[Doc]]:
    app, fixed = memory_app()
    gid = creation.create_game(app, "skye", [{"bot": "heuristic"}, {"bot": "random"},
                                             {"bot": "heuristic"}], seed="skye-bots").game_id  # fmt: skip
    finish(app, "skye", gid, fixed)
    docs = exported(app, gid)
    # Bots that decided on an older view than the one their move was applied to (Skye's
    # prices and building, several seats at once): the view is the one the id names.
    assert any(int(d["command_id"].rsplit("-", 1)[1]) < d["version"] - 1
               for d in docs if d.get("command") and d["command_id"].startswith("bot-"))  # fmt: skip
    return gid, docs


def _resigned() -> tuple[str, list[Doc]]:
    app, fixed = memory_app()
    gid = creation.create_game(app, "skull", [{"name": f"p{i}"} for i in range(3)],
                               seed="resigned-bots").game_id  # fmt: skip
    assert send(app, "skull", gid, 0, {"type": "resign"}, "s0-r")["status"] == "accepted"
    finish(app, "skull", gid, fixed)
    return gid, exported(app, gid)


def _contributed() -> tuple[str, list[Doc]]:
    app, fixed = memory_app()
    gid = creation.create_game(app, "fox", [{"name": "a"}, {"bot": "heuristic"}], {"target": 1},
                               seed="contributed-bots",
                               fairness_mode=fairness.CONTRIBUTED).game_id  # fmt: skip
    body = {"type": fairness.CONTRIBUTE, "client_seed": "mine"}
    assert send(app, "fox", gid, 0, body, "s0-e")["status"] == "accepted"
    finish(app, "fox", gid, fixed)
    return gid, exported(app, gid)


def _lobby() -> tuple[str, list[Doc]]:
    app, fixed = memory_app()
    gid = creation.create_game(app, "skull", [{"open": True}, {"bot": "heuristic"},
                                              {"bot": "random"}], seed="lobby-bots").game_id  # fmt: skip
    join = {"type": service_commands.Join.TYPE, "name": "late", "token_sha256": "0" * 64}
    assert send(app, "skull", gid, 0, join, "join-0")["status"] == "accepted"
    finish(app, "skull", gid, fixed)
    return gid, exported(app, gid)


def _tournament_search() -> tuple[str, list[Doc]]:
    # A tournament's game is this play-out, sealed whole (``tournaments.play_games``).
    played = play("fox", [BUDGET, {"bot": "heuristic"}], {"target": 1}, "tournament-budget")
    docs = [e.to_dict() for e in played.envelopes]
    assert searched(docs) and all(bots.BOT_ITERATIONS in d["command"] for d in searched(docs))
    return "tournament-0", docs


def _ismcts_iterations() -> tuple[str, list[Doc]]:
    specs: list[Doc] = [{"bot": "ismcts", "iterations": 30}, {"bot": "random"},
                        {"bot": "heuristic"}]  # fmt: skip
    return "skull-search", [e.to_dict() for e in play("skull", specs, {}, "ismcts-it").envelopes]


@pytest.mark.parametrize(
    "make",
    [
        lambda: budget_game()[1:],
        _simultaneous,
        lambda: timed_out_game("timeout-honest"),
        _resigned,
        _contributed,
        _lobby,
        _tournament_search,
        _ismcts_iterations,
    ],
    ids=[
        "live budget_ms search",
        "simultaneous skye bots",
        "time-outs and a take-over",
        "resigned seat",
        "contributed fairness",
        "lobby with bots",
        "tournament budget_ms",
        "ismcts iterations",
    ],  # fmt: skip
)
def test_every_honest_kind_of_game_passes_with_its_bot_moves_re_decided(
    make: Callable[[], tuple[str, list[Doc]]],
) -> None:
    gid, docs = make()
    report = audit(gid, docs)
    assert report.status == "passed", report.checks
    assert moves_checked(report) > 0
