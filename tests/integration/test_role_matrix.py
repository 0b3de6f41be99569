"""Roles at every endpoint: for each endpoint and each kind of caller (no token, a malformed
header, an unknown token, this game's seat token, another seat's token of this game, a seat
token of another game, an auditor key, an organizer key) the status the service must answer;
and no answer to anyone but an auditor holds a hidden fact: another seat's cards, the secret
seed before the end, a token hash, or another seat's token. A spectator is a caller without a
token: the API has no spectator credential.

Then, per game, the strongest form of "no hidden fact": two games that differ only in a hidden
choice (a Skull disc, Isle of Skye prices) look byte for byte the same to everyone else (views,
events and the feed, ids and hashes aside)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shared.app.messages import token_hash
from tests.integration.api import bearer
from tests.integration.conftest import AUDITOR, ORGANIZER, Stack

SEED = "role-matrix-secret-seed-5f0c"  # an organizer's fixed seed: searchable in every answer
ROLES = ["none", "malformed", "unknown", "seat", "other_seat", "foreign", "auditor", "organizer"]


@dataclass
class Game:
    """A game and its seat tokens (seat 0 is "seat", seat 1 "other_seat")."""

    id: str
    tokens: list[str]


def _create(stack: Stack, body: dict[str, Any], key: str | None = None) -> Game:
    resp = stack.http.post("/v1/games", json=body, headers=bearer(key) if key else {})
    assert resp.status_code == 201, resp.get_json()
    doc = resp.get_json()
    return Game(doc["id"], doc["tokens"])


def _fox(stack: Stack) -> Game:
    """A Fox game whose seed the test knows (an organizer's), seat 0 to lead first."""
    return _create(stack, {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}], "seed": SEED,
                           "options": {"first_dealer": 1}}, ORGANIZER)  # fmt: skip


def _headers(role: str, game: Game, foreign: Game, seat: int = 0) -> dict[str, str]:
    """The Authorization header of ``role`` for ``game`` (``seat``: whose token is "seat")."""
    return {
        "none": {},
        "malformed": {"Authorization": "Basic YTpi"},
        "unknown": bearer("not-a-token-of-anything"),
        "seat": bearer(game.tokens[seat]),
        "other_seat": bearer(game.tokens[1 - seat]),
        "foreign": bearer(foreign.tokens[0]),
        "auditor": bearer(AUDITOR),
        "organizer": bearer(ORGANIZER),
    }[role]


def _row(*statuses: int) -> dict[str, int]:
    assert len(statuses) == len(ROLES)
    return dict(zip(ROLES, statuses, strict=True))


# endpoint -> role -> status. Reads of a game: anyone, its seats, keys; an unknown token or
# another game's is a 401 (never silently a spectator); a malformed header a 401.
# 401: no (valid) credential; 403: a valid one that does not allow this.
MATRIX: dict[str, dict[str, int]] = {
    #                         none mal unk seat other foreign aud  org
    "health":          _row(200, 200, 200, 200, 200, 200, 200, 200),
    "game_types":      _row(200, 200, 200, 200, 200, 200, 200, 200),
    "list_games":      _row(200, 200, 200, 200, 200, 200, 200, 200),
    "ratings":         _row(200, 200, 200, 200, 200, 200, 200, 200),
    "create":          _row(201, 401, 401, 401, 401, 401, 201, 201),
    "create_seeded":   _row(403, 401, 401, 401, 401, 401, 403, 201),
    "view":            _row(200, 401, 401, 200, 200, 401, 200, 200),
    "view_other_seat": _row(403, 401, 401, 403, 200, 401, 200, 403),
    "command":         _row(401, 401, 401, 200, 422, 401, 403, 403),
    "command_status":  _row(401, 401, 401, 200, 404, 401, 200, 403),
    "events":          _row(200, 401, 401, 200, 200, 401, 200, 200),
    "feed":            _row(200, 401, 401, 200, 200, 401, 200, 200),
    "feed_query":      _row(200, 401, 401, 200, 200, 401, 200, 200),
    "suggestion":      _row(401, 401, 401, 422, 200, 401, 403, 403),
    "export":          _row(403, 401, 401, 403, 403, 401, 200, 403),
    "audit":           _row(403, 401, 401, 403, 403, 401, 200, 403),
    "join":            _row(200, 401, 401, 401, 401, 401, 200, 200),
    "leave":           _row(401, 401, 401, 200, 403, 401, 403, 403),
    "entropy":         _row(401, 401, 401, 200, 403, 401, 403, 403),
    "tournaments":     _row(401, 401, 403, 403, 403, 403, 200, 200),
    "tournament":      _row(401, 401, 403, 403, 403, 403, 200, 200),
    "cancel":          _row(401, 401, 403, 403, 403, 403, 403, 200),
}  # fmt: skip


