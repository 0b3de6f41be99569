"""The audit of a game's event log (the envelopes an auditor fetches, or an export): it proves
the log is the game the rules and the seed give, not only that its hashes agree.

Checks, in order (each ``ok``, ``FAILED`` naming the first version at fault, ``waits``, or
``not re-checked``):

* **hash chain**: versions 1..n contiguous, every hash recomputed from its content;
* **complete**: the log reaches the head version the service reports (when told it);
* **seed commitment**: the seed revealed by the last event hashes to the ``seed_sha256``
  committed in the first;
* **opening draw**: the engine's ``setup`` with that seed (label ``setup``) gives exactly the
  recorded opening events: those the service appends with ``game_created``
  (``opening.opening_events``), or for a lobby game or one of contributed fairness those of
  the command that deals it (the last join, the last client seed);
* **commands legal**: every recorded command, decided again by the engine on the state before
  it, is accepted;
* **outcomes recomputed**: ... and gives exactly the recorded events, with the randomness the
  seed gives at that step (label ``v<version>``): every later deal, draw and shuffle;
* **bot moves**: every built-in bot's move (``bot-<seat>-<version>``, and a timeout bot's
  move for a seat whose clock ran out) is what that bot plays from the seat's view at the
  version it decided at, with ``bot_random(play seed, seat, version)``; a search on a time
  budget replays the iterations recorded with its command. A move this service cannot
  re-decide is ``not re-checked`` (neither passed nor failed, and counted in the check's
  text): its bot's policy version recorded in ``game_created`` (``bot_policies``; absent, 1)
  is not this service's (the bot was changed since), or a search on a time budget recorded
  no iteration count (a game stored before counts were recorded). A registered bot's move
  (``shared/app/bot_turns.py``) is not re-decided: its ``bot_turn.sent_sha256`` must be the hash
  of the turn body rebuilt from the seat's view at that version (it was sent that seat's view
  and nothing else), and a failure's move must be its ``on_failure`` policy's;
* **final state**: the log folds into a final state; its digest (SHA-256 of the canonical
  JSON of every seat's view and the public view) is reported, so a replay elsewhere (an
  export, another implementation) can be compared with the live game.

Whoever holds the store can rewrite a history and recompute every hash; they cannot make a
stacked deck, a changed draw, an illegal move or a bot's move its policy would not make come
out of the committed seed and the rules.
A game still running has no revealed seed: the checks that need it say ``waits`` unless the
caller holds the seed (the service's own audit for auditors passes it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared import games
from shared.app import bots
from shared.app.bot_turns import hides, turn_fault
from shared.app.messages import BOT_COMMAND_PREFIX
from shared.app.opening import dealt_at_creation, opening_events
from shared.app.results import bot_label
from shared.app.service_commands import Join, TimeOut, decide_any, parse
from shared.app.steps import timeout_bot_move
from shared.events import (
    ENTROPY_CONTRIBUTED,
    GAME_CREATED,
    RULES_VERSION,
    SEED_REVEALED,
    SERVICE_EVENTS,
    TURN_TIMED_OUT,
    Envelope,
    canonical_json,
    verify_chain,
    verify_links,
)
from shared.games.errors import GameError
from shared.games.rng import bot_random, seed_hash
from shared.match import aggregate as match_
from shared.match import fairness
from shared.match.clock import ms_of
from shared.match.projections import view
from shared.match.record import GameRecord, fold

CHECKS = (
    "hash chain",
    "complete",
    "seed commitment",
    "opening draw",
    "commands legal",
    "outcomes recomputed",
    "bot moves",
    "final state",
)


# A check's result in the JSON report, by its text's prefix: "unchecked" as the JS verifier
# names a check it could not make.
_RESULTS = {"ok": "ok", "FAILED": "failed", "waits": "waits", "not re-checked": "unchecked"}


@dataclass(slots=True)
class AuditReport:
    """Each check and what it found; ``ok`` when no check failed, ``complete`` when none had
    to wait for the seed. ``unchecked``: checks that left part of what they cover out (said
    in their text), which is no failure: ``ok`` and ``status`` are as if they passed."""

    game_id: str
    checks: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    first_failure: dict[str, Any] | None = None
    digest: str | None = None
    version: int = 0
    commands: int = 0

    @property
    def ok(self) -> bool:
        """No check failed."""
        return not self.failures

    @property
    def complete(self) -> bool:
        """Every check could run (none waits for the seed), and the moves were re-decided
        (the game's rules are this build's)."""
        return not self.waiting and "rules" not in self.unchecked

    @property
    def status(self) -> str:
        """``passed``, ``failed`` or ``incomplete`` (nothing failed; some checks wait, or the
        game was decided under rules this build does not re-decide)."""
        if self.failures:
            return "failed"
        return "passed" if self.complete else "incomplete"

    def passed(self, name: str, detail: str) -> None:
        """Record a passed check."""
        self.checks[name] = f"ok: {detail}"

    def failed(self, name: str, detail: str, version: int | None = None) -> None:
        """Record a failed check (the first failure is kept with its version)."""
        self.checks[name] = f"FAILED: {detail}"
        self.failures.append(name)
        if self.first_failure is None:
            self.first_failure = {"check": name, "version": version, "reason": detail}

    def wait(self, name: str, detail: str) -> None:
        """Record a check that cannot run yet."""
        self.checks[name] = f"waits: {detail}"
        self.waiting.append(name)

    def not_rechecked(self, name: str, detail: str) -> None:
        """Record a check that found nothing wrong but could not re-check all it covers."""
        self.checks[name] = f"not re-checked: {detail}"
        self.unchecked.append(name)

    def to_doc(self) -> dict[str, Any]:
        """The report as JSON (``GET /v1/games/{id}/audit``)."""
        return {
            "game": self.game_id,
            "status": self.status,
            "version": self.version,
            "commands": self.commands,
            "checks": [
                {"name": name, "result": _result(text), "detail": text}
                for name, text in self.checks.items()
            ],
            "first_failure": self.first_failure,
            "unchecked": list(self.unchecked),
            "final_state_digest": self.digest,
        }


def _result(text: str) -> str:
    prefix = text.split(":", 1)[0]
    return _RESULTS.get(prefix, prefix.lower())


def audit(
    game_id: str,
    docs: Iterable[Mapping[str, Any]],
    *,
    seed: str | None = None,
    head_version: int | None = None,
) -> AuditReport:
    """Audit the envelopes (dicts as ``GET /events`` gives them to an auditor, or the lines of
    an export). ``seed``: the secret seed of a game still running (the service's own audit);
    ``head_version``: the version the service reports, which the log must reach."""
    report = AuditReport(game_id)
    try:
        envelopes = [Envelope.from_dict(d) for d in docs]
    except (KeyError, TypeError) as exc:
        report.failed("envelopes", f"missing field {exc} (fetch the events with an auditor key)")
        return report
    # The hashes are salted from the seed: with it (revealed at the end, or given) every hash
    # is recomputed; without it only the links are checked now.
    last_doc = envelopes[-1] if envelopes else None
    chain_seed = seed
    if last_doc is not None and last_doc.type == SEED_REVEALED:
        chain_seed = str(last_doc.data.get("seed"))
    try:
        if chain_seed is not None:
            last = verify_chain(envelopes, chain_seed)
            report.passed("hash chain", f"versions 1..{last} contiguous, every hash recomputed")
        else:
            last = verify_links(envelopes)
            report.wait(
                "hash chain",
                f"versions 1..{last} contiguous and linked; each hash is salted from the seed "
                "and is recomputed once it is revealed",
            )
    except ValueError as exc:
        report.failed("hash chain", str(exc), _version_in(str(exc)))
        return report
    report.version = last
    if head_version is not None:
        if last < head_version:
            report.failed(
                "complete",
                f"the log ends at version {last}, before the head version {head_version}",
                last + 1,
            )
        else:
            report.passed("complete", f"the log reaches the head version {head_version}")
    if not envelopes or envelopes[0].type != GAME_CREATED:
        report.failed("creation", "the first event is not game_created", 1)
        return report
    created = envelopes[0].data
    try:
        engine = games.get(str(created["game"]))
    except KeyError:
        report.failed("creation", f"unknown game {created.get('game')!r}", 1)
        return report
    revealed = envelopes[-1].data.get("seed") if envelopes[-1].type == SEED_REVEALED else None
    if revealed is not None:
        if seed_hash(str(revealed)) == created["seed_sha256"]:
            report.passed("seed commitment", "sha256(revealed seed) equals the committed hash")
        else:
            report.failed(
                "seed commitment",
                "the revealed seed does not match sha256 in game_created",
                envelopes[-1].version,
            )
            return report
    elif seed is not None:
        if seed_hash(seed) != created["seed_sha256"]:
            report.failed("seed commitment", "the given seed does not match the commitment", 1)
            return report
        report.passed(
            "seed commitment", "sha256(the seed held by the service) equals the commitment"
        )
    else:
        report.wait("seed commitment", "the seed is revealed when the game ends")
    secret = revealed if revealed is not None else seed
    other_rules = _other_rules(created)
    if other_rules is not None:
        # Decided under rules this build does not hold: re-deciding it here would fail moves
        # that were right then. Its chain and seed are checked above; the rest says so.
        for name in ("rules", "opening draw", "commands legal", "bot moves"):
            report.not_rechecked(name, other_rules)
    else:
        _redecide(report, game_id, engine, envelopes, secret)
        _bot_moves(report, game_id, engine, envelopes, secret)
    try:
        record = fold(game_id, envelopes)
    except Exception as exc:  # any failure to replay is the finding
        if other_rules is not None:
            report.not_rechecked("final state", f"{other_rules} ({type(exc).__name__}: {exc})")
            return report
        report.failed("final state", f"{type(exc).__name__}: {exc}", None)
        return report
    report.digest = state_digest(record)
    result = record.outcome
    summary = (
        "game still running"
        if result is None
        else f"winners {list(result['winners'])}, scores {result['scores']}"
    )
    report.passed(
        "final state", f"{len(envelopes)} events fold ({summary}); digest {report.digest}"
    )
    return report


def _other_rules(created: Mapping[str, Any]) -> str | None:
    """Why the game cannot be re-decided by this build's rules (recorded in ``game_created``
    as ``rules_version``, absent: 1), or None when they are the ones it was decided under."""
    game = str(created["game"])
    recorded = created.get(RULES_VERSION, 1)
    current = games.rules_version(game)
    if recorded == current:
        return None
    return (
        f"decided under {game} rules version {recorded}; this build decides version "
        f"{current}: its moves are not re-decided here (audit it with a build of those rules)"
    )


def check_history(docs: Iterable[Mapping[str, Any]], seen: Mapping[int, str]) -> list[int]:
    """The versions at which a log's hash differs from the head hash a player was shown
    (``seen``: version -> the ``head_hash`` of the view at that version), or is missing. An
    empty list: the log is the history the player saw, as far as it saw it. (Check the log's
    own chain with ``audit``: this only compares it with what was shown.)"""
    hashes = {int(d["version"]): d.get("hash") for d in docs}
    return sorted(int(v) for v, h in seen.items() if int(v) > 0 and hashes.get(int(v)) != h)


def _redecide(
    report: AuditReport,
    game_id: str,
    engine: Any,
    envelopes: Sequence[Envelope],
    seed: str | None,
) -> None:
    """The opening draw and every command, decided again and compared with the log."""
    groups = _groups(envelopes)
    opening, rest = groups[0], groups[1:]
    created = opening[0].data
    if seed is None:
        for name in ("opening draw", "commands legal", "outcomes recomputed"):
            report.wait(name, "needs the seed (revealed when the game ends)")
        report.commands = sum(1 for g in rest if g[0].command is not None)
        return
    match = match_.evolve(None, GAME_CREATED, created)
    assert match is not None
    contributed = match.fairness == fairness.CONTRIBUTED
    # The opening is what the service appends with game_created, by the service's own
    # definition: the setup (and a clock's first deadlines) for a game dealt at its creation,
    # nothing for a lobby game or one of contributed fairness, which a command deals (the last
    # join, the last client seed): that command is re-decided below like any other.
    dealt_later = not dealt_at_creation(created)
    try:
        drawn = opening_events(engine, created, seed, ms_of(opening[0].at))
    except GameError as exc:
        report.failed("opening draw", f"setup refuses the recorded options: {exc}", 1)
        return
    recorded = [{"type": e.type, "data": e.data} for e in opening[1:]]
    expected = [{"type": e.type, "data": e.data} for e in drawn]
    if _plain(expected) != _plain(recorded):
        at = opening[0].version + 1 + _first_difference(expected, recorded)
        if not dealt_later:
            why = f"setup from the seed differs from the log at version {at}"
        elif contributed:
            why = "a game of contributed fairness was dealt before its client seeds"
        else:
            why = "a lobby game was dealt before its open seats were joined"
        report.failed("opening draw", why, at)
        return
    state = None
    if not dealt_later:
        report.passed("opening draw", f"{len(drawn)} setup events recomputed from the seed")
    for e in opening[1:]:
        if e.type in SERVICE_EVENTS:
            match = match_.evolve(match, e.type, e.data) or match
            continue
        state = engine.evolve(state, engine.event_from_json({"type": e.type, "data": e.data}))
    commands = 0
    for group in rest:
        first = group[0]
        if all(e.type in SERVICE_EVENTS for e in group) and first.command is None:
            for e in group:  # a seat change, a clock... (the match's own events)
                if e.type != SEED_REVEALED:
                    match = match_.evolve(match, e.type, e.data) or match
            continue
        before = first.version - 1
        if first.command is None or first.seat is None:
            report.failed(
                "commands legal",
                f"version {first.version}: engine events with no recorded command",
                first.version,
            )
            return
        commands += 1
        body = dict(first.command)
        joined = isinstance(parse(body), Join)
        if joined:
            # The join's token hash and client seed are recorded in its events, not its command.
            body["token_sha256"] = first.data.get("occupant", {}).get("token_sha256")
            seeds = [e.data["client_seed"] for e in group if e.type == ENTROPY_CONTRIBUTED]
            if seeds:
                body["client_seed"] = seeds[0]
        try:
            new, state_after, _ = decide_any(
                engine, match, state, first.seat, body, seed, before, ms_of(first.at)
            )
        except GameError as exc:
            report.failed(
                "commands legal",
                f"version {first.version}: seat {first.seat}'s {first.command.get('type')!r} "
                f"is refused by the rules ({exc.code}: {exc})",
                first.version,
            )
            return
        redecided = [{"type": e.type, "data": e.data} for e in new]
        logged = [{"type": e.type, "data": e.data} for e in group]
        if _plain(redecided) != _plain(logged):
            at = _first_difference(redecided, logged)
            report.failed(
                "outcomes recomputed",
                f"version {first.version + at}: the command re-decided with the seed gives "
                f"{_describe(redecided, at)}, the log has {_describe(logged, at)}",
                first.version + at,
            )
            return
        for e in group:
            if e.type in SERVICE_EVENTS and e.type != SEED_REVEALED:
                match = match_.evolve(match, e.type, e.data) or match
        if dealt_later and state is None and state_after is not None:
            dealt = [e.version for e in group if e.type not in SERVICE_EVENTS]
            by = "the last join" if joined else "the last client seed"
            seeded = "the seed"
            if contributed:
                given = sum(c is not None for c in match.contributions)
                seeded = f"the play seed: HMAC of the server seed over the {given} client seeds"
            report.passed(
                "opening draw",
                f"{len(dealt)} setup events at version {dealt[0]}, dealt by {by}, "
                f"recomputed from {seeded}",
            )
        state = state_after
    if dealt_later and "opening draw" not in report.checks:
        waits = "client seeds" if fairness.waiting_for(match) else "players to join open seats"
        report.wait("opening draw", f"the game is not dealt yet: it waits for {waits}")
    report.commands = commands
    report.passed("commands legal", f"{commands} commands re-decided, every one accepted")
    report.passed(
        "outcomes recomputed",
        f"{commands} commands give exactly the logged events with the seed's randomness",
    )


def _bot_moves(
    report: AuditReport,
    game_id: str,
    engine: Any,
    envelopes: Sequence[Envelope],
    seed: str | None,
) -> None:
    """Every bot's move decided again by its bot, from what it saw: a bot's move is a function
    of the seat's view at the version it decided at and of ``bot_random(play seed, seat,
    version)``, so a history that someone holding the seed rewrote with a bot playing
    otherwise (and the bots' policies played on from there, every hash re-sealed) fails here,
    at that move. A seat a bot plays takes only bot commands: a bot's move relabelled as a
    player's would escape this check, so it fails too.

    A move this service's bots cannot re-decide (``_unreplayable``: the bot's policy changed
    since the game, or a time-budget search's count was not recorded) is neither passed nor
    failed: the check is then ``not re-checked``, counting those moves by why."""
    name = "bot moves"
    if seed is None:
        report.wait(name, "needs the seed (a bot draws from it): revealed when the game ends")
        return
    if report.failures:
        return  # the log is already refused: its moves are not the game the seed gives
    created = envelopes[0].data
    policies = created.get(bots.BOT_POLICIES, {})
    if not isinstance(policies, Mapping) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in policies.values()
    ):
        # No service writes anything else: which moves to re-check must not be left to it.
        why = f"game_created's {bots.BOT_POLICIES} is not a map of bot names to versions"
        report.failed(name, why, 1)
        return
    # The record at the end of each command: a bot reads the view of one of those versions.
    seen: dict[int, GameRecord] = {}
    record: GameRecord | None = None
    moves = 0
    skipped: dict[str, int] = {}  # why a move is not re-checked -> how many, in order met
    plain = 0  # registered bots' turns committed with a plain hash (seats from before nonces)
    for group in _groups(envelopes):
        first = group[0]
        if record is not None and first.command is not None and first.seat is not None:
            command_id = str(first.command_id)
            fault: str | _Unchecked | _Plain | None = None
            if command_id.startswith(BOT_COMMAND_PREFIX):
                moves += 1
                fault = _bot_move_fault(engine, seen, first, seed, created)
            elif isinstance(parse(first.command), TimeOut) and "move" in first.command:
                moves += 1
                fault = _timeout_move_fault(engine, record, group, seed, created)
            elif record.match.seats[first.seat].bot is not None:
                fault = (
                    f"version {first.version}: seat {first.seat} is played by a bot, but its "
                    f"command {command_id!r} is not the bot's"
                )
            if isinstance(fault, _Plain):
                plain += 1
            elif isinstance(fault, _Unchecked):
                skipped[fault.why] = skipped.get(fault.why, 0) + 1
            elif fault is not None:
                report.failed(name, fault, first.version)
                return
        record = fold(game_id, group, record)
        seen[record.version] = record
    note = (
        f"; {plain} registered bot turns were recorded before turns carried a nonce: their "
        "sent_sha256 is a plain hash of the body, which did not hide the seat's view while "
        "the game ran"
        if plain
        else ""
    )
    if skipped:
        left_out = sum(skipped.values())
        whys = ", ".join(f"{n} by {why}" for why, n in skipped.items())
        report.not_rechecked(
            name,
            f"{left_out} of {moves} bot moves: {whys}; the other {moves - left_out} re-decided "
            f"from the seat's view and the seed: each is what its bot plays{note}",
        )
        return
    report.passed(
        name,
        f"{moves} bot moves re-decided from the seat's view and the seed: each is what its "
        f"bot plays{note}",
    )


@dataclass(frozen=True, slots=True)
class _Unchecked:
    """A bot move this service cannot re-decide, and why (the bot and what is missing)."""

    why: str


class _Plain:
    """A registered bot's move that checks, from a seat created before turns carried a nonce:
    its ``sent_sha256`` was a plain hash of the body, which did not hide the seat's view from
    whoever read the events while the game ran (said in the report, not a failure)."""


_PLAIN_COMMITMENT = _Plain()


def _unreplayable(
    created: Mapping[str, Any], spec: Mapping[str, Any], counted: Any
) -> _Unchecked | None:
    """Why the move of the bot of ``spec`` (``counted``: the iterations recorded with it)
    cannot be re-decided here, or None. Its bot's policy version recorded in ``game_created``
    (absent: 1, from before versions were recorded) must be this service's: another policy's
    move is no evidence either way. A search on a time budget must have its count: without it
    (a game stored before counts were recorded) nothing says how far the search got."""
    bot = str(spec["bot"])
    recorded = created.get(bots.BOT_POLICIES, {}).get(bot, 1)
    current = bots.policy_version(bot, str(created["game"]))
    if recorded != current:
        return _Unchecked(
            f"{bot} (policy version {recorded} in this game, {current} in this service)"
        )
    kind = bots.BOTS.get(bot)  # an unknown bot: ``bots.replay`` refuses its spec
    if counted is None and kind is not None and kind.timed is not None and kind.timed in spec:
        label = bot_label(bot, {k: v for k, v in spec.items() if k != "bot"})
        return _Unchecked(f"{label} (a search on a time budget with no recorded iteration count)")
    return None


def _bot_move_fault(
    engine: Any,
    seen: Mapping[int, GameRecord],
    first: Envelope,
    seed: str,
    created: Mapping[str, Any],
) -> str | _Unchecked | _Plain | None:
    """Why the bot move recorded at ``first`` is not its bot's (None: it is; ``_Unchecked``:
    this service cannot tell; ``_Plain``: it is, with a commitment that did not hide). Its command id
    ``bot-<seat>-<version>`` names the version whose view the bot read (when several seats act
    at once it may be older than the version before the move)."""
    seat, version = first.seat, first.version
    assert seat is not None and first.command is not None
    prefix, _, at_text = str(first.command_id).rpartition("-")
    at = int(at_text) if at_text.isdigit() else -1
    if prefix != f"{BOT_COMMAND_PREFIX}{seat}" or at not in seen or at >= version:
        return (
            f"bot move at version {version}: its command id {first.command_id!r} names no "
            f"version seat {seat}'s bot could have read"
        )
    doc = view(seen[at], seat)
    if len(doc["to_act"]) <= 1 and at != version - 1:
        # Alone to act, a bot pins the version it read (``play_bot_move``): its move is the
        # next command or none.
        return (
            f"bot move at version {version}: decided at version {at}, but a bot alone to act "
            "moves right after the version it read"
        )
    spec = bots.bot_spec(doc, seat)
    if spec["bot"] == bots.REGISTERED:
        # A bot from outside: not re-decided (it is not ours), but the body it was sent is
        # rebuilt from the seat's view and must hash to what the log says was sent, and a
        # failure's move must be its on_failure policy's.
        play_seed = fairness.play_seed_of_view(doc, seed)
        why = turn_fault(doc, spec, str(doc["id"]), seat, at, first.command, play_seed, seed)
        if why is not None:
            return f"registered bot move at version {version}: {why}"
        return None if hides(spec) else _PLAIN_COMMITMENT
    label = bot_label(str(spec["bot"]), {k: v for k, v in spec.items() if k != "bot"})
    recorded = dict(first.command)
    counted = recorded.pop(bots.BOT_ITERATIONS, None)
    unchecked = _unreplayable(created, spec, counted)
    if unchecked is not None:
        return unchecked
    rng = bot_random(fairness.play_seed_of_view(doc, seed), seat, at)
    try:
        again = bots.replay(spec, doc, rng, counted)
    except bots.BotSpecError as exc:
        return f"bot move at version {version}: {label} cannot be replayed ({exc})"
    if again is None or not _same_command(engine, again, recorded):
        return f"bot move at version {version} is not what {label} plays from that seat's view"
    return None


def _timeout_move_fault(
    engine: Any,
    record: GameRecord,
    group: Sequence[Envelope],
    seed: str,
    created: Mapping[str, Any],
) -> str | _Unchecked | None:
    """Why the move recorded with a time-out is not its timeout bot's (None: it is;
    ``_Unchecked``: this service cannot tell): the bot decided from the seat's view after ``turn_timed_out`` (the group's first event), at
    the version before the time-out."""
    first = group[0]
    assert first.seat is not None and first.command is not None
    match = match_.evolve(record.match, first.type, first.data)
    if first.type != TURN_TIMED_OUT or match is None or match.clock is None:
        return f"version {first.version}: a time-out's move without the time-out"
    spec = dict(match.clock["timeout_bot"])
    label = bot_label(str(spec["bot"]), {k: v for k, v in spec.items() if k != "bot"})
    unchecked = _unreplayable(created, spec, first.command.get(bots.BOT_ITERATIONS))
    if unchecked is not None:
        return unchecked
    try:
        again, _ = timeout_bot_move(
            engine, match, record.state, first.seat, seed, first.version - 1,
            first.command.get(bots.BOT_ITERATIONS), replay=True,
        )  # fmt: skip
    except (bots.BotSpecError, GameError) as exc:
        return f"bot move at version {first.version}: {label} cannot be replayed ({exc})"
    if not _same_command(engine, again, first.command["move"]):
        why = f"is not what {label} plays from that seat's view"
        return f"bot move at version {first.version} {why}"
    return None


def _same_command(engine: Any, played: Mapping[str, Any], recorded: Mapping[str, Any]) -> bool:
    """Whether a bot's command (client JSON) is the recorded one, as the engine parses both."""
    try:
        mine = engine.command_to_json(engine.parse_command(played))
    except GameError:
        return False
    return bool(_plain(mine) == _plain(dict(recorded)))


