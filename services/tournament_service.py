"""``tabletop tournament``: its calls to the service, through the bot kit's ``Client``
(``tabletop_client``, the one HTTP client of the CLIs), each failure turned into the
``CliError`` of its one line: the key refused, an unknown tournament, a request the service
finds invalid (exit 2, with the fields it names), an unreachable or failing service (exit 1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from services.tournament_request import EXIT_SERVICE, EXIT_USAGE, CliError, fields

if TYPE_CHECKING:
    from tabletop_client import Client, ProblemError

HTTP_TIMEOUT = 30.0


def create_tournament(api: str, key: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """``POST /v1/tournaments`` with ``body``: the created tournament (its ``id``)."""
    return _call(api, key, "POST /v1/tournaments", lambda c: c.create_tournament(body))


def fetch_tournament(api: str, key: str, tournament_id: str) -> dict[str, Any]:
    """``GET /v1/tournaments/{id}`` with a one-game page (the CLI reads no game list)."""
    return _call(
        api,
        key,
        f"GET /v1/tournaments/{tournament_id}",
        lambda c: c.tournament(tournament_id, limit=1),
        tournament=tournament_id,
    )


def _call(
    api: str,
    key: str,
    what: str,
    call: Callable[[Client], dict[str, Any]],
    *,
    tournament: str | None = None,
) -> dict[str, Any]:
    """``call`` on a client opened for it; every failure becomes a CliError with its line."""
    # Here, not at the top: the kit brings httpx, which the local commands never need.
    from tabletop_client import Client, InvalidResponse, ProblemError, TransportError

    try:
        with Client(api, key, timeout=HTTP_TIMEOUT) as client:
            return call(client)
    except ProblemError as exc:
        raise _refusal(exc, api, tournament) from None
    except TransportError as exc:  # refused, reset, timed out, or no URL at all
        raise CliError(f"cannot reach the service at {api}: {exc.reason}", EXIT_SERVICE) from None
    except InvalidResponse:
        raise CliError(
            f"the service at {api} did not answer {what} with JSON", EXIT_SERVICE
        ) from None


def _refusal(exc: ProblemError, api: str, tournament: str | None) -> CliError:
    """The one line of an HTTP error answer (a problem body: title, detail, code, errors)."""
    status = exc.status
    if status in (401, 403):
        return CliError(f"the service refused the key: {exc.detail}", EXIT_SERVICE)
    if status == 404:
        what = f"unknown tournament {tournament}" if tournament else "not found"
        return CliError(f"{what} at {api}: {exc.detail}", EXIT_SERVICE)
    if status in (400, 422):
        return CliError(
            f"the service refused the tournament: {exc.detail}{fields(exc.errors)}",
            EXIT_USAGE,
        )
    return CliError(
        f"the service at {api} answered {status} {exc.title}: {exc.detail}", EXIT_SERVICE
    )
