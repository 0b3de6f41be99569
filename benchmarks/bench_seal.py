"""The live path's sealing: one Fox command's events sealed as ``commands._apply`` seals them,
then encoded as the Redis store encodes each envelope (``stored_json``).

The commands are every command of a few seeded random 2-seat Fox games (the engine's events
and the command each recorded, as the service decided them); each run seals and encodes all
of them once, and the best of ``--repeat`` runs is reported per command, in CPU time; then
the same commands sealed as a tournament's play-out seals them (``ChainWriter.command`` from
JSON encoded beforehand, the entries kept whole).

``--against DIR`` loads ``DIR/shared/events.py`` (another checkout of this project, e.g. the
commit before a change) beside this tree's and runs the two in turn, run after run in one
process (the machine's load falls on both alike): each pair's ratio this/other, and their
median.

Run: ``python benchmarks/bench_seal.py`` or ``python benchmarks/bench_seal.py --against
../before``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shared import events  # noqa: E402
from shared.app.playout import play  # noqa: E402
from shared.events import NewEvent  # noqa: E402

Sealed = tuple[list[NewEvent], int, str, str, int, str, dict[str, Any] | None]
AT = "2026-12-03T10:00:00.000Z"


def commands(games: int) -> list[Sealed]:
    """(events, version before, head hash, command id, seat, seed, command) of each command
    the bots played in ``games`` Fox games."""
    out: list[Sealed] = []
    for g in range(games):
        seed = f"bench-seal-{g}"
        played = play("fox", [{"bot": "random"}] * 2, {}, seed)
        envs = played.envelopes
        i = 0
        while i < len(envs):
            j = i + 1
            while j < len(envs) and envs[j].command_id == envs[i].command_id:
                j += 1
            first = envs[i]
            if first.command_id != "create":
                new = [NewEvent(type=e.type, data=e.data) for e in envs[i:j]]
                out.append((new, first.version - 1, first.prev_hash, str(first.command_id),
                            int(first.seat or 0), seed, dict(first.command or {}) or None))  # fmt: skip
            i = j
    return out


def run(module: ModuleType, sealed: list[Sealed], encode: bool) -> float:
    """CPU seconds to seal each command with ``module``'s ``seal`` (and encode its envelopes
    as the store does, with ``encode``)."""
    seal, stored_json = module.seal, module.stored_json
    start = time.process_time()
    for new, after, head, cid, seat, seed, command in sealed:
        envs = seal(new, after_version=after, prev_hash=head, command_id=cid, seat=seat,
                    at=AT, seed=seed, command=command)  # fmt: skip
        if encode:
            for env in envs:
                stored_json(env)
    return time.process_time() - start


def write(module: ModuleType, sealed: list[Sealed]) -> float:
    """CPU seconds for ``module``'s ``ChainWriter.command`` to seal the same commands from
    JSON encoded beforehand, one log after another: a tournament's play-out path."""
    pieces = []
    for new, _after, _head, cid, seat, _seed, command in sealed:
        events_json = [(module.json_bytes(e.type), module.json_bytes(e.data),
                        module.stored_piece(e.data)) for e in new]  # fmt: skip
        command_json = None
        if command is not None:
            command_json = (module.json_bytes(command), module.stored_piece(command))
        pieces.append((module.json_bytes(cid), seat, command_json, events_json))
    start = time.process_time()
    writer = module.ChainWriter("bench-seal", version=0, prev_hash=module.GENESIS_HASH)
    for cid_json, seat, command_json, events_json in pieces:
        writer.command(cid_json, seat, AT, command_json, events_json)
    return time.process_time() - start


def other_events(tree: Path) -> ModuleType:
    """``shared/events.py`` of the checkout at ``tree``, as a module of its own."""
    spec = importlib.util.spec_from_file_location("other_events", tree / "shared" / "events.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["other_events"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> None:
    """Parses the arguments, times the sealing and prints µs per command."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=25, help="runs (pairs with --against)")
    parser.add_argument("--against", type=Path, default=None, help="another checkout")
    args = parser.parse_args()
    sealed = commands(args.games)
    n = len(sealed)
    print(f"{n} commands, {sum(len(s[0]) for s in sealed) / n:.2f} events each")
    other = other_events(args.against) if args.against is not None else None
    timed: dict[str, Callable[[ModuleType], float]] = {
        "seal": lambda module: run(module, sealed, False),
        "seal + stored_json": lambda module: run(module, sealed, True),
        "ChainWriter.command (a tournament's path)": lambda module: write(module, sealed),
    }
    for label, timing in timed.items():
        this_runs, other_runs = [], []
        for _ in range(args.repeat):
            this_runs.append(timing(events))
            if other is not None:
                other_runs.append(timing(other))
        line = f"{label}: {min(this_runs) / n * 1e6:.2f} µs a command"
        if other is not None:
            ratios = sorted(a / b for a, b in zip(this_runs, other_runs, strict=True))
            line += (f"; other {min(other_runs) / n * 1e6:.2f} µs; this/other median "
                     f"{ratios[len(ratios) // 2]:.2f} ({ratios[0]:.2f}-{ratios[-1]:.2f})")  # fmt: skip
        print(line)


if __name__ == "__main__":
    main()