def _groups(envelopes: Sequence[Envelope]) -> list[list[Envelope]]:
    """Consecutive envelopes of one command (one command id) together; the first is the
    creation (``game_created`` and the setup)."""
    out: list[list[Envelope]] = []
    for env in envelopes:
        if out and out[-1][0].command_id == env.command_id and env.command is None:
            out[-1].append(env)
        else:
            out.append([env])
    return out


def state_digest(record: Any) -> str:
    """SHA-256 of the canonical JSON of every seat's view and the public view at the end."""
    seats = range(len(record.match.seats))
    docs = [view(record, s) for s in seats] + [view(record, None)]
    for doc in docs:
        doc.pop("id", None)  # the same game under another id (an export) has the same digest
    return hashlib.sha256(canonical_json(docs).encode()).hexdigest()


def _first_difference(a: Sequence[Any], b: Sequence[Any]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if _plain(x) != _plain(y):
            return i
    return min(len(a), len(b))


def _describe(events: Sequence[Mapping[str, Any]], at: int) -> str:
    if at >= len(events):
        return "no event there"
    return f"a {events[at]['type']!r}"


def _version_in(text: str) -> int | None:
    words = text.replace(":", " ").split()
    for a, b in zip(words, words[1:], strict=False):
        if a == "version" and b.isdigit():
            return int(b)
    return None


def _plain(value: Any) -> Any:
    """Tuples as lists, so JSON read back and engine output compare equal."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
