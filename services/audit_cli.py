"""``tabletop audit``: fetch a game's whole log from the service (every page, up to the head
version it reports) or read an export, and run ``shared.audit`` on it. Errors are one line.

With an auditor key it pages ``GET /events``, which an auditor reads whole. Without one it
reads ``GET /export`` instead: the events anyone reads are redacted (``game_created`` without
the seats' token hashes, hidden discs and prices left out), so their hashes cannot be
recomputed, while the export, open to anyone once the game is over, has every field."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tabletop_client import Client, InvalidResponse, ProblemError, TransportError

from shared.audit import audit
from shared.events import BOT_TURN, GAME_CREATED
from shared.tournaments import plan

PAGE = 1000
EXIT = {"passed": 0, "failed": 1, "incomplete": 3}


class AuditError(Exception):
    """A one-line reason the audit could not run."""


class NeedsKey(AuditError):
    """A running game asked for without an auditor key: the audit is incomplete (exit 3)."""


def auditor_key(env: Mapping[str, str] | None = None) -> str | None:
    """``TABLETOP_AUDITOR_KEY``, else the first of ``TABLETOP_AUDITOR_KEYS`` (the server's)."""
    env = os.environ if env is None else env
    if env.get("TABLETOP_AUDITOR_KEY"):
        return env["TABLETOP_AUDITOR_KEY"]
    keys = [k.strip() for k in env.get("TABLETOP_AUDITOR_KEYS", "").split(",") if k.strip()]
    return keys[0] if keys else None


def run_audit(game_id: str | None, api: str, key: str | None, path: str | None) -> int:
    """Print each check and the verdict; exit 0 passed (also with checks "not re-checked",
    which the verdict names), 1 failed, 3 incomplete (checks that wait for the seed of a
    running game), 2 when the audit could not run."""
    try:
        head: int | None = None
        if path:
            docs, named = read_export(path)
            game_id = file_game_id(path, docs, game_id, named)
        elif not game_id:
            raise AuditError("give a GAME_ID (with --api) or --file EXPORT")
        else:
            docs, head = fetch(api.rstrip("/"), game_id, key or auditor_key())
    except NeedsKey as exc:
        print(f"tabletop audit: {exc}", file=sys.stderr)
        return EXIT["incomplete"]
    except AuditError as exc:
        print(f"tabletop audit: {exc}", file=sys.stderr)
        return 2
    report = audit(game_id, docs, head_version=head)
    for name, result in report.checks.items():
        print(f"{name:>20}: {result}")
    # A check that could not re-check everything (a bot's policy changed since the game) is no
    # failure, but the verdict says which, so a pass is not read as more than it proves.
    skipped = f"; not re-checked: {', '.join(report.unchecked)}" if report.unchecked else ""
    if report.status == "passed":
        done = f"{report.commands} commands re-decided, digest {report.digest}"
        print(f"AUDIT PASSED: {done}{skipped}")
    elif report.status == "incomplete":
        print(
            f"AUDIT INCOMPLETE: nothing failed; waiting for the seed: {', '.join(report.waiting)}"
            f"{skipped}"
        )
    else:
        first = report.first_failure or {}
        print(f"AUDIT FAILED at version {first.get('version')}: {first.get('reason')}")
    return EXIT[report.status]


def read_file(path: str) -> list[dict[str, Any]]:
    """An export (JSONL, one envelope a line) or a saved ``GET /events`` answer (JSON): its
    envelopes (``read_export``)."""
    return read_export(path)[0]


def read_export(path: str) -> tuple[list[dict[str, Any]], str | None]:
    """The envelopes of an export (JSONL, one envelope a line) or of a saved ``GET /events``
    answer (JSON), and the game that answer names (None for an export). A file that is
    neither — empty, not JSON, a saved problem answer (``curl -s .../export > game.jsonl`` of
    a game that does not exist, or not yet open to anyone) — is an AuditError saying so in one
    line."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise AuditError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise AuditError(f"{path} is not a game export: it is not UTF-8 text") from None
    if not text.strip():
        raise AuditError(f"{path} is not a game export: it is empty")
    where, named = "line", None
    if text.lstrip().startswith(("{", "[")) and "\n{" not in text.strip():
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            raise AuditError(f"{path} is not a game export: it is not JSON") from None
        if isinstance(doc, dict) and "events" in doc:
            named = doc.get("game") if isinstance(doc.get("game"), str) else None
            doc, where = doc["events"], "event"
        elif isinstance(doc, dict):
            problem = _problem_of(doc)
            if problem:
                raise AuditError(
                    f"{path} is not a game export: it holds a problem answer ({problem})"
                )
        else:
            where = "event"
        events = doc if isinstance(doc, list) else [doc]
    else:
        events = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    events.append(json.loads(line))
                except json.JSONDecodeError:
                    raise AuditError(
                        f"{path} is not a game export: its line {number} is not JSON"
                    ) from None
    for number, event in enumerate(events, 1):
        if not (isinstance(event, dict) and "version" in event and "type" in event):
            raise AuditError(
                f"{path} is not a game export: its {where} {number} is not an event envelope"
            )
    return list(events), named


def _problem_of(doc: Mapping[str, Any]) -> str | None:
    """``404 Not Found: no game ...`` when ``doc`` is a problem answer (RFC 9457: a
    ``status``, with a ``title``, ``detail`` or ``type``), else None."""
    status = doc.get("status")
    if not isinstance(status, int) or isinstance(status, bool) or "version" in doc:
        return None
    if not any(k in doc for k in ("title", "detail", "type")):
        return None
    said = " ".join(str(x) for x in (status, doc.get("title")) if x is not None)
    detail = doc.get("detail")
    return f"{said}: {detail}" if detail else said


def file_game_id(
    path: str,
    docs: Sequence[Mapping[str, Any]],
    given: str | None,
    named: str | None = None,
) -> str:
    """The id to audit a file's log under: the one the log records (``export_game_id``). A
    ``given`` GAME_ID, or the ``game`` a saved ``GET /events`` answer names (``named``), that
    disagrees with it is an AuditError. A log that records no id (no registered bot, no
    tournament) is audited under ``named``, ``given``, else the file's name: nothing in such
    a log depends on its id (the final digest leaves it out)."""
    found = export_game_id(docs)
    if found is not None and named and named != found:
        raise AuditError(f"{path} holds the log of game {found}, yet names game {named}")
    found = found or named
    if found is not None and given and given != found:
        raise AuditError(f"{path} is the export of game {found}, not {given}")
    return found or given or Path(path).stem


def export_game_id(docs: Sequence[Mapping[str, Any]]) -> str | None:
    """The game id a log records, or None when it records none.

    What the audit needs it for: a registered bot was sent a body that holds its game's id
    (``game_id``, ``turn_id``, the view's ``id``), and the audit rebuilds that body to check
    its move's ``sent_sha256``; nothing else in a log depends on the id. Where it lives, hashed
    into the chain: a tournament's game records ``{"id", "index"}`` in ``game_created`` (its id
    derives from them), and every registered bot's move records ``bot_turn.turn_id``,
    ``<game_id>-<seat>-<version>``. The first one met is the answer: a log whose records name
    another game further on fails the audit there (that turn's ``sent_sha256``)."""
    for doc in docs:
        data = doc.get("data")
        if doc.get("type") == GAME_CREATED and isinstance(data, Mapping):
            tournament = data.get("tournament")
            if isinstance(tournament, Mapping):
                tid, index = tournament.get("id"), tournament.get("index")
                if isinstance(tid, str) and isinstance(index, int):
                    return plan.game_id(tid, index)
        command = doc.get("command")
        turn = command.get(BOT_TURN) if isinstance(command, Mapping) else None
        turn_id = turn.get("turn_id") if isinstance(turn, Mapping) else None
        if isinstance(turn_id, str):
            game, _, rest = turn_id.rpartition("-")
            game, _, seat = game.rpartition("-")
            if game and seat.isdigit() and rest.isdigit():
                return game
    return None


def fetch(api: str, game_id: str, key: str | None) -> tuple[list[dict[str, Any]], int]:
    """Every envelope of the game, whole, and the head version the service reported: page by
    page with an auditor key, else the export of a finished game (NeedsKey for a running
    one)."""
    if key is None:
        return fetch_export(api, game_id)
    events: list[dict[str, Any]] = []
    head = 0
    after = 0
    with _call(api, key, Client, api, key) as client:
        while True:
            doc = _call(api, key, client.events, game_id, after=after, limit=PAGE)
            head = max(head, int(doc.get("version", 0)))
            page = doc.get("events") or []
            if page and "hash" not in page[0]:
                raise AuditError(
                    "the service sent events without hashes: a running game needs an auditor "
                    "key (--key, TABLETOP_AUDITOR_KEY or TABLETOP_AUDITOR_KEYS)"
                )
            events.extend(page)
            if not page or after + len(page) >= head:
                return events, head
            after = int(page[-1]["version"])


def fetch_export(api: str, game_id: str) -> tuple[list[dict[str, Any]], int]:
    """A finished game's export (anyone may read it) and its version as the public view
    reports it; NeedsKey for a game still running (its log is an auditor's alone)."""
    with _call(api, None, Client, api) as client:
        public = _call(api, None, client.game, game_id)
        if public.get("outcome") is None:
            raise NeedsKey(
                f"game {game_id} is still running: auditing it before the end needs an auditor "
                "key (--key, TABLETOP_AUDITOR_KEY or TABLETOP_AUDITOR_KEYS)"
            )
        docs = _call(api, None, client.export, game_id)
    return docs, int(public.get("version", 0))


def _call(api: str, key: str | None, call: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """``call(*args, **kw)`` of the kit's client, its failures turned into one-line
    AuditErrors (``key``: whether a 403 means a key is missing or refused)."""
    try:
        return call(*args, **kw)
    except ProblemError as exc:
        if exc.status == 404:
            raise AuditError(f"no such game ({exc.detail})") from None
        if exc.status == 403 and not key:
            raise NeedsKey(
                f"the service keeps this log for auditors ({exc.detail}): give an auditor key "
                "(--key, TABLETOP_AUDITOR_KEY or TABLETOP_AUDITOR_KEYS)"
            ) from None
        if exc.status in (401, 403):
            raise AuditError(f"the service refused the key: {exc.detail}") from None
        raise AuditError(f"the service answered {exc.status}: {exc.detail}") from None
    except TransportError as exc:
        raise AuditError(f"cannot reach the service at {api}: {exc.reason}") from None
    except InvalidResponse as exc:
        raise AuditError(str(exc)) from None
