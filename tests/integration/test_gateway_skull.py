"""The gateway with a real Redis and a worker: Skull games over the Flask test client.

The rule book's worked example (Filip, Katka, Jana, Marek) played seat by seat with each seat's
own token, a game against three random bots, illegal moves naming the rule, and the hidden
faces of placed and lost discs.
"""

from __future__ import annotations

import random
import time
from typing import Any

from shared.events import Envelope, chain_hash, event_salt, verify_chain
from tests.integration.api import act, events, problem, send, view
from tests.integration.conftest import AUDITOR, Stack

FILIP, KATKA, JANA, MAREK = range(4)
BOOK_NAMES = ["Filip", "Katka", "Jana", "Marek"]  # clockwise: Filip's left is Katka
FLOWER, SKULL = "flower", "skull"
F = {"type": "place", "disc": FLOWER}
S = {"type": "place", "disc": SKULL}
PASS = {"type": "pass"}
# A seat's own part of its view; the rest of every seat's view is the public view.
OWN_FIELDS = {"you", "seat", "hand", "stack", "lost", "legal_commands"}


def bid(count: int) -> dict[str, Any]:
    return {"type": "bid", "count": count}


def flip(seat: int) -> dict[str, Any]:
    return {"type": "flip", "seat": seat}


def pick(index: int) -> dict[str, Any]:
    return {"type": "pick_disc", "index": index}


def create(stack: Stack, seats: list[dict[str, Any]], **options: Any) -> dict:
    body = {"game": "skull", "seats": seats, "options": options}
    resp = stack.http.post("/v1/games", json=body)
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


def humans(stack: Stack, names: list[str], **options: Any) -> tuple[str, list[str]]:
    game = create(stack, [{"name": n} for n in names], **options)
    assert all(game["tokens"])
    return game["id"], game["tokens"]


def public_part(v: dict) -> dict:
    return {k: val for k, val in v.items() if k not in OWN_FIELDS}


def of_type(evs: list[dict], kind: str) -> list[dict]:
    return [e for e in evs if e["type"] == kind]


# ---- 1. the rule book's worked example -------------------------------------------------------


