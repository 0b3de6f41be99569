"""The shape issue 26 asks for, held: a game is its package under ``shared/games/`` and the
rest of the service finds it through the registry and its spec, not by name."""

from __future__ import annotations

import re
from pathlib import Path

from shared import games

ROOT = Path(__file__).resolve().parents[2]


def _modules(*dirs: str) -> list[Path]:
    return [p for d in dirs for p in sorted((ROOT / d).rglob("*.py"))]


def test_every_hosted_game_is_a_package_with_a_spec_kernel_and_bots() -> None:
    for name in games.names():
        package = ROOT / "shared" / "games" / name
        assert (package / "__init__.py").is_file(), name
        spec = games.spec(name)
        assert spec.name == name
        assert spec.kernel is games.get(name).KERNEL  # type: ignore[attr-defined]
        assert spec.heuristic is not None
    assert not (ROOT / "shared" / "sim").exists()


def test_no_module_outside_the_games_names_a_game_but_a_few() -> None:
    word = re.compile(r"\b(" + "|".join(games.names()) + r")\b", re.IGNORECASE)
    counts = {}
    for path in _modules("shared", "services"):
        if (ROOT / "shared" / "games") in path.parents:
            continue
        found = len(word.findall(path.read_text()))
        if found:
            counts[str(path.relative_to(ROOT))] = found
    assert len(counts) <= 4, counts
    assert sum(counts.values()) <= 12, counts


def test_the_application_and_the_bots_import_no_module_by_name() -> None:
    for path in _modules("shared/app", "shared/bots"):
        assert "import_module" not in path.read_text(), path
