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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tabletop_client import Client, InvalidResponse, ProblemError, TransportError

from shared.audit import audit

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
        if path:
            docs, head = read_file(path), None
            game_id = game_id or Path(path).stem
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
    """An export (JSONL, one envelope a line) or a saved ``GET /events`` answer (JSON)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise AuditError(f"cannot read {path}: {exc.strerror}") from None
    try:
        if text.lstrip().startswith(("{", "[")) and "\n{" not in text.strip():
            doc = json.loads(text)
            events = doc["events"] if isinstance(doc, dict) and "events" in doc else doc
            return list(events if isinstance(events, list) else [events])
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except (json.JSONDecodeError, KeyError) as exc:
        raise AuditError(
            f"{path} is neither an export (JSONL) nor an events document: {exc}"
        ) from None


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