def _first_message(resp: Any) -> bytes:
    """The feed's first ``update`` message (the stream is closed after it)."""
    data = b""
    for chunk in resp.response:
        data += chunk if isinstance(chunk, bytes) else chunk.encode()
        if b"event: update" in data and data.endswith(b"\n\n"):
            break
    resp.close()
    return data


class Calls:
    """One call per (endpoint, role), each on state of its own where the call changes it."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.http = stack.http
        self.fox = _fox(stack)
        self.foreign = _fox(stack)
        sent = self.http.post(f"/v1/games/{self.fox.id}/commands",
                              json={**self._legal(self.fox, 0), "id": "c1"},
                              headers={**bearer(self.fox.tokens[0]), "Prefer": "wait=10"})  # fmt: skip
        assert sent.status_code == 200, sent.get_json()
        self.command_id = "s0-c1"  # seat 0's command, by the id its Location names
        created = self.http.post(
            "/v1/tournaments",
            json={"game": "fox", "entrants": [{"bot": "random"}] * 2, "games": 2,
                  "options": {"target": 1}},
            headers=bearer(ORGANIZER),
        )  # fmt: skip
        assert created.status_code == 201, created.get_json()
        self.tournament = created.get_json()["id"]

    def _legal(self, game: Game, seat: int) -> dict[str, Any]:
        view = self.http.get(f"/v1/games/{game.id}", headers=bearer(game.tokens[seat]))
        legal: list[dict[str, Any]] = view.get_json()["legal_commands"]
        assert legal, "seat 0 leads the first trick"
        return legal[0]

    def call(self, endpoint: str, role: str) -> Any:
        fox, http = self.fox, self.http
        h = _headers(role, fox, self.foreign)
        g = f"/v1/games/{fox.id}"
        two = {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
        if endpoint == "health":
            return http.get("/healthz", headers=h)
        if endpoint == "game_types":
            return http.get("/v1/game-types", headers=h)
        if endpoint == "list_games":
            return http.get("/v1/games", headers=h)
        if endpoint == "ratings":
            return http.get("/v1/ratings?game=fox", headers=h)
        if endpoint == "create":
            return http.post("/v1/games", json=two, headers=h)
        if endpoint == "create_seeded":
            return http.post("/v1/games", json={**two, "seed": "x"}, headers=h)
        if endpoint == "view":
            return http.get(g, headers=h)
        if endpoint == "view_other_seat":
            return http.get(f"{g}?seat=1", headers=h)
        if endpoint == "command":
            game = _fox(self.stack)  # a fresh game: seat 0 is to lead
            h = _headers(role, game, self.foreign)
            return http.post(f"/v1/games/{game.id}/commands", json=self._legal(game, 0),
                             headers={**h, "Prefer": "wait=10"})  # fmt: skip
        if endpoint == "command_status":
            return http.get(f"{g}/commands/{self.command_id}", headers=h)
        if endpoint == "events":
            return http.get(f"{g}/events", headers=h)
        if endpoint == "feed":
            return http.get(f"{g}/feed", headers=h, buffered=False)
        if endpoint == "feed_query":  # the token in ?access_token= (EventSource), no header
            # (a "malformed" header's credentials are then just an unknown token)
            token = h.get("Authorization", "").partition(" ")[2]
            query = f"?access_token={token}" if token else ""
            return http.get(f"{g}/feed{query}", buffered=False)
        if endpoint == "suggestion":
            return http.get(f"{g}/suggestion", headers=h)
        if endpoint == "export":
            return http.get(f"{g}/export", headers=h)
        if endpoint == "audit":
            return http.get(f"{g}/audit", headers=h)
        if endpoint in ("join", "leave"):
            lobby = _create(self.stack, {"game": "skull", "seats": [{"name": "host"},
                            {"open": True}, {"open": True}]})  # fmt: skip
            if endpoint == "join":
                h = _headers(role, Game(lobby.id, [lobby.tokens[0], lobby.tokens[0]]),
                             self.foreign)  # fmt: skip
                return http.post(f"/v1/games/{lobby.id}/seats/1/join", json={"name": "j"},
                                 headers=h)  # fmt: skip
            joined = http.post(f"/v1/games/{lobby.id}/seats/1/join", json={"name": "j"})
            assert joined.status_code == 200
            seats = Game(lobby.id, [joined.get_json()["token"], str(lobby.tokens[0])])
            return http.post(f"/v1/games/{lobby.id}/seats/1/leave",
                             headers=_headers(role, seats, self.foreign))  # fmt: skip
        if endpoint == "entropy":
            game = _create(self.stack, {**two, "fairness": "contributed"})
            return http.post(f"/v1/games/{game.id}/seats/0/entropy", json={"client_seed": "s"},
                             headers=_headers(role, game, self.foreign))  # fmt: skip
        if endpoint == "tournaments":
            return http.get("/v1/tournaments", headers=h)
        if endpoint == "tournament":
            return http.get(f"/v1/tournaments/{self.tournament}", headers=h)
        if endpoint == "cancel":
            return http.delete(f"/v1/tournaments/{self.tournament}", headers=h)
        raise AssertionError(endpoint)


def _cards(doc: Any) -> set[tuple[str, int]]:
    """Every card (``{"suit", "rank"}``) anywhere in a JSON document."""
    found: set[tuple[str, int]] = set()
    stack = [doc]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if set(item) >= {"suit", "rank"} and isinstance(item["rank"], int):
                found.add((item["suit"], item["rank"]))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _json_docs(body: bytes) -> list[Any]:
    """The JSON in an answer: the body, or each ``data:`` line of a feed."""
    text = body.decode()
    if "event: update" in text:
        return [json.loads(m) for m in re.findall(r"^data: (.*)$", text, re.MULTILINE)]
    try:
        return [json.loads(text)] if text.strip() else []
    except ValueError:  # the export: one envelope a line
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_every_endpoint_answers_each_role_as_the_matrix_says(stack: Stack) -> None:
    calls = Calls(stack)
    fox = calls.fox
    # What only an auditor may read: each seat's hand at the deal (from the auditor's view of
    # it), the seed, every token hash; and each seat's token is its own.
    hands = []
    for seat in (0, 1):
        doc = stack.http.get(f"/v1/games/{fox.id}/events", headers=bearer(AUDITOR)).get_json()
        dealt = next(e for e in doc["events"] if e["type"] == "round_dealt")
        hands.append({(c["suit"], c["rank"]) for c in dealt["data"]["hands"][seat]})
    assert hands[0] and hands[1] and not hands[0] & hands[1]
    tokens = [*fox.tokens, *calls.foreign.tokens]
    hashes = [token_hash(t) for t in tokens]

    wrong: list[str] = []
    leaks: list[str] = []
    for endpoint, expected in MATRIX.items():
        for role in ROLES:
            resp = calls.call(endpoint, role)
            body = _first_message(resp) if resp.mimetype == "text/event-stream" else resp.data
            if resp.status_code != expected[role]:
                wrong.append(f"{endpoint} as {role}: {resp.status_code}, expected "
                             f"{expected[role]}: {body[:160]!r}")  # fmt: skip
            if resp.status_code >= 400:
                assert resp.mimetype == "application/problem+json", (endpoint, role)
            if role == "auditor":
                continue
            text = body.decode(errors="replace")
            if SEED in text:
                leaks.append(f"{endpoint} as {role}: the seed")
            if any(h in text for h in hashes):
                leaks.append(f"{endpoint} as {role}: a token hash")
            own = {"seat": fox.tokens[0], "other_seat": fox.tokens[1],
                   "foreign": calls.foreign.tokens[0]}.get(role)  # fmt: skip
            if endpoint not in ("create", "create_seeded", "join") and any(
                t in text for t in tokens if t != own
            ):
                leaks.append(f"{endpoint} as {role}: another seat's token")
            if endpoint in ("view", "view_other_seat", "events", "feed", "feed_query",
                            "suggestion", "command_status"):  # fmt: skip
                seen = set().union(*(_cards(d) for d in _json_docs(body))) if body else set()
                # Only seat 0 has played (a card, now public); seat 1's hand is all hidden.
                played = _cards(json.loads(stack.http.get(f"/v1/games/{fox.id}").data)["trick"])
                hidden = hands[1] if role != "other_seat" else hands[0] - played
                if seen & hidden:
                    leaks.append(f"{endpoint} as {role}: cards of the other hand {seen & hidden}")
    assert not wrong, "\n".join(wrong)
    assert not leaks, "\n".join(leaks)


def _seen(texts: list[str]) -> set[tuple[str, int]]:
    """Every card in the answers ``texts``."""
    found: set[tuple[str, int]] = set()
    for text in texts:
        for doc in _json_docs(text.encode()):
            found |= _cards(doc)
    return found


def _normalize(text: str, ids: list[str]) -> str:
    """An answer without what differs between two games regardless of play: ids, hashes and
    times."""
    for i, gid in enumerate(ids):
        text = text.replace(gid, f"<game{i}>")
    text = re.sub(r'"(hash|prev_hash|head_hash)": ?"[0-9a-f]{64}"', r'"\1":"<h>"', text)
    return re.sub(r'"(at|created_at)": ?"[^"]*"', r'"\1":"<t>"', text)


def _everything(stack: Stack, gid: str, headers: dict[str, str]) -> list[str]:
    out = []
    for url in (f"/v1/games/{gid}", f"/v1/games/{gid}/events"):
        out.append(stack.http.get(url, headers=headers).data.decode())
    feed = stack.http.get(f"/v1/games/{gid}/feed", headers=headers, buffered=False)
    out.append(_first_message(feed).decode())
    return out


def _twins(stack: Stack, body: dict[str, Any], hidden: Callable[[Game, int], list[dict]]) -> None:
    """Two games from one seed; in each the seat to act sends one of ``hidden``'s two commands
    (which differ only in what others may not know); every other seat and a spectator must
    then read the same bytes from both (ids, hashes and times aside)."""
    games = [_create(stack, {**body, "seed": SEED}, ORGANIZER) for _ in range(2)]
    public = stack.http.get(f"/v1/games/{games[0].id}").get_json()
    actor = public["to_act"][0]
    first, second = hidden(games[0], actor)
    for game, command in zip(games, (first, second), strict=True):
        resp = stack.http.post(f"/v1/games/{game.id}/commands", json={**command, "id": "h1"},
                               headers={**bearer(game.tokens[actor]), "Prefer": "wait=10"})  # fmt: skip
        assert resp.status_code == 200, resp.get_json()
    ids = [g.id for g in games]
    # The actor itself sees its own choice: the twins differ for it (the check can fail).
    mine = [_normalize("".join(_everything(stack, g.id, bearer(g.tokens[actor]))), ids[i:i + 1])
            for i, g in enumerate(games)]  # fmt: skip
    assert mine[0] != mine[1]
    for seat in [None, *(s for s in range(len(games[0].tokens)) if s != actor)]:
        seen = [
            _normalize(
                "".join(
                    _everything(stack, g.id, bearer(g.tokens[seat]) if seat is not None else {})
                ),
                ids[i : i + 1],
            )  # fmt: skip
            for i, g in enumerate(games)
        ]
        assert seen[0] == seen[1], f"seat {seat} can tell the hidden choices apart"


def test_a_skull_disc_placed_face_down_is_hidden_from_everyone_else(stack: Stack) -> None:
    def discs(game: Game, actor: int) -> list[dict]:
        return [{"type": "place", "disc": "skull"}, {"type": "place", "disc": "flower"}]

    _twins(stack, {"game": "skull", "seats": [{"name": n} for n in "abc"]}, discs)


def test_isle_of_skye_prices_are_hidden_until_revealed(stack: Stack) -> None:
    def prices(game: Game, actor: int) -> list[dict]:
        view = stack.http.get(f"/v1/games/{game.id}", headers=bearer(game.tokens[actor]))
        me = view.get_json()["players"][actor]
        axe, *rest = me["drawn"]
        return [{"type": "set_prices", "discard": axe, "prices": dict.fromkeys(rest, 1)},
                {"type": "set_prices", "discard": rest[0],
                 "prices": {t: 2 for t in [axe, *rest[1:]]}}]  # fmt: skip

    _twins(stack, {"game": "skye", "seats": [{"name": n} for n in "abc"]}, prices)


def test_a_fox_hand_is_hidden_from_the_other_seat_and_spectators(stack: Stack) -> None:
    # Two deals from two seeds with the same first cards for seat 0 are not constructible by a
    # client; instead: no card of a hand appears anywhere in what the other seat or a spectator
    # reads at the deal (views, events, feed), while the seat's own answers show it whole.
    game = _create(stack, {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}],
                           "seed": SEED}, ORGANIZER)  # fmt: skip
    events = stack.http.get(f"/v1/games/{game.id}/events", headers=bearer(AUDITOR)).get_json()
    dealt = next(e for e in events["events"] if e["type"] == "round_dealt")["data"]
    decree = {(dealt["decree"]["suit"], dealt["decree"]["rank"])} if dealt.get("decree") else set()
    deck = {(c["suit"], c["rank"]) for c in dealt["deck"]} - decree
    for seat in (0, 1):
        hand = {(c["suit"], c["rank"]) for c in dealt["hands"][seat]}
        own = _seen(_everything(stack, game.id, bearer(game.tokens[seat])))
        assert hand <= own
        for reader in (bearer(game.tokens[1 - seat]), {}):
            seen = _seen(_everything(stack, game.id, reader))
            assert not seen & hand, (seat, reader, seen & hand)
            assert not seen & deck, "the deck is hidden from every seat"
