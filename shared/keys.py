"""Redis key names, in one place.

Braces are Redis Cluster hash tags: every key of one game lands in one slot, so one Lua script
may touch them together. The rule on a cluster: a single command, script or transaction
(MULTI/WATCH) may only touch keys of one slot; so keys used together share a tag (a game's
``{id}``, a tournament's ``{id}``, a game type's ``{type}`` for its command streams and
ratings), and the global indexes (``games:all``, ``deadlines``, ...) are single keys, each
written by its own command (a pipeline may span slots: it is not atomic anyway).
"""

from __future__ import annotations


def log(game_id: str) -> str:
    """The game's log: the stored entries of versions 1..n joined by newlines, in one string
    (``shared.store.redis_log``), whether appended command by command or written whole."""
    return f"game:{{{game_id}}}:log"


def events(game_id: str) -> str:
    """Where a game's envelopes were kept, as a stream, before its log became one string
    (``log``): nothing writes or reads it now, and a log left there is not read."""
    return f"game:{{{game_id}}}:events"


def head(game_id: str) -> str:
    """Hash ``{version, hash}`` of the last envelope."""
    return f"game:{{{game_id}}}:head"


def commands(game_id: str) -> str:
    """Hash command id -> ``"first-last"`` versions it appended (de-duplication)."""
    return f"game:{{{game_id}}}:commands"


def meta(game_id: str) -> str:
    """Hash with the game's type, seats, token hashes, shard and secret seed."""
    return f"game:{{{game_id}}}:meta"


def view(game_id: str, seat: int) -> str:
    """One seat's projection (JSON)."""
    return f"game:{{{game_id}}}:view:{seat}"


def public(game_id: str) -> str:
    """The spectators' projection (JSON)."""
    return f"game:{{{game_id}}}:public"


def result(game_id: str, command_id: str) -> str:
    """The outcome of one command (JSON), for clients that did not wait: an accepted one's
    for a day, a refused one's for ``TABLETOP_REJECTED_TTL`` (10 minutes)."""
    return f"game:{{{game_id}}}:result:{command_id}"


def reply(game_id: str, command_id: str) -> str:
    """A list a waiting gateway BLPOPs for the outcome of one command."""
    return f"game:{{{game_id}}}:reply:{command_id}"


def bot_submitted(game_id: str, command_id: str) -> str:
    """Set once a bot's command is on the stream, so a repeated task does not send it again."""
    return f"game:{{{game_id}}}:botcmd:{command_id}"


def notify(game_id: str) -> str:
    """Pub/sub channel announcing each new version of the game."""
    return f"game:{{{game_id}}}:notify"


NOTIFY_PATTERN = "game:{*}:notify"  # every game's announcements


def game_of_notify(channel: str) -> str:
    """The game id of a ``notify`` channel."""
    return channel[len("game:{") : -len("}:notify")]


def command_stream(game_type: str, shard: int) -> str:
    """Commands of one game type and shard, as submitted (accepted or not). The game type is
    the hash tag: a worker reads all its shards in one XREADGROUP, which a cluster allows only
    within one slot."""
    return f"cmd:{{{game_type}}}:{shard}"


def legacy_command_stream(game_type: str, shard: int) -> str:
    """The name ``command_stream`` had before the hash tag; a worker on a single server still
    drains one left by an older gateway (``StreamConsumer.ensure_groups``)."""
    return f"cmd:{game_type}:{shard}"


GAMES = "games:all"  # sorted set: game id by creation time
GAMES_LOBBY = "games:lobby"  # sorted set: the games of no tournament, by creation time
GAMES_LOBBY_FILLED = "games:lobby:filled"  # set once games:lobby holds the games from before it
GAMES_FINISHED = "games:finished"  # sorted set: game id by finishing time
RESULTS = "results:games"  # hash: game id -> final result JSON (scoring.finalize)
DEADLINES = "deadlines"  # sorted set: deadline key -> epoch seconds (turn clocks)


def tournament(tournament_id: str) -> str:
    """Hash of one tournament: ``plan`` (JSON), ``created_at``, ``started``, ``cancelled``,
    ``tally`` (the standings' sums, JSON)."""
    return f"tournament:{{{tournament_id}}}"


def tournament_folded(tournament_id: str) -> str:
    """Bitmap: bit ``i`` set once game ``i`` is in the tally."""
    return f"tournament:{{{tournament_id}}}:folded"


def ratings(game_type: str) -> str:
    """Hash label -> ``{"mu", "sigma", "games"}`` (JSON) of one game type's bot specs."""
    return f"ratings:{{{game_type}}}"


def rated(game_type: str) -> str:
    """Set of the game ids already in the game type's ratings."""
    return f"ratings:{{{game_type}}}:rated"


def idempotency(key: str) -> str:
    """A kept response of ``Idempotency-Key`` (the key already scoped by caller and route)."""
    return f"idem:{key}"


TOURNAMENTS = "tournaments:all"  # sorted set: tournament id by creation time


def searches(owner: str) -> str:
    """Sorted set of an owner's searches queued or running: ticket -> expiry (ms)."""
    return f"searches:{{{owner}}}"


def search_slot(slot: str) -> str:
    """A slot held by one holder at a time (a seat's hint search), with a time to live."""
    return f"searchslot:{{{slot}}}"


def dead_letters(stream: str) -> str:
    """Commands that failed every delivery, with their error."""
    return f"dead:{stream}"


BOTS = "bots:all"  # sorted set: registered bot id by registration time
# Where services before issue 35 kept the secret bot keys derive from: read once, to move it
# into the data directory's file, then deleted; never written (a Redis copy must not hold it).
BOT_SECRET = "bots:secret"


def bot(bot_id: str) -> str:
    """Hash of a registered bot: ``doc`` (JSON, with its key's hash), ``retired``."""
    return f"bot:{{{bot_id}}}"


def bot_counts(bot_id: str) -> str:
    """Hash of a registered bot's decision counters (``bot_stats``)."""
    return f"bot:{{{bot_id}}}:counts"


def bot_latencies(bot_id: str) -> str:
    """List of a registered bot's latest decision latencies (ms), newest first."""
    return f"bot:{{{bot_id}}}:latencies"


BOT_KEYS = "bots:keys"  # hash: a bot key's SHA-256 -> the bot's id (a connected bot's login)


def bot_turn(bot_id: str, turn_id: str) -> str:
    """Hash of a connected bot's turn: ``body``, ``deadline`` (ms, Redis's clock), ``state``
    (``open``, ``answered``, ``closed``); it expires a while after its deadline."""
    return f"bot:{{{bot_id}}}:turn:{turn_id}"


def bot_turn_answer(bot_id: str, turn_id: str) -> str:
    """List holding the accepted answer of a connected bot's turn (its waiter pops it)."""
    return f"bot:{{{bot_id}}}:answer:{turn_id}"


def bot_pending(bot_id: str) -> str:
    """Sorted set of a connected bot's open turn ids by deadline (ms)."""
    return f"bot:{{{bot_id}}}:pending"


def bot_channel(bot_id: str) -> str:
    """Pub/sub channel of a connected bot's messages (its turn stream listens)."""
    return f"bot:{{{bot_id}}}:messages"
