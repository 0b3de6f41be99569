"""The skeleton yardstick of ``bench_gateway.py``: the whole path's shape with nothing else.

A command goes the way it goes through the service: a Flask route checks the body with a
marshmallow schema (the gateway's ``CommandSchema``'s fields and validators), puts it on a
Redis stream and waits for the reply on the same connection, in one round trip (XADD, then
BLPOP on the command's reply list, as ``RedisCommandBus.put_and_wait`` does); a worker reads
the stream as one consumer of a group (XREADGROUP, 64 at a time), writes one view (a SET of a
small JSON) and replies (LPUSH and EXPIRE on the reply list), with the XACK in the same
pipeline, as the real worker's block does. No rules, no event store, no auth, no hooks, no
metrics, no outcome record, no announcement.

So that the load generator can send the same requests as to the service, the app answers the
other two requests a client makes while playing: ``POST /v1/games`` (checks the body with a
schema, SETs a public view, answers the id and a token per seat) and ``GET /v1/games/<id>``
(one GET of the view the worker last wrote). Any body the schema accepts is a command: the
client sends a Fox game's commands, which nothing here reads.

Under gunicorn with the gateway's settings (``deploy/gunicorn.conf.py``) and the gateway's
Redis client (``shared.adapters.redis.connect``), and the worker as a process of its own::

    gunicorn -c deploy/gunicorn.conf.py --bind 127.0.0.1:8000 'benchmarks.skeleton_path:create_app()'
    python -m benchmarks.skeleton_path worker
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import signal
import threading
from typing import Any, cast

import marshmallow as ma
import redis
from flask import Flask, Response, request
from marshmallow import validate

from shared.adapters.redis import connect

STREAM = "skeleton:commands"
GROUP = "workers"
MAX_STREAM = 100_000  # approximate cap: a long run must not grow Redis without bound
REPLY_TTL = 60  # seconds an unread reply stays, as the service's REPLY_TTL
WAIT_READ_MARGIN_S = 5.0  # the BLPOP's socket read outlives its server-side timeout by this
MAX_WAIT_S = 30.0
JSON_SAFE_INT = 2**53 - 1
_WAIT = re.compile(r"(?:^|[,;\s])wait\s*=\s*([0-9]+(?:\.[0-9]+)?)", re.IGNORECASE)


class CommandSchema(ma.Schema):
    """A command as the gateway's ``CommandSchema`` takes it: ``type``, optional ``id`` and
    ``expected_version``, any other field passed through."""

    class Meta:
        unknown = ma.INCLUDE

    type = ma.fields.String(required=True, validate=validate.Length(min=1, max=64))
    id = ma.fields.String(validate=validate.Regexp(r"^[A-Za-z0-9_.:-]{1,100}$"))
    expected_version = ma.fields.Integer(
        strict=True, validate=validate.Range(min=0, max=JSON_SAFE_INT)
    )


class GameSchema(ma.Schema):
    """A new game: its name, its seats and its options (none of which is read)."""

    class Meta:
        unknown = ma.INCLUDE

    game = ma.fields.String(required=True, validate=validate.Length(min=1, max=64))
    seats = ma.fields.List(ma.fields.Dict(), required=True, validate=validate.Length(1, 8))
    options = ma.fields.Dict()


def view_key(game_id: str) -> str:
    """The one view of a game (the last seat's to send a command)."""
    return f"skeleton:{{{game_id}}}:view"


def reply_key(game_id: str, command_id: str) -> str:
    """The list a waiting route BLPOPs for one command's reply."""
    return f"skeleton:{{{game_id}}}:reply:{command_id}"


def _json(doc: Any, status: int = 200, mimetype: str = "application/json") -> Response:
    return Response(json.dumps(doc, separators=(",", ":")), status=status, mimetype=mimetype)


def _invalid(errors: Any) -> Response:
    doc = {
        "type": "about:blank",
        "title": "Unprocessable Entity",
        "status": 422,
        "code": "request/invalid",
        "detail": "the body is not valid",
        "errors": errors,
    }
    return _json(doc, 422, "application/problem+json")


def _seat() -> int:
    """The seat a token names (``<seat>.<random>``, as ``create_game`` hands them out): no
    lookup, so the skeleton has no auth to speak of."""
    token = request.headers.get("Authorization", "").removeprefix("Bearer ")
    head = token.partition(".")[0]
    return int(head) if head.isdigit() else 0


def _body() -> Any:
    """The request's JSON (None when it is not JSON: the schema refuses it)."""
    return request.get_json(force=True, silent=True)


def _prefer_wait() -> float | None:
    match = _WAIT.search(request.headers.get("Prefer", ""))
    return None if match is None else max(0.001, min(float(match.group(1)), MAX_WAIT_S))


def create_app(url: str | None = None) -> Flask:
    """The skeleton's routes on the Redis at ``url`` (default ``REDIS_URL``)."""
    app = Flask(__name__)
    client = connect(url or os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    if not isinstance(client, redis.Redis):  # the one-round-trip wait needs one server's pool
        raise RuntimeError("the skeleton runs on one Redis server, not a cluster")
    pool = client.connection_pool
    commands, games = CommandSchema(), GameSchema()

    def put_and_wait(game_id: str, command_id: str, fields: list[str], wait: float) -> Any:
        """XADD and the BLPOP for the reply in one round trip on one connection (Redis runs
        them in order, so the reply cannot come before its wait)."""
        packed = [
            ("XADD", STREAM, "MAXLEN", "~", MAX_STREAM, "*", *fields),
            ("BLPOP", reply_key(game_id, command_id), repr(wait)),
        ]
        conn = pool.get_connection()
        try:
            conn.send_packed_command(conn.pack_commands(packed))
            conn.read_response()
            return conn.read_response(timeout=wait + WAIT_READ_MARGIN_S)
        except BaseException:
            conn.disconnect()  # a reply left unread must never reach the next user
            raise
        finally:
            pool.release(conn)

    @app.post("/v1/games/<game_id>/commands")
    def post_command(game_id: str) -> Response:
        try:
            body = commands.load(_body())
        except ma.ValidationError as exc:
            return _invalid(exc.messages)
        command_id = secrets.token_hex(12)
        fields = ["game_id", game_id, "command_id", command_id, "seat", str(_seat()),
                  "body", json.dumps(body, separators=(",", ":"))]  # fmt: skip
        wait = _prefer_wait()
        if wait is None:
            client.xadd(STREAM, dict(zip(fields[::2], fields[1::2], strict=True)))
            return _json({"command_id": command_id, "status": "pending"}, 202)
        popped = put_and_wait(game_id, command_id, fields, wait)
        if popped is None:
            return _json({"command_id": command_id, "status": "pending"}, 202)
        return Response(popped[1], status=200, mimetype="application/json")

    @app.get("/v1/games/<game_id>")
    def get_view(game_id: str) -> Response:
        raw = cast("bytes | None", client.get(view_key(game_id)))
        if raw is None:
            return _json({"status": 404, "code": "game/not_found"}, 404, "application/problem+json")
        return Response(raw, status=200, mimetype="application/json")

    @app.post("/v1/games")
    def create_game() -> Response:
        try:
            body = games.load(_body())
        except ma.ValidationError as exc:
            return _invalid(exc.messages)
        game_id = secrets.token_hex(8)
        tokens = [f"{seat}.{secrets.token_hex(16)}" for seat in range(len(body["seats"]))]
        view = {"id": game_id, "game": body["game"], "seat": None, "outcome": None}
        client.set(view_key(game_id), json.dumps(view, separators=(",", ":")))
        return _json({"id": game_id, "tokens": tokens, "view": view}, 201)

    @app.get("/healthz")
    def healthz() -> Response:
        return Response(b'{"status":"ok"}', mimetype="application/json")

    return app


def handle(pipe: Any, msg_id: Any, fields: dict[bytes, bytes]) -> None:
    """One command: its view and its reply on ``pipe``, with the acknowledgement."""
    game_id, command_id = fields[b"game_id"].decode(), fields[b"command_id"].decode()
    seat = int(fields[b"seat"])
    view = {
        "id": game_id,
        "seat": seat,
        "outcome": None,
        "last": json.loads(fields[b"body"]),
        "command": {"command_id": command_id, "status": "accepted"},
    }
    raw = json.dumps(view, separators=(",", ":"))
    pipe.set(view_key(game_id), raw)
    pipe.lpush(reply_key(game_id, command_id), raw)
    pipe.expire(reply_key(game_id, command_id), REPLY_TTL)
    pipe.xack(STREAM, GROUP, msg_id)


def work(client: Any, name: str, stop: threading.Event, batch: int = 64) -> int:
    """Read the stream as consumer ``name`` of ``GROUP`` until ``stop``: each message read is
    handled and acknowledged in one pipeline. Returns how many were handled."""
    try:
        client.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    except redis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise
    done = 0
    while not stop.is_set():
        rows = client.xreadgroup(GROUP, name, {STREAM: ">"}, count=batch, block=1000) or []
        for _stream, messages in rows:
            for msg_id, fields in messages:
                pipe = client.pipeline(transaction=False)
                handle(pipe, msg_id, fields)
                pipe.execute()
                done += 1
    return done


def main() -> None:
    """``python -m benchmarks.skeleton_path worker``: the worker, until SIGTERM or SIGINT."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("role", choices=["worker"])
    parser.add_argument("--name", default=f"skeleton-{os.getpid()}")
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    work(connect(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")), args.name, stop)


if __name__ == "__main__":
    main()
