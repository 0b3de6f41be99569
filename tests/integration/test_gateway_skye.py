"""The gateway with a real Redis and a worker: Isle of Skye games over the Flask test client.

A game against two random bots played to the end, the secret axe and prices of the
simultaneous price phase, illegal and malformed commands (4xx problems that change nothing)
and the game options.
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from shared.events import Envelope, chain_hash, event_salt, verify_chain
from shared.games.skye import random_command
from tests.integration.api import act, bearer, events, problem, send, view
from tests.integration.conftest import AUDITOR, ORGANIZER, Stack

PASS = {"type": "pass"}
NEIGHBOURS = ((1, 0), (-1, 0), (0, 1), (0, -1))
ROTATIONS = (0, 90, 180, 270)


def create(stack: Stack, seats: list[dict[str, Any]], **extra: Any) -> dict:
    body = {"game": "skye", "seats": seats, **extra}
    headers = bearer(ORGANIZER) if "seed" in extra else {}
    resp = stack.http.post("/v1/games", json=body, headers=headers)
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


def humans(stack: Stack, n: int, **extra: Any) -> tuple[str, list[str]]:
    game = create(stack, [{"name": f"p{i}"} for i in range(n)], **extra)
    assert all(game["tokens"])
    return game["id"], game["tokens"]


def set_prices(drawn: list[str], discard: str, *prices: int) -> dict[str, Any]:
    rest = [t for t in drawn if t != discard]
    assert len(rest) == len(prices)
    return {
        "type": "set_prices",
        "discard": discard,
        "prices": dict(zip(rest, prices, strict=True)),
    }


def leaks(doc: Any, discard: str, prices: dict[str, int]) -> list[Any]:
    """Every place in ``doc`` that shows the axe on ``discard`` or a price of ``prices``."""
    found: list[Any] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            if x.get("discard") == discard:
                found.append(x)
            if any(x.get(t) == p for t, p in prices.items()):
                found.append(x)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc)
    return found


# ---- 1. a whole game against two random bots -------------------------------------------------


def test_whole_game_one_human_against_two_random_bots(stack: Stack) -> None:
    game = create(stack, [{"name": "ana"}, {"bot": "random"}, {"bot": "random"}])
    gid, token = game["id"], game["tokens"][0]
    assert game["tokens"][1] is None and game["tokens"][2] is None
    rng = random.Random(7)
    sent = {"prices": 0, "buying": 0, "building": 0}
    deadline = time.monotonic() + 30
    while (mine := view(stack, gid, token))["outcome"] is None:
        assert time.monotonic() < deadline, f"stuck at {mine['phase']} v{mine['version']}"
        if 0 not in mine["to_act"]:
            time.sleep(0.01)  # the bots' turns run in the worker thread
            continue
        legal = mine["legal_commands"]
        assert legal, mine["phase"]
        if mine["phase"] == "prices":
            [template] = legal
            assert template["template"] is True and template["type"] == "set_prices"
            assert (
                template["tiles"] == mine["drawn"]
                and template["gold"] == mine["players"][0]["free_gold"]
            )
            command = random_command(mine, rng)
        else:
            command = dict(rng.choice(legal))
        sent[mine["phase"]] += 1
        resp = send(stack, gid, token, command)
        assert resp.status_code == 200, (command, resp.get_json())
        assert resp.get_json()["version"] > mine["version"]

    assert sent["prices"] == 6 and sent["buying"] == 6  # 6 rounds with 3 players
    final = view(stack, gid, token)
    out = final["outcome"]
    assert final["phase"] == "game_over" and final["round"] == 6 and final["to_act"] == []
    assert out["winners"] and out["scores"] == final["scores"]
    assert set(out["winners"]) == {i for i, r in enumerate(out["ranks"]) if r == 1}
    best = max(out["scores"])
    assert all(out["scores"][w] == best for w in out["winners"])
    for p in final["players"]:
        bd = p["score_breakdown"]
        assert [sorted(r["points"]) for r in bd["rounds"]] == final["schedule"]
        total = sum(sum(r["points"].values()) for r in bd["rounds"])
        total += sum(bd["scrolls"].values()) + bd["gold"]
        assert total == p["score"] == final["scores"][p["seat"]]
        assert p["to_place"] == [] and len(p["territory"]) >= 1
    full = events(stack, gid, AUDITOR)
    envelopes = [Envelope.from_dict(e) for e in full]
    assert verify_chain(envelopes, envelopes[-1].data["seed"]) == final["version"]
    assert envelopes[-1].type == "seed_revealed"
    assert [e.type for e in envelopes].count("round_scored") == 6


def test_the_first_listed_command_sent_as_it_is_plays_a_whole_game(stack: Stack) -> None:
    # What a generic client does (the README's loop): no game knowledge, only legal_commands.
    game = create(stack, [{"name": "ana"}, {"bot": "random"}])
    gid, token = game["id"], game["tokens"][0]
    deadline = time.monotonic() + 30
    while (mine := view(stack, gid, token))["outcome"] is None:
        assert time.monotonic() < deadline, f"stuck at {mine['phase']} v{mine['version']}"
        if 0 not in mine["to_act"]:
            time.sleep(0.01)
            continue
        resp = send(stack, gid, token, mine["legal_commands"][0])
        assert resp.status_code == 200, (mine["legal_commands"][0], resp.get_json())
    assert view(stack, gid)["phase"] == "game_over"


# ---- 2. the axe and the prices stay secret until everyone has set them ----------------------


def test_prices_and_axe_stay_secret_until_all_are_set(stack: Stack) -> None:
    gid, tokens = humans(stack, 3, options={"first_player": 0})
    a, b, c = tokens
    mine_a = view(stack, gid, a)
    assert mine_a["phase"] == "prices" and mine_a["to_act"] == [0, 1, 2]
    drawn = mine_a["drawn"]
    assert len(drawn) == 3 and mine_a["players"][0]["free_gold"] == 5
    command = set_prices(drawn, drawn[1], 3, 1)
    axe, prices = drawn[1], command["prices"]

    before_b, before_public = view(stack, gid, b), view(stack, gid)
    after_a = act(stack, gid, a, command)
    # A sees its own axe and prices (so the leak check below can find them)
    assert after_a["discard"] == axe and after_a["offer"] == prices
    assert after_a["players"][0]["free_gold"] == 1 and after_a["players"][0]["gold"] == 5
    assert leaks(after_a, axe, prices)
    assert leaks(events(stack, gid, AUDITOR), axe, prices)

    mine_b, public = view(stack, gid, b), view(stack, gid)
    for seen, before in ((mine_b, before_b), (public, before_public)):
        assert seen["to_act"] == [1, 2] and seen["revealed"] is False
        other = seen["players"][0]
        assert other["prices_set"] is True
        assert other["discard"] is None and other["offer"] is None and other["free_gold"] is None
        assert other["gold"] == 5  # gold in hand + gold on the tiles: says nothing of prices
        assert leaks(seen, axe, prices) == []
        # Nothing else changed: only the version, who must act and A's "prices set" flag.
        strip = ("version", "head_hash", "to_act", "players")
        assert {k: v for k, v in seen.items() if k not in strip} == {
            k: v for k, v in before.items() if k not in strip
        }
        assert seen["players"][1:] == before["players"][1:]
        assert {k: v for k, v in other.items() if k != "prices_set"} == {
            k: v for k, v in before["players"][0].items() if k != "prices_set"
        }
    for reader in (b, None):
        evs = events(stack, gid, reader)
        assert leaks(evs, axe, prices) == []
        [hidden] = [e for e in evs if e["type"] == "prices_set"]
        assert hidden["data"] == {"seat": 0} and hidden["redacted"] is True
    assert view(stack, gid, b)["legal_commands"][0]["template"] is True

    # B and C set theirs: the screens are lifted for everyone
    act(stack, gid, b, set_prices(before_b["drawn"], before_b["drawn"][0], 1, 1))
    mine_c = view(stack, gid, c)
    act(stack, gid, c, set_prices(mine_c["drawn"], mine_c["drawn"][2], 2, 2))
    for reader in (a, b, c, None):
        seen = view(stack, gid, reader)
        assert seen["revealed"] is True and seen["phase"] == "buying"
        assert seen["players"][0]["offer"] == prices
        assert seen["players"][0]["drawn"] == [t for t in drawn if t != axe]
        assert seen["players"][0]["free_gold"] == 1
        evs = events(stack, gid, reader)
        [revealed] = [e for e in evs if e["type"] == "prices_revealed"]
        assert revealed["data"]["offers"][0] == {"seat": 0, "discard": axe, "prices": prices}
        [discarded] = [e for e in evs if e["type"] == "tiles_discarded"]
        assert axe in discarded["data"]["tiles"]
        assert seen["current_buyer"] == 0
    assert view(stack, gid, a)["legal_commands"][-1] == PASS
    # A has 1 gold left: it may buy only the 1-gold tiles of B, never its own
    legal_a = view(stack, gid, a)["legal_commands"]
    assert {cmd["tile"] for cmd in legal_a if cmd["type"] == "buy"} == set(before_b["drawn"][1:])


def guess_prices(evs: list[dict], drawn: list[str], gold: int, salts: list[str]) -> list[dict]:
    """Every axe and price split of ``drawn`` whose chain hash, salted with one of ``salts``,
    matches the ``prices_set`` event in ``evs`` (its ``hash`` or the next event's
    ``prev_hash``): what a reader could learn by trying them all."""
    [i] = [k for k, e in enumerate(evs) if e["type"] == "prices_set"]
    e = evs[i]
    after = evs[i + 1] if i + 1 < len(evs) else {}
    targets = {e.get("hash"), after.get("prev_hash")} - {None}
    prev = e.get("prev_hash") or (evs[i - 1].get("hash") if i else None)
    if not targets or prev is None:
        return []
    found = []
    for axe in drawn:
        rest = [t for t in drawn if t != axe]
        for p1 in range(1, gold):
            for p2 in range(1, gold - p1 + 1):
                data = {
                    "seat": e["seat"],
                    "discard": axe,
                    "prices": dict(zip(rest, (p1, p2), strict=True)),
                }
                # The recorded command holds the same secret: guessed alongside.
                command = (
                    {"type": "set_prices", "discard": axe, "prices": data["prices"]}
                    if "command" in e
                    else None
                )
                for salt in salts:
                    guess = chain_hash(
                        prev,
                        version=e["version"],
                        type=e["type"],
                        data=data,
                        command_id=e["command_id"],
                        seat=e["seat"],
                        at=e["at"],
                        salt=salt,
                        command=command,
                    )
                    if guess in targets:
                        found.append(data)
    return found


def test_event_hashes_do_not_give_away_the_prices(stack: Stack) -> None:
    # An axe and two prices within 5 gold have 30 possibilities: a hash over the redacted
    # prices_set (or the next event's prev_hash) would let another seat try them all.
    gid, tokens = humans(stack, 3, options={"first_player": 0})
    drawn = view(stack, gid, tokens[0])["drawn"]
    command = set_prices(drawn, drawn[2], 3, 1)
    act(stack, gid, tokens[0], command)
    secret = {"seat": 0, "discard": drawn[2], "prices": command["prices"]}
    audit = events(stack, gid, AUDITOR)
    assert all(e["hash"] and e["prev_hash"] for e in audit)
    [priced] = [e for e in audit if e["type"] == "prices_set"]
    seed = stack.worker_app.ports.directory.get(gid).seed  # type: ignore[union-attr]
    # The trial works for whoever holds the seed (after the game: everyone)...
    assert guess_prices(audit, drawn, 5, [event_salt(seed, priced["version"])]) == [secret]
    # ...while every reader gets the same hashes and no salt it can make from public data.
    public = view(stack, gid)
    salts = ["", public["seed_sha256"], event_salt(public["seed_sha256"], priced["version"]),
             event_salt(gid, priced["version"])]  # fmt: skip
    for reader in (tokens[1], tokens[2], None):
        feed = events(stack, gid, reader)
        assert [e["hash"] for e in feed] == [e["hash"] for e in audit if e["version"] in
                                             {f["version"] for f in feed}]  # fmt: skip
        assert guess_prices(feed, drawn, 5, salts) == []


# ---- 3. bad input: a 4xx problem and nothing changes -----------------------------------------


def refused(
    stack: Stack, gid: str, token: str, command: dict[str, Any], code: str, rule: str | None = None
) -> dict:
    """``command`` is refused with 422 ``code`` (and ``rule``) and the game does not move."""
    before = view(stack, gid)
    body = problem(send(stack, gid, token, command), 422, code)
    if rule is not None:
        assert body.get("rule") == rule, body
    after = view(stack, gid)
    assert after["version"] == before["version"] and after == before
    return body


def test_illegal_and_malformed_commands_change_nothing(stack: Stack) -> None:
    gid, tokens = humans(stack, 3, options={"first_player": 0}, seed="skye-bad-input")
    mine = view(stack, gid, tokens[0])
    drawn = mine["drawn"]

    # Price phase
    refused(
        stack, gid, tokens[0], set_prices(drawn, drawn[0], 4, 2), "move/illegal", "not_enough_gold"
    )
    refused(
        stack,
        gid,
        tokens[0],
        {"type": "set_prices", "discard": drawn[0], "prices": {drawn[0]: 1, drawn[1]: 1}},
        "move/illegal",
        "discard_priced",
    )
    refused(
        stack,
        gid,
        tokens[0],
        {"type": "set_prices", "discard": drawn[0], "prices": {drawn[1]: 1}},
        "move/illegal",
        "missing_price",
    )
    refused(stack, gid, tokens[0], PASS, "move/illegal", "wrong_phase")
    for bad in (
        {"type": "place", "tile": drawn[0], "y": 0, "rotation": 0},
        {"type": "place", "tile": drawn[0], "x": 1, "y": 0, "rotation": 45},
        {"type": "place", "tile": "nope", "x": 1, "y": 0, "rotation": 0},
        {"type": "set_prices", "discard": drawn[0], "prices": {drawn[1]: "two"}},
        {"type": "buy"},
        {"type": "buy", "tile": "\u00b2"},  # "²" is a digit int() does not read: not a 500
        {"type": "axe"},
        {"type": "fly"},  # an unknown type is command/invalid, as in every game
    ):
        body = refused(stack, gid, tokens[0], bad, "command/invalid")
        assert body["errors"], body
    body = refused(
        stack,
        gid,
        tokens[0],
        {"type": "place", "tile": drawn[0], "y": 0, "rotation": 45},
        "command/invalid",
    )
    assert {"x", "rotation"} <= set(body["errors"])

    act(stack, gid, tokens[0], set_prices(drawn, drawn[0], 2, 3))
    refused(stack, gid, tokens[0], set_prices(drawn, drawn[0], 1, 1), "move/illegal", "already_set")
    # Landscape tiles may be given by number ("L07" = 7 = "7"), as JSON object keys must be
    one = view(stack, gid, tokens[1])["drawn"]
    refused(
        stack,
        gid,
        tokens[1],
        {"type": "set_prices", "discard": one[0], "prices": {one[1]: 1, str(int(one[1][1:])): 1}},
        "command/invalid",
    )  # the same tile priced twice
    mine_1 = act(
        stack,
        gid,
        tokens[1],
        {
            "type": "set_prices",
            "discard": int(one[0][1:]),
            "prices": {str(int(t[1:])): 1 for t in one[1:]},
        },
    )
    assert mine_1["discard"] == one[0] and mine_1["offer"] == {t: 1 for t in one[1:]}
    two = view(stack, gid, tokens[2])["drawn"]
    act(stack, gid, tokens[2], set_prices(two, two[0], 1, 1))

    # Buying: seat 0 buys first (first_player 0)
    assert view(stack, gid)["current_buyer"] == 0
    refused(stack, gid, tokens[0], {"type": "buy", "tile": drawn[1]}, "move/illegal", "own_tile")
    refused(
        stack, gid, tokens[0], {"type": "buy", "tile": drawn[0]}, "move/illegal", "not_offered"
    )  # the axed tile went back to the bag
    refused(stack, gid, tokens[1], PASS, "move/not_your_turn")
    for seat in (0, 1, 2):
        act(stack, gid, tokens[seat], PASS)

    # Building: each seat places its two unsold tiles next to its castle at (0, 0)
    mine = view(stack, gid, tokens[0])
    assert mine["phase"] == "building" and sorted(mine["to_place"]) == sorted(drawn[1:])
    legal = {(c["tile"], c["x"], c["y"], c["rotation"]) for c in mine["legal_commands"]}
    tile = mine["to_place"][0]
    refused(
        stack,
        gid,
        tokens[0],
        {"type": "place", "tile": tile, "x": 5, "y": 5, "rotation": 0},
        "move/illegal",
        "no_contact",
    )
    refused(
        stack,
        gid,
        tokens[0],
        {"type": "place", "tile": tile, "x": 0, "y": 0, "rotation": 0},
        "move/illegal",
        "occupied",
    )
    other = view(stack, gid, tokens[1])["to_place"][0]
    refused(
        stack,
        gid,
        tokens[0],
        {"type": "place", "tile": other, "x": 1, "y": 0, "rotation": 0},
        "move/illegal",
        "not_your_tile",
    )
    refused(stack, gid, tokens[0], PASS, "move/illegal", "wrong_phase")
    mismatched = [
        (t, x, y, r)
        for t in mine["to_place"]
        for x, y in NEIGHBOURS
        for r in ROTATIONS
        if (t, x, y, r) not in legal
    ]
    assert mismatched, "every spot next to the castle fits: pick another seed"
    t, x, y, r = mismatched[0]
    refused(
        stack,
        gid,
        tokens[0],
        {"type": "place", "tile": t, "x": x, "y": y, "rotation": r},
        "move/illegal",
        "terrain_mismatch",
    )
    act(stack, gid, tokens[0], {**mine["legal_commands"][0]})


# ---- 4. options ------------------------------------------------------------------------------


def test_scoring_tiles_option_fixes_the_four_scoring_tiles(stack: Stack) -> None:
    chosen = ["sheep", "vertical_lines", "gold_majority", "completed_mountains"]
    gid, tokens = humans(stack, 3, options={"scoring_tiles": chosen})
    for reader in (tokens[0], None):
        tiles = view(stack, gid, reader)["scoring_tiles"]
        assert [t["id"] for t in tiles] == chosen
        assert [t["letter"] for t in tiles] == ["A", "B", "C", "D"]
        assert [t["rounds"] for t in tiles] == [[1, 3, 5], [2, 4, 6], [3, 5, 6], [4, 5, 6]]
    # An object by letter works too, and a tile may be named by its index 0..15
    by_letter = {"A": 1, "B": "2", "C": "gold_majority", "D": 15}
    gid, _ = humans(stack, 2, options={"scoring_tiles": by_letter})
    assert [t["id"] for t in view(stack, gid)["scoring_tiles"]] == [
        "sheep",
        "brochs_in_mountains",
        "gold_majority",
        "completed_mountains",
    ]


def test_first_player_option_sets_the_start_player(stack: Stack) -> None:
    for first in (0, 2):
        gid, _ = humans(stack, 3, options={"first_player": first})
        public = view(stack, gid)
        assert public["start_player"] == first and public["round"] == 1


def test_advanced_variant_with_two_players_offers_an_extra_tile(stack: Stack) -> None:
    gid, tokens = humans(stack, 2, options={"advanced_variant": True, "first_player": 0})
    public = view(stack, gid)
    assert public["advanced_variant"] is True
    extra = public["extra_tile"]
    assert extra is not None and extra["price"] == 2  # round 1 + 1
    seats_tiles = {t for p in public["players"] for t in p["drawn"]}
    assert extra["tile"] not in seats_tiles and len(seats_tiles) == 6
    # Seat 0 buys it for round + 1 gold, paid to the bank; that is its one purchase
    for seat in (0, 1):
        mine = view(stack, gid, tokens[seat])
        act(stack, gid, tokens[seat], set_prices(mine["drawn"], mine["drawn"][0], 1, 1))
    mine = view(stack, gid, tokens[0])
    assert {"type": "buy", "tile": extra["tile"]} in mine["legal_commands"]
    gold = [p["gold"] for p in mine["players"]]
    mine = act(stack, gid, tokens[0], {"type": "buy", "tile": extra["tile"]})
    assert mine["extra_tile"] is None and mine["to_place"] == [extra["tile"]]
    assert mine["players"][0]["gold"] == gold[0] - 2 and mine["players"][1]["gold"] == gold[1]
    assert mine["current_buyer"] == 1
    plain, _ = humans(stack, 2)
    assert view(stack, plain)["extra_tile"] is None
    assert view(stack, plain)["advanced_variant"] is False


@pytest.mark.parametrize(
    "seats, options",
    [
        (4, {"advanced_variant": True}),
        (5, {"advanced_variant": True}),
        (3, {"advanced_variant": "yes"}),
        (3, {"scoring_tiles": ["sheep", "sheep", "gold_majority", "vertical_lines"]}),
        (3, {"scoring_tiles": ["sheep", "gold_majority", "vertical_lines"]}),
        (3, {"scoring_tiles": ["sheep", "gold_majority", "vertical_lines", "dragons"]}),
        (3, {"first_player": 3}),
        (3, {"colour": "blue"}),
        (1, {}),
        (6, {}),
    ],
)
def test_invalid_options_are_422(stack: Stack, seats: int, options: dict) -> None:
    body = {"game": "skye", "seats": [{"name": f"p{i}"} for i in range(seats)], "options": options}
    before = stack.redis.zcard("games:all")
    problem(stack.http.post("/v1/games", json=body), 422, "options/invalid")
    assert stack.redis.zcard("games:all") == before


def test_expected_version_stands_through_other_seats_moves_in_the_same_phase(
    stack: Stack,
) -> None:
    # In the price phase every seat decides at once: a client that sends the version it read
    # is not refused because another seat moved meanwhile...
    gid, tokens = humans(stack, 3, options={"first_player": 0})
    views = [view(stack, gid, t) for t in tokens]
    read = views[0]["version"]
    act(stack, gid, tokens[1], set_prices(views[1]["drawn"], views[1]["drawn"][0], 1, 2))
    mine = {**set_prices(views[0]["drawn"], views[0]["drawn"][0], 1, 2), "expected_version": read}
    assert send(stack, gid, tokens[0], mine).status_code == 200
    # ...but once a new phase begins (every price is in and revealed), that version is stale.
    seen = view(stack, gid, tokens[2])["version"]
    act(stack, gid, tokens[2], set_prices(views[2]["drawn"], views[2]["drawn"][0], 1, 2))
    buyer = view(stack, gid)["to_act"][0]
    stale = {"type": "pass", "expected_version": seen}
    problem(send(stack, gid, tokens[buyer], stale), 409, "game/stale_version")
