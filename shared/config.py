"""Settings read from the environment, once, in the factories (never at import time)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
TRUE = ("1", "true", "yes", "on")


class SettingsError(ValueError):
    """The environment asks for something that cannot run; the message says what to set."""


def _keys(raw: str | None) -> frozenset[str]:
    return frozenset(k.strip() for k in (raw or "").split(",") if k.strip())


DEFAULT_RATE_LIMITS = {
    "create": "30/minute",  # games created per client address
    "join": "60/minute",  # seats joined per client address
    "command": "20/second",  # commands per seat token, refilling a bucket of:
    # a seat token's burst: a bot's turns come together, so it may send this many at any speed
    # before the rate above holds it (a token bucket; limits_guard.py)
    "command_burst": "120",
    # Commands per client address, whatever the tokens: a game's many seats (or many games)
    # from one address must not multiply the per-token limit.
    "command_addr": "30/second",
    "suggest": "20/minute",  # hints per seat token (a search holds a search worker)
    # Reads that fold or re-decide a whole log (tens to hundreds of ms of a gateway's CPU), per
    # client address; auditor and organizer keys are not limited.
    "audit": "30/minute",
    "replay": "600/minute",  # the web page's replay asks once per version stepped to
    "bots": "10/minute",  # bots registered per client address (POST /v1/bots)
}


def _rate_limits(env: Mapping[str, str]) -> dict[str, str]:
    if env.get("TABLETOP_RATE_LIMITS", "on").lower() in ("off", "0", "false", "no"):
        return {}
    return {
        name: env.get(f"TABLETOP_RATE_{name.upper()}", default)
        for name, default in DEFAULT_RATE_LIMITS.items()
    }


# Seconds a refused command's outcome stays readable (and stored): long enough for a client
# that did not wait to read it, short enough that a flood of illegal commands cannot fill Redis.
DEFAULT_REJECTED_TTL = 600
# Seconds a finished game stays in Redis before it moves to the archive: its players' last
# reads and its scoring come first; every read works the same once it has moved.
DEFAULT_ARCHIVE_AFTER_S = 60.0


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchCaps:
    """What a game created without an organizer key may ask of the search workers: a search
    seat's ``budget_ms`` (a hint's cap too) and ``iterations`` (1000 take a 12-seat game about
    as long: 0.7 s median, 2.3 s at most here), and the search seats of one game (the clock's
    ``timeout_bot`` is capped alike)."""

    budget_ms: int = 2000
    iterations: int = 1000
    seats: int = 4


def _search_caps(env: Mapping[str, str]) -> SearchCaps:
    default = SearchCaps()
    return SearchCaps(
        budget_ms=int(env.get("TABLETOP_ANON_SEARCH_BUDGET_MS", default.budget_ms)),
        iterations=int(env.get("TABLETOP_ANON_SEARCH_ITERATIONS", default.iterations)),
        seats=int(env.get("TABLETOP_ANON_SEARCH_SEATS", default.seats)),
    )


# Where ``tabletop run`` keeps its data (its Redis's, the bot secret) when TABLETOP_DATA_DIR is
# not set: relative to the working directory.
DEFAULT_DATA_DIR = "run"
# The file of the data directory that holds the secret registered bots' keys derive from, when
# TABLETOP_BOT_SECRET is not set (``shared.adapters.redis.RedisBotRegistry`` reads or makes it).
BOT_SECRET_FILE = "bot-secret"


def bot_secret_path(env: Mapping[str, str]) -> str:
    """The bot secret's file: ``TABLETOP_BOT_SECRET_FILE``, else ``bot-secret`` in
    ``TABLETOP_DATA_DIR`` (else ``./run``, as ``tabletop run`` uses), made absolute."""
    explicit = env.get("TABLETOP_BOT_SECRET_FILE", "").strip()
    data = env.get("TABLETOP_DATA_DIR", "").strip() or DEFAULT_DATA_DIR
    return os.path.abspath(explicit or os.path.join(data, BOT_SECRET_FILE))


# Redis's memory against its maxmemory at which ``/readyz`` reports the service degraded (still
# ready), and not ready (503): past maxmemory Redis refuses writes (noeviction).
DEFAULT_REDIS_MEMORY_WARN = 0.80
DEFAULT_REDIS_MEMORY_CRITICAL = 0.95


def _fraction(env: Mapping[str, str], name: str, default: float) -> float:
    """A share of maxmemory: ``0.8``, ``80`` or ``80%``."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw.removesuffix("%"))
    except ValueError:
        raise SettingsError(f"{name}={raw!r}: give a share of maxmemory (0.8, 80 or 80%)") from None
    if raw.endswith("%") or value > 1:
        value /= 100
    if not 0 < value <= 1:
        raise SettingsError(f"{name}={raw!r}: a share of maxmemory is above 0 and at most 100%")
    return value


