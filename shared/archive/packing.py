"""A log as the archive compresses it: the export's lines without ``prev_hash``.

Each line of an export repeats the line before's ``hash`` as its ``prev_hash`` (64 hex digits
that zstd must still point back to: some bytes a line, 5% of a compressed one-hand card game).
``pack`` cuts ``"prev_hash":"<hash>",`` out of each line; ``unpack`` puts it back before the
line's first ``,"hash":"``, the hash of the line before. An export whose lines ``unpack`` would
not give back whole (a line whose data holds a ``"hash"`` key before the envelope's own)
stays as it is: ``pack`` checks every log it packs, so what ``unpack`` gives is byte for byte
the export.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.events import GENESIS_HASH, Envelope

PLAIN = 0  # the export's bytes as they are
LINKED = 1  # each line without its prev_hash: the hash of the line before

_HASH = b',"hash":"'
_PREV = b'"prev_hash":"'


def pack(envelopes: Sequence[Envelope], export: bytes) -> tuple[int, bytes]:
    """(form, bytes) of ``export``, the export of ``envelopes``: ``LINKED`` when ``unpack``
    gives ``export`` back from it, else ``PLAIN``."""
    lines = export.split(b"\n")
    if len(lines) != len(envelopes) + 1 or lines[-1]:
        return PLAIN, export
    cut = [
        line.replace(b'%s%s",' % (_PREV, env.prev_hash.encode()), b"", 1)
        for env, line in zip(envelopes, lines, strict=False)
    ]
    cut.append(b"")
    packed = b"\n".join(cut)
    try:
        if unpack(LINKED, packed) == export:
            return LINKED, packed
    except ValueError:
        pass
    return PLAIN, export


def unpack(form: int, data: bytes) -> bytes:
    """The export that ``pack`` gave ``(form, data)`` for."""
    if form == PLAIN:
        return data
    if form != LINKED:
        raise ValueError(f"no such log form: {form}")
    out: list[bytes] = []
    add = out.append
    prev = GENESIS_HASH.encode()
    pos, size = 0, len(data)
    while pos < size:
        end = data.find(b"\n", pos)
        at = data.find(_HASH, pos, end)
        if end < 0 or at < 0:
            raise ValueError("a packed log line without its hash")
        at += 1  # after the comma
        add(data[pos:at])
        add(_PREV)
        add(prev)
        add(b'",')
        add(data[at : end + 1])
        prev = data[at + 8 : at + 72]
        pos = end + 1
    return b"".join(out)
