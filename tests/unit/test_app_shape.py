"""Issue 27's measurable shape of the application ring, held: modules a newcomer can read
(none of ``shared/app`` over 500 lines, none of ``services`` over 600, web assets aside), the
gateway and the command lines reaching Redis only through ports (no ``redis`` import), and no
second HTTP client of their own (``urllib.request``) in ``services``: the CLIs speak through
the bot kit's client."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The command-line entry points (``tabletop ...``) besides the gateway package.
CLIS = ("cli.py", "cli_args.py", "audit_cli.py", "tournament_cli.py", "tournament_local.py",
        "tournament_plots.py", "tournament_render.py", "tournament_request.py",
        "tournament_service.py", "kit_entrants.py", "store_cli.py")  # fmt: skip


def lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports, at any level (function-level imports counted)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_no_module_of_the_application_is_long() -> None:
    long_app = {p.name: lines(p) for p in (ROOT / "shared" / "app").glob("*.py") if lines(p) > 500}
    assert long_app == {}
    long_services = {
        str(p.relative_to(ROOT)): lines(p)
        for p in (ROOT / "services").rglob("*.py")
        if "web" not in p.relative_to(ROOT).parts and lines(p) > 600
    }
    assert long_services == {}


def test_the_gateway_and_the_command_lines_reach_redis_only_through_ports() -> None:
    modules = [*(ROOT / "services" / "gateway").rglob("*.py"),
               *(ROOT / "services" / name for name in CLIS)]  # fmt: skip
    assert all(m.exists() for m in modules)
    talking = {
        str(m.relative_to(ROOT))
        for m in modules
        if any(name == "redis" or name.startswith("redis.") for name in imported(m))
    }
    assert talking == set()


def test_services_have_no_http_client_of_their_own() -> None:
    clients = {
        str(p.relative_to(ROOT))
        for p in (ROOT / "services").rglob("*.py")
        if "urllib.request" in imported(p)
    }
    assert clients == set()