# Command streams per game type in a deployment: as many workers per type as this can each
# own a shard (leases); more stand by. The same value in every process.
DEFAULT_SHARDS = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Everything a process needs to know about its surroundings."""

    redis_url: str = DEFAULT_REDIS_URL
    organizer_keys: frozenset[str] = field(default_factory=frozenset)
    auditor_keys: frozenset[str] = field(default_factory=frozenset)
    shards: int = 1
    max_wait: float = 30.0
    bot_dispatch: str = "celery"  # "celery", or "none" to drop bot and scoring work
    max_tournament_games: int = 10_000
    cors_origins: frozenset[str] = field(default_factory=frozenset)
    # Abuse limits per rule (``limits`` syntax, e.g. "30/minute"); empty: none.
    rate_limits: Mapping[str, str] = field(default_factory=dict)
    rejected_ttl: int = DEFAULT_REJECTED_TTL  # seconds a refused command's outcome is kept
    feed_heartbeat: float = 15.0  # seconds between the live feed's keep-alive comments
    # What a game created without an organizer key may ask of the search workers.
    search_caps: SearchCaps = field(default_factory=SearchCaps)
    # REDIS_URL names one node of a Redis Cluster (redis-py's cluster client finds the rest).
    redis_cluster: bool = False
    # Celery's broker: a plain Redis (kombu's Redis transport does not speak cluster); None
    # means REDIS_URL, which only a single-server stack may share with Celery.
    broker_url: str | None = None
    # Registered bots: the secret their keys derive from (empty: the one kept in the file
    # ``bot_secret_file``, made there on first use; never in Redis) and the hosts their
    # webhooks may be on.
    bot_secret: str = ""
    # Settings made in code (tests, tools) find the same file as the processes ``tabletop
    # run`` starts: the data directory of the environment, read when they are made.
    bot_secret_file: str = field(default_factory=lambda: bot_secret_path(os.environ))
    bot_webhook_hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")
    # /readyz: Redis's used memory over its maxmemory past which the service is degraded (still
    # ready), and past which it is not ready (Redis refusing writes is never ready).
    redis_memory_warn: float = DEFAULT_REDIS_MEMORY_WARN
    redis_memory_critical: float = DEFAULT_REDIS_MEMORY_CRITICAL
    # The archive of finished games (``shared.archive``): where it is (``archive_location``;
    # "" for none: finished games stay in Redis), and how long a finished, scored game stays
    # in Redis before it moves there (less when Redis's memory is past the warning share).
    archive_url: str = ""
    archive_after_s: float = DEFAULT_ARCHIVE_AFTER_S

    @property
    def celery_broker_url(self) -> str:
        """The URL Celery's broker connects to (``TABLETOP_BROKER_URL``, else ``REDIS_URL``)."""
        if self.broker_url:
            return self.broker_url
        if self.redis_cluster:
            raise SettingsError(MISSING_BROKER)
        return self.redis_url

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``REDIS_URL``, ``TABLETOP_ORGANIZER_KEYS``, ``TABLETOP_AUDITOR_KEYS``,
        ``TABLETOP_SHARDS``, ``TABLETOP_MAX_WAIT``, ``TABLETOP_BOT_DISPATCH`` and
        ``TABLETOP_MAX_TOURNAMENT_GAMES``, ``TABLETOP_CORS_ORIGINS`` (comma-separated origins
        browsers may call from; ``*`` for any) and the abuse limits ``TABLETOP_RATE_CREATE``,
        ``TABLETOP_RATE_JOIN``, ``TABLETOP_RATE_COMMAND`` (and ``TABLETOP_RATE_COMMAND_BURST``),
        ``TABLETOP_RATE_COMMAND_ADDR``,
        ``TABLETOP_RATE_SUGGEST`` (``TABLETOP_RATE_LIMITS=off`` for none),
        ``TABLETOP_REJECTED_TTL`` (seconds a refused command's outcome is kept),
        ``TABLETOP_REDIS_CLUSTER`` (1: ``REDIS_URL`` is a cluster node) and
        ``TABLETOP_BROKER_URL`` (Celery's Redis; required on a cluster unless bots are off),
        ``TABLETOP_ANON_SEARCH_BUDGET_MS``, ``TABLETOP_ANON_SEARCH_ITERATIONS`` and
        ``TABLETOP_ANON_SEARCH_SEATS`` (``SearchCaps``), ``TABLETOP_BOT_SECRET`` (else the
        file ``TABLETOP_BOT_SECRET_FILE``, else ``<TABLETOP_DATA_DIR or ./run>/bot-secret``:
        ``bot_secret_path``) and ``TABLETOP_BOT_WEBHOOK_HOSTS`` (registered bots),
        ``TABLETOP_RATE_BOTS``, ``TABLETOP_REDIS_MEMORY_WARN`` and
        ``TABLETOP_REDIS_MEMORY_CRITICAL`` (``/readyz``'s memory thresholds: 0.8, 80 or 80%),
        ``TABLETOP_ARCHIVE_URL`` (the archive: ``postgresql://...``, ``sqlite:///path`` or a
        path; else ``archive.sqlite3`` in the data directory; ``off`` for none) and
        ``TABLETOP_ARCHIVE_AFTER_S`` (seconds a finished game stays in Redis first).
        Raises ``SettingsError`` on a cluster without a broker URL: every process would
        otherwise start and fail at its first bot turn; and on memory thresholds that are no
        share of maxmemory, or a warning past the critical one."""
        env = os.environ if env is None else env
        cluster = env.get("TABLETOP_REDIS_CLUSTER", "0").strip().lower() in TRUE
        broker = env.get("TABLETOP_BROKER_URL", "").strip() or None
        dispatch = env.get("TABLETOP_BOT_DISPATCH", "celery")
        if cluster and broker is None and dispatch != "none":
            raise SettingsError(MISSING_BROKER)
        warn = _fraction(env, "TABLETOP_REDIS_MEMORY_WARN", DEFAULT_REDIS_MEMORY_WARN)
        critical = _fraction(env, "TABLETOP_REDIS_MEMORY_CRITICAL", DEFAULT_REDIS_MEMORY_CRITICAL)
        if warn > critical:
            raise SettingsError(
                f"TABLETOP_REDIS_MEMORY_WARN ({warn:.0%}) is past "
                f"TABLETOP_REDIS_MEMORY_CRITICAL ({critical:.0%}): warn first"
            )
        return cls(
            redis_url=env.get("REDIS_URL", DEFAULT_REDIS_URL),
            organizer_keys=_keys(env.get("TABLETOP_ORGANIZER_KEYS")),
            auditor_keys=_keys(env.get("TABLETOP_AUDITOR_KEYS")),
            shards=max(1, int(env.get("TABLETOP_SHARDS", str(DEFAULT_SHARDS)))),
            max_wait=float(env.get("TABLETOP_MAX_WAIT", "30")),
            bot_dispatch=dispatch,
            max_tournament_games=max(1, int(env.get("TABLETOP_MAX_TOURNAMENT_GAMES", "10000"))),
            cors_origins=_keys(env.get("TABLETOP_CORS_ORIGINS")),
            rate_limits=_rate_limits(env),
            rejected_ttl=max(1, int(env.get("TABLETOP_REJECTED_TTL", str(DEFAULT_REJECTED_TTL)))),
            redis_cluster=cluster,
            broker_url=broker,
            search_caps=_search_caps(env),
            bot_secret=env.get("TABLETOP_BOT_SECRET", "").strip(),
            bot_secret_file=bot_secret_path(env),
            bot_webhook_hosts=tuple(
                h.strip()
                for h in env.get("TABLETOP_BOT_WEBHOOK_HOSTS", "127.0.0.1,localhost,::1").split(",")
                if h.strip()
            ),
            redis_memory_warn=warn,
            redis_memory_critical=critical,
            archive_url=_archive_url(env),
            archive_after_s=max(
                0.0, float(env.get("TABLETOP_ARCHIVE_AFTER_S", str(DEFAULT_ARCHIVE_AFTER_S)))
            ),
        )


ARCHIVE_URL_ENV = "TABLETOP_ARCHIVE_URL"
ARCHIVE_FILE = "archive.sqlite3"


def archive_location(env: Mapping[str, str]) -> str:
    """Where the archive is (``shared.archive.open_archive`` opens it):
    ``TABLETOP_ARCHIVE_URL``, else ``archive.sqlite3`` in ``TABLETOP_DATA_DIR`` (else
    ``./run``, as ``tabletop run`` uses), made absolute."""
    explicit = env.get(ARCHIVE_URL_ENV, "").strip()
    if explicit:
        return explicit
    data = env.get("TABLETOP_DATA_DIR", "").strip() or DEFAULT_DATA_DIR
    return os.path.abspath(os.path.join(data, ARCHIVE_FILE))


def _archive_url(env: Mapping[str, str]) -> str:
    """The archive's location, or "" when ``TABLETOP_ARCHIVE_URL`` is ``off``."""
    if env.get(ARCHIVE_URL_ENV, "").strip().lower() in ("off", "none", "0"):
        return ""
    return archive_location(env)


MISSING_BROKER = (
    "TABLETOP_REDIS_CLUSTER=1 needs TABLETOP_BROKER_URL: Celery's Redis transport does not "
    "speak Redis Cluster, so its broker must be a plain Redis server (e.g. "
    "TABLETOP_BROKER_URL=redis://broker-host:6379/0); or set TABLETOP_BOT_DISPATCH=none for "
    "a stack without bots, scoring tasks and tournaments"
)
