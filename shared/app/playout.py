"""The one play-out driver: a whole game in process with the service's randomness labels.

``tabletop simulate``, tournaments and tests play games here. A game played here and the same
commands sent through the service (same seed, same command ids, same clock) give the same
envelopes byte for byte: both seal ``opening.creation_events`` with command id ``create``,
decide each command with ``steps.decide`` at label ``v<version>``, record the command
in its first envelope, and let the bot at seat ``s`` draw from ``bot_random(seed, s, version)``
with the command id ``bot-<s>-<version>``. Without a log (``keep_envelopes=False``: simulate,
benchmarks) the same game is played on one kernel kept for the whole game (``_fast``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared import games
from shared.app import bots, steps
from shared.app.opening import created_data, creation_events, seats_from_specs
from shared.app.steps import decide_events
from shared.events import (
    GAME_CREATED,
    GENESIS_HASH,
    ChainWriter,
    EncodedLog,
    Envelope,
    json_bytes,
    seal,
    stored_piece,
)
from shared.games.base import replay
from shared.games.rng import Rng, bot_choice_index, bot_random, seed_hash
from shared.match.aggregate import Match, Seat
from shared.match.aggregate import evolve as match_evolve
from shared.match.projections import view
from shared.match.record import GameRecord, fold

# (record before the move, seat) -> (command id, client JSON), or None to let the seat's bot act
Chooser = Callable[[GameRecord, int], tuple[str, dict[str, Any]] | None]
# (record before the move, seat, command, the engine's events, state after them)
Step = Callable[[GameRecord, int, Any, list[Any], Any], None]


@dataclass(slots=True)
class Played:
    """A finished play-out: the final record, and the envelopes when they were kept."""

    record: GameRecord
    actions: int = 0
    envelopes: list[Envelope] = field(default_factory=list)
    commands: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    # With ``encoded``: the sealed log as the store keeps it (``envelopes`` left empty).
    log: EncodedLog | None = None


def play(
    game: str,
    seat_specs: Sequence[Mapping[str, Any]],
    options: Mapping[str, Any],
    seed: str,
    *,
    clock: Callable[[], str] = lambda: "1970-01-01T00:00:00.000Z",
    chooser: Chooser | None = None,
    keep_envelopes: bool = True,
    max_actions: int = 100_000,
    on_step: Step | None = None,
    tournament: Mapping[str, Any] | None = None,
    encoded: bool = False,
) -> Played:
    """Play one game to its end. Each seat to act (the first of ``to_act``) moves by
    ``chooser`` when it gives a command, else by its bot (seats without a bot play ``random``).

    With ``keep_envelopes`` the sealed, hash-chained log is kept (what tournaments append);
    without it only states are folded (the fast path of benchmarks: same games, no hashing).
    ``on_step(record_before, seat, command, engine_events, state_after)`` sees every move.
    ``tournament`` (``{"id", "index"}``) is named in ``game_created``. ``encoded`` (no
    chooser, no observer) gives the log in ``log`` as the store keeps it, for
    ``EventStore.append_log``, and no ``envelopes``.
    """
    engine = games.get(game)
    seats, _tokens = seats_from_specs(seat_specs)
    opts = engine.parse_options(len(seats), dict(options))
    if not keep_envelopes and chooser is None and on_step is None:
        return _fast(engine, game, seats, opts, seed, max_actions)
    if keep_envelopes and chooser is None and on_step is None:
        played = _sealed(
            engine, game, seats, opts, seed, clock, max_actions, tournament, not encoded
        )
        if not encoded:
            assert played.log is not None
            played.envelopes, played.log = played.log.envelopes(), None
        return played
    if encoded:
        raise ValueError("an encoded log is written without a chooser or an observer")
    envs = _creation(game, seats, opts, seed, clock, tournament)
    record = fold("playout", envs)
    played = Played(record=record, envelopes=list(envs) if keep_envelopes else [])
    lists_all = engine.TRAITS.lists_all_commands
    outcome, to_act = engine.outcome, engine.to_act
    while outcome(record.state) is None:
        if played.actions >= max_actions:
            raise RuntimeError(f"game did not end within {max_actions} actions")
        seat = to_act(record.state)[0]
        version = record.version
        chosen = chooser(record, seat) if chooser is not None else None
        counted = None
        if chosen is None:
            cid = f"bot-{seat}-{version}"
            name = record.match.seats[seat].bot or "random"
            if name == "random" and lists_all:
                # What the random bot picks from the view's legal_commands, without the view.
                legal = engine.legal_commands(record.state, seat)
                command = legal[bot_choice_index(seed, seat, version, len(legal))]
            else:
                spec = {"bot": name, **(record.match.seats[seat].bot_spec or {})}
                decision = bots.decide(spec, view(record, seat), bot_random(seed, seat, version))
                assert decision.command is not None, "a bot to act had nothing to do"
                command = engine.parse_command(decision.command)
                counted = decision.iterations
        else:
            cid, body = chosen
            command = engine.parse_command(body)
        events, state, decided = decide_events(engine, record.state, seat, command, seed, version)
        if on_step is not None:
            on_step(record, seat, command, decided, state)
        parsed = engine.command_to_json(command)
        if counted is not None:  # a search on a time budget: recorded as the service records it
            parsed = {**parsed, bots.BOT_ITERATIONS: counted}
        if keep_envelopes:
            sealed = seal(
                events,
                after_version=version,
                prev_hash=record.head_hash,
                command_id=cid,
                seat=seat,
                at=clock(),
                seed=seed,
                command=parsed,
            )
            played.envelopes.extend(sealed)
            played.commands.append((cid, seat, parsed))
            # The state is decide_events' (folding the JSON back would give the same: the
            # engines' event round trip is tested); only seed_revealed is a service event.
            revealed = sealed[-1].data["seed"] if sealed[-1].type == "seed_revealed" else None
            record = GameRecord(
                id=record.id,
                match=record.match,
                version=sealed[-1].version,
                head_hash=sealed[-1].hash,
                state=state,
                seed=revealed,
            )
        else:
            seed_out = events[-1].data["seed"] if events[-1].type == "seed_revealed" else None
            record = GameRecord(
                id=record.id,
                match=record.match,
                version=version + len(events),
                head_hash=record.head_hash,
                state=state,
                seed=seed_out,
            )
        played.actions += 1
    played.record = record
    return played


def _viewed_move(
    engine: Any, match: Match, state: Any, version: int, head_hash: str, seat: int, seed: str
) -> tuple[Any, int | None]:
    """The command of the bot at ``seat`` chosen from its view, as the service's bots choose
    (the fast paths' move for every bot but a random one that can list the legal commands),
    and the iterations a search on a time budget ran (else None)."""
    record = GameRecord(
        id="playout", match=match, version=version, head_hash=head_hash, state=state
    )
    spec = {"bot": match.seats[seat].bot or "random", **(match.seats[seat].bot_spec or {})}
    decision = bots.decide(spec, view(record, seat), bot_random(seed, seat, version))
    assert decision.command is not None, "a bot to act had nothing to do"
    return engine.parse_command(decision.command), decision.iterations


def _creation(
    game: str,
    seats: Sequence[Seat],
    options: Mapping[str, Any],
    seed: str,
    clock: Callable[[], str],
    tournament: Mapping[str, Any] | None,
) -> list[Envelope]:
    """The creation envelopes, sealed as the service seals them (command id ``create``)."""
    new = creation_events(game, seats, options, seed, tournament=tournament)
    return seal(
        new,
        after_version=0,
        prev_hash=GENESIS_HASH,
        command_id="create",
        seat=None,
        at=clock(),
        seed=seed,
    )


def _fast(
    engine: Any,
    game: str,
    seats: Sequence[Seat],
    options: Mapping[str, Any],
    seed: str,
    max_actions: int,
) -> Played:
    """The same game as ``play`` when only the end matters, on one kernel for the whole game:
    each command decided on it by ``steps.decide_on`` (what ``steps.decide`` runs on a thawed
    state), its events counted for the versions as the service counts them (``game_created``,
    the setup events, then each command's events, then ``seed_revealed``), and no thaw,
    freeze, JSON, envelope or hash per command. The state is frozen only for a bot that
    reads a view, and at the end.

    A random bot draws as the service's does, without its view: from the kernel's listing
    with ``bot_choice_index``, or, for a game that cannot list every command, with the
    engine's ``random_command_at`` (the same draws as its ``random_command`` from the view).
    """
    setup = engine.setup(len(seats), options, Rng(seed, "setup"))
    kernel = _kernel_at(engine, setup)
    version = 1 + len(setup)
    match = Match(game=game, seats=tuple(seats), options=options, seed_sha256=seed_hash(seed))
    bots_at = [s.bot or "random" for s in match.seats]
    listed = engine.TRAITS.lists_all_commands
    drawn = None if listed else getattr(engine, "random_command_at", None)
    # Per seat: 1 its move is the random bot's pick from the listing, 2 the random bot's draw
    # from the state, 0 a bot's move from its view.
    how = [(1 if listed else 2 if drawn else 0) if b == "random" else 0 for b in bots_at]
    events: list[Any] = []
    emit = steps.emitter(kernel, events)
    decide_on, to_act, legal_commands = steps.decide_on, kernel.to_act, kernel.legal_commands
    outcome = kernel.outcome
    actions = 0
    over = outcome() is not None
    while not over:
        if actions >= max_actions:
            raise RuntimeError(f"game did not end within {max_actions} actions")
        seat = to_act()[0]
        move = how[seat]
        if move == 1:
            legal = legal_commands(seat)
            command = legal[bot_choice_index(seed, seat, version, len(legal))]
        elif move:
            assert drawn is not None
            command = drawn(kernel, seat, bot_random(seed, seat, version))
        else:
            command, _ = _viewed_move(engine, match, kernel.freeze(), version, "", seat, seed)
        decide_on(kernel, seat, command, seed, version, events, emit, listed=move == 1)
        version += len(events)
        events.clear()
        over = outcome() is not None
        actions += 1
    version += 1  # seed_revealed
    final = GameRecord(
        id="playout", match=match, version=version, head_hash="", state=kernel.freeze(), seed=seed
    )
    return Played(record=final, actions=actions)


def _kernel_at(engine: Any, setup: Sequence[Any]) -> Any:
    """The game's kernel after the setup events (as ``evolve_all(None, setup)`` folds them),
    or, for an engine without a kernel, a ``steps.Folded`` face."""
    kernel_cls = getattr(engine, "KERNEL", None)
    if kernel_cls is None:
        return steps.Folded(engine, replay(engine, setup))
    kernel = kernel_cls.start(setup[0])
    for event in setup[1:]:
        kernel.on(event)
    return kernel


# An engine's events and commands recur from game to game (a card game's are one object per card): their
# JSON and its canonical bytes, kept per object so that a log written whole encodes each once.
_JSON_KEEP = 200_000
_event_json: dict[Any, tuple[bytes, bytes, bytes]] = {}  # event -> ``ChainWriter.command`` piece
_command_json: dict[Any, tuple[dict[str, Any], tuple[bytes, bytes]]] = {}
_type_json: dict[str, bytes] = {}


def _spellings(value: Any) -> tuple[bytes, bytes]:
    """(hashed, stored) spellings of ``value``: ``json_bytes`` and ``stored_piece``, the same
    object when they are the same bytes (mostly: an engine's keys often come sorted)."""
    hashed, stored = json_bytes(value), stored_piece(value)
    return hashed, hashed if stored == hashed else stored


def _event_piece(engine: Any, event: Any) -> tuple[bytes, bytes, bytes]:
    doc = engine.event_to_json(event)
    kind = doc["type"]
    type_json = _type_json.get(kind)
    if type_json is None:
        type_json = _type_json[kind] = json_bytes(kind)
    return (type_json, *_spellings(doc["data"]))


def _event_doc(engine: Any, event: Any) -> tuple[bytes, bytes, bytes]:
    try:
        return _event_json[event]
    except KeyError:
        pass
    except TypeError:  # an unhashable event: encoded every time
        return _event_piece(engine, event)
    out = _event_piece(engine, event)
    if len(_event_json) >= _JSON_KEEP:
        _event_json.clear()
    _event_json[event] = out
    return out


def _command_doc(engine: Any, command: Any) -> tuple[dict[str, Any], tuple[bytes, bytes]]:
    try:
        return _command_json[command]
    except KeyError:
        pass
    except TypeError:
        parsed = engine.command_to_json(command)
        return parsed, _spellings(parsed)
    parsed = engine.command_to_json(command)
    out = (parsed, _spellings(parsed))
    if len(_command_json) >= _JSON_KEEP:
        _command_json.clear()
    _command_json[command] = out
    return out


def _sealed(
    engine: Any,
    game: str,
    seats: Sequence[Seat],
    options: Mapping[str, Any],
    seed: str,
    clock: Callable[[], str],
    max_actions: int,
    tournament: Mapping[str, Any] | None,
    keep_commands: bool = True,
) -> Played:
    """``play`` with no chooser and no observer, the log kept in ``log``: the same envelopes
    byte for byte (a property test holds the two to it), each command's sealed and encoded
    by ``ChainWriter.command`` from JSON encoded once per distinct event and command, the
    states folded from the engine's own events, and no record built but for the bots that
    read a view. ``keep_commands``: list the commands in ``commands`` too."""
    if any(s.open for s in seats):  # not dealt at its creation: the general path's creation
        writer = ChainWriter(seed, version=0, prev_hash=GENESIS_HASH)
        new = creation_events(game, seats, options, seed, tournament=tournament)
        start = fold("playout", writer.seal(new, command_id="create", seat=None, at=clock()))
        match, state = start.match, start.state
    else:
        # What ``creation_events`` gives such a game (``game_created``, then the setup drawn
        # with label ``setup``), sealed by the writer and folded from the engine's events.
        data = created_data(game, seats, options, seed, tournament=tournament)
        built = match_evolve(None, GAME_CREATED, data)
        assert built is not None
        match, state = built, None
        writer = ChainWriter(seed, version=0, prev_hash=GENESIS_HASH)
        pieces = [(json_bytes(GAME_CREATED), *_spellings(data))]
        for e in engine.setup(len(seats), options, Rng(seed, "setup")):
            state = engine.evolve(state, e)
            pieces.append(_event_piece(engine, e))
        writer.command(b'"create"', None, clock(), None, pieces)
    played = Played(record=GameRecord(id="playout", match=match, version=writer.version,
                                      head_hash=writer.hash, state=state))  # fmt: skip
    commands = played.commands
    outcome, to_act, legal_commands = engine.outcome, engine.to_act, engine.legal_commands
    seal_command = writer.command
    event_json, command_json = _event_json, _command_json
    listed = engine.TRAITS.lists_all_commands
    randoms = [listed and (s.bot or "random") == "random" for s in match.seats]
    decide = steps.decide
    actions = 0
    over = outcome(state) is not None
    while not over:
        if actions >= max_actions:
            raise RuntimeError(f"game did not end within {max_actions} actions")
        seat = to_act(state)[0]
        version = writer.version
        counted = None
        if randoms[seat]:
            legal = legal_commands(state, seat)
            command = legal[bot_choice_index(seed, seat, version, len(legal))]
        else:
            command, counted = _viewed_move(engine, match, state, version, writer.hash, seat, seed)
        events, state, closing = decide(engine, state, seat, command, seed, version)
        try:  # the kept JSON looked up here, not in a call: this loop is the play-out's cost
            parsed, parsed_json = command_json[command]
        except (KeyError, TypeError):
            parsed, parsed_json = _command_doc(engine, command)
        if counted is not None:  # a search on a time budget records the iterations it ran
            parsed = {**parsed, bots.BOT_ITERATIONS: counted}
            parsed_json = _spellings(parsed)
        pieces = []
        for e in events:
            try:
                pieces.append(event_json[e])
            except (KeyError, TypeError):
                pieces.append(_event_doc(engine, e))
        # The command id ``bot-<seat>-<version>`` spelt as JSON; the command recorded in its
        # first envelope.
        seal_command(b'"bot-%d-%d"' % (seat, version), seat, clock(), parsed_json, pieces)
        if keep_commands:
            commands.append((f"bot-{seat}-{version}", seat, parsed))
        actions += 1
        if closing is not None:  # sealed with the last command's cause, as ``seal`` does
            writer.add(closing.type, json_bytes(closing.data))
            over = True
    played.log = writer.log  # its hash brought up to date
    played.record = GameRecord(
        id="playout",
        match=match,
        version=writer.version,
        head_hash=writer.hash,
        state=state,
        seed=seed if actions else None,
    )
    played.actions = actions
    return played
