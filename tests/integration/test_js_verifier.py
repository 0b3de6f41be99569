"""The independent JavaScript verifier (verifier/verify.mjs) on real exports: every honest game
passes every check; a history rewritten by someone holding the store (the seed, so every hash
recomputed) fails at the forged version. The play-outs need only node; the last test plays
every kind of game the service deals (lobby, contributed, clocks, resignations, tournaments)
through the gateway on a real Redis, and the Python audit and the JS verifier must agree on
each export."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from services.cli import main as tabletop
from services.worker.deadlines import DeadlineScheduler
from shared.app.playout import play
from shared.audit import audit
from shared.events import GENESIS_HASH, chain_hash, event_salt
from tests.integration.api import WAIT, bearer, play_out
from tests.integration.conftest import ORGANIZER, Stack

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
    # Every check passes but the bots' moves, which this verifier cannot re-decide: it says
    # so rather than passing them (``tabletop audit`` re-decides them).
    assert all(c["result"] == "ok" for c in result["checks"] if c["name"] != "bot moves")
    [bots] = [c for c in result["checks"] if c["name"] == "bot moves"]
    assert bots["result"] == "unchecked" and "NOT re-checked" in bots["detail"]
    assert result["unchecked"] == ["bot moves"]
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
    assert lines[-1].startswith("passed:") and lines[-1].endswith("(bot moves not re-checked)")
    assert lines[-2].startswith("NOT RE-CHECKED  bot moves: ")
    assert all(line.startswith("ok ") for line in lines[:-2])
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


def _check_history_in_node(path: Path, seen: dict[int, str]) -> list[int]:
    """``checkHistory`` of verifier/fairness.mjs (what the web page's "Verify this game" runs
    against the head hashes it kept) on an export file."""
    assert NODE is not None
    script = (
        "import { readFileSync } from 'node:fs';"
        f"import {{ checkHistory, parseJsonl }} from {json.dumps((VERIFY.parent / 'fairness.mjs').as_uri())};"
        "const [file, seen] = process.argv.slice(1);"
        "console.log(JSON.stringify(checkHistory(parseJsonl(readFileSync(file, 'utf8')),"
        " JSON.parse(seen))));"
    )
    run = subprocess.run([NODE, "--input-type=module", "-e", script, str(path), json.dumps(seen)],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert run.returncode == 0, run.stderr
    return [int(v) for v in json.loads(run.stdout)]


def test_check_history_in_node_agrees_with_the_python_one(tmp_path: Path) -> None:
    """A player kept the (version, head_hash) pairs it was shown; a history rewritten after
    them (re-sealed with the seed, so the export's own chain is right) differs at every kept
    version from the forged one on, and both implementations name the same versions."""
    from shared.audit import check_history

    docs = _export("fox target 10")
    seen = {d["version"]: d["hash"] for d in docs[::7]}
    seen[len(docs) + 5] = "f" * 64  # a version the export lacks
    honest = _write(tmp_path, docs)
    assert _check_history_in_node(honest, seen) == check_history(docs, seen) == [len(docs) + 5]
    del seen[len(docs) + 5]
    assert _check_history_in_node(honest, seen) == [] == check_history(docs, seen)
    forged = copy.deepcopy(docs)
    at = max(i for i, d in enumerate(forged) if d["type"] == "round_dealt")
    deal = forged[at]["data"]
    deal["hands"][0][0], deal["decree"] = deal["decree"], deal["hands"][0][0]
    _rehash(forged)
    differ = check_history(forged, seen)
    assert differ == sorted(v for v in seen if v >= forged[at]["version"]) and differ
    assert _check_history_in_node(_write(tmp_path, forged, "forged.jsonl"), seen) == differ


# ---- every kind of game the service plays: the Python audit and the JS verifier agree --------

FOX1 = {"game": "fox", "options": {"target": 1}}
ONE_SECOND = {"turn_seconds": 1, "reserve_seconds": 0}


def _create(stack: Stack, body: dict[str, Any]) -> dict[str, Any]:
    resp = stack.http.post("/v1/games", json=body)
    assert resp.status_code == 201, resp.get_json()
    created: dict[str, Any] = resp.get_json()
    return created


def _joined(stack: Stack, gid: str, seat: int, **body: str) -> str:
    resp = stack.http.post(f"/v1/games/{gid}/seats/{seat}/join", json={"name": "guest", **body})
    assert resp.status_code == 200, resp.get_json()
    return str(resp.get_json()["token"])


def _contribute(stack: Stack, gid: str, seat: int, token: str) -> None:
    resp = stack.http.post(f"/v1/games/{gid}/seats/{seat}/entropy",
                           json={"client_seed": f"mine-{seat}"}, headers=bearer(token))  # fmt: skip
    assert resp.status_code == 200, resp.get_json()


def _resign(stack: Stack, gid: str, token: str) -> None:
    resp = stack.http.post(f"/v1/games/{gid}/commands", json={"type": "resign"},
                           headers={**bearer(token), **WAIT})  # fmt: skip
    assert resp.status_code == 200, resp.get_json()


def _with_deadlines(stack: Stack, gid: str) -> None:
    """The deadline scheduler of a worker process fires the game's time-outs until it ends."""
    scheduler = DeadlineScheduler(stack.worker_app)
    thread = scheduler.start()
    try:
        play_out(stack, gid, {})
    finally:
        scheduler.stop_event.set()
        thread.join(10)


def _lobby(stack: Stack) -> str:
    created = _create(stack, {**FOX1, "seats": [{"name": "host"}, {"open": True}]})
    gid = created["id"]
    play_out(stack, gid, {0: created["tokens"][0], 1: _joined(stack, gid, 1)})
    return str(gid)


def _contributed(stack: Stack) -> str:
    created = _create(stack, {**FOX1, "seats": [{"name": "a"}, {"bot": "random"}],
                              "fairness": "contributed"})  # fmt: skip
    gid, token = created["id"], created["tokens"][0]
    _contribute(stack, gid, 0, token)
    play_out(stack, gid, {0: token})
    return str(gid)


def _contributed_lobby(stack: Stack) -> str:
    created = _create(stack, {"game": "skull", "fairness": "contributed",
                              "seats": [{"name": "host"}, {"open": True}, {"bot": "random"}]})  # fmt: skip
    gid, host = created["id"], created["tokens"][0]
    guest = _joined(stack, gid, 1, client_seed="guest's")
    _contribute(stack, gid, 0, host)
    play_out(stack, gid, {0: host, 1: guest})
    return str(gid)


def _time_outs_and_take_over(stack: Stack) -> str:
    clock = {**ONE_SECOND, "takeover_after": 2}
    created = _create(stack, {**FOX1, "seats": [{"name": "gone"}, {"bot": "random"}],
                              "clock": clock})  # fmt: skip
    _with_deadlines(stack, created["id"])
    return str(created["id"])


def _forfeit(stack: Stack) -> str:
    clock = {**ONE_SECOND, "on_timeout": "forfeit"}
    created = _create(stack, {**FOX1, "seats": [{"name": "gone"}, {"bot": "random"}],
                              "clock": clock})  # fmt: skip
    _with_deadlines(stack, created["id"])
    return str(created["id"])


def _resignation(stack: Stack) -> str:
    created = _create(stack, {**FOX1, "seats": [{"name": "a"}, {"name": "b"}]})
    _resign(stack, created["id"], created["tokens"][1])  # two seats: the game ends
    return str(created["id"])


def _resignation_taken_over(stack: Stack) -> str:
    created = _create(stack, {"game": "skull", "clock": {"turn_seconds": 60},
                              "seats": [{"name": "a"}, {"bot": "random"}, {"bot": "random"}]})  # fmt: skip
    _resign(stack, created["id"], created["tokens"][0])  # a bot plays the seat to the end
    play_out(stack, created["id"], {})
    return str(created["id"])


def _tournament(stack: Stack) -> str:
    resp = stack.http.post(
        "/v1/tournaments",
        json={**FOX1, "entrants": [{"bot": "random"}, {"bot": "heuristic"}], "games": 2},
        headers=bearer(ORGANIZER),
    )
    assert resp.status_code == 201, resp.get_json()
    doc = stack.http.get(f"/v1/tournaments/{resp.get_json()['id']}", headers=bearer(ORGANIZER))
    items = doc.get_json()["games"]["items"]
    assert items and all(g["finished"] for g in items), doc.get_json()
    return str(items[-1]["id"])


# Each kind, and the events its log must hold (so the game really was of that kind).
KINDS: dict[str, tuple[Callable[[Stack], str], set[str]]] = {
    "lobby": (_lobby, {"seat_changed"}),
    "contributed": (_contributed, {"entropy_contributed"}),
    "contributed lobby": (_contributed_lobby, {"seat_changed", "entropy_contributed"}),
    "clock time-outs and take-over": (
        _time_outs_and_take_over,
        {"deadline_armed", "turn_timed_out", "seat_taken_over"},
    ),
    "clock forfeit": (_forfeit, {"turn_timed_out", "seat_resigned"}),
    "resignation": (_resignation, {"seat_resigned"}),
    "resignation taken over": (_resignation_taken_over, {"seat_resigned", "seat_taken_over"}),
    "tournament": (_tournament, set()),
}


def _one_byte_changed(export: bytes) -> tuple[bytes, int]:
    """The export with one byte of one event changed (a digit of its time), and its version."""
    lines = export.splitlines(keepends=True)
    i = len(lines) // 2
    line = lines[i]
    at = line.index(b"Z", line.index(b'"at":"')) - 1
    digit = b"%d" % ((line[at] - ord("0") + 1) % 10)
    lines[i] = line[:at] + digit + line[at + 1 :]
    return b"".join(lines), int(json.loads(line)["version"])


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_python_audit_and_the_js_verifier_agree_on_every_kind_of_game(
    stack: Stack, tmp_path: Path, kind: str, capsys: pytest.CaptureFixture
) -> None:
    build, holds = KINDS[kind]
    gid = build(stack)
    exported = stack.http.get(f"/v1/games/{gid}/export")  # anyone: the game is over
    assert exported.status_code == 200, exported.get_data(as_text=True)
    docs = [json.loads(line) for line in exported.data.splitlines()]
    assert holds <= {d["type"] for d in docs}, sorted({d["type"] for d in docs})
    assert (kind == "tournament") == ("tournament" in docs[0]["data"])
    honest = tmp_path / "honest.jsonl"
    honest.write_bytes(exported.data)
    capsys.readouterr()
    assert tabletop(["audit", "--file", str(honest)]) == 0, capsys.readouterr().out
    code, result = _result(honest)
    assert code == 0 and result["status"] == "passed", result

    forged, version = _one_byte_changed(exported.data)
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_bytes(forged)
    capsys.readouterr()
    assert tabletop(["audit", "--file", str(tampered)]) == 1
    assert f"AUDIT FAILED at version {version}" in capsys.readouterr().out
    code, result = _result(tampered)
    assert code == 1 and result["status"] == "failed", result
    assert result["firstFailure"]["version"] == version, result["firstFailure"]
