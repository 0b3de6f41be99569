"""``seatable_by``, the url's visibility and re-issuing keys, on the in-memory adapters (issue
35): the application's rules, whatever the gateway."""

from __future__ import annotations

from typing import Any

import pytest

from shared.adapters.memory import memory_ports
from shared.app import bot_registration, creation, tournaments
from shared.app.bot_registration import ANONYMOUS, BotCaller
from shared.app.bot_turns import bot_key, key_hash
from shared.app.context import App
from shared.app.errors import AppError, ErrorCode, status_of
from shared.app.ports import RegisteredBot
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.games.errors import GameError


class AllowAll:
    def refusal(self, url: str) -> str | None:
        return None


def app() -> App:
    built = bootstrap(Settings(bot_secret="s3cret"), backend="memory")
    built.ports.webhooks = AllowAll()  # type: ignore[assignment]
    return built


def register(a: App, **extra: Any) -> dict[str, Any]:
    body = {"name": "b", "games": ["fox"], "transport": "webhook", "url": "http://h/", **extra}
    return bot_registration.register_bot(a, body)


def test_who_may_seat_a_bot() -> None:
    a = app()
    bots = {s: register(a, seatable_by=s) for s in ("anyone", "owner", "organizers")}
    other = register(a)
    for seatable_by, doc in bots.items():
        bot = a.ports.bots.get(doc["id"])
        assert bot is not None and bot.seatable_by == seatable_by
        allowed = {
            "nobody": ANONYMOUS.may_seat(bot),
            "organizer": BotCaller(organizer=True).may_seat(bot),
            "another bot's key": BotCaller(other["key"]).may_seat(bot),
            "own key": BotCaller(doc["key"]).may_seat(bot),
        }
        assert {k for k, v in allowed.items() if v} == {
            "anyone": {"nobody", "organizer", "another bot's key", "own key"},
            "owner": {"own key"},
            "organizers": {"organizer", "own key"},
        }[seatable_by]


def test_a_bot_not_seatable_by_the_caller_creates_no_game() -> None:
    a = app()
    bot = register(a, seatable_by="owner")
    seats = [{"name": "ana"}, {"bot_id": bot["id"]}]
    with pytest.raises(GameError) as refused:
        creation.create_game(a, "fox", seats, caller=BotCaller(organizer=True))
    assert refused.value.code == ErrorCode.BOT_NOT_SEATABLE and status_of(refused.value.code) == 403
    assert list(refused.value.errors) == ["seats[1].bot_id"]
    assert a.ports.directory.list_games() == []
    created = creation.create_game(a, "fox", seats, caller=BotCaller(bot["key"]))
    assert a.ports.directory.list_games() == [created.game_id]


def test_an_owner_only_bot_enters_no_tournament() -> None:
    a = app()
    body: dict[str, Any] = {"game": "fox", "games": 2, "options": {"target": 1}}
    owners = register(a, seatable_by="owner")
    with pytest.raises(AppError) as refused:
        tournaments.create_tournament(
            a, {**body, "entrants": [{"bot": "random"}, {"bot_id": owners["id"]}]}, max_games=10
        )
    assert refused.value.code == ErrorCode.BOT_NOT_SEATABLE and refused.value.status == 403
    assert refused.value.errors == {
        "entrants[1].bot_id": [refused.value.errors["entrants[1].bot_id"][0]]
    }
    assert a.ports.tournaments.list_ids() == []
    organizers = register(a, seatable_by="organizers")
    entrants = [{"bot": "random"}, {"bot_id": organizers["id"]}]
    tournaments.create_tournament(a, {**body, "entrants": entrants}, max_games=10)


def test_the_url_is_shown_to_the_owner_and_organizers() -> None:
    a = app()
    bot = register(a)
    assert bot["url"] == "http://h/"  # the registration's answer: its owner's
    for caller, shown in [(ANONYMOUS, False), (BotCaller("tbk_x"), False),
                          (BotCaller(bot["key"]), True), (BotCaller(organizer=True), True)]:  # fmt: skip
        assert ("url" in bot_registration.show_bot(a, bot["id"], caller)) is shown
        listed = bot_registration.list_bots(a, caller=caller)
        assert ("url" in listed[0]) is shown


def test_reissued_keys_derive_from_the_secret_and_replace_the_old_hashes() -> None:
    ports = memory_ports(bot_secret="new-secret")
    old = RegisteredBot(bot_id="r1", name="r", games=("fox",), transport="connected", url=None,
                        budget_ms=500, on_failure="random", key_sha256=key_hash("tbk_old"),
                        created_at="2026-01-01T00:00:00.000Z")  # fmt: skip
    ports.bots.add(old, 1.0)
    issued = bot_registration.reissue_keys(App(ports=ports))
    assert issued == [{"id": "r1", "name": "r", "retired": False,
                       "key": bot_key("new-secret", "r1")}]  # fmt: skip
    assert ports.bots.by_key(key_hash(bot_key("new-secret", "r1"))) == "r1"
    assert ports.bots.by_key(key_hash("tbk_old")) is None
    assert not ports.bots.rekey("nope", "ab")
