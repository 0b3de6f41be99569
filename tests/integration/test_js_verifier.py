"""The independent JavaScript verifier (verifier/verify.mjs) on real exports: every honest game
passes every check; a history rewritten by someone holding the store (the seed, so every hash
recomputed) fails at the forged version. Needs only node (no Redis)."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from shared.app.playout import play
from shared.audit import audit
from shared.events import GENESIS_HASH, chain_hash, event_salt

ROOT = Path(__file__).resolve().parents[2]
VERIFY = ROOT / "verifier" / "verify.mjs"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(
    NODE is None, reason="node is not on PATH: the JS verifier cannot run"
)

Doc = dict[str, Any]

GAMES: dict[str, tuple[str, int, dict[str, Any], str]] = {
    "fox target 1": ("fox", 2, {"target": 1}, "js-fox-1"),
    "fox target 10": ("fox", 2, {"target": 10}, "js-fox-10"),
    "skull 4 seats": ("skull", 4, {}, "skull-3"),  # four blind picks, each with a skull
    "skye 3 seats": ("skye", 3, {}, "js-skye-3"),
    "skye advanced variant": ("skye", 3, {"advanced_variant": True}, "js-skye-adv"),
}


def _export(name: str) -> list[Doc]:
    game, seats, options, seed = GAMES[name]
    played = play(game, [{"bot": "random"}] * seats, options, seed)
    return [env.to_dict() for env in played.envelopes]


def _write(tmp_path: Path, docs: list[Doc], name: str = "game.jsonl") -> Path:
    path = tmp_path / name
    # As GET /v1/games/{id}/export writes it (shared.app.queries.export_lines).
    path.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in docs))
    return path


def _verify(path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    assert NODE is not None
    return subprocess.run(
        [NODE, str(VERIFY), *flags, str(path)], capture_output=True, text=True, timeout=60
    )


def _result(path: Path) -> tuple[int, Doc]:
    run = _verify(path, "--json")
    return run.returncode, json.loads(run.stdout)


def _rehash(docs: list[Doc]) -> None:
    """What the holder of the store (and so of the seed) can do after changing an event:
    recompute every salt and hash, so the chain itself is consistent again."""
    seed = docs[-1]["data"]["seed"]
    prev = GENESIS_HASH
    for d in docs:
        d["prev_hash"] = prev
        d["hash"] = chain_hash(
            prev,
            version=d["version"],
            type=d["type"],
            data=d["data"],
            command_id=d["command_id"],
            seat=d["seat"],
            at=d["at"],
            salt=event_salt(seed, d["version"]),
            command=d.get("command"),
        )
        prev = d["hash"]


@pytest.mark.parametrize("name", list(GAMES))
def test_honest_export_passes_every_check(tmp_path: Path, name: str) -> None:
    docs = _export(name)
    code, result = _result(_write(tmp_path, docs))
    assert code == 0, result
    assert result["ok"] and result["status"] == "passed" and result["firstFailure"] is None
    assert all(c["result"] == "ok" for c in result["checks"])
    names = [c["name"] for c in result["checks"]]
    assert {"hash chain", "seed commitment", "draws"} <= set(names)
    # Every event that records a draw got its own check.
    types = [d["type"] for d in docs]
    game = GAMES[name][0]
    if game == "fox":
        deals = [n for n in names if n.endswith(" deal")]
        assert len(deals) == types.count("round_dealt")
        if name == "fox target 10":
            assert len(deals) >= 2, "a multi-round game: later deals at their own labels"
    elif game == "skull":
        assert names.count("first player") == 1
        assert sum(n.endswith("discs shuffled") for n in names) == types.count("discs_shuffled")
        assert sum(n.startswith("blind pick") for n in names) == types.count("discs_shuffled") >= 1
    else:
        assert sum(n.endswith("bag draw") for n in names) == types.count("tiles_drawn") >= 5
        assert {"scoring tiles", "first player"} <= set(names)


def test_cli_prints_each_check(tmp_path: Path) -> None:
    run = _verify(_write(tmp_path, _export("fox target 10")))
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[-1].startswith("passed:")
    assert all(line.startswith("ok ") for line in lines[:-1])
    assert any("round 2 deal" in line and "from v" in line for line in lines)


def test_forged_later_fox_deal_fails_at_its_version(tmp_path: Path) -> None:
    docs = _export("fox target 10")
    forged = copy.deepcopy(docs)
    at = max(i for i, d in enumerate(forged) if d["type"] == "round_dealt")
    deal = forged[at]["data"]
    assert deal["round"] >= 2
    # Stack the deck: seat 0 takes the decree card and gives up its first card for it.
    deal["hands"][0][0], deal["decree"] = deal["decree"], deal["hands"][0][0]
    deal["hands"][0].sort(
        key=lambda c: ("bells", "keys", "moons").index(c["suit"]) * 11 + c["rank"]
    )
    _rehash(forged)
    version = forged[at]["version"]

    code, result = _result(_write(tmp_path, forged))
    assert code == 1
    assert result["checks"][1]["name"] == "hash chain" and result["checks"][1]["result"] == "ok"
    failure = result["firstFailure"]
    assert failure["version"] == version, failure
    assert failure["check"] == f"round {deal['round']} deal"
    assert "hands" in failure["reason"] and "decree" in failure["reason"]
    run = _verify(_write(tmp_path, forged, "again.jsonl"))
    assert run.returncode == 1 and f"FAILED at version {version}" in run.stdout
    # The Python audit, which re-decides with the rules, agrees on the version.
    report = audit("forged", forged)
    assert report.first_failure is not None and report.first_failure["version"] == version


def test_forged_skye_bag_draw_fails_at_its_version(tmp_path: Path) -> None:
    docs = _export("skye 3 seats")
    forged = copy.deepcopy(docs)
    draws = [i for i, d in enumerate(forged) if d["type"] == "tiles_drawn"]
    at = draws[2]  # round 3's draw, decided by a command at its own label
    tiles = forged[at]["data"]["tiles"]
    # The same tiles out of the bag, dealt to other seats: only the draw order gives it away.
    tiles[0][0], tiles[1][0] = tiles[1][0], tiles[0][0]
    _rehash(forged)
    version = forged[at]["version"]

    code, result = _result(_write(tmp_path, forged))
    assert code == 1
    failure = result["firstFailure"]
    assert failure["version"] == version and failure["check"] == "round 3 bag draw", failure
    failed = [c for c in result["checks"] if c["result"] == "failed"]
    assert [c["version"] for c in failed] == [version]  # later rounds still check out
    report = audit("forged", forged)
    assert report.first_failure is not None and report.first_failure["version"] == version


def test_forged_skull_blind_pick_fails_at_its_version(tmp_path: Path) -> None:
    docs = _export("skull 4 seats")
    forged = copy.deepcopy(docs)
    at = next(
        i
        for i, d in enumerate(forged)
        if d["type"] == "discs_shuffled" and {"skull", "flower"} <= set(d["data"]["order"])
    )
    shuffled = forged[at]["data"]
    # Rotate the discs: the skull moves, and the recorded pick's disc is made to agree.
    shuffled["order"] = shuffled["order"][1:] + shuffled["order"][:1]
    lost = next(d for d in forged[at:] if d["type"] == "disc_lost")
    lost["data"]["disc"] = shuffled["order"][lost["data"]["index"]]
    _rehash(forged)
    version = forged[at]["version"]

    code, result = _result(_write(tmp_path, forged))
    assert code == 1
    assert result["firstFailure"]["version"] == version, result["firstFailure"]


def test_changed_event_without_the_seed_breaks_the_chain(tmp_path: Path) -> None:
    docs = _export("fox target 1")
    played = next(d for d in docs if d["type"] == "card_played")
    played["data"]["card"]["rank"] = played["data"]["card"]["rank"] % 11 + 1  # not re-hashed
    code, result = _result(_write(tmp_path, docs))
    assert code == 1
    assert result["firstFailure"]["check"] == "hash chain"
    assert result["firstFailure"]["version"] == played["version"]


def test_game_without_revealed_seed_waits(tmp_path: Path) -> None:
    docs = _export("fox target 1")[:-1]  # the log before seed_revealed
    code, result = _result(_write(tmp_path, docs))
    assert code == 1
    assert result["status"] == "incomplete" and result["firstFailure"] is None
    seed = _export("fox target 1")[-1]["data"]["seed"]
    run = _verify(_write(tmp_path, docs, "running.jsonl"), "--seed", seed)
    assert run.returncode == 0, run.stdout
