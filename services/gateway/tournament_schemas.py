"""Marshmallow schemas of the tournament and rating endpoints (and their OpenAPI document)."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from services.gateway.schemas import NAME_DOC, StrictSchema, printable
from shared import games
from shared.app import bots
from shared.tournaments.plan import DEFAULT_MAX_GAMES, FORMATS, MAX_ENTRANTS, MAX_NAME


class EntrantSchema(StrictSchema):
    """One entrant: a bot seat spec, with an optional display name."""

    name = ma.fields.String(validate=[validate.Length(min=1, max=MAX_NAME), printable],
                            metadata=NAME_DOC)  # fmt: skip
    bot = ma.fields.String(required=True, validate=validate.OneOf(bots.names()))
    budget_ms = ma.fields.Integer(
        strict=True, metadata={"description": "ismcts only (10-10000 ms a move)"}
    )
    iterations = ma.fields.Integer(
        strict=True, metadata={"description": "ismcts only, instead of budget_ms (1-100000)"}
    )

    @ma.validates_schema
    def _spec(self, data: dict, **_: object) -> None:
        try:
            bots.parse_spec(data)
        except bots.BotSpecError as exc:
            raise ma.ValidationError({exc.field: [exc.message]}) from None


class FieldSchema(EntrantSchema):
    """The bot spec of a gauntlet's or an sprt match's other seats (no name: they are named
    by their seat)."""

    class Meta:
        exclude = ("name",)


class SprtSchema(StrictSchema):
    """The SPRT of an ``sprt`` match (fishtest's generalized SPRT on pair scores)."""

    elo0 = ma.fields.Float(
        load_default=0.0,
        validate=validate.Range(min=-1000, max=1000),
        metadata={"description": "H0: the candidate is at most this much better (logistic Elo)"},
    )
    elo1 = ma.fields.Float(
        load_default=10.0,
        validate=validate.Range(min=-1000, max=1000),
        metadata={"description": "H1: the candidate is at least this much better (> elo0)"},
    )
    alpha = ma.fields.Float(
        load_default=0.05,
        validate=validate.Range(min=0, max=0.5, min_inclusive=False, max_inclusive=False),
        metadata={"description": "false positive rate (H1 accepted when H0 holds)"},
    )
    beta = ma.fields.Float(
        load_default=0.05,
        validate=validate.Range(min=0, max=0.5, min_inclusive=False, max_inclusive=False),
        metadata={"description": "false negative rate (H0 accepted when H1 holds)"},
    )


class CreateTournamentSchema(StrictSchema):
    """Body of ``POST /v1/tournaments``."""

    game = ma.fields.String(required=True, validate=validate.OneOf(games.names()))
    entrants = ma.fields.List(
        ma.fields.Nested(EntrantSchema),
        required=True,
        validate=validate.Length(min=1, max=MAX_ENTRANTS),
    )
    players = ma.fields.Integer(
        strict=True,
        metadata={
            "description": "seats a game (the game's own limits; default: as many as "
            "entrants, within them)"
        },  # fmt: skip
    )
    games = ma.fields.Integer(
        required=True,
        strict=True,
        metadata={
            "description": "games to play: whole cycles of C(entrants, players) * players "
            f"(every group in each seating); at most TABLETOP_MAX_TOURNAMENT_GAMES "
            f"(default {DEFAULT_MAX_GAMES})"
        },
    )
    format = ma.fields.String(
        load_default="round_robin",
        validate=validate.OneOf(FORMATS),
        metadata={
            "description": "round_robin: each game its own deal; duplicate: the seatings of a "
            "group share one deal, so the luck of the cards cancels; gauntlet: the candidate "
            "plays a duplicate pair against each other entrant (the others do not meet); "
            "sprt: [candidate, baseline] in duplicate pairs until the SPRT decides (games: "
            "the cap). gauntlet and sprt seat two entrants a game, field bots fill the rest"
        },
    )
    candidate = ma.fields.Integer(
        strict=True,
        metadata={"description": "gauntlet: the candidate's entrant index (default 0)"},
    )
    field = ma.fields.Nested(
        FieldSchema,
        metadata={
            "description": "gauntlet and sprt: the bot of the seats beyond the two entrants "
            'in games of more seats (default {"bot": "random"})'
        },
    )
    sprt = ma.fields.Nested(
        SprtSchema,
        metadata={"description": "sprt: the test's bounds and error rates"},
    )
    seed = ma.fields.String(
        validate=validate.Length(min=1, max=256),
        metadata={"description": "every game's seed derives from it (default: random)"},
    )
    options = ma.fields.Dict(metadata={"description": "the game's options (no deal)"})


class TournamentCreatedSchema(ma.Schema):
    """Answer of ``POST /v1/tournaments``."""

    id = ma.fields.String()
    status = ma.fields.String()
    progress = ma.fields.Dict()
    location = ma.fields.String()


class TournamentQuerySchema(StrictSchema):
    """Paging of a tournament's game list."""

    offset = ma.fields.Integer(load_default=0, validate=validate.Range(min=0, max=10**9))
    limit = ma.fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000))


