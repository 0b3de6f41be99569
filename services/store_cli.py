"""``tabletop migrate`` and ``tabletop archive``: the stores' upkeep, beside a running stack or
before one starts.

- ``migrate`` brings the Redis store to this build's layout (``shared.adapters.store_format``:
  logs kept as streams by builds before issue 27 become one string each) and the archive to
  this build's schema (``shared.archive``: tables added since are made). Idempotent and
  resumable; `tabletop run` and every stream worker do the same on start. A store of a newer
  layout is refused in one line (exit 2).
- ``archive`` moves every finished, scored game out of Redis now (``shared.app.archiving``),
  as the workers' archiver does ``TABLETOP_ARCHIVE_AFTER_S`` after a game ends.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def _redis_url(data_dir: str | None, command: str) -> str | None:
    from services.cli_args import stack_redis_url

    data = Path(data_dir) if data_dir else Path.cwd() / "run"
    url = os.environ.get("REDIS_URL") or stack_redis_url(data)
    if not url:
        print(
            f"tabletop {command}: no Redis: no running stack's {data / 'redis.url'}; set "
            "REDIS_URL, or give the stack's TABLETOP_DATA_DIR (--data-dir)",
            file=sys.stderr,
        )
    return url


def run_migrate(data_dir: str | None = None) -> int:
    """``tabletop migrate``: the Redis store's layout, then the archive's schema."""
    from shared.adapters.store_format import CURRENT, StoreFormatError, StoreUnreachable, migrate_at
    from shared.archive import open_archive
    from shared.archive.port import SCHEMA_VERSION, ArchiveFormatError
    from shared.config import Settings

    url = _redis_url(data_dir, "migrate")
    if not url:
        return 2
    env = {**os.environ, "REDIS_URL": url}
    if data_dir:
        env["TABLETOP_DATA_DIR"] = str(Path(data_dir).absolute())
    settings = Settings.from_env(env)
    started = time.perf_counter()
    try:
        done = migrate_at(url)
    except StoreFormatError as exc:
        print(f"tabletop migrate: {exc}", file=sys.stderr)
        return 2
    except StoreUnreachable as exc:
        print(f"tabletop migrate: {exc}", file=sys.stderr)
        return 1
    before = "none recorded" if done.version_before is None else f"version {done.version_before}"
    print(
        f"Redis store: layout {before} -> {CURRENT}; {done.converted} of {done.found} streamed "
        f"logs converted ({time.perf_counter() - started:.1f} s)"
    )
    if settings.archive_url:
        try:
            open_archive(settings.archive_url).close()  # opening it brings its schema up
        except ArchiveFormatError as exc:
            print(f"tabletop migrate: archive: {exc}", file=sys.stderr)
            return 2
        print(f"archive: schema {SCHEMA_VERSION} ({settings.archive_url})")
    return 0


def run_archive(data_dir: str | None = None, after_s: float = 0.0) -> int:
    """``tabletop archive``: move the finished, scored games out of Redis now."""
    from services.worker.archiver import sweep_all
    from shared.bootstrap import bootstrap
    from shared.config import Settings

    url = _redis_url(data_dir, "archive")
    if not url:
        return 2
    env = {**os.environ, "REDIS_URL": url}
    if data_dir:
        env["TABLETOP_DATA_DIR"] = str(Path(data_dir).absolute())
    app = bootstrap(Settings.from_env(env))
    if app.ports.archive is None:
        print("tabletop archive: TABLETOP_ARCHIVE_URL is off: there is no archive", file=sys.stderr)
        return 2
    started = time.perf_counter()
    moved = sweep_all(app, app.ports.archive, after_s=after_s)
    print(f"archived {moved} finished games in {time.perf_counter() - started:.1f} s")
    return 0