def test_rule_book_example_filip_katka_jana_marek(stack: Stack) -> None:
    gid, tokens = humans(stack, BOOK_NAMES, first_player=KATKA)
    filip, katka, jana, marek = tokens
    start = view(stack, gid)
    assert [s["name"] for s in start["seats"]] == BOOK_NAMES
    assert (start["phase"], start["round"], start["starter"], start["to_act"]) == (
        "placing",
        1,
        KATKA,
        [KATKA],
    )

    # Everyone places a disc (Katka starts; Jana's is her skull), then Katka, Jana and Marek
    # one more each: Jana's flower lies on her skull.
    placing = [(KATKA, F), (JANA, S), (MAREK, F), (FILIP, F), (KATKA, F), (JANA, F), (MAREK, F)]
    sizes = [0, 0, 0, 0]
    for seat, command in placing:
        mine = act(stack, gid, tokens[seat], command)
        sizes[seat] += 1
        assert mine["stack"][-1] == command["disc"] and len(mine["stack"]) == sizes[seat]
        public = view(stack, gid)
        assert public["phase"] == "placing" and public["bid"] == 0 and public["bidder"] is None
        assert [p["stack_size"] for p in public["players"]] == sizes
        assert public["to_act"] == [(seat + 1) % 4]
    assert view(stack, gid, jana)["stack"] == [SKULL, FLOWER]
    assert view(stack, gid)["table"] == 7
    # Filip places no more: he may place or bid up to the 7 discs on the table
    assert view(stack, gid, filip)["legal_commands"] == [F, S, *[bid(n) for n in range(1, 8)]]

    # Filip opens with 2, Katka says 3, Jana 4, Marek 5
    for seat, count, next_seat in [
        (FILIP, 2, KATKA),
        (KATKA, 3, JANA),
        (JANA, 4, MAREK),
        (MAREK, 5, FILIP),
    ]:
        act(stack, gid, tokens[seat], bid(count))
        public = view(stack, gid)
        assert (public["phase"], public["bid"], public["bidder"], public["challenger"]) == (
            "bidding",
            count,
            seat,
            None,
        )
        assert public["to_act"] == [next_seat]
    assert view(stack, gid, filip)["legal_commands"] == [bid(6), bid(7), PASS]
    # Filip and Katka pass: the bidding goes on
    for seat, next_seat in [(FILIP, KATKA), (KATKA, JANA)]:
        act(stack, gid, tokens[seat], PASS)
        public = view(stack, gid)
        assert public["phase"] == "bidding" and public["to_act"] == [next_seat]
        assert public["players"][seat]["passed"] is True
    # Jana passes too: Marek is the challenger for 5
    act(stack, gid, jana, PASS)
    public = view(stack, gid)
    assert (public["phase"], public["bid"], public["bidder"], public["challenger"]) == (
        "flipping",
        5,
        MAREK,
        MAREK,
    )
    assert public["to_act"] == [MAREK] and public["flipped"] == []
    # He must first turn his own discs
    assert view(stack, gid, marek)["legal_commands"] == [flip(MAREK)]

    # Marek's own stack: two flowers at once
    act(stack, gid, marek, flip(MAREK))
    public = view(stack, gid)
    expected = [{"seat": MAREK, "disc": FLOWER}] * 2
    assert public["flipped"] == expected and public["players"][MAREK]["face_down"] == 0
    assert public["phase"] == "flipping"
    # Filip's flower, then Jana's top disc: a flower, she did not bluff
    for seat in (FILIP, JANA):
        act(stack, gid, marek, flip(seat))
        expected.append({"seat": seat, "disc": FLOWER})
        public = view(stack, gid)
        assert public["flipped"] == expected and public["phase"] == "flipping"
    assert public["players"][JANA]["face_down"] == 1
    # One disc to go: Katka's top one or Jana's next one
    assert view(stack, gid, marek)["legal_commands"] == [flip(KATKA), flip(JANA)]
    # He picks Jana's: her skull. The challenge fails; everyone takes their discs back.
    act(stack, gid, marek, flip(JANA))
    public = view(stack, gid)
    expected.append({"seat": JANA, "disc": SKULL})
    assert public["flipped"] == expected
    assert (public["phase"], public["challenger"], public["skull_owner"], public["bid"]) == (
        "penalty",
        MAREK,
        JANA,
        5,
    )
    assert public["to_act"] == [JANA] and public["pick_from"] == 4
    assert [p["stack_size"] for p in public["players"]] == [0, 0, 0, 0]
    assert public["scores"] == [0, 0, 0, 0]
    # Marek's four discs lie shuffled face down; Jana picks one blindly
    assert view(stack, gid, jana)["legal_commands"] == [pick(i) for i in range(4)]
    for seat in (FILIP, KATKA, MAREK):
        assert view(stack, gid, tokens[seat])["legal_commands"] == []
    assert view(stack, gid, marek)["hand"] == {FLOWER: 3, SKULL: 1}

    mine = act(stack, gid, jana, pick(2))
    assert mine["lost"] == []  # Jana lost nothing and was not told what Marek lost

    # What Marek lost: the auditor sees the shuffle and the lost disc, and they agree
    full = events(stack, gid, AUDITOR)
    shuffle = of_type(full, "discs_shuffled")
    assert len(shuffle) == 1 and shuffle[0]["data"]["seat"] == MAREK
    order = shuffle[0]["data"]["order"]
    assert sorted(order) == [FLOWER, FLOWER, FLOWER, SKULL]
    [lost_event] = of_type(full, "disc_lost")
    lost = lost_event["data"]["disc"]
    assert lost_event["data"] == {"seat": MAREK, "disc": order[2], "picked_by": JANA, "index": 2}

    # Only Marek learns it: his view says so, and nothing else in any view differs
    views = [view(stack, gid, t) for t in tokens]
    public = view(stack, gid)
    assert views[MAREK]["lost"] == [lost]
    assert views[MAREK]["hand"] == {FLOWER: 3 - (lost == FLOWER), SKULL: 1 - (lost == SKULL)}
    for seat in (FILIP, KATKA, JANA):
        assert views[seat]["lost"] == [] and views[seat]["hand"] == {FLOWER: 3, SKULL: 1}
    assert (public["lost"], public["hand"], public["stack"]) == (None, None, None)
    for v in views:
        assert public_part(v) == public_part(public)
    assert public["players"][MAREK]["discs"] == 3
    assert [p["discs"] for p in public["players"]] == [4, 4, 4, 3]
    # and his copy of the events: the others get the event with the face blanked
    for seat, token in [*enumerate(tokens), (None, None)]:
        seen = events(stack, gid, token)
        [seen_lost] = of_type(seen, "disc_lost")
        assert seen_lost["data"] == {
            "seat": MAREK,
            "disc": lost if seat == MAREK else None,
            "picked_by": JANA,
            "index": 2,
        }, seat
        assert seen_lost.get("redacted", False) is (seat != MAREK)
        # nobody, not even Marek, saw the order Jana picked from
        [seen_shuffle] = of_type(seen, "discs_shuffled")
        assert seen_shuffle["data"]["order"] is None and seen_shuffle["redacted"] is True

    # Marek starts the next round
    assert (public["phase"], public["round"], public["starter"], public["to_act"]) == (
        "placing",
        2,
        MAREK,
        [MAREK],
    )
    assert (public["bid"], public["bidder"], public["challenger"], public["flipped"]) == (
        0,
        None,
        None,
        [],
    )
    assert public["outcome"] is None
    assert views[MAREK]["legal_commands"] == ([F, S] if lost == FLOWER else [F])
    for seat in (FILIP, KATKA, JANA):
        assert views[seat]["legal_commands"] == []
    problem(send(stack, gid, katka, F), 422, "move/not_your_turn")
    act(stack, gid, marek, F)
    assert view(stack, gid)["to_act"] == [FILIP]


