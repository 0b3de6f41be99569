"""Marshmallow schemas of the tournament and rating endpoints (and their OpenAPI document)."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from services.gateway.schemas import NAME_DOC, StrictSchema, printable
from shared import games
from shared.app import bots
from shared.tournaments.plan import DEFAULT_MAX_GAMES, FORMATS, MAX_ENTRANTS, MAX_NAME
from shared.tournaments.sprt import HISTORY_POINTS


class EntrantSchema(StrictSchema):
    """One entrant: a built-in bot's seat spec or a registered bot's (``bot_id``), with an
    optional display name."""

    name = ma.fields.String(validate=[validate.Length(min=1, max=MAX_NAME), printable],
                            metadata=NAME_DOC)  # fmt: skip
    bot = ma.fields.String(
        validate=validate.OneOf(bots.names()),
        metadata={"description": "a built-in bot (or give bot_id)"},
    )
    bot_id = ma.fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={
            "description": "a bot registered with POST /v1/bots for this game (instead of "
            "bot; its name by default): its games are played live, its turns sent to it"
        },
    )
    budget_ms = ma.fields.Integer(
        strict=True, metadata={"description": "ismcts only (10-10000 ms a move)"}
    )
    iterations = ma.fields.Integer(
        strict=True, metadata={"description": "ismcts only, instead of budget_ms (1-100000)"}
    )

    @ma.validates_schema
    def _spec(self, data: dict, **_: object) -> None:
        if "bot_id" in data:
            extra = sorted(k for k in data if k not in ("bot_id", "name"))
            if extra:
                raise ma.ValidationError({extra[0]: ["not with bot_id"]})
            return
        try:
            bots.parse_spec(data)
        except bots.BotSpecError as exc:
            raise ma.ValidationError({exc.field: [exc.message]}) from None


class FieldSchema(EntrantSchema):
    """The bot spec of a gauntlet's or an sprt match's other seats (no name: they are named
    by their seat)."""

    class Meta:
        exclude = ("name", "bot_id")


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
    """Paging of a list (the tournaments, or a tournament's games): ``cursor`` (a list's
    ``next_cursor``) or ``offset``, and ``limit``."""

    offset = ma.fields.Integer(load_default=0, validate=validate.Range(min=0, max=10**9))
    limit = ma.fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000))
    cursor = ma.fields.String(
        validate=validate.Regexp(r"^[0-9]{1,10}$"),
        metadata={"description": "a list's `next_cursor`: the page after it (else `offset`)"},
    )


class SprtStateSchema(ma.Schema):
    """The state of an ``sprt`` match's test."""

    llr = ma.fields.Float(metadata={"description": "the log-likelihood ratio now"})
    lower = ma.fields.Float(metadata={"description": "H0 is accepted at or below it"})
    upper = ma.fields.Float(metadata={"description": "H1 is accepted at or above it"})
    pairs = ma.fields.Integer(
        metadata={"description": "complete duplicate pairs counted, in pair order"}
    )
    result = ma.fields.String(
        allow_none=True, metadata={"enum": ["H0", "H1"], "description": "null: undecided"}
    )
    pentanomial = ma.fields.List(
        ma.fields.Integer(),
        metadata={"description": "pairs that scored 0, 1/2, 1, 3/2 and 2 for the candidate"},
    )
    history = ma.fields.List(
        ma.fields.List(ma.fields.Raw()),
        metadata={
            "description": f"[pairs, llr] after counted pairs, for a plot: every pair while "
            f"there are few, then evenly thinned (at most {HISTORY_POINTS} points), the "
            "latest pair last"
        },
    )
    elo0 = ma.fields.Float()
    elo1 = ma.fields.Float()
    alpha = ma.fields.Float()
    beta = ma.fields.Float()


