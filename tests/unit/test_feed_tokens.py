"""The live feed of a seat stops at the first message or heartbeat after its token stops
holding the seat, even when another feed of that seat has its next message cached."""

from __future__ import annotations

from itertools import islice

from services.gateway import feed
from shared.app import creation, queries
from shared.app.context import App
from shared.app.messages import token_hash
from shared.app.ports import GameEntry
from shared.bootstrap import bootstrap
from shared.config import Settings

KEYS = queries.Keys(organizers=frozenset({"org"}), auditors=frozenset({"aud"}))


def fox_game() -> tuple[App, str, list[str]]:
    app = bootstrap(Settings(), backend="memory")
    created = creation.create_game(app, "fox", [{"name": "a"}, {"name": "b"}], seed="feed")
    tokens = [t for t in created.tokens if t is not None]
    return app, created.game_id, tokens


def hand_over_seat_0(app: App, gid: str, tokens: list[str]) -> None:
    """Seat 0 changes hands in the directory (what a leave and a join leave there)."""
    app.ports.directory.set_token_hashes(gid, [token_hash("newcomer"), token_hash(tokens[1])])


def test_a_feed_ends_at_the_heartbeat_after_its_token_stops_holding_the_seat() -> None:
    app, gid, tokens = fox_game()
    caller = queries.caller(app, gid, tokens[0], KEYS)
    stream = feed.messages(app, feed.FeedHub(app), gid, caller, 0, 0.01, token=tokens[0], keys=KEYS)
    assert next(stream) == ": connected\n\n"
    assert next(stream).startswith("id: ")
    assert next(stream) == ": heartbeat\n\n"  # nothing new, the token still holds the seat
    hand_over_seat_0(app, gid, tokens)
    # The roster changed with no new version (an announcement lost, say): the next heartbeat
    # looks, and the stream ends (an EventSource's reconnect then meets a 401).
    assert list(islice(stream, 2)) == [": this token no longer holds the seat\n\n"]


def test_a_message_cached_for_a_seat_is_not_served_to_a_token_given_up() -> None:
    app, gid, tokens = fox_game()
    caller = queries.caller(app, gid, tokens[0], KEYS)
    hub = feed.FeedHub(app)
    stale = feed.messages(app, hub, gid, caller, 0, 60.0, token=tokens[0], keys=KEYS)
    assert next(stale) == ": connected\n\n"
    hand_over_seat_0(app, gid, tokens)
    # The newcomer's feed renders seat 0's first message; the hub keeps it for the same key.
    fresh = feed.messages(app, hub, gid, caller, 0, 60.0, token="newcomer", keys=KEYS)
    assert next(fresh) == ": connected\n\n"
    first = next(fresh)
    assert '"seat":0' in first and '"hand":[' in first
    assert list(islice(stale, 2)) == [": this token no longer holds the seat\n\n"]


def test_spectators_and_auditors_feeds_read_no_roster() -> None:
    app, gid, _ = fox_game()
    app.entry(gid)  # as the route's role check leaves it: cached
    reads: list[str] = []
    directory = app.ports.directory
    get = directory.get

    def counted(game_id: str) -> GameEntry | None:
        reads.append(game_id)
        return get(game_id)

    directory.get = counted  # type: ignore[method-assign]
    hub = feed.FeedHub(app)
    for caller in (queries.Caller(queries.SPECTATOR), queries.Caller(queries.AUDITOR_ROLE)):
        stream = feed.messages(app, hub, gid, caller, 0, 0.01, token=None, keys=KEYS)
        assert list(islice(stream, 3))[2] == ": heartbeat\n\n"
    assert reads == []
