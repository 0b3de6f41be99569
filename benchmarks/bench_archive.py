"""Archive bytes per finished game (issue 36): each kind of game's export as raw JSONL, zstd
alone, and zstd with its game type's trained dictionary, then what a SQLite archive of them
takes on disk per game (row, indexes, log), beside what Redis holds of such a game today.

Logs come from the project's own play-out (``shared.app.playout``, byte for byte what the
service seals): tournament games as a tournament writes them (one time for the batch, bot
command ids), and "live" games as players send them (a random legal command each, a fresh
command id of 24 hex digits, some seconds between commands). The measured games are seeded
apart from the ones the dictionaries were trained on.

    python benchmarks/bench_archive.py                 # measure (BENCHMARKS.md's table)
    python benchmarks/bench_archive.py --train         # train shared/archive/dicts/*.zdict again
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import random
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared import games  # noqa: E402
from shared.app import opening, playout  # noqa: E402
from shared.archive import codec, sqlite  # noqa: E402
from shared.archive.packing import pack  # noqa: E402
from shared.archive.port import FinishedGame, export_bytes  # noqa: E402
from shared.archive.sqlite import SqliteArchive  # noqa: E402
from shared.events import Envelope  # noqa: E402
from shared.match.projections import view  # noqa: E402
from shared.match.record import GameRecord, fold  # noqa: E402

DICT_DIR = ROOT / "shared" / "archive" / "dicts"
DICT_SIZE = 16 * 1024
# What Redis holds of a finished game today (the issue's figures: BENCHMARKS.md "Redis memory
# per finished game" for a human match, the issue's 48 MB runs for a one-hand tournament game).
REDIS_BYTES = {"fox1-tournament": 19_500, "fox-live": 125_346}


@dataclass(frozen=True)
class Kind:
    """A kind of game: its type, seats, options, how its commands come, and how many."""

    name: str
    game: str
    seats: tuple[dict[str, Any], ...]
    options: dict[str, Any]
    live: bool  # players' commands (ids, times) rather than a tournament's bots
    measured: int
    trained: int


RANDOM, HEURISTIC = {"bot": "random"}, {"bot": "heuristic"}
KINDS = (
    Kind("fox1-tournament", "fox", (RANDOM, RANDOM), {"target": 1}, False, 300, 400),
    Kind("fox-tournament", "fox", (HEURISTIC, RANDOM), {}, False, 60, 80),
    Kind("fox-live", "fox", ({"name": "ana"}, {"name": "bo"}), {}, True, 60, 80),
    Kind("skull-tournament", "skull", (HEURISTIC, RANDOM, RANDOM, RANDOM), {}, False, 100, 150),
    Kind("skull-live", "skull", ({"name": "ana"}, {"name": "bo"}, {"name": "cy"}), {}, True, 60,
         80),
    Kind("skye-tournament", "skye", (HEURISTIC, RANDOM, RANDOM, RANDOM), {}, False, 60, 80),
    Kind("skye-live", "skye", ({"name": "ana"}, {"name": "bo"}, {"name": "cy"}), {}, True, 40,
         50),
)  # fmt: skip


def _live_chooser(
    engine: Any, rng: random.Random
) -> Callable[[GameRecord, int], tuple[str, dict[str, Any]] | None]:
    """A player's commands: a random legal one (from the view's sampler where the engine cannot
    list them all), under a fresh command id as the gateway makes one."""
    sample = getattr(engine, "random_command", None)

    def choose(record: GameRecord, seat: int) -> tuple[str, dict[str, Any]]:
        cid = f"{rng.getrandbits(96):024x}"
        if engine.TRAITS.lists_all_commands or sample is None:
            legal = engine.legal_commands(record.state, seat)
            return cid, engine.command_to_json(rng.choice(legal))
        return cid, sample(view(record, seat), rng)

    return choose


START_MS = 1_796_292_000_000  # 2026-12-03 10:00 UTC


def _iso(ms: int) -> str:
    """The service's time format (``Clock.now``) of epoch milliseconds ``ms``."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def _live_clock(rng: random.Random) -> Callable[[], str]:
    """Times a few seconds apart, with milliseconds, from ``START_MS``."""
    now = [START_MS]

    def clock() -> str:
        now[0] += rng.randint(800, 25_000)
        return _iso(now[0])

    return clock


