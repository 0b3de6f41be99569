"""Import contract: the rings of ARCHITECTURE.md, checked by parsing every module with ``ast``.

Every ``import``/``from ... import`` anywhere in a module counts (inside functions, under
``if TYPE_CHECKING:``, ...). Dynamic imports (``importlib.import_module``) are not seen.

To declare a new adapter module, add its dotted name (or package prefix) to ``ADAPTERS``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Modules allowed to touch infrastructure (Redis, Flask, Celery, ...). A name matches itself and
# everything below it, so "shared.adapters" covers the whole package.
ADAPTERS: tuple[str, ...] = (
    "shared.adapters",
    "shared.store.redis_log",
    "shared.redis_server",
    "shared.keys",
    "shared.bootstrap",  # the composition root
    "shared.archive.sqlite",  # the archive of finished games: its two adapters
    "shared.archive.postgres",
)

# Infrastructure packages the application layer must not import (top-level names).
FRAMEWORKS = frozenset(
    {
        "redis",
        "flask",
        "celery",
        "fakeredis",
        "gunicorn",
        "werkzeug",
        "flask_smorest",
        "psycopg",
        "psycopg_pool",
        "sqlite3",
    }  # fmt: skip
)

# Redis key names: an adapter detail.
KEYS_MODULE = "shared.keys"

# Top-level modules of `services/` that wire the services together and may import any of them.
SERVICE_GLUE = frozenset({"services", "services.cli", "services.celery_client"})
# The one glue module a service may import.
SERVICE_SHARED = ("services.celery_client",)


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _within_any(name: str, prefixes: Iterable[str]) -> bool:
    return any(_within(name, p) for p in prefixes)


def imports_of(source: str, module: str, is_package: bool = False) -> list[str]:
    """Absolute dotted names imported by ``source`` (the text of ``module``).

    ``from a.b import c`` yields ``a.b.c`` (``c`` may be a submodule or an attribute; both
    checks below only look at prefixes, so either reading works); ``from a import *`` yields
    ``a``. Relative imports are resolved against ``module``.
    """
    package = module if is_package else module.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                if node.level - 1 >= len(parts):
                    raise ValueError(f"{module}: relative import beyond the top package")
                anchor = ".".join(parts[: len(parts) - (node.level - 1)])
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                found.append(base if alias.name == "*" else f"{base}.{alias.name}")
    return found


def _modules(top: str) -> Iterator[tuple[str, Path]]:
    for path in sorted((ROOT / top).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        yield ".".join(parts), path


def all_imports(*tops: str) -> dict[str, list[str]]:
    """Module name -> every name it imports, for each module under the given top-level dirs."""
    return {
        name: imports_of(path.read_text(), name, path.name == "__init__.py")
        for top in tops
        for name, path in _modules(top)
    }


def is_adapter(module: str) -> bool:
    return _within_any(module, ADAPTERS)


# --- the checks: each returns "module: import" lines, empty when the ring holds ---------------


def engine_violations(graph: dict[str, list[str]]) -> list[str]:
    """Engines (``shared.games.*``) import only the standard library and ``shared.games``."""
    return [
        f"{mod}: {imp}"
        for mod, imps in graph.items()
        if _within(mod, "shared.games")
        for imp in imps
        if not _within(imp, "shared.games") and imp.partition(".")[0] not in sys.stdlib_module_names
    ]


def match_violations(graph: dict[str, list[str]]) -> list[str]:
    """The match (``shared.match.*``: the service's own rules) imports no application,
    adapter, store or bot module: the application decides with it, not the other way round."""
    allowed = ("shared.match", "shared.games", "shared.events")
    return [
        f"{mod}: {imp}"
        for mod, imps in graph.items()
        if _within(mod, "shared.match")
        for imp in imps
        if _within(imp, "shared") and not any(_within(imp, a) for a in allowed)
    ]


def framework_violations(graph: dict[str, list[str]]) -> list[str]:
    """Non-adapter modules of ``shared`` import no infrastructure framework."""
    return [
        f"{mod}: {imp}"
        for mod, imps in graph.items()
        if _within(mod, "shared") and not is_adapter(mod)
        for imp in imps
        if imp.partition(".")[0] in FRAMEWORKS
    ]


def keys_violations(graph: dict[str, list[str]]) -> list[str]:
    """Only adapter modules import ``shared.keys`` (checked in ``shared`` and ``services``)."""
    return [
        f"{mod}: {imp}"
        for mod, imps in graph.items()
        if not is_adapter(mod)
        for imp in imps
        if _within(imp, KEYS_MODULE)
    ]


def service_violations(graph: dict[str, list[str]], services: Iterable[str]) -> list[str]:
    """A module of ``services.<svc>`` imports, of ``services.*``, only its own package and
    ``services.celery_client``. Glue modules (``SERVICE_GLUE``) are unconstrained."""
    out = []
    for svc in services:
        own = f"services.{svc}"
        for mod, imps in graph.items():
            if not _within(mod, own):
                continue
            for imp in imps:
                if (
                    _within(imp, "services")
                    and imp != "services"
                    and not _within(imp, own)
                    and not _within_any(imp, SERVICE_SHARED)
                ):
                    out.append(f"{mod}: {imp}")
    return out


def service_packages() -> list[str]:
    """Every package directly under ``services/`` is a service (gateway, worker, bots, ...)."""
    return sorted(p.parent.name for p in (ROOT / "services").glob("*/__init__.py"))


def _report(title: str, offenders: list[str]) -> str:
    return f"{title} ({len(offenders)}):\n  " + "\n  ".join(offenders)


# --- tests ---------------------------------------------------------------------------------------


def test_engines_import_only_stdlib_and_shared_games() -> None:
    bad = engine_violations(all_imports("shared"))
    assert not bad, _report("engines (shared/games) importing outside stdlib + shared.games", bad)


def test_the_match_imports_nothing_of_the_application() -> None:
    bad = match_violations(all_imports("shared"))
    assert not bad, _report("the match (shared/match) importing outside its ring", bad)
    assert match_violations({"shared.match.x": ["shared.app.bots"]}) == [
        "shared.match.x: shared.app.bots"
    ]


def test_application_layer_imports_no_framework() -> None:
    bad = framework_violations(all_imports("shared"))
    assert not bad, _report(
        f"non-adapter shared modules importing {sorted(FRAMEWORKS)} (adapters: {ADAPTERS})", bad
    )


def test_keys_imported_only_by_adapters() -> None:
    bad = keys_violations(all_imports("shared", "services"))
    assert not bad, _report(
        f"non-adapter modules importing {KEYS_MODULE} (adapters: {ADAPTERS})", bad
    )


def test_services_do_not_import_each_other() -> None:
    services = service_packages()
    assert {"gateway", "worker", "bots"} <= set(services), services
    bad = service_violations(all_imports("services"), services)
    assert not bad, _report(
        f"services importing another service (allowed: own package, {SERVICE_SHARED})", bad
    )


def test_glue_modules_exist() -> None:
    # SERVICE_GLUE / ADAPTERS name files; catch renames that would silently widen the rules.
    names = set(all_imports("shared", "services"))
    assert names >= SERVICE_GLUE, sorted(SERVICE_GLUE - names)
    assert names >= {"shared.store.redis_log", "shared.keys"}


def test_checkers_catch_violations() -> None:
    src = (
        "import os\n"
        "from . import base\n"
        "def f():\n"
        "    import redis.client\n"
        "    from shared import keys\n"
        "    from ..store import port\n"
    )
    graph = {"shared.games.x": imports_of(src, "shared.games.x")}
    assert graph["shared.games.x"] == [
        "os",
        "shared.games.base",
        "redis.client",
        "shared.keys",
        "shared.store.port",
    ]
    assert engine_violations(graph) == [
        "shared.games.x: redis.client",
        "shared.games.x: shared.keys",
        "shared.games.x: shared.store.port",
    ]
    assert framework_violations(graph) == ["shared.games.x: redis.client"]
    assert keys_violations(graph) == ["shared.games.x: shared.keys"]
    # adapters are exempt from the framework and keys rules
    adapter = {"shared.adapters.cache": ["redis", "shared.keys"]}
    assert framework_violations(adapter) == keys_violations(adapter) == []

    svc = {
        "services.gateway.app": imports_of(
            "from services.celery_client import make_dispatcher\n"
            "from services import worker\n"
            "from . import routes\n",
            "services.gateway.app",
        ),
        "services.cli": ["services.worker.main"],
    }
    assert service_violations(svc, ["gateway", "worker"]) == [
        "services.gateway.app: services.worker"
    ]


# --- entry points thin (issue 27): the gateway and the CLIs reach Redis only through shared/ ---

# The command-line modules of services/: ``tabletop`` and what its subcommands run.
CLI_MODULES = ("services.cli", "services.cli_args", "services.kit_entrants")


def is_cli(module: str) -> bool:
    """``services.cli`` and its helpers, ``services.<x>_cli`` and ``services.tournament_*``."""
    top = module.removeprefix("services.")
    return module in CLI_MODULES or (
        module.startswith("services.")
        and "." not in top
        and (top.endswith("_cli") or top.startswith("tournament_"))
    )


def redis_violations(graph: dict[str, list[str]]) -> list[str]:
    """Modules of the gateway and the CLIs importing ``redis`` (or any of its modules)."""
    return [
        f"{mod}: {imp}"
        for mod, imps in graph.items()
        if _within(mod, "services.gateway") or is_cli(mod)
        for imp in imps
        if _within(imp, "redis")
    ]


def urllib_client_violations(graph: dict[str, list[str]]) -> list[str]:
    """Modules of services/ with a ``urllib.request`` client (the bot kit's, on httpx, is the
    one HTTP client; ``urllib.parse`` is fine)."""
    return [
        f"{mod}: {imp}"
        for mod, imps in graph.items()
        for imp in imps
        if _within(imp, "urllib.request")
        or imp == "urllib"  # ``import urllib`` then ``urllib.request...``
    ]


def test_the_gateway_and_the_clis_import_no_redis() -> None:
    graph = all_imports("services")
    assert {"services.cli", "services.audit_cli", "services.tournament_cli"} <= {
        m for m in graph if is_cli(m)
    }
    assert {"services.gateway.app", "services.gateway.ready"} <= set(graph)
    bad = redis_violations(graph)
    assert not bad, _report("gateway or CLI modules importing redis (use shared/adapters)", bad)


def test_no_urllib_client_in_services() -> None:
    bad = urllib_client_violations(all_imports("services"))
    assert not bad, _report("services/ modules with a urllib.request client", bad)


def test_the_entry_point_checks_catch_violations() -> None:
    graph = {
        "services.gateway.ready": imports_of(
            "def f():\n    import redis\n", "services.gateway.ready"
        ),
        "services.tournament_local": imports_of(
            "from redis.exceptions import RedisError\n", "services.tournament_local"
        ),
        "services.worker.main": ["redis"],  # a worker is an adapter's user: allowed
        "services.supervisor": imports_of(
            "import urllib.parse\ndef f():\n    from urllib.request import urlopen\n",
            "services.supervisor",
        ),
    }
    assert redis_violations(graph) == [
        "services.gateway.ready: redis",
        "services.tournament_local: redis.exceptions.RedisError",
    ]
    assert urllib_client_violations(graph) == ["services.supervisor: urllib.request.urlopen"]
