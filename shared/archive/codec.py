"""Compression of archived logs: zstd, with a dictionary per game type where one pays.

A dictionary is trained on the game's play-outs, their logs packed as the archive packs them
(``benchmarks/bench_archive.py --train`` writes ``dicts/<game>.zdict``; BENCHMARKS.md "Archive bytes per game" has what it
saves) and shipped with the package. Its id is zstd's own (in the dictionary's header, and in
each frame compressed with it); an archive stores every dictionary it compressed with under
that id, so a row stays readable after a later build ships another dictionary or none.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

import zstandard

# With a dictionary, zstd's fastest level packs these logs as small as level 3 does (a one-hand
# card game 2,746 bytes in 0.08 ms, level 3 2,773 in 0.10 ms); levels 15-19 save 10% more for
# 40-100x the time, too dear in a tournament's path (``bench_archive.py --levels``).
LEVEL = 1
DICT_SUFFIX = ".zdict"
# What a row's ``dict_id`` is when its log was compressed without a dictionary.
NO_DICT = 0


def shipped_dictionaries() -> dict[str, bytes]:
    """Game type -> the dictionary this build compresses its logs with (``dicts/*.zdict``)."""
    found: dict[str, bytes] = {}
    folder = resources.files("shared.archive").joinpath("dicts")
    if not folder.is_dir():
        return found
    for item in folder.iterdir():
        if item.name.endswith(DICT_SUFFIX):
            found[item.name[: -len(DICT_SUFFIX)]] = item.read_bytes()
    return found


def dict_id(data: bytes) -> int:
    """The id in a zstd dictionary's header (0: raw content, no header: refused here)."""
    found = zstandard.ZstdCompressionDict(data).dict_id()
    if not found:
        raise ValueError("a zstd dictionary without an id")
    return int(found)


class Codec:
    """Compresses a game type's logs with its dictionary (``current``: game type ->
    dictionary bytes) and decompresses any log whose dictionary ``load(dict_id)`` finds.
    Thread-safe: each thread keeps its own compressors and decompressors."""

    def __init__(
        self, current: Mapping[str, bytes], load: Callable[[int], bytes | None], level: int = LEVEL
    ) -> None:
        self.level = level
        self._load = load
        self._dicts: dict[int, zstandard.ZstdCompressionDict] = {}
        self._lock = threading.Lock()
        self._current: dict[str, int] = {}
        for game, data in current.items():
            did = dict_id(data)
            self._dicts[did] = zstandard.ZstdCompressionDict(data)
            self._current[game] = did
        self._local = threading.local()

    def current_id(self, game: str) -> int:
        """The id of the dictionary ``game``'s logs are compressed with (``NO_DICT``: none)."""
        return self._current.get(game, NO_DICT)

    def compress(self, game: str, raw: bytes) -> tuple[int, bytes]:
        """(dictionary id, zstd frame) of ``raw``, a ``game`` log: with its dictionary when
        this build has one (the frame records its id, its size and a checksum)."""
        did = self.current_id(game)
        compressors: dict[int, zstandard.ZstdCompressor] = self._cache("compressors")
        found = compressors.get(did)
        if found is None:
            found = zstandard.ZstdCompressor(
                level=self.level,
                dict_data=self._dict(did) if did else None,
                write_checksum=True,
                write_content_size=True,
            )
            compressors[did] = found
        return did, found.compress(raw)

    def decompress(self, did: int, frame: bytes) -> bytes:
        """The bytes ``compress`` gave ``frame`` for, with dictionary ``did``."""
        decompressors: dict[int, zstandard.ZstdDecompressor] = self._cache("decompressors")
        found = decompressors.get(did)
        if found is None:
            found = zstandard.ZstdDecompressor(dict_data=self._dict(did) if did else None)
            decompressors[did] = found
        return bytes(found.decompress(frame))

    def _dict(self, did: int) -> zstandard.ZstdCompressionDict:
        with self._lock:
            found = self._dicts.get(did)
        if found is not None:
            return found
        data = self._load(did)
        if data is None:
            raise LookupError(f"no zstd dictionary {did} in the archive")
        made = zstandard.ZstdCompressionDict(data)
        with self._lock:
            return self._dicts.setdefault(did, made)

    def _cache(self, name: str) -> Any:
        """This thread's cache ``name`` (zstd's objects are not shared between threads)."""
        found = getattr(self._local, name, None)
        if found is None:
            found = {}
            setattr(self._local, name, found)
        return found
