"""ETags on views and event pages (If-None-Match answers 304), and CORS for configured
origins only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from services.gateway.app import create_app
from shared.app.ports import NullDispatcher
from shared.config import Settings
from tests.integration.api import bearer
from tests.integration.conftest import Stack


def test_a_view_revalidates_with_its_etag(stack: Stack) -> None:
    created = stack.http.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    ).get_json()
    gid, token = created["id"], created["tokens"][0]
    first = stack.http.get(f"/v1/games/{gid}", headers=bearer(token))
    tag = first.headers["ETag"]
    again = stack.http.get(f"/v1/games/{gid}", headers={**bearer(token), "If-None-Match": tag})
    assert again.status_code == 304 and again.data == b""
    # Another seat's view is another body: another tag, never a 304 on seat 0's tag.
    other = stack.http.get(f"/v1/games/{gid}", headers={**bearer(created["tokens"][1]),
                                                         "If-None-Match": tag})  # fmt: skip
    assert other.status_code == 200 and other.headers["ETag"] != tag
    page = stack.http.get(f"/v1/games/{gid}/events", headers=bearer(token))
    same = stack.http.get(f"/v1/games/{gid}/events",
                          headers={**bearer(token), "If-None-Match": page.headers["ETag"]})  # fmt: skip
    assert same.status_code == 304
    # A move changes the view: the old tag no longer matches.
    move = first.get_json()["legal_commands"]
    if move:
        stack.http.post(f"/v1/games/{gid}/commands", json=move[0],
                        headers={**bearer(token), "Prefer": "wait=5"})  # fmt: skip
        changed = stack.http.get(f"/v1/games/{gid}",
                                 headers={**bearer(token), "If-None-Match": tag})  # fmt: skip
        assert changed.status_code == 200


@pytest.fixture
def cors_client(redis_client: redis.Redis) -> Iterator:
    settings = Settings(cors_origins=frozenset({"https://play.example"}))
    yield create_app(settings, client=redis_client, dispatcher=NullDispatcher()).test_client()


def test_cors_answers_configured_origins_only(cors_client) -> None:  # type: ignore[no-untyped-def]
    ok = cors_client.get("/healthz", headers={"Origin": "https://play.example"})
    assert ok.headers["Access-Control-Allow-Origin"] == "https://play.example"
    other = cors_client.get("/healthz", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers
    pre = cors_client.options(
        "/v1/games",
        headers={"Origin": "https://play.example", "Access-Control-Request-Method": "POST"},
    )
    assert pre.status_code == 200
    assert "Authorization" in pre.headers["Access-Control-Allow-Headers"]


def test_the_docs_page_loads_everything_from_this_server(stack: Stack) -> None:
    import re

    page = stack.http.get("/docs")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.data.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources and all(s.startswith("/") for s in sources), sources
    for source in sources:
        assert stack.http.get(source).status_code == 200, source
    assert '"/openapi.json"' in html
