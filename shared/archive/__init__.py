"""The archive of finished games (issue 36): the port (``shared.archive.port``), its index row
(``shared.archive.rows``), and two adapters on one statement of the SQL
(``shared.archive.sql``): SQLite, the embedded default, and PostgreSQL.

``open_archive(archive_location(os.environ))`` opens the one a process is configured with:
``TABLETOP_ARCHIVE_URL`` (``postgresql://...``, ``sqlite:///path``, or a path), else
``archive.sqlite3`` in the data directory (``TABLETOP_DATA_DIR``, else ``./run``).
"""

from __future__ import annotations

from collections.abc import Mapping

from shared.archive.port import Archive
from shared.config import ARCHIVE_FILE, ARCHIVE_URL_ENV, archive_location

__all__ = ["ARCHIVE_FILE", "ARCHIVE_URL_ENV", "Archive", "archive_location", "open_archive"]

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
SQLITE_SCHEME = "sqlite://"


def open_archive(url_or_path: str, *, dictionaries: Mapping[str, bytes] | None = None) -> Archive:
    """The archive at ``url_or_path``: PostgreSQL for a ``postgresql://`` (or
    ``postgres://``) URL, else SQLite (``sqlite:///abs/path``, ``sqlite://rel/path`` or a
    plain path). ``dictionaries``: game type -> the zstd dictionary its logs are compressed
    with (None: the ones this build ships)."""
    if url_or_path.startswith(POSTGRES_SCHEMES):
        from shared.archive.postgres import PostgresArchive

        return PostgresArchive(url_or_path, dictionaries=dictionaries)
    from shared.archive.sqlite import SqliteArchive

    path = url_or_path.removeprefix(SQLITE_SCHEME)
    if not path:
        raise ValueError(f"no file in {url_or_path!r}")
    return SqliteArchive(path, dictionaries=dictionaries)
