"""The archive of finished games (issue 36): the port (``shared.archive.port``), its index row
(``shared.archive.rows``), and two adapters on one statement of the SQL
(``shared.archive.sql``): SQLite, the embedded default, and PostgreSQL.

``open_archive(archive_location(os.environ))`` opens the one a process is configured with:
``TABLETOP_ARCHIVE_URL`` (``postgresql://...``, ``sqlite:///path``, or a path), else
``archive.sqlite3`` in the data directory (``TABLETOP_DATA_DIR``, else ``./run``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from shared.archive.port import Archive
from shared.config import DEFAULT_DATA_DIR

ARCHIVE_URL_ENV = "TABLETOP_ARCHIVE_URL"
ARCHIVE_FILE = "archive.sqlite3"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
SQLITE_SCHEME = "sqlite://"


def archive_location(env: Mapping[str, str]) -> str:
    """Where the archive is: ``TABLETOP_ARCHIVE_URL``, else ``archive.sqlite3`` in
    ``TABLETOP_DATA_DIR`` (else ``./run``, as ``tabletop run`` uses), made absolute."""
    explicit = env.get(ARCHIVE_URL_ENV, "").strip()
    if explicit:
        return explicit
    data = env.get("TABLETOP_DATA_DIR", "").strip() or DEFAULT_DATA_DIR
    return os.path.abspath(os.path.join(data, ARCHIVE_FILE))


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