class _Tokens:
    """``secrets`` for the seats' tokens, drawn from ``rng``: a live game's log holds their
    hashes, and the same seed gives the same log (the dictionaries train again the same)."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def token_urlsafe(self, nbytes: int) -> str:
        return base64.urlsafe_b64encode(self._rng.randbytes(nbytes)).decode().rstrip("=")


def logs(kind: Kind, count: int, label: str) -> list[tuple[str, list[Envelope]]]:
    """``count`` games of ``kind`` seeded by ``label``: (game id, envelopes)."""
    out = []
    engine = games.get(kind.game)
    # Ids as the service makes them: 16 hex digits a live game, a tournament's "t" and 12
    # then its game's index.
    tid = "t" + hashlib.sha256(f"{label}-{kind.name}".encode()).hexdigest()[:12]
    for i in range(count):
        seed = f"{label}-{kind.name}-{i}"
        gid = hashlib.sha256(seed.encode()).hexdigest()[:16] if kind.live else f"{tid}-{i:05d}"
        if kind.live:
            rng = random.Random(seed)
            opening.secrets = _Tokens(rng)  # type: ignore[assignment]
            try:
                played = playout.play(kind.game, kind.seats, kind.options, seed,
                                      chooser=_live_chooser(engine, rng),
                                      clock=_live_clock(rng))  # fmt: skip
            finally:
                opening.secrets = secrets
            envs = played.envelopes
        else:
            at = _iso(START_MS + i // 10 * 1_500)  # a batch of 10 games shares its time
            played = playout.play(kind.game, kind.seats, kind.options, seed, encoded=True,
                                  clock=lambda at=at: at,  # type: ignore[misc]
                                  tournament={"id": tid, "index": i})  # fmt: skip
            assert played.log is not None
            envs = played.log.envelopes()
        out.append((gid, envs))
    return out


def _packed(envelopes: list[Envelope]) -> bytes:
    """The log as the archive compresses it (``shared.archive.packing``)."""
    return pack(envelopes, export_bytes(envelopes))[1]


def train(dict_size: int = DICT_SIZE, scale: float = 1.0) -> dict[str, bytes]:
    """A dictionary per game type from its kinds' training games; writes ``dicts/``."""
    samples: dict[str, list[bytes | bytearray | memoryview]] = {}
    for kind in KINDS:
        count = max(1, int(kind.trained * scale))
        samples.setdefault(kind.game, []).extend(
            _packed(envs) for _gid, envs in logs(kind, count, "train")
        )
    made = {}
    DICT_DIR.mkdir(parents=True, exist_ok=True)
    for game, found in sorted(samples.items()):
        trained = zstandard.train_dictionary(dict_size, found, level=codec.LEVEL, threads=1)
        data = trained.as_bytes()
        (DICT_DIR / f"{game}{codec.DICT_SUFFIX}").write_bytes(data)
        made[game] = data
        print(f"trained {game}: {len(found)} logs, {len(data)} bytes, id {trained.dict_id()}",
              file=sys.stderr)  # fmt: skip
    return made


