"""``tabletop audit`` reads every page of a long game, fails a log that ends before the head
the service reports, reads exports offline, and answers errors in one line."""

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
from shared.app.playout import play


@pytest.fixture(scope="module")
def docs() -> list[dict[str, Any]]:
    played = play("skull", [{"bot": "random"}] * 4, {}, "audit-cli")
    return [e.to_dict() for e in played.envelopes]


def serve(docs: list[dict[str, Any]], *, head: int | None = None) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
            url = urllib.parse.urlparse(self.path)
            if not url.path.startswith("/v1/games/g/events"):
                self.send_response(404)
                self.end_headers()
                self.wfile.write(json.dumps({"detail": "no game nope"}).encode())
                return
            q = urllib.parse.parse_qs(url.query)
            after, limit = int(q["after"][0]), int(q["limit"][0])
            page = [d for d in docs if d["version"] > after][:limit]
            body = {"game": "g", "version": head or len(docs), "events": page}
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps(body).encode())

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
        assert main(["audit", "g", "--api", api]) == 0
    out = capsys.readouterr().out
    assert "AUDIT PASSED" in out and f"versions 1..{len(docs)}" in out


def test_a_log_shorter_than_the_head_fails(
    docs: list[dict[str, Any]], capsys: pytest.CaptureFixture
) -> None:
    # The service says the game is at a later version than the events it sends.
    for api in serve(docs[:40], head=len(docs)):
        assert main(["audit", "g", "--api", api]) == 1
    out = capsys.readouterr().out
    assert "AUDIT FAILED at version 41" in out and "PASSED" not in out


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
