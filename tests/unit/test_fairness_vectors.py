"""docs/fairness_vectors.json is what the code computes now, docs/fairness.md quotes it, and the
independent JavaScript verifier recomputes every vector (so neither document can drift)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "docs" / "fairness_vectors.json"
SPEC = ROOT / "docs" / "fairness.md"
VERIFY = ROOT / "verifier" / "verify.mjs"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(
    NODE is None, reason="node is not on PATH: the JS verifier cannot run"
)


def _maker() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_fairness_vectors", ROOT / "docs" / "make_fairness_vectors.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _vectors() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(VECTORS.read_text(encoding="utf-8"))
    return doc


def _node(*args: str) -> subprocess.CompletedProcess[str]:
    assert NODE is not None
    return subprocess.run(
        [NODE, str(VERIFY), *args], capture_output=True, text=True, timeout=60, cwd=ROOT
    )


def test_vectors_file_is_what_the_code_computes() -> None:
    maker = _maker()
    assert VECTORS.read_text(encoding="utf-8") == maker.render(maker.build()), (
        "docs/fairness_vectors.json is stale: run .venv/bin/python docs/make_fairness_vectors.py"
    )


def test_spec_quotes_the_vectors() -> None:
    v = _vectors()
    text = SPEC.read_text(encoding="utf-8")
    quoted = [
        v["seed"],
        v["seed_sha256"],
        v["blocks"]["setup"][0],
        ", ".join(d["value"] for d in v["below"]["draws"]),
        ", ".join(map(str, v["shuffle"]["shuffled"])),
        v["fox"]["opening"]["k"],
        ", ".join(map(str, v["fox"]["opening"]["arrangement"])),
        v["envelopes"][0]["salt"],
        v["envelopes"][0]["hashed_text"],
        v["envelopes"][0]["envelope"]["hash"],
        v["envelopes"][1]["envelope"]["hash"],
        v["fox"]["deal_choices"],
    ]
    missing = [q for q in quoted if q not in text]
    assert not missing, f"docs/fairness.md does not quote these vectors: {missing}"
    assert v["fox"]["opening"]["first_dealer"] == 1  # the spec's prose says so
    assert v["rejection"]["blocks_used"] == 4  # "rejects three blocks and returns the fourth"


@needs_node
def test_js_recomputes_every_vector() -> None:
    result = _node("--vectors", str(VECTORS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAILED" not in result.stdout
    assert "vectors recomputed" in result.stdout


@needs_node
def test_js_vector_check_notices_a_wrong_vector(tmp_path: Path) -> None:
    v = _vectors()
    v["fox"]["opening"]["arrangement"][0], v["fox"]["opening"]["arrangement"][1] = (
        v["fox"]["opening"]["arrangement"][1],
        v["fox"]["opening"]["arrangement"][0],
    )
    v["envelopes"][1]["envelope"]["at"] = "2026-01-01T12:00:00.001Z"
    path = tmp_path / "vectors.json"
    path.write_text(json.dumps(v, ensure_ascii=False), encoding="utf-8")
    result = _node("--vectors", str(path))
    assert result.returncode == 1
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 2, result.stdout
    assert "fox opening" in failed[0] and "envelope 2" in failed[1]