def _sqlite_bytes(path: str) -> int:
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def _archived(
    played: list[tuple[str, list[Envelope]]],
    records: list[GameRecord],
    dictionaries: dict[str, bytes] | None,
) -> dict[str, float]:
    """A SQLite archive of ``played`` (with the shipped dictionaries, or ``dictionaries``):
    its bytes per game once checkpointed, the milliseconds a game's put takes in batches of
    50 (half of them folded by the archive, half given their ``records``), and the median
    read of an export."""
    folder = tempfile.mkdtemp(prefix="bench-archive-")
    path = os.path.join(folder, "archive.sqlite3")
    archive = SqliteArchive(path, dictionaries=dictionaries)
    connection = archive.database.connection()
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    empty = _sqlite_bytes(path)
    games = [
        FinishedGame(gid, envs, record) for (gid, envs), record in zip(played, records, strict=True)
    ]
    half = len(games) // 2 // 50 * 50 or len(games) // 2
    took = []
    for first, last, folded in ((0, half, True), (half, len(games), False)):
        started = time.perf_counter()
        for i in range(first, last, 50):
            batch = games[i : min(i + 50, last)]
            archive.put_games([FinishedGame(g.game_id, g.envelopes) for g in batch] if folded
                              else batch)  # fmt: skip
        took.append((time.perf_counter() - started) * 1000 / max(1, last - first))
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    archived = _sqlite_bytes(path) - empty
    reads = []
    rng = random.Random(1)
    for _ in range(200):
        gid = rng.choice(played)[0]
        t0 = time.perf_counter()
        archive.export(gid)
        reads.append((time.perf_counter() - t0) * 1000)
    archive.close()
    shutil.rmtree(folder)
    return {"bytes": archived / len(played), "put_ms": took[0], "put_record_ms": took[1],
            "export_p50_ms": statistics.median(reads)}  # fmt: skip


def measure(scale: float = 1.0) -> dict[str, Any]:
    """Bytes per game of each kind: raw, zstd, zstd + dictionary, and a SQLite archive's."""
    shipped = codec.shipped_dictionaries()
    plain = zstandard.ZstdCompressor(level=codec.LEVEL, write_checksum=True)
    results: dict[str, Any] = {"dictionaries": {g: len(d) for g, d in shipped.items()},
                               "level": codec.LEVEL, "kinds": {}}  # fmt: skip
    for kind in KINDS:
        count = max(2, int(kind.measured * scale))
        played = logs(kind, count, "measure")
        raws = [export_bytes(envs) for _gid, envs in played]
        packed = [_packed(envs) for _gid, envs in played]
        with_dict = zstandard.ZstdCompressor(
            level=codec.LEVEL, write_checksum=True,
            dict_data=zstandard.ZstdCompressionDict(shipped[kind.game]),
        ) if kind.game in shipped else None  # fmt: skip
        records = [fold(gid, envs) for gid, envs in played]
        plain_archive = _archived(played, records, {})
        archived = _archived(played, records, None)
        n = len(raws)
        results["kinds"][kind.name] = {
            "games": n,
            "envelopes": sum(len(envs) for _g, envs in played) / n,
            "raw": sum(map(len, raws)) / n,
            "zstd": sum(len(plain.compress(r)) for r in raws) / n,
            "zstd_packed": sum(len(plain.compress(r)) for r in packed) / n,
            "zstd_dict": (
                sum(len(with_dict.compress(r)) for r in packed) / n
                if with_dict is not None
                else None
            ),  # fmt: skip
            "sqlite": archived["bytes"],
            "sqlite_no_dict": plain_archive["bytes"],
            "put_ms": archived["put_ms"],
            "put_record_ms": archived["put_record_ms"],
            "export_p50_ms": archived["export_p50_ms"],
            "redis": REDIS_BYTES.get(kind.name),
        }
        print(f"{kind.name}: {json.dumps(results['kinds'][kind.name])}", file=sys.stderr)
    return results


