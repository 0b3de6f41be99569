"""``tabletop audit`` reads every page of a long game, fails a log that ends before the head
the service reports, reads exports offline, audits a finished game without a key from its
export (a running one asks for a key, exit 3), and answers errors in one line."""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from services import audit_cli
from services.cli import main
from shared import games
from shared.app.playout import play
from shared.audit import audit
from shared.events import SEED_REVEALED, Envelope
from shared.match.projections import visible_events

KEY = "auditor-key"


@pytest.fixture(scope="module")
def docs() -> list[dict[str, Any]]:
    # A human seat: game_created holds its token hash, which anyone else's events leave out.
    played = play("skull", [{"name": "a"}, *[{"bot": "random"}] * 3], {}, "audit-cli")
    return [e.to_dict() for e in played.envelopes]


@pytest.fixture(autouse=True)
def no_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TABLETOP_AUDITOR_KEY", "TABLETOP_AUDITOR_KEYS", "TABLETOP_API", "PORT"):
        monkeypatch.delenv(name, raising=False)


def serve(
    docs: list[dict[str, Any]],
    *,
    head: int | None = None,
    finished: bool | None = None,
    seen: list[str] | None = None,
) -> Iterator[str]:
    """Game ``g`` as the gateway answers it: the public view; ``/events`` whole for the
    auditor key and redacted for anyone else; ``/export`` for the key, or anyone once the
    game is over (``finished``: by default, whether the log ends with the seed)."""
    version = head or len(docs)
    over = docs[-1]["type"] == SEED_REVEALED if finished is None else finished
    engine = games.get(docs[0]["data"]["game"])
    public = visible_events(engine, [Envelope.from_dict(d) for d in docs], None)

    class Handler(BaseHTTPRequestHandler):
        def answer(self, status: int, body: bytes, kind: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
            url = urllib.parse.urlparse(self.path)
            keyed = self.headers.get("Authorization") == f"Bearer {KEY}"
            if seen is not None:
                seen.append(url.path + (" (key)" if keyed else ""))
            if url.path == "/v1/games/g":
                outcome = {"winners": [0]} if over else None
                self.answer(200, json.dumps({"id": "g", "version": version,
                                             "outcome": outcome}).encode())  # fmt: skip
            elif url.path == "/v1/games/g/events":
                q = urllib.parse.parse_qs(url.query)
                after, limit = int(q["after"][0]), int(q["limit"][0])
                page = [d for d in (docs if keyed else public) if d["version"] > after][:limit]
                body = {"game": "g", "version": version, "events": page}
                self.answer(200, json.dumps(body).encode())
            elif url.path == "/v1/games/g/export" and (keyed or over):
                lines = "".join(json.dumps(d) + "\n" for d in docs)
                self.answer(200, lines.encode(), "application/x-ndjson")
            elif url.path == "/v1/games/g/export":
                detail = "the export of a running game needs an auditor key"
                self.answer(403, json.dumps({"detail": detail}).encode())
            else:
                self.answer(404, json.dumps({"detail": "no game nope"}).encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()


def test_every_page_of_a_long_game_is_read(
    docs: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setattr(audit_cli, "PAGE", 7)  # many pages
    for api in serve(docs):
        assert main(["audit", "g", "--api", api, "--key", KEY]) == 0
    out = capsys.readouterr().out
    assert "AUDIT PASSED" in out and f"versions 1..{len(docs)}" in out


@pytest.mark.parametrize("key", [[], ["--key", KEY]], ids=["the export", "an auditor's pages"])
def test_a_log_shorter_than_the_head_fails(
    docs: list[dict[str, Any]], key: list[str], capsys: pytest.CaptureFixture
) -> None:
    # The service says the game is over at a later version than the events it sends.
    for api in serve(docs[:40], head=len(docs), finished=True):
        assert main(["audit", "g", "--api", api, *key]) == 1
    out = capsys.readouterr().out
    assert "AUDIT FAILED at version 41" in out and "PASSED" not in out


def test_a_finished_game_is_audited_without_a_key_from_its_export(
    docs: list[dict[str, Any]], capsys: pytest.CaptureFixture
) -> None:
    seen: list[str] = []
    for api in serve(docs, seen=seen):
        assert main(["audit", "g", "--api", api]) == 0
    out = capsys.readouterr().out
    assert "AUDIT PASSED" in out and f"the log reaches the head version {len(docs)}" in out, out
    assert "/v1/games/g/export" in seen and not any("events" in s for s in seen), seen
    # Why not the events anyone reads: game_created there leaves out the seat's token hash
    # (and hidden discs are redacted), so the hashes they carry cannot be recomputed.
    public = visible_events(games.get("skull"), [Envelope.from_dict(d) for d in docs], None)
    assert audit("g", public).first_failure == {
        "check": "hash chain",
        "version": 1,
        "reason": "version 1: hash does not match its content",
    }


def test_a_running_game_without_a_key_is_incomplete_and_asks_for_one(
    docs: list[dict[str, Any]], capsys: pytest.CaptureFixture
) -> None:
    running = docs[: [i for i, d in enumerate(docs) if d.get("command")][-3]]
    for api in serve(running):
        assert main(["audit", "g", "--api", api]) == 3
        captured = capsys.readouterr()
        err = captured.err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
        assert "still running" in err and "auditor key" in err and "--key" in err, err
        assert "AUDIT" not in captured.out  # nothing was audited: no verdict to print
        # An auditor's key reads the running log: nothing fails, the seed's checks wait.
        assert main(["audit", "g", "--api", api, "--key", KEY]) == 3
        assert "AUDIT INCOMPLETE" in capsys.readouterr().out


def test_an_export_is_audited_offline(
    docs: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    export = tmp_path / "game.jsonl"
    export.write_text("".join(json.dumps(d) + "\n" for d in docs))
    assert main(["audit", "--file", str(export)]) == 0
    assert "AUDIT PASSED" in capsys.readouterr().out
    running = tmp_path / "running.jsonl"
    cut = [i for i, d in enumerate(docs) if d.get("command")][-3]
    running.write_text("".join(json.dumps(d) + "\n" for d in docs[:cut]))
    assert main(["audit", "--file", str(running)]) == 3
    assert "AUDIT INCOMPLETE" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["audit", "nope"], "no such game"),
        (["audit", "--file", "/nonexistent/game.jsonl"], "cannot read"),
        (["audit"], "give a GAME_ID"),
    ],
)
def test_errors_are_one_line(
    docs: list[dict[str, Any]],
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture,
) -> None:
    for api in serve(docs):
        assert main([*argv, "--api", api]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_an_unreachable_service_is_one_line(capsys: pytest.CaptureFixture) -> None:
    assert main(["audit", "g", "--api", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err.strip()
    assert "cannot reach the service" in err and len(err.splitlines()) == 1


def test_the_key_defaults_to_the_servers_variable() -> None:
    assert audit_cli.auditor_key({"TABLETOP_AUDITOR_KEYS": " a1 , a2"}) == "a1"
    assert audit_cli.auditor_key({"TABLETOP_AUDITOR_KEY": "k", "TABLETOP_AUDITOR_KEYS": "a"}) == "k"
    assert audit_cli.auditor_key({}) is None


@pytest.mark.parametrize("api", ["notaurl", "ftp://example.test", "http://[::1"])
def test_a_bad_url_is_one_line(api: str, capsys: pytest.CaptureFixture) -> None:
    assert main(["audit", "g", "--api", api, "--key", KEY]) == 2
    err = capsys.readouterr().err.strip()
    assert f"cannot reach the service at {api}" in err, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_the_service_is_tabletop_api_else_the_port_make_run_listens_on(
    docs: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    for api in serve(docs):
        monkeypatch.setenv("PORT", api.rsplit(":", 1)[1])  # as `PORT=N make run` listens
        assert main(["audit", "g"]) == 0
        assert "AUDIT PASSED" in capsys.readouterr().out
        monkeypatch.setenv("PORT", "9")  # nothing there: TABLETOP_API must win
        monkeypatch.setenv("TABLETOP_API", api)
        assert main(["audit", "g"]) == 0


def test_the_issues_bad_url_without_a_key_is_one_line(capsys: pytest.CaptureFixture) -> None:
    assert main(["audit", "nope", "--api", "not-a-url"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tabletop audit: cannot reach the service at not-a-url"), err
    assert len(err.splitlines()) == 1
