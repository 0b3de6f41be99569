"""Retention reads two replies that can disagree (XINFO GROUPS, then XPENDING's summary; a
Redis restarted in between from an older snapshot, or entries acknowledged in between): it
trims only below what both show is no longer needed, and never raises on the reply's shape."""

from __future__ import annotations

from typing import Any

from shared.adapters.retention import GROUP, trim_acknowledged


class Replies:
    """A client answering the two reads with fixed replies, recording any trim."""

    def __init__(self, pending: int, summary: dict[str, Any] | None) -> None:
        self.group = {"name": GROUP.encode(), "last-delivered-id": b"1700000000000-5",
                      "pending": pending}  # fmt: skip
        self.summary = summary
        self.trims: list[str] = []

    def xinfo_groups(self, stream: str) -> list[dict[str, Any]]:
        return [self.group]

    def xpending(self, stream: str, group: str) -> dict[str, Any] | None:
        return self.summary

    def xtrim(self, stream: str, *, minid: str, approximate: bool) -> int:
        self.trims.append(minid)
        return 1


def test_a_pending_summary_without_its_oldest_id_trims_nothing() -> None:
    # XINFO saw pending entries; XPENDING then answers with no oldest id (seen after a Redis
    # kill): which entries are pending is unknown, so no trim can be known to be safe.
    summaries: list[dict[str, Any] | None] = [
        {"pending": 0, "min": None, "max": None, "consumers": []},
        {"pending": 2, "min": None, "max": None, "consumers": []},
        None,
    ]
    for summary in summaries:
        client = Replies(pending=2, summary=summary)
        assert trim_acknowledged(client, "cmd:{fox}:0") == 0  # type: ignore[arg-type]
        assert client.trims == []


def test_the_oldest_pending_entry_and_what_follows_it_are_kept() -> None:
    summary = {"pending": 2, "min": b"1700000000000-2", "max": b"1700000000000-4",
               "consumers": []}  # fmt: skip
    client = Replies(pending=2, summary=summary)
    assert trim_acknowledged(client, "cmd:{fox}:0") == 1  # type: ignore[arg-type]
    assert client.trims == ["1700000000000-2"]
    nothing_pending = Replies(pending=0, summary=None)
    trim_acknowledged(nothing_pending, "cmd:{fox}:0")  # type: ignore[arg-type]
    assert nothing_pending.trims == ["1700000000000-6"]  # everything delivered was acknowledged