def levels(scale: float = 1.0) -> str:
    """zstd's levels on packed logs with the shipped dictionaries: bytes and compression time
    per game (why ``codec.LEVEL``), as a markdown table."""
    shipped = codec.shipped_dictionaries()
    lines = [
        "| game | level | bytes per game | compression per game |",
        "| --- | --- | --- | --- |",
    ]
    for kind in KINDS[:2]:
        packed = [_packed(envs) for _gid, envs in logs(kind, max(2, int(kind.measured * scale)),
                                                       "measure")]  # fmt: skip
        for level in (1, 3, 9, 12, 15, 19):
            made = zstandard.ZstdCompressor(
                level=level, write_checksum=True,
                dict_data=zstandard.ZstdCompressionDict(shipped[kind.game]),
            )  # fmt: skip
            made.compress(packed[0])
            started = time.perf_counter()
            size = sum(len(made.compress(p)) for p in packed)
            took = (time.perf_counter() - started) * 1000 / len(packed)
            lines.append(f"| {kind.name} | {level} | {size / len(packed):,.0f} | {took:.2f} ms |")
    return "\n".join(lines)


def pages(scale: float = 1.0) -> str:
    """A SQLite archive's bytes per game at each page size (why ``sqlite.PAGE_SIZE``), as a
    markdown table: one-hand Fox games (600), Fox matches and Skull games (150 each)."""
    kinds = [(KINDS[0], 600), (KINDS[1], 150), (KINDS[3], 150)]
    played = [logs(kind, max(2, int(n * scale)), "measure") for kind, n in kinds]
    records = [[fold(gid, envs) for gid, envs in games] for games in played]
    lines = [
        "| page size | " + " | ".join(kind.name for kind, _n in kinds) + " |",
        "| --- |" + " --- |" * len(kinds),
    ]
    kept = sqlite.PAGE_SIZE
    try:
        for size in (1024, 2048, 4096, 8192, 16384):
            sqlite.PAGE_SIZE = size
            cells = [_archived(games, recs, None)["bytes"] for games, recs in zip(played, records,
                                                                                 strict=True)]  # fmt: skip
            lines.append(f"| {size:,} | " + " | ".join(f"{c:,.0f}" for c in cells) + " |")
    finally:
        sqlite.PAGE_SIZE = kept
    return "\n".join(lines)


def table(results: dict[str, Any]) -> str:
    """The markdown table of ``measure``'s results."""
    lines = [
        "| game | games | envelopes | raw JSONL | zstd | zstd, prev_hash left out | + its "
        "game's dictionary | SQLite archive, all of it | the same without dictionaries | "
        "Redis today | archive / Redis | put, folded / record given (batches of 50) | "
        "export read p50 |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, r in results["kinds"].items():
        redis_bytes, zd = r["redis"], r["zstd_dict"]
        with_dict = "-" if zd is None else f"{zd:,.0f} ({zd / r['zstd_packed']:.2f}x)"
        redis_cell = "-" if not redis_bytes else f"{redis_bytes:,}"
        ratio = "-" if not redis_bytes else f"1/{redis_bytes / r['sqlite']:.1f}"
        lines.append(
            f"| {name} | {r['games']} | {r['envelopes']:.0f} | {r['raw']:,.0f} "
            f"| {r['zstd']:,.0f} | {r['zstd_packed']:,.0f} | {with_dict} | {r['sqlite']:,.0f} "
            f"| {r['sqlite_no_dict']:,.0f} | {redis_cell} | {ratio} "
            f"| {r['put_ms']:.2f} / {r['put_record_ms']:.2f} ms | {r['export_p50_ms']:.2f} ms |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", action="store_true", help="train the dictionaries again")
    parser.add_argument("--dict-size", type=int, default=DICT_SIZE)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the games")
    parser.add_argument("--levels", action="store_true", help="compare zstd's levels")
    parser.add_argument("--pages", action="store_true", help="compare SQLite's page sizes")
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args(argv)
    if args.train:
        train(args.dict_size, args.scale)
        return 0
    if args.levels:
        print(levels(args.scale))
        return 0
    if args.pages:
        print(pages(args.scale))
        return 0
    results = measure(args.scale)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