# ---- 2. one human against three random bots ---------------------------------------------------


def test_human_and_three_random_bots_play_to_the_end(stack: Stack) -> None:
    game = create(stack, [{"name": "ana"}, {"bot": "random"}, {"bot": "random"}, {"bot": "random"}])
    gid, token = game["id"], game["tokens"][0]
    assert game["tokens"][1:] == [None, None, None]
    rng = random.Random(20240501)
    moves = 0
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        mine = view(stack, gid, token)
        if mine["outcome"] is not None:
            break
        if 0 not in mine["to_act"]:
            time.sleep(0.005)  # a bot is thinking (inline, in the worker thread)
            continue
        assert mine["legal_commands"]
        command = {**rng.choice(mine["legal_commands"]), "expected_version": mine["version"]}
        resp = send(stack, gid, token, command)
        assert resp.status_code == 200, (command, resp.get_json())
        assert resp.get_json()["version"] > mine["version"]
        moves += 1
    final = view(stack, gid, token)
    outcome = final["outcome"]
    assert outcome is not None, "the game did not finish before the deadline"
    assert moves > 0
    assert final["phase"] == "game_over" and final["to_act"] == []
    assert len(outcome["winners"]) == 1 and outcome["winners"] == final["winners"]
    winner = outcome["winners"][0]
    assert outcome["ranks"][winner] == 1
    players = final["players"]
    assert outcome["scores"][winner] == 2 or all(
        p["eliminated"] for s, p in enumerate(players) if s != winner
    )
    envelopes = [Envelope.from_dict(e) for e in events(stack, gid, AUDITOR)]
    assert verify_chain(envelopes, envelopes[-1].data["seed"]) == final["version"]
    assert envelopes[0].type == "game_created" and envelopes[-1].type == "seed_revealed"
    [won] = [e for e in envelopes if e.type == "game_won"]
    assert list(won.data["winners"]) == outcome["winners"]


# ---- 3. bad input: 422 naming the rule, and nothing changes ----------------------------------


