"""``Client``: the service's HTTP API as Python calls (httpx underneath).

Every call answers the decoded JSON document the endpoint answers; a refusal raises
``ProblemError`` carrying the problem body, an unreachable service ``TransportError``. The
client's ``token`` (a seat token, an organizer or auditor key) is sent as
``Authorization: Bearer``; a call given ``token=`` sends that one instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx

from tabletop_client import sse
from tabletop_client.errors import InvalidResponse, ProblemError, TransportError

DEFAULT_TIMEOUT = 30.0
_UNSET: Any = object()  # a call's ``token=`` left out: the client's own


def _seg(value: str | int) -> str:
    """An id as one path segment: quoted, so an id with ``/`` or ``?`` cannot leave it."""
    return quote(str(value), safe="")


class Client:
    """A connection to the service at ``api`` (``http://host:port``), as the holder of
    ``token``. Use it as a context manager, or ``close()`` it, to free its connections."""

    def __init__(
        self,
        api: str,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.api = api.rstrip("/")
        self.token = token
        self.timeout = timeout
        # Never follow a redirect: the service answers none, and a hop elsewhere would carry
        # the bearer token to whoever answered it.
        try:
            self._http = httpx.Client(
                base_url=self.api, timeout=timeout, transport=transport, follow_redirects=False
            )
        except httpx.InvalidURL as exc:
            raise TransportError(self.api, f"not a URL ({exc})") from None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the pooled connections."""
        self._http.close()

    # --- the plumbing ----------------------------------------------------------------------

    def _headers(self, token: str | None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        chosen = self.token if token is _UNSET else token
        if chosen:
            headers["Authorization"] = f"Bearer {chosen}"
        if extra:
            headers.update(extra)
        return headers

    def _send(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, Any] | None = None,
        token: Any = _UNSET,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> httpx.Response:
        query = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            resp = self._http.request(
                method,
                path,
                json=body,
                params=query or None,
                headers=self._headers(token, headers),
                timeout=self.timeout if timeout is None else timeout,
            )
        except (httpx.TransportError, httpx.InvalidURL) as exc:
            raise TransportError(self.api, str(exc) or type(exc).__name__) from None
        if resp.status_code >= 400:
            raise _problem(resp)
        if resp.is_redirect:
            raise InvalidResponse(f"the service answered {method} {path} with a redirect")
        return resp

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, Any] | None = None,
        token: Any = _UNSET,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Any call: the JSON of the answer (None for an empty one)."""
        resp = self._send(
            method,
            path,
            body=body,
            params=params,
            token=token,
            headers=headers,
            timeout=timeout,
        )
        if not resp.content:
            return None
        try:
            return resp.json()
        except ValueError:
            raise InvalidResponse(f"the service did not answer {method} {path} with JSON") from None

    def _doc(self, method: str, path: str, body: Any = None, **kw: Any) -> dict[str, Any]:
        doc = self.request(method, path, body, **kw)
        if not isinstance(doc, dict):
            raise InvalidResponse(f"the service did not answer {method} {path} with a JSON object")
        return doc

    # --- games -----------------------------------------------------------------------------

    def create_game(
        self,
        game: str,
        seats: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """``POST /v1/games``: ``seats`` like ``[{"name": "ana"}, {"bot": "random"}]``;
        ``fields`` adds ``seed``, ``clock``, ``fairness``, ``listed``. The answer has ``id``
        and ``tokens`` (one per seat, None for bots)."""
        body: dict[str, Any] = {"game": game, "seats": [dict(s) for s in seats], **fields}
        if options is not None:
            body["options"] = dict(options)
        extra = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self._doc("POST", "/v1/games", body, headers=extra)

    def game(self, game_id: str, *, seat: int | None = None, token: Any = _UNSET) -> dict[str, Any]:
        """``GET /v1/games/{id}``: the view of the token's seat (public without one; an
        auditor may ask for ``seat``)."""
        return self._doc("GET", f"/v1/games/{_seg(game_id)}", params={"seat": seat}, token=token)

    def games(
        self,
        *,
        status: str | None = None,
        game: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """``GET /v1/games``: one page of listed games (``games``, ``next_cursor``)."""
        params = {"status": status, "game": game, "limit": limit, "cursor": cursor}
        return self._doc("GET", "/v1/games", params=params)

    def join(self, game_id: str, seat: int, name: str) -> dict[str, Any]:
        """``POST /v1/games/{id}/seats/{seat}/join``: ``{"seat", "token"}``."""
        path = f"/v1/games/{_seg(game_id)}/seats/{_seg(seat)}/join"
        return self._doc("POST", path, {"name": name}, token=None)

    # --- commands --------------------------------------------------------------------------

    def submit(
        self,
        game_id: str,
        command: Mapping[str, Any],
        *,
        wait: int | None = None,
        command_id: str | None = None,
        expected_version: int | None = None,
        token: Any = _UNSET,
    ) -> dict[str, Any]:
        """``POST /v1/games/{id}/commands``. With ``wait`` (seconds, ``Prefer: wait=N``) the
        outcome: the new view, or a ``ProblemError`` (409 stale or over, 422 illegal naming
        the ``rule``); without, the 202 answer with its ``command_id``."""
        body = dict(command)
        if command_id is not None:
            body["id"] = command_id
        if expected_version is not None:
            body["expected_version"] = expected_version
        extra = {"Prefer": f"wait={int(wait)}"} if wait is not None else None
        # The read waits on the service: give it the wait on top of the usual allowance.
        timeout = self.timeout + (wait or 0)
        path = f"/v1/games/{_seg(game_id)}/commands"
        return self._doc("POST", path, body, headers=extra, token=token, timeout=timeout)

    def command(self, game_id: str, command_id: str, *, token: Any = _UNSET) -> dict[str, Any]:
        """``GET /v1/games/{id}/commands/{command_id}``: pending, accepted or rejected."""
        path = f"/v1/games/{_seg(game_id)}/commands/{_seg(command_id)}"
        return self._doc("GET", path, token=token)

    def suggestion(
        self, game_id: str, bot: str = "heuristic", *, token: Any = _UNSET, **settings: int
    ) -> dict[str, Any]:
        """``GET /v1/games/{id}/suggestion``: what ``bot`` (with its ``settings``, such as
        ``iterations``) would send now for the token's seat."""
        path = f"/v1/games/{_seg(game_id)}/suggestion"
        return self._doc("GET", path, params={"bot": bot, **settings}, token=token)

    # --- history ---------------------------------------------------------------------------

    def events(
        self, game_id: str, *, after: int = 0, limit: int | None = None, token: Any = _UNSET
    ) -> dict[str, Any]:
        """``GET /v1/games/{id}/events``: one page (``version``: the head, ``events``)."""
        params = {"after": after, "limit": limit}
        return self._doc("GET", f"/v1/games/{_seg(game_id)}/events", params=params, token=token)

    def feed(
        self,
        game_id: str,
        *,
        after: int | None = None,
        token: Any = _UNSET,
        read_timeout: float | None = 60.0,
    ) -> Iterator[sse.SseMessage]:
        """``GET /v1/games/{id}/feed`` as an iterator of messages (``event: update``, their
        ``data`` parsed: ``{"version", "events", "view"}``); heartbeats are skipped and the
        iterator ends with the stream (after the game-over message). ``read_timeout``: the
        longest silence taken (the service sends a heartbeat every 15 s)."""
        headers = {"Accept": "text/event-stream"}
        if after is not None:
            headers["Last-Event-ID"] = str(after)
        yield from self._stream(
            f"/v1/games/{_seg(game_id)}/feed", token=token, headers=headers, read=read_timeout
        )

    def _stream(
        self,
        path: str,
        *,
        token: Any = _UNSET,
        headers: Mapping[str, str] | None = None,
        read: float | None,
    ) -> Iterator[sse.SseMessage]:
        timeout = httpx.Timeout(self.timeout, read=read)
        try:
            with self._http.stream(
                "GET", path, headers=self._headers(token, headers), timeout=timeout
            ) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    raise _problem(resp)
                yield from sse.parse(resp.iter_lines())
        except httpx.TransportError as exc:
            raise TransportError(self.api, str(exc) or type(exc).__name__) from None

    def export(self, game_id: str, *, token: Any = _UNSET) -> list[dict[str, Any]]:
        """``GET /v1/games/{id}/export``: the whole log, one envelope per JSONL line."""
        resp = self._send(
            "GET",
            f"/v1/games/{_seg(game_id)}/export",
            token=token,
            headers={"Accept": "application/x-ndjson"},
        )
        try:
            return [json.loads(line) for line in resp.text.splitlines() if line.strip()]
        except ValueError:
            raise InvalidResponse("the service's export is not JSON lines") from None

    def audit(self, game_id: str, *, token: Any = _UNSET) -> dict[str, Any]:
        """``GET /v1/games/{id}/audit``: the service's audit report of the game."""
        return self._doc("GET", f"/v1/games/{_seg(game_id)}/audit", token=token)

    # --- catalogue and ratings -------------------------------------------------------------

    def game_types(self) -> dict[str, Any]:
        """``GET /v1/game-types``: every game's options, commands and view."""
        return self._doc("GET", "/v1/game-types")

    def ratings(self, game: str) -> dict[str, Any]:
        """``GET /v1/ratings?game=``: the leaderboard of bot specs in that game."""
        return self._doc("GET", "/v1/ratings", params={"game": game})

    def readiness(self) -> dict[str, Any]:
        """``GET /readyz``: the report of a service ready to play (``status``, ``redis``,
        ``games``). Not ready, it answers 503: a ``ProblemError`` whose ``body`` is the report,
        its ``missing`` naming what the service waits for. Sent without a key (a probe)."""
        return self._doc("GET", "/readyz", token=None)

    # --- tournaments (an organizer key; auditors may read) ----------------------------------

    def create_tournament(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /v1/tournaments`` with the request body (``game``, ``entrants``, ``games``,
        ``format``...): 201 with its ``id``."""
        return self._doc("POST", "/v1/tournaments", dict(body))

    def tournament(
        self, tournament_id: str, *, offset: int | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        """``GET /v1/tournaments/{id}``: status, progress, standings, a page of its games."""
        path = f"/v1/tournaments/{_seg(tournament_id)}"
        return self._doc("GET", path, params={"offset": offset, "limit": limit})

    def tournaments(self) -> dict[str, Any]:
        """``GET /v1/tournaments``: the tournaments."""
        return self._doc("GET", "/v1/tournaments")

    def cancel_tournament(self, tournament_id: str) -> Any:
        """``DELETE /v1/tournaments/{id}``: games not started are dropped."""
        return self.request("DELETE", f"/v1/tournaments/{_seg(tournament_id)}")

    # --- registered bots -------------------------------------------------------------------

    def create_bot(
        self,
        name: str,
        games: Sequence[str],
        transport: str,
        *,
        url: str | None = None,
        budget_ms: int | None = None,
        on_failure: str | None = None,
        ladder: bool | None = None,
    ) -> dict[str, Any]:
        """``POST /v1/bots`` (no key needed): a ``webhook`` bot with its ``url`` or a
        ``connected`` one; ``ladder=True`` puts its all-bot games on the public ladder
        (``GET /v1/ratings``). The answer's ``key`` is shown this once: keep it (it signs the
        webhook's requests, reads the connected stream and retires the bot)."""
        body: dict[str, Any] = {"name": name, "games": list(games), "transport": transport}
        given = (("url", url), ("budget_ms", budget_ms), ("on_failure", on_failure),
                 ("ladder", ladder))  # fmt: skip
        for field, value in given:
            if value is not None:
                body[field] = value
        return self._doc("POST", "/v1/bots", body, token=None)

    def bots(self, *, offset: int | None = None, limit: int | None = None) -> dict[str, Any]:
        """``GET /v1/bots``: a page of the registered bots (``bots``), oldest first."""
        return self._doc("GET", "/v1/bots", params={"offset": offset, "limit": limit})

    def bot(self, bot_id: str) -> dict[str, Any]:
        """``GET /v1/bots/{id}``: one bot with its ``stats``."""
        return self._doc("GET", f"/v1/bots/{_seg(bot_id)}")

    def delete_bot(self, bot_id: str, key: str) -> Any:
        """``DELETE /v1/bots/{id}`` with the bot's own ``key``: retires it."""
        return self.request("DELETE", f"/v1/bots/{_seg(bot_id)}", token=key)

    def bot_turns(self, key: str, *, read_timeout: float | None = 60.0) -> Iterator[sse.SseMessage]:
        """``GET /v1/bots/me/turns`` with the bot's ``key``: its turns (and game-over notes)
        as SSE messages, ``data`` parsed; ``play_connected`` answers them."""
        headers = {"Accept": "text/event-stream"}
        yield from self._stream("/v1/bots/me/turns", token=key, headers=headers, read=read_timeout)

    def answer_turn(self, key: str, turn_id: str, command: Mapping[str, Any]) -> Any:
        """``POST /v1/bots/me/turns/{turn_id}`` ``{"command": ...}`` with the bot's ``key``
        (409 ``turn/expired`` when too late or answered already, 422 when illegal)."""
        path = f"/v1/bots/me/turns/{_seg(turn_id)}"
        return self.request("POST", path, {"command": dict(command)}, token=key)


def _problem(resp: httpx.Response) -> ProblemError:
    """The problem of an error answer; a body that is no JSON object keeps only the status."""
    try:
        resp.read()
        body = resp.json()
    except (ValueError, httpx.HTTPError):
        body = None
    return ProblemError(
        resp.status_code, body if isinstance(body, dict) else {}, reason=resp.reason_phrase
    )