class TournamentSchema(ma.Schema):
    """A tournament with its standings."""

    id = ma.fields.String()
    game = ma.fields.String()
    format = ma.fields.String()
    players = ma.fields.Integer()
    status = ma.fields.String(metadata={"enum": ["queued", "running", "finished", "cancelled"]})
    progress = ma.fields.Dict(metadata={"description": '{"done", "total"}'})
    paused = ma.fields.Boolean(
        metadata={
            "description": "queued or running, but its games cannot be written now: the game "
            "store is full (Redis past its maxmemory refuses writes). Its games wait and go on "
            "by themselves once memory is freed; `paused_reason` says why"
        }
    )
    paused_reason = ma.fields.String(
        allow_none=True,
        metadata={
            "description": "why it is paused, with the store's memory figures; null when it is not"
        },
    )
    standings = ma.fields.List(
        ma.fields.Dict(),
        metadata={
            "description": "per entrant, best win rate first: entrant, name, spec, games, wins "
            "(a win shared by k counts 1/k), win_rate, win_rate_ci [low, high] (95% Wilson), "
            "mean_score, mean_score_ci (95%, normal), mean_rank; a registered bot's entrant "
            "also bot_stats over this tournament's games: {decisions, latency_ms: {p50, p95, "
            "max}, timeouts, illegal, errors, fallbacks}, as GET /v1/bots/{id}'s stats"
        },
    )
    ratings = ma.fields.List(
        ma.fields.Dict(),
        metadata={
            "description": "openskill Plackett-Luce per entrant, best ordinal first: mu, "
            "sigma, mu_ci [low, high] (95%: mu ± 1.96 sigma), ordinal (mu - 3 sigma)"
        },
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
    sprt = ma.fields.Nested(
        SprtStateSchema,
        allow_none=True,
        metadata={"description": "an sprt match's test (null otherwise)"},
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

    tournaments = ma.fields.List(
        ma.fields.Dict(),
        metadata={
            "description": "oldest first: id, game, format, entrants (names), created_at, "
            "status, progress, paused and paused_reason (as a tournament's)"
        },
    )
    next_cursor = ma.fields.String(
        allow_none=True,
        metadata={"description": "`cursor` of the next page; null at the end"},
    )


class RatingsQuerySchema(StrictSchema):
    """``GET /v1/ratings?game=``."""

    game = ma.fields.String(required=True, validate=validate.OneOf(games.names()))


class LadderRowSchema(ma.Schema):
    """One bot spec on the ladder."""

    rank = ma.fields.Integer(metadata={"description": "1 for the best ordinal"})
    bot = ma.fields.String(
        metadata={
            "description": "the spec's label: `heuristic`, `ismcts:budget_ms=200` (each setting "
            "its own row), a registered bot's `bot_id=<id>`"
        }
    )
    mu = ma.fields.Float(metadata={"description": "openskill Plackett-Luce skill"})
    sigma = ma.fields.Float(metadata={"description": "its uncertainty"})
    mu_ci = ma.fields.List(
        ma.fields.Float(),
        metadata={"description": "[low, high]: the 95% interval of mu, mu ± 1.96 sigma"},
    )
    ordinal = ma.fields.Float(metadata={"description": "mu - 3 sigma, what the rows rank by"})
    games = ma.fields.Integer(
        metadata={"description": "rated games it played (0: not rated yet, at the start)"}
    )
    bot_id = ma.fields.String(
        allow_none=True, metadata={"description": "a registered bot's id (null: built in)"}
    )
    name = ma.fields.String(
        allow_none=True, metadata={"description": "a registered bot's name (null: built in)"}
    )


class RatingsSchema(ma.Schema):
    """A leaderboard of bot specs over every finished all-bot game of one type."""

    game = ma.fields.String()
    ratings = ma.fields.List(
        ma.fields.Nested(LadderRowSchema),
        metadata={
            "description": "best ordinal first: every built-in bot spec that played a rated "
            "game, every built-in bot the game seats at its default settings (with no games, "
            "at the start, until one is rated), and the registered bots that opted in "
            "(`ladder`)"
        },
    )