class TournamentSchema(ma.Schema):
    """A tournament with its standings."""

    id = ma.fields.String()
    game = ma.fields.String()
    format = ma.fields.String()
    players = ma.fields.Integer()
    status = ma.fields.String(metadata={"enum": ["queued", "running", "finished", "cancelled"]})
    progress = ma.fields.Dict(metadata={"description": '{"done", "total"}'})
    standings = ma.fields.List(
        ma.fields.Dict(),
        metadata={
            "description": "per entrant, best win rate first: entrant, name, spec, games, wins "
            "(a win shared by k counts 1/k), win_rate, win_rate_ci [low, high] (95% Wilson), "
            "mean_score, mean_score_ci (95%, normal), mean_rank"
        },
    )
    ratings = ma.fields.List(
        ma.fields.Dict(),
        metadata={"description": "openskill Plackett-Luce per entrant: mu, sigma, ordinal"},
    )
    head_to_head = ma.fields.Dict(
        allow_none=True,
        metadata={
            "description": "two-seat games: names, and matrix[a][b] = {games, ahead, rate, "
            "rate_ci}: how often a finished ahead of b (ties half)"
        },
    )
    pairwise = ma.fields.Dict(metadata={"description": "the same matrix for any seat count"})
    games = ma.fields.Dict(metadata={"description": "a page of {index, id, seats, deal, finished}"})
    entrants = ma.fields.List(ma.fields.Dict())
    options = ma.fields.Dict()
    created_at = ma.fields.String()
    finished_at = ma.fields.String(
        allow_none=True,
        metadata={
            "description": "when the last game was folded; null before (and for tournaments "
            "finished before the service recorded it)"
        },
    )
    draws = ma.fields.Integer()
    candidate = ma.fields.Integer(
        allow_none=True, metadata={"description": "gauntlet and sprt: the candidate's index"}
    )
    field = ma.fields.Dict(
        allow_none=True, metadata={"description": "gauntlet and sprt: the field's bot spec"}
    )
    sprt = ma.fields.Dict(
        allow_none=True,
        metadata={
            "description": "an sprt match's test (null otherwise): llr, lower and upper (the "
            "LLR bounds: H0 at or below lower, H1 at or above upper), pairs (complete pairs "
            "counted, in pair order), result (null, H0 or H1), pentanomial (pairs that "
            "scored 0, 1/2, 1, 3/2, 2), elo0, elo1, alpha, beta"
        },
    )
    rated_games = ma.fields.Integer(
        metadata={
            "description": "how many games the ratings cover: the first ones in game order as "
            "their results come in (all of them once it is finished; every folded game of a "
            "cancelled one)"
        },
    )


class TournamentListSchema(ma.Schema):
    """``GET /v1/tournaments``."""

    tournaments = ma.fields.List(ma.fields.Dict())


class RatingsQuerySchema(StrictSchema):
    """``GET /v1/ratings?game=``."""

    game = ma.fields.String(required=True, validate=validate.OneOf(games.names()))


class RatingsSchema(ma.Schema):
    """A leaderboard of bot specs over every finished all-bot game of one type."""

    game = ma.fields.String()
    ratings = ma.fields.List(
        ma.fields.Dict(), metadata={"description": "bot, mu, sigma, ordinal, games"}
    )
