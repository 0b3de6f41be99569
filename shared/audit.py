"""The audit of a game's event log (the envelopes an auditor fetches, or an export): it proves
the log is the game the rules and the seed give, not only that its hashes agree.

Checks, in order (each ``ok``, ``FAILED`` naming the first version at fault, or ``waits``):

* **hash chain**: versions 1..n contiguous, every hash recomputed from its content;
* **complete**: the log reaches the head version the service reports (when told it);
* **seed commitment**: the seed revealed by the last event hashes to the ``seed_sha256``
  committed in the first;
* **opening draw**: the engine's ``setup`` with that seed (label ``setup``) gives exactly the
  recorded opening events;
* **commands legal**: every recorded command, decided again by the engine on the state before
  it, is accepted;
* **outcomes recomputed**: ... and gives exactly the recorded events, with the randomness the
  seed gives at that step (label ``v<version>``): every later deal, draw and shuffle;
* **final state**: the log folds into a final state; its digest (SHA-256 of the canonical
  JSON of every seat's view and the public view) is reported, so a replay elsewhere (an
  export, another implementation) can be compared with the live game.

Whoever holds the store can rewrite a history and recompute every hash; they cannot make a
stacked deck, a changed draw or an illegal move come out of the committed seed and the rules.
A game still running has no revealed seed: the checks that need it say ``waits`` unless the
caller holds the seed (the service's own audit for auditors passes it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared import games
from shared.app import fairness
from shared.app import match as match_
from shared.app.clock import ms_of
from shared.app.handlers import JOIN, decide_any, opening_ticks, setup_events
from shared.events import (
    ENTROPY_CONTRIBUTED,
    GAME_CREATED,
    SEED_REVEALED,
    SERVICE_EVENTS,
    Envelope,
    canonical_json,
    verify_chain,
    verify_links,
)
from shared.games.errors import GameError
from shared.games.rng import seed_hash
from shared.projections import view
from shared.record import fold

CHECKS = (
    "hash chain",
    "complete",
    "seed commitment",
    "opening draw",
    "commands legal",
    "outcomes recomputed",
    "final state",
)


@dataclass(slots=True)
class AuditReport:
    """Each check and what it found; ``ok`` when no check failed, ``complete`` when none had
    to wait for the seed."""

    game_id: str
    checks: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
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
        """Every check could run (none waits for the seed)."""
        return not self.waiting

    @property
    def status(self) -> str:
        """``passed``, ``failed`` or ``incomplete`` (nothing failed, some checks wait)."""
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

    def to_doc(self) -> dict[str, Any]:
        """The report as JSON (``GET /v1/games/{id}/audit``)."""
        return {
            "game": self.game_id,
            "status": self.status,
            "version": self.version,
            "commands": self.commands,
            "checks": [
                {"name": name, "result": text.split(":", 1)[0].lower(), "detail": text}
                for name, text in self.checks.items()
            ],
            "first_failure": self.first_failure,
            "final_state_digest": self.digest,
        }


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
    _redecide(report, game_id, engine, envelopes, secret)
    try:
        record = fold(game_id, envelopes)
    except Exception as exc:  # any failure to replay is the finding
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
    state = None
    if contributed:
        # Dealt later, from the play seed, by the last client seed's command (below).
        if len(opening) > 1:
            report.failed(
                "opening draw",
                "a game of contributed fairness was dealt before its client seeds",
                opening[1].version,
            )
            return
    else:
        n = len(created["seats"])
        try:
            drawn = setup_events(engine, n, created["options"], seed)
        except GameError as exc:
            report.failed("opening draw", f"setup refuses the recorded options: {exc}", 1)
            return
        # A game with a clock arms its first deadlines at its creation's time.
        drawn = [*drawn, *opening_ticks(engine, created, drawn, ms_of(opening[0].at))]
        recorded = [{"type": e.type, "data": e.data} for e in opening[1:]]
        expected = [{"type": e.type, "data": e.data} for e in drawn]
        if _plain(expected) != _plain(recorded):
            at = opening[0].version + 1 + _first_difference(expected, recorded)
            report.failed(
                "opening draw", f"setup from the seed differs from the log at version {at}", at
            )
            return
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
        if body.get("type") == JOIN:
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
        if contributed and state is None and state_after is not None:
            dealt = sum(1 for e in group if e.type not in SERVICE_EVENTS)
            report.passed(
                "opening draw",
                f"{dealt} setup events at version {first.version + 1} recomputed from the play "
                f"seed: HMAC of the server seed over the {sum(c is not None for c in match.contributions)} "
                "client seeds",
            )
        state = state_after
    if contributed and "opening draw" not in report.checks:
        report.wait("opening draw", "the game is not dealt yet: it waits for client seeds")
    report.commands = commands
    report.passed("commands legal", f"{commands} commands re-decided, every one accepted")
    report.passed(
        "outcomes recomputed",
        f"{commands} commands give exactly the logged events with the seed's randomness",
    )


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