def refused(stack: Stack, gid: str, token: str, command: dict[str, Any], rule: str) -> None:
    before = view(stack, gid)
    mine_before = view(stack, gid, token)
    body = problem(send(stack, gid, token, command), 422, "move/illegal")
    assert body["rule"] == rule, body
    assert view(stack, gid) == before
    assert view(stack, gid, token) == mine_before


def test_illegal_moves_are_422_naming_the_rule_and_change_nothing(stack: Stack) -> None:
    gid, tokens = humans(stack, ["a", "b", "c", "d"], first_player=0)
    for seat, command in [(0, F), (1, F), (2, F), (3, S)]:
        act(stack, gid, tokens[seat], command)
    # 4 discs on the table: no bid above 4
    refused(stack, gid, tokens[0], bid(5), "bid_above_cap")
    act(stack, gid, tokens[0], bid(2))
    # a raise must be higher than 2 (and still at most 4)
    refused(stack, gid, tokens[1], bid(2), "bid_not_higher")
    refused(stack, gid, tokens[1], bid(1), "bid_not_higher")
    refused(stack, gid, tokens[1], bid(5), "bid_above_cap")
    act(stack, gid, tokens[1], bid(3))
    for seat in (2, 3, 0):
        act(stack, gid, tokens[seat], PASS)
    assert view(stack, gid)["challenger"] == 1
    # seat 1 must turn its own disc before any other
    refused(stack, gid, tokens[1], flip(2), "own_discs_first")
    refused(stack, gid, tokens[1], flip(3), "own_discs_first")
    act(stack, gid, tokens[1], flip(1))
    refused(stack, gid, tokens[1], flip(1), "empty_stack")
    act(stack, gid, tokens[1], flip(2))
    refused(stack, gid, tokens[1], flip(2), "empty_stack")
    act(stack, gid, tokens[1], flip(3))  # seat 3's skull
    public = view(stack, gid)
    assert (public["phase"], public["skull_owner"], public["to_act"]) == ("penalty", 3, [3])
    # only seat 3, the skull's owner, picks
    for seat in (0, 1, 2):
        refused(stack, gid, tokens[seat], pick(0), "not_skull_owner")
    act(stack, gid, tokens[3], pick(0))
    assert view(stack, gid)["players"][1]["discs"] == 3


def test_malformed_skull_command_is_422_command_invalid(stack: Stack) -> None:
    gid, tokens = humans(stack, ["a", "b", "c"], first_player=0)
    before = view(stack, gid)
    body = problem(
        send(stack, gid, tokens[0], {"type": "place", "disc": "rose"}), 422, "command/invalid"
    )
    assert "disc" in body["errors"]
    body = problem(
        send(stack, gid, tokens[0], {"type": "bid", "count": "3"}), 422, "command/invalid"
    )
    assert "count" in body["errors"]
    # an unknown type is command/invalid, as in every game
    body = problem(send(stack, gid, tokens[0], {"type": "fly"}), 422, "command/invalid")
    assert "type" in body["errors"] and "rule" not in body
    assert view(stack, gid) == before


# ---- 4. hidden information while placing ------------------------------------------------------


def _placing_game(stack: Stack, faces: list[tuple[int, dict[str, Any]]]) -> tuple[str, list[str]]:
    gid, tokens = humans(stack, ["a", "b", "c", "d"], first_player=0)
    for seat, command in faces:
        act(stack, gid, tokens[seat], command)
        views = [view(stack, gid, t) for t in tokens]
        public = view(stack, gid)
        assert public["phase"] == "placing"
        for v in views:  # every seat sees the same of the others as a spectator does
            assert public_part(v) == public_part(public)
    return gid, tokens


BLUFF = [(0, S), (1, F), (2, S), (3, F), (0, F)]
HONEST = [(0, F), (1, F), (2, F), (3, F), (0, F)]


