"""The public ladder (issue 28) on the memory adapters: ``GET /v1/ratings?game=`` ranks each bot
spec with its 95% interval, best ordinal first; every tournament format feeds it, each game
once; a registered bot is on it only when it opted in (``"ladder": true``), and a game seating
one that did not is rated for no one; the page is served at ``/ladder``."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from flask.testing import FlaskClient

from shared.adapters.memory import FixedClock
from shared.app import bot_registration, tournament_views, tournaments
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.errors import AppError
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.tournaments import standings
from shared.tournaments.plan import game_id, spec_label
from tests.unit.test_registered_bots import ScriptedWebhooks, first_legal, play_fox

FOX = {"game": "fox", "options": {"target": 1}}


def memory_app() -> App:
    app = bootstrap(
        Settings(bot_secret="s3cret"),
        backend="memory",
        dispatcher=lambda a: InlineDispatcher().bind(a),
        clock=FixedClock(),
    )
    app.ports.webhooks = ScriptedWebhooks(app, first_legal)
    return app


def ladder(app: App, game: str = "fox") -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = tournament_views.ratings_doc(app, game)["ratings"]
    return rows


def games_of(app: App, game: str = "fox") -> dict[str, int]:
    """The rated rows' games (the unrated built-ins' rows left out)."""
    return {r["bot"]: r["games"] for r in ladder(app, game) if r["games"]}


def rate(app: App, game_id_: str, labels: list[str], ranks: list[int]) -> None:
    def update(board: dict[str, Any]) -> None:
        standings.rate_labels(board, labels, ranks)

    app.ports.ratings.rate("fox", {game_id_: update})


def register(app: App, **extra: Any) -> dict[str, Any]:
    body = {"name": "mybot", "games": ["fox"], "transport": "webhook", "url": "http://h/b"}
    return bot_registration.register_bot(app, {**body, **extra})


# ---- the rows -------------------------------------------------------------------------------


def test_each_row_has_its_95_interval_and_rank_best_ordinal_first() -> None:
    app = memory_app()
    for i in range(6):  # heuristic always first, random always last
        rate(app, f"g{i}", ["heuristic", "ismcts:iterations=50", "random"], [1, 2, 3])
    rate(app, "g6", ["heuristic", "newcomer"], [2, 1])  # one game: the widest interval
    rows = ladder(app)
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    ordinals = [r["ordinal"] for r in rows]
    assert ordinals == sorted(ordinals, reverse=True)
    assert rows[0]["bot"] == "heuristic" and rows[-1]["bot"] == "random"
    for r in rows:
        low, high = r["mu_ci"]
        assert low == pytest.approx(r["mu"] - standings.Z95 * r["sigma"])
        assert high == pytest.approx(r["mu"] + standings.Z95 * r["sigma"])
        assert r["ordinal"] == pytest.approx(r["mu"] - 3 * r["sigma"])
        assert r["bot_id"] is None and r["name"] is None  # built-in specs
    width = {r["bot"]: r["mu_ci"][1] - r["mu_ci"][0] for r in rows if r["games"]}
    assert width["newcomer"] == max(width.values())
    assert {r["bot"]: r["games"] for r in ladder(app, "skull")} == {
        "random": 0,
        "heuristic": 0,
        "ismcts": 0,
    }


def test_every_built_in_bot_is_listed_before_its_first_rated_game() -> None:
    # The ladder names what can be measured: a built-in bot at its default settings that no
    # game rated has a row at the model's start, with no games; rated specs keep theirs.
    app = memory_app()
    rate(app, "g0", ["heuristic", "ismcts:iterations=50"], [1, 2])
    rows = {r["bot"]: r for r in ladder(app)}
    assert set(rows) == {"random", "heuristic", "ismcts", "ismcts:iterations=50"}
    start = standings.unrated()
    for label in ("random", "ismcts"):
        assert rows[label]["games"] == 0
        assert (rows[label]["mu"], rows[label]["sigma"]) == (start["mu"], start["sigma"])
        assert rows[label]["mu_ci"] == standings.interval(start["mu"], start["sigma"])
    assert rows["heuristic"]["games"] == 1 and rows["heuristic"]["mu"] > start["mu"]
    ranks = sorted(r["rank"] for r in rows.values())
    assert ranks == [1, 2, 3, 4]


def test_an_unknown_game_is_a_422_naming_the_field() -> None:
    with pytest.raises(AppError) as bad:
        tournament_views.ratings_doc(memory_app(), "chess")
    assert bad.value.status == 422 and "game" in bad.value.errors


def test_settings_tell_specs_apart() -> None:
    app = memory_app()
    entrants = [{"bot": "ismcts", "iterations": 5}, {"bot": "ismcts", "iterations": 20},
                {"bot": "ismcts"}]  # fmt: skip
    tournaments.create_tournament(
        app, {**FOX, "entrants": entrants, "games": 6, "seed": "labels"}, max_games=100
    )
    assert games_of(app) == {"ismcts:iterations=5": 4, "ismcts:iterations=20": 4, "ismcts": 4}
    assert spec_label({"bot": "ismcts", "budget_ms": 100}) != spec_label(
        {"bot": "ismcts", "budget_ms": 200}
    )


# ---- tournaments feed it ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (  # a gauntlet: the candidate meets each other entrant in a duplicate pair
            {**FOX, "format": "gauntlet", "games": 4, "seed": "gauntlet",
             "entrants": [{"bot": "heuristic"}, {"bot": "random"},
                          {"bot": "ismcts", "iterations": 5}]},
            {"heuristic": 4, "random": 2, "ismcts:iterations=5": 2},
        ),
        (  # an sprt match to its cap (too few pairs to decide)
            {**FOX, "format": "sprt", "games": 6, "seed": "sprt",
             "entrants": [{"bot": "heuristic"}, {"bot": "random"}]},
            {"heuristic": 6, "random": 6},
        ),
        (  # a gauntlet of three seats: the field's bots are rated too
            {"game": "skull", "format": "gauntlet", "games": 2, "seed": "field",
             "entrants": [{"bot": "heuristic"}, {"bot": "ismcts", "iterations": 5}],
             "field": {"bot": "random"}},
            {"heuristic": 2, "ismcts:iterations=5": 2, "random": 2},
        ),
    ],
)  # fmt: skip
def test_gauntlet_and_sprt_games_feed_the_ladder_each_once(
    body: dict[str, Any], expected: dict[str, int]
) -> None:
    app = memory_app()
    tid, plan = tournaments.create_tournament(app, body, max_games=100)
    assert tournament_views.tournament_doc(app, tid)["status"] == "finished"
    assert games_of(app, body["game"]) == expected
    before = ladder(app, body["game"])
    # A redelivered batch, and every game again alone: nothing is rated twice.
    tournaments.play_games(app, tid, range(plan.games))
    for i in range(plan.games):
        tournaments.play_games(app, tid, [i])
        assert app.ports.directory.result(game_id(tid, i)) is not None
    assert ladder(app, body["game"]) == before


def test_an_sprt_match_decided_early_rates_the_games_it_played() -> None:
    app = memory_app()
    body = {**FOX, "format": "sprt", "games": 1000, "seed": "sprt-test",
            "entrants": [{"bot": "heuristic"}, {"bot": "random"}], "sprt": {"elo1": 20}}  # fmt: skip
    tid, plan = tournaments.create_tournament(app, body, max_games=1000)
    doc = tournament_views.tournament_doc(app, tid)
    assert doc["sprt"]["result"] is not None
    played = [i for i in range(plan.games) if app.ports.directory.result(game_id(tid, i))]
    assert played and len(played) < plan.games
    assert games_of(app) == {"heuristic": len(played), "random": len(played)}


# ---- registered bots opt in -------------------------------------------------------------------


def test_a_registered_bot_is_on_the_ladder_only_when_it_opted_in() -> None:
    app = memory_app()
    shy = register(app, name="shy")
    keen = register(app, name="keen", ladder=True)
    assert shy["ladder"] is False and keen["ladder"] is True
    assert bot_registration.show_bot(app, keen["id"])["ladder"] is True
    listed = {b["id"]: b["ladder"] for b in bot_registration.list_bots(app)}
    assert listed == {shy["id"]: False, keen["id"]: True}

    play_fox(app, shy["id"])
    assert games_of(app) == {}  # the whole game is unrated, its built-in bot's seat too
    play_fox(app, keen["id"])
    assert games_of(app) == {f"bot_id={keen['id']}": 1, "random": 1}
    [row] = [r for r in ladder(app) if r["bot_id"] is not None]
    assert row["bot_id"] == keen["id"] and row["name"] == "keen"
    # Two registered bots at one table: rated only when both opted in.
    play_fox(app, keen["id"], {"bot_id": shy["id"]})
    assert games_of(app) == {f"bot_id={keen['id']}": 1, "random": 1}
    other = register(app, name="other", ladder=True)
    play_fox(app, keen["id"], {"bot_id": other["id"]})
    assert games_of(app) == {f"bot_id={keen['id']}": 2, f"bot_id={other['id']}": 1, "random": 1}


def test_a_registered_bot_rated_before_it_could_opt_out_is_not_shown() -> None:
    app = memory_app()
    shy = register(app, name="shy")
    # As the ladder stood before opting in existed: every all-bot game was rated.
    rate(app, "old", [f"bot_id={shy['id']}", "random"], [1, 2])
    rate(app, "gone", ["bot_id=nosuchbot", "random"], [1, 2])
    assert [r["bot"] for r in ladder(app) if r["games"]] == ["random"]


def test_ladder_must_be_a_boolean() -> None:
    app = memory_app()
    with pytest.raises(AppError) as bad:
        register(app, ladder="yes")
    assert bad.value.status == 422 and "ladder" in bad.value.errors


# ---- over HTTP --------------------------------------------------------------------------------


@pytest.fixture
def http() -> FlaskClient:
    from services.gateway.app import create_app

    settings = Settings(rate_limits={}, organizer_keys=frozenset({"org"}), bot_secret="s3cret")
    application = bootstrap(
        settings, backend="memory", dispatcher=lambda a: InlineDispatcher().bind(a)
    )
    application.ports.webhooks = ScriptedWebhooks(application, first_legal)
    return create_app(settings, application=application).test_client()


def test_the_ratings_endpoint_answers_rows_with_intervals_and_422_for_an_unknown_game(
    http: FlaskClient,
) -> None:
    body = {**FOX, "format": "gauntlet", "games": 2, "seed": "http",
            "entrants": [{"bot": "heuristic"}, {"bot": "random"}]}  # fmt: skip
    created = http.post("/v1/tournaments", json=body, headers={"Authorization": "Bearer org"})
    assert created.status_code == 201, created.get_json()
    doc = http.get("/v1/ratings?game=fox").get_json()
    assert doc["game"] == "fox"
    assert Counter(r["bot"] for r in doc["ratings"] if r["games"]) == {"heuristic": 1, "random": 1}
    for r in doc["ratings"]:
        assert set(r) >= {"bot", "mu", "sigma", "ordinal", "games", "mu_ci", "rank", "bot_id"}
        assert r["mu_ci"][0] < r["mu"] < r["mu_ci"][1]
    for query in ("?game=chess", ""):
        bad = http.get(f"/v1/ratings{query}")
        assert bad.status_code == 422 and bad.mimetype == "application/problem+json"
        assert "game" in bad.get_json()["errors"]


def test_post_bots_takes_and_shows_ladder(http: FlaskClient) -> None:
    base = {"name": "hook", "games": ["fox"], "transport": "webhook", "url": "http://h/b"}
    plain = http.post("/v1/bots", json=base).get_json()
    keen = http.post("/v1/bots", json={**base, "ladder": True}).get_json()
    assert plain["ladder"] is False and keen["ladder"] is True
    assert http.get(f"/v1/bots/{keen['id']}").get_json()["ladder"] is True
    listed = {b["id"]: b["ladder"] for b in http.get("/v1/bots").get_json()["bots"]}
    assert listed == {plain["id"]: False, keen["id"]: True}
    bad = http.post("/v1/bots", json={**base, "ladder": "yes"})
    assert bad.status_code == 422 and "ladder" in bad.get_json()["errors"]


def test_the_ladder_page_is_served_and_linked(http: FlaskClient) -> None:
    page = http.get("/ladder")
    assert page.status_code == 302 and page.headers["Location"].endswith("/#/ladder")
    chosen = http.get("/ladder?game=skull").headers["Location"]
    assert chosen.endswith("/#/ladder?game=skull")
    assert http.get("/ladder?game=<b>").headers["Location"].endswith("/#/ladder")
    shell = http.get(page.headers["Location"].split("#")[0])
    assert shell.status_code == 200 and '<script type="module" src="/web/app.js">' in shell.text
    module = http.get("/web/ladder.js")
    assert module.status_code == 200 and module.mimetype == "text/javascript"
    source = module.get_data(as_text=True)
    assert "/v1/ratings" in http.get("/web/api.js").get_data(as_text=True)
    # Each row's interval drawn as the tournament pages draw theirs: an SVG bar of charts.js.
    assert "mu_ci" in source and "<${IntervalBar}" in source
    assert "<svg" in http.get("/web/charts.js").get_data(as_text=True)
    assert "http://" not in source and "https://" not in source  # nothing from another host
    shell = http.get("/web/app.js").get_data(as_text=True)
    assert 'href="#/ladder"' in shell and "./ladder.js" in shell
