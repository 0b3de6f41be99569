"""A tournament's results as data (issue 36): its finished games' logs in one download and one
row per game, ready for pandas or DuckDB, read wherever the games are kept (Redis or the
archive).

- ``export_lines``: one JSON line per finished game, in game order:
  ``{"id", "tournament": {"id", "index"}, "events": [envelope, ...]}`` where ``events`` is the
  game's export (``GET /v1/games/{id}/export``) line by line; ``split_exports`` turns it back
  into one export file per game (``tabletop audit --file`` checks each).
- ``result_rows``: one row per finished game: its index and id, per seat the entrant (index
  and name), the bot spec, the rank and score, then the winners, a draw, its version.
"""

from __future__ import annotations

import csv
import io
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from shared.app.context import App
from shared.app.errors import AppError, ErrorCode
from shared.tournaments.plan import Plan, game_id, spec_label

PAGE = 256  # games read a round trip at a time


def _plan(app: App, tournament_id: str) -> Plan:
    entry = app.ports.tournaments.get(tournament_id)
    if entry is None:
        raise AppError(ErrorCode.TOURNAMENT_NOT_FOUND, f"no tournament {tournament_id}")
    return Plan.from_doc(entry.plan)


def _finished(app: App, tournament_id: str, plan: Plan) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, stored result) of each finished game, in game order."""
    for start in range(0, plan.games, PAGE):
        indexes = range(start, min(plan.games, start + PAGE))
        found = app.ports.directory.results([game_id(tournament_id, i) for i in indexes])
        for index, result in zip(indexes, found, strict=True):
            if result is not None:
                yield index, result


def export_lines(app: App, tournament_id: str) -> Iterator[bytes]:
    """Each finished game's export as one JSON line (a newline after each); AppError 404 (at
    once, before the lines)."""
    return _export_lines(app, tournament_id, _plan(app, tournament_id))


def _export_lines(app: App, tournament_id: str, plan: Plan) -> Iterator[bytes]:
    for index, _result in _finished(app, tournament_id, plan):
        gid = game_id(tournament_id, index)
        events = [env.to_dict() for env in app.ports.store.read(gid)]
        doc = {"id": gid, "tournament": {"id": tournament_id, "index": index}, "events": events}
        yield orjson.dumps(doc) + b"\n"


def split_exports(lines: Iterator[bytes]) -> Iterator[tuple[str, bytes]]:
    """(game id, its export's bytes, as ``GET /v1/games/{id}/export`` gives them) of each line
    ``export_lines`` wrote."""
    for line in lines:
        if not line.strip():
            continue
        doc = orjson.loads(line)
        yield doc["id"], b"".join(orjson.dumps(e) + b"\n" for e in doc["events"])


def result_rows(app: App, tournament_id: str) -> tuple[list[str], Iterator[list[Any]]]:
    """The header and the rows (one per finished game, in game order); AppError 404."""
    plan = _plan(app, tournament_id)
    names = [e.name for e in plan.entrants]
    header = ["tournament", "index", "game_id", "game"]
    for s in range(plan.players):
        header += [f"seat{s}_entrant", f"seat{s}_name", f"seat{s}_bot", f"seat{s}_rank",
                   f"seat{s}_score"]  # fmt: skip
    header += ["winners", "draw", "version"]

    def rows() -> Iterator[list[Any]]:
        for index, result in _finished(app, tournament_id, plan):
            outcome: Mapping[str, Any] = result.get("outcome") or {}
            seats = result.get("seats") or []
            ranks, scores = outcome.get("ranks") or [], outcome.get("scores") or []
            row: list[Any] = [tournament_id, index, game_id(tournament_id, index), plan.game]
            for s, entrant in enumerate(plan.seating(index)):
                seat = seats[s] if s < len(seats) else {}
                spec = seat.get("bot_spec") or ({"bot": seat["bot"]} if seat.get("bot") else {})
                row += [
                    "" if entrant is None else entrant,
                    names[entrant] if entrant is not None else seat.get("name", ""),
                    spec_label(spec) if spec else "",
                    ranks[s] if s < len(ranks) else "",
                    scores[s] if s < len(scores) else "",
                ]
            winners = outcome.get("winners") or []
            row += [" ".join(str(w) for w in winners), bool(outcome.get("draw")),
                    result.get("version", "")]  # fmt: skip
            yield row

    return header, rows()


def results_csv(app: App, tournament_id: str) -> Iterator[str]:
    """``result_rows`` as CSV text, the header first, a few rows at a time; AppError 404 (at
    once, before the text)."""
    header, rows = result_rows(app, tournament_id)
    return _csv(header, rows)


def _csv(header: list[str], rows: Iterator[list[Any]]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for n, row in enumerate(rows, 1):
        writer.writerow(row)
        if n % PAGE == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def gzipped(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """``chunks`` compressed as one gzip member, streamed."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: a gzip header and trailer
    for chunk in chunks:
        out = packer.compress(chunk)
        if out:
            yield out
    yield packer.flush()
