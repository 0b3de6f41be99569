"""Server-Sent Events, parsed as the HTML standard says: ``field: value`` lines, a blank line
ends a message, ``:`` starts a comment (the service's heartbeats and closing notes), several
``data:`` lines join with new lines, and ``id:`` stays in force for the messages after it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class SseMessage:
    """One message: its ``event`` name (``message`` when none was sent), the last ``id`` seen
    (what ``Last-Event-ID`` resumes from), the raw ``text`` of its data lines and ``data``,
    that text parsed as JSON (None when it is not JSON)."""

    event: str
    id: str | None
    text: str
    data: Any


def parse(lines: Iterable[str]) -> Iterator[SseMessage]:
    """The messages of a stream given line by line (line ends already removed or not)."""
    event = ""
    data: list[str] = []
    last_id: str | None = None
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                text = "\n".join(data)
                yield SseMessage(event or "message", last_id, text, _json(text))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue  # a comment: a heartbeat, or why the stream is about to close
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            last_id = value
        # ``retry`` and unknown fields: nothing the kit acts on
    # A message without its closing blank line is incomplete: the standard drops it.


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
