"""The live feed: ``GET /v1/games/{id}/feed`` as Server-Sent Events.

One hub per gateway process holds one subscription to every game's announcements and wakes the
feeds of that game; a feed then reads the events its caller may see since its last message and
the caller's view. Under gunicorn's gevent workers (the default) a feed is a greenlet, not a
thread, so thousands stay open while other requests are answered at once.

A seat's feed outlives the request that checked its token: before it sends each message or
heartbeat it reads the roster again, and it ends when the token no longer holds the seat (a
leave, a take-over). Spectators and auditors have nothing that expires: their feeds read no
roster.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

from shared.app import queries
from shared.app.context import App
from shared.app.errors import AppError
from shared.app.queries import Caller, Keys

HEARTBEAT_SECONDS = 15.0
# The last thing a seat's feed sends when its token stops holding the seat: a comment, so an
# EventSource ignores it; its reconnect then meets a 401 and stops.
SEAT_LOST = ": this token no longer holds the seat\n\n"


class FeedHub:
    """The latest announced version of each game, and a way to wait for a newer one."""

    def __init__(self, app: App) -> None:
        self._app = app
        self._versions: dict[str, int] = {}
        self._conds: dict[str, threading.Condition] = {}
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._messages: dict[tuple[Any, ...], Any] = {}
        self._ready = threading.Event()

    def start(self) -> None:
        """Start listening (once per process, on the first feed), and wait until the
        subscription holds, so that no announcement after this call is missed."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._listen, name="feed-hub", daemon=True)
                self._thread.start()
        self._ready.wait(5.0)

    def _listen(self) -> None:
        while True:
            try:
                sub = self._app.ports.notifier.subscribe_all()
                self._ready.set()
                try:
                    while True:
                        got = sub.next(30.0)
                        if got is None:
                            continue
                        gid, version = got
                        cond = self._cond_of(gid)
                        with cond:
                            if version > self._versions.get(gid, 0):
                                self._versions[gid] = version
                            cond.notify_all()  # only this game's feeds wake
                finally:
                    sub.close()
            except Exception:  # Redis went away: listen again (feeds wake on their timeout)
                threading.Event().wait(1.0)

    def message(self, key: tuple[Any, ...], compute: Any) -> Any:
        """``compute()``, shared by every feed asking with the same ``key`` (game, reader,
        from version, to version): a thousand spectators of one game cost one read."""
        with self._lock:
            found = self._messages.get(key)
        if found is None:
            found = compute()
            with self._lock:
                self._messages[key] = found
                while len(self._messages) > 4096:
                    self._messages.pop(next(iter(self._messages)))
        return found

    def _cond_of(self, game_id: str) -> threading.Condition:
        with self._lock:
            cond = self._conds.get(game_id)
            if cond is None:
                cond = self._conds[game_id] = threading.Condition()
            return cond

    def wait(self, game_id: str, after: int, timeout: float) -> int | None:
        """A version of ``game_id`` announced beyond ``after``, or None after ``timeout``."""
        cond = self._cond_of(game_id)
        with cond:
            got = cond.wait_for(lambda: self._versions.get(game_id, 0) > after, timeout)
            return self._versions.get(game_id) if got else None


def messages(
    app: App,
    hub: FeedHub,
    game_id: str,
    caller: Caller,
    after: int,
    heartbeat: float = HEARTBEAT_SECONDS,
    *,
    token: str | None = None,
    keys: Keys | None = None,
) -> Iterator[str]:
    """The feed's text: a comment at once, a first message bringing the caller up to date,
    then one ``update`` per new version (``id`` the version, ``data`` the events since the
    last message and the caller's view), a heartbeat comment every ``heartbeat`` seconds; it
    ends after the message that shows the game over. A seat's feed (``token`` and ``keys``
    given: what its role was checked with) ends with ``SEAT_LOST`` instead of the first
    message or heartbeat after the token stops holding the seat."""
    if caller.role == queries.SEAT and (token is None or keys is None):
        raise ValueError("a seat's feed needs its token and keys to check it again")
    yield ": connected\n\n"
    last = after
    first = True
    head = _head(app, game_id)
    while True:
        if first or head > last:
            reader = (caller.role, caller.seat)
            version, text, over = hub.message(
                (game_id, reader, last, head),
                lambda after=last: _render(app, game_id, caller, after),
            )
            # Checked once the message exists, not before: whether rendered here or taken from
            # the hub (where a newcomer's feed of this seat may have put it), it was made before
            # this check, and a token that holds the seat now held it then (a token given up
            # never comes back), so it shows nothing of a later occupant.
            if not _holds(app, game_id, caller, token, keys):
                yield SEAT_LOST
                return
            last = max(version, last)
            # The store may be a step ahead of the projections (appended, not yet projected):
            # the announcement that follows the projection wakes this feed again.
            head = min(head, last)
            first = False
            yield text
            if over:
                return
            continue
        # The hub's announced version saves every feed a read of the store: a thousand feeds of
        # one game wake on one announcement, and the first renders what they all send.
        announced = hub.wait(game_id, last, heartbeat)
        if announced is not None:
            head = announced
            continue
        head = _head(app, game_id)  # an announcement may be lost (a Redis restart): look
        if head <= last:
            if not _holds(app, game_id, caller, token, keys):
                yield SEAT_LOST
                return
            yield ": heartbeat\n\n"


def _holds(app: App, game_id: str, caller: Caller, token: str | None, keys: Keys | None) -> bool:
    """Whether the feed may go on: a seat's token still holds that seat by the directory's
    roster (one read, never this process's cache: a take-over changes a game that is no
    lobby); any other role (no token, or a key) has no roster to lose."""
    if caller.role != queries.SEAT:
        return True
    assert token is not None and keys is not None
    try:
        return queries.caller(app, game_id, token, keys, refresh=True) == caller
    except AppError:  # auth/invalid_token, or the game is gone
        return False


def _head(app: App, game_id: str) -> int:
    version, _ = app.ports.store.head(game_id)
    return version


def _render(app: App, game_id: str, caller: Caller, after: int) -> tuple[int, str, bool]:
    """(version, the message's text, whether it shows the game over)."""
    doc = _update(app, game_id, caller, after)
    data = json.dumps(doc, separators=(",", ":"))
    over = doc["view"].get("outcome") is not None
    return doc["version"], f"id: {doc['version']}\nevent: update\ndata: {data}\n\n", over


def _update(app: App, game_id: str, caller: Caller, after: int) -> dict[str, Any]:
    seat = caller.seat if caller.role == queries.SEAT else None
    view = json.loads(queries.view_json(app, game_id, seat))
    version = int(view["version"])
    # The events up to the view's version exactly, so the next message starts where this
    # one ends: nothing in between is lost, nothing sent twice.
    events = []
    if version > after:
        events = queries.events(app, game_id, caller, after=after, limit=version - after)["events"]
    return {"version": version, "events": events, "view": view}