def test_views_never_show_another_seats_disc_faces(stack: Stack) -> None:
    bluff, bluff_tokens = _placing_game(stack, BLUFF)
    honest, honest_tokens = _placing_game(stack, HONEST)

    def comparable(v: dict) -> dict:
        return {k: val for k, val in v.items() if k not in ("id", "seed_sha256", "head_hash")}

    # Seats 1 and 3 placed the same faces in both games, seats 0 and 2 did not: 1's and 3's
    # views, and the public view, are the same whatever 0 and 2 placed
    for seat in (1, 3):
        assert comparable(view(stack, bluff, bluff_tokens[seat])) == comparable(
            view(stack, honest, honest_tokens[seat])
        )
    assert comparable(view(stack, bluff)) == comparable(view(stack, honest))
    # while 0's own view does show what 0 placed
    assert view(stack, bluff, bluff_tokens[0])["stack"] == [SKULL, FLOWER]
    assert view(stack, honest, honest_tokens[0])["stack"] == [FLOWER, FLOWER]
    assert view(stack, bluff, bluff_tokens[2])["hand"] == {FLOWER: 3, SKULL: 0}


def test_events_never_show_another_seats_disc_faces(stack: Stack) -> None:
    gid, tokens = _placing_game(stack, BLUFF)
    truth = [(seat, command["disc"]) for seat, command in BLUFF]
    full = of_type(events(stack, gid, AUDITOR), "disc_placed")
    assert [(e["data"]["seat"], e["data"]["disc"]) for e in full] == truth
    for reader, token in [*enumerate(tokens), (None, None)]:
        placed = of_type(events(stack, gid, token), "disc_placed")
        assert [e["data"]["seat"] for e in placed] == [seat for seat, _ in truth]
        for e, (seat, disc) in zip(placed, truth, strict=True):
            if seat == reader:
                assert e["data"]["disc"] == disc and not e.get("redacted")
            else:
                assert e["data"]["disc"] is None and e["redacted"] is True, (reader, e)


def _faces_recovered(feed: list[dict], salt_of: Any) -> dict[int, str]:
    """The hidden faces a reader of ``feed`` finds by trying both faces with the salts
    ``salt_of(version)`` gives it, against each event's hash and the next one's prev_hash."""
    recovered = {}
    by_version = {e["version"]: e for e in feed}
    for e in of_type(feed, "disc_placed"):
        if e["data"]["disc"] is not None:
            continue
        after = by_version.get(e["version"] + 1, {})
        prev = e["prev_hash"]
        for face in (FLOWER, SKULL):
            for salt in salt_of(e["version"]):
                guess = chain_hash(
                    prev,
                    version=e["version"],
                    type=e["type"],
                    data={**e["data"], "disc": face},
                    command_id=e["command_id"],
                    seat=e["seat"],
                    at=e["at"],
                    salt=salt,
                    command={"type": "place", "disc": face} if "command" in e else None,
                )
                if guess in (e["hash"], after.get("prev_hash")):
                    recovered[e["version"]] = face
    return recovered


def test_redacted_event_hashes_do_not_give_away_the_face(stack: Stack) -> None:
    # A disc has two faces: a plain hash over a redacted event would let a seat try both. The
    # hashes are salted with a secret from the seed, so everyone may hold them as commitments.
    gid, tokens = _placing_game(stack, BLUFF)
    public = view(stack, gid)

    def public_salts(version: int) -> list[str]:
        sha = public["seed_sha256"]
        return ["", sha, event_salt(sha, version), event_salt(gid, version)]

    for reader in (tokens[1], None):
        feed = events(stack, gid, reader)
        assert all(e["hash"] and e["prev_hash"] for e in feed)
        recovered = _faces_recovered(feed, public_salts)
        assert recovered == {}, f"a reader recovered other seats' faces: {recovered}"
    # With the seed (everyone's after the game) the same trial finds every face: it can fail.
    seed = stack.worker_app.ports.directory.get(gid).seed  # type: ignore[union-attr]
    feed = events(stack, gid, tokens[1])
    hidden = [e for e in of_type(feed, "disc_placed") if e["data"]["disc"] is None]
    assert hidden and len(_faces_recovered(feed, lambda v: [event_salt(seed, v)])) == len(hidden)
    audit = events(stack, gid, AUDITOR)
    assert all(e["hash"] and e["prev_hash"] for e in audit)
